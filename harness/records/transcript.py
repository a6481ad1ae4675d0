"""Run transcripts: a hash-chained, append-only JSONL writer, a validating reader, resume.

A run directory holds ``manifest.json`` (:class:`RunManifest`, written atomically), ``games.jsonl`` (one
:class:`GameEntry` per finished game) and ``calls.jsonl`` (one :class:`CallEntry` per model call); the records are
defined in :mod:`harness.records.entries`. Every line is validated before it is written, then written in one piece
and flushed (``fsync=True`` also forces it to disk). A line that does not fit (a full disk) is cut back off, so the file
ends on its last whole line, and the error names the file; ``on_full`` (:data:`~harness.models.cache.OnFull`) may free
space first, and the line is then tried once more (:class:`~harness.records.reserve.DiskReserve`).

Hash chain (:mod:`harness.records.chain`): every line starts with ``prev_hash``, the sha256 of the previous line's
exact bytes (the chain's start value on the first line). The writer lists each game's calls in the game's line
(``call_indices``) and seals the manifest (``chains``: each file's line count and last hash, games per phase) when
it writes it and whenever it closes, so an interrupted run's manifest says how far it got and a finished one's seals
it. Readers check every link: a broken one is a :class:`TranscriptError` naming the file and line (``verify=False``
leaves that to ``arena replay``, which lists all).

Completeness: a line counts only once its trailing newline is on disk, so a game counts only once its whole
``GameEntry`` line is. After ``kill -9`` the last line of a file may be torn (no trailing newline); the reader skips
it with a warning and :class:`TranscriptWriter` with ``resume=True`` truncates it away. Only an incomplete LAST line
is ever dropped: a corrupted line anywhere else (bad JSON, a record that does not validate, a broken link, a
repeated game or call index) is a :class:`TranscriptError` naming the file and the line number, and nothing is
modified.

Resume: calls are written before the ``GameEntry`` of their game, so after an interruption the tail of
``calls.jsonl`` may hold calls of a game that never finished. The game is played again on resume, so those trailing
calls (the "orphan tail": calls after the last one that belongs to a finished game, or to no game) are truncated
too; :func:`resume_point` counts what stays. The chain continues from the last line kept; a run whose files lost or
changed lines its manifest sealed is refused.
"""

from __future__ import annotations

import os
import warnings
from collections import Counter
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Generic, NamedTuple, TextIO, TypeVar

from pydantic import ValidationError

from harness.models.cache import GENESIS_HASH, OnFull, append_whole, chain_line, line_hash, retried_when_freed
from harness.records.chain import ChainScan, ChainSeal, broken_link_message, scan_chain
from harness.records.entries import (
    CACHE_FILE,
    CALLS_FILE,
    GAMES_FILE,
    MANIFEST_FILE,
    TRANSCRIPT_SCHEMA,
    CallEntry,
    GameEntry,
    RunManifest,
    TranscriptError,
    VersionedRecord,
)
from harness.records.reserve import write_atomically

# The record types and file names are re-exported: the runs import them from here.
__all__ = [
    "CACHE_FILE",
    "CALLS_FILE",
    "GAMES_FILE",
    "MANIFEST_FILE",
    "PHASES",
    "TRANSCRIPT_SCHEMA",
    "CallEntry",
    "GameEntry",
    "Log",
    "ResumePoint",
    "RunManifest",
    "TranscriptError",
    "TranscriptReader",
    "TranscriptWriter",
    "open_log_for_append",
    "parse_log",
    "read_log",
    "read_manifest",
    "resume_point",
]

Record = TypeVar("Record", bound=VersionedRecord)
PHASES = ("adapt", "eval")


class ResumePoint(NamedTuple):
    """Complete games and the calls that stay after resume repair (the next call index)."""

    games_done: int
    calls_done: int


@dataclass(frozen=True)
class Log(Generic[Record]):
    """A JSONL log read and validated: ``records[i]`` is the line ``chain.links[i]``."""

    chain: ChainScan
    records: tuple[Record, ...]

    @property
    def torn(self) -> bool:
        return self.chain.torn_bytes > 0

    def line(self, index: int) -> int:
        """The file line number of ``records[index]``."""
        return self.chain.links[index].number


def read_log(path: Path, model: type[Record], verify: bool = True) -> Log[Record]:
    """Every complete line validated (and, with ``verify``, its link checked); a torn last line is left out."""
    return parse_log(scan_chain(path), model, verify)


def parse_log(chain: ChainScan, model: type[Record], verify: bool = True) -> Log[Record]:
    """:func:`read_log` of a file already scanned."""
    path = chain.path
    records: list[Record] = []
    expected, before = GENESIS_HASH, None
    for link in chain.links:
        try:
            record = model.model_validate_json(link.body)
        except ValidationError as error:
            problem = "; ".join(f"{'.'.join(map(str, e['loc'])) or 'line'}: {e['msg']}" for e in error.errors())
            raise TranscriptError(f"corrupted {model.__name__} line: {problem}", path, link.number) from None
        if verify and link.prev_hash is None and not record.legacy:
            raise TranscriptError(
                f"the line carries no prev_hash, which every schema {record.schema_version} line has: "
                "it was edited (run 'arena replay' for every finding)",
                path,
                link.number,
            )
        if verify and link.prev_hash is not None and link.prev_hash != expected:
            raise TranscriptError(
                f"the hash chain breaks here: {broken_link_message(before)} (run 'arena replay' for every finding)", path, link.number
            )
        expected, before = link.hash, link.number
        records.append(record)
    return Log(chain, tuple(records))


def _check_unique(log: Log[Any], keys: list[Any], what: str) -> None:
    seen: dict[Any, int] = {}
    for index, key in enumerate(keys):
        number = log.line(index)
        if key in seen:
            raise TranscriptError(
                f"{what} {key} appears again (first on line {seen[key]}): a record was double-written", log.chain.path, number
            )
        seen[key] = number


def _game_keys(log: Log[GameEntry]) -> list[tuple[str, int]]:
    return [(g.phase, g.game_index) for g in log.records]


class TranscriptReader:
    """Reads and validates a run directory; a torn last line is skipped with a warning, never modified.

    ``verify`` (default): a broken hash chain or a repeated game or call index is an
    error; without it they are left to :func:`harness.records.integrity.check_records`.
    """

    def __init__(self, run_dir: str | Path, verify: bool = True) -> None:
        self.run_dir = Path(run_dir)
        self.verify = verify
        if not self.run_dir.is_dir():
            raise TranscriptError("no such run directory", self.run_dir)

    def manifest(self) -> RunManifest:
        manifest = read_manifest(self.run_dir)
        if manifest is None:
            raise TranscriptError(
                "the run has no manifest (it holds the run's config and the seal of its files)", self.run_dir / MANIFEST_FILE
            )
        return manifest

    def games(self) -> list[GameEntry]:
        return list(self.games_log().records)

    def calls(self) -> list[CallEntry]:
        return list(self.calls_log().records)

    def games_log(self) -> Log[GameEntry]:
        log = self._read(GAMES_FILE, GameEntry)
        if self.verify:
            _check_unique(log, _game_keys(log), "game (phase, index)")
        return log

    def calls_log(self) -> Log[CallEntry]:
        log = self._read(CALLS_FILE, CallEntry)
        if self.verify:
            _check_unique(log, [c.call_index for c in log.records], "call index")
        return log

    def torn(self) -> dict[str, bool]:
        """Which files end in an incomplete line."""
        return {name: scan_chain(self.run_dir / name).torn_bytes > 0 for name in (GAMES_FILE, CALLS_FILE)}

    def _read(self, name: str, model: type[Record]) -> Log[Record]:
        log = read_log(self.run_dir / name, model, self.verify)
        if log.torn:
            warnings.warn(f"{self.run_dir / name}: the last line is incomplete (interrupted write); it is ignored", stacklevel=3)
        return log


def read_manifest(run_dir: Path) -> RunManifest | None:
    """The run's manifest, or None if it has none; an invalid one is a :class:`TranscriptError`."""
    path = run_dir / MANIFEST_FILE
    try:
        return RunManifest.model_validate_json(path.read_bytes())
    except FileNotFoundError:
        return None
    except ValidationError as error:
        first = error.errors()[0]
        where = ".".join(map(str, first["loc"]))
        raise TranscriptError(f"invalid manifest: {where + ': ' if where else ''}{first['msg']}", path) from None


def _plan_resume(run_dir: Path) -> tuple[Log[GameEntry], Log[CallEntry], int]:
    """Both logs and how many calls stay (the orphan tail of unfinished games dropped)."""
    games = read_log(run_dir / GAMES_FILE, GameEntry)
    calls = read_log(run_dir / CALLS_FILE, CallEntry)
    _check_unique(games, _game_keys(games), "game (phase, index)")
    _check_unique(calls, [c.call_index for c in calls.records], "call index")
    finished = set(_game_keys(games))
    keep = len(calls.records)
    while keep and (last := calls.records[keep - 1]).game_index is not None and (last.phase, last.game_index) not in finished:
        keep -= 1
    return games, calls, keep


def resume_point(run_dir: str | Path) -> ResumePoint:
    """(games_done, calls_done) a resumed run continues from; reads only, modifies nothing."""
    games, _, keep = _plan_resume(Path(run_dir))
    return ResumePoint(len(games.records), keep)


def open_log_for_append(path: Path) -> TextIO:
    """Open an auxiliary JSONL log (beliefs, strategies) for appending, after cutting away a torn last line.

    A run killed while writing leaves the last line without its newline; appending
    to it would glue the next record onto the fragment. Complete lines are kept.
    """
    if path.exists():
        data = path.read_bytes()
        good = data.rfind(b"\n") + 1
        if good < len(data):
            warnings.warn(f"{path}: resuming: dropping an incomplete last line ({len(data) - good} bytes)", stacklevel=2)
            with path.open("r+b") as handle:
                handle.truncate(good)
    return path.open("a", encoding="utf-8")


class _Tail(NamedTuple):
    lines: int
    last_hash: str


class TranscriptWriter:
    """Appends validated, hash-chained records to ``games.jsonl`` and ``calls.jsonl``, each line flushed as written.

    A new writer refuses a directory that already holds records unless
    ``resume=True``, which first repairs an interrupted tail (see the module
    docstring). Closing it seals the manifest, if there is one. Use as a context
    manager or call :meth:`close`.
    """

    def __init__(self, run_dir: str | Path, *, fsync: bool = False, resume: bool = False, on_full: OnFull | None = None) -> None:
        self.run_dir = Path(run_dir)
        self.fsync = fsync
        self.on_full = on_full  # a line that did not fit: see the module docstring
        self.run_dir.mkdir(parents=True, exist_ok=True)
        self._tails = {GAMES_FILE: _Tail(0, GENESIS_HASH), CALLS_FILE: _Tail(0, GENESIS_HASH)}
        self._phases: Counter[str] = Counter()
        self._pending: dict[tuple[str, int], list[int]] = {}  # calls of games not written yet
        self._closed = False
        if resume:
            self.resumed_from = self._repair()
        else:
            for name in (GAMES_FILE, CALLS_FILE):
                path = self.run_dir / name
                if path.exists() and path.stat().st_size:
                    raise TranscriptError("already holds records: resume the run, or choose a new run directory", path)
            self.resumed_from = ResumePoint(0, 0)
        self._files = {name: (self.run_dir / name).open("ab", buffering=0) for name in (GAMES_FILE, CALLS_FILE)}

    def _repair(self) -> ResumePoint:
        games, calls, keep = _plan_resume(self.run_dir)
        manifest = read_manifest(self.run_dir)
        for log in (games, calls):
            _check_against_seal(log.chain, manifest.chains.get(log.chain.path.name) if manifest else None)
        if games.torn:
            self._truncate(GAMES_FILE, games.chain.good_bytes, "an incomplete last game line")
        if calls.torn or keep < len(calls.records):
            size = calls.chain.links[keep - 1].end if keep else 0
            self._truncate(
                CALLS_FILE,
                size,
                f"{len(calls.records) - keep} call(s) of an unfinished game" + (" and an incomplete last line" if calls.torn else ""),
            )
        self._tails[GAMES_FILE] = _Tail(len(games.records), games.chain.last_hash)
        self._tails[CALLS_FILE] = _Tail(keep, calls.chain.links[keep - 1].hash if keep else GENESIS_HASH)
        self._phases.update(g.phase for g in games.records)
        return ResumePoint(len(games.records), keep)

    def _truncate(self, name: str, size: int, what: str) -> None:
        path = self.run_dir / name
        warnings.warn(f"{path}: resuming: dropping {what} ({path.stat().st_size - size} bytes)", stacklevel=3)
        with path.open("r+b") as handle:
            handle.truncate(size)
            handle.flush()
            os.fsync(handle.fileno())

    def seals(self) -> dict[str, ChainSeal]:
        """The seal of each chained file as written so far (the cache's read from its file, if it has one)."""
        seals = {name: ChainSeal(lines=tail.lines, last_hash=tail.last_hash) for name, tail in self._tails.items()}
        seals[GAMES_FILE] = seals[GAMES_FILE].model_copy(update={"phases": {phase: self._phases[phase] for phase in PHASES}})
        cache = scan_chain(self.run_dir / CACHE_FILE)
        if cache.exists:
            seals[CACHE_FILE] = cache.seal()
        return seals

    def write_manifest(self, manifest: RunManifest | dict[str, Any]) -> RunManifest:
        """Validate and write ``manifest.json`` atomically, sealed with the files as they are now."""
        data = manifest if isinstance(manifest, dict) else manifest.model_dump()
        sealed = RunManifest.model_validate({**data, "chains": self.seals(), "sealed_at": datetime.now(UTC)})
        self._write_manifest_file(sealed)
        return sealed

    def _write_manifest_file(self, manifest: RunManifest) -> None:
        write_atomically(self.run_dir / MANIFEST_FILE, manifest.model_dump_json(indent=2) + "\n", self.on_full)

    def append_game(self, entry: GameEntry | dict[str, Any]) -> GameEntry:
        """Write a finished game; ``call_indices`` (when not given) lists the calls written for it since they began."""
        game = GameEntry.model_validate(entry if isinstance(entry, dict) else entry.model_dump())
        calls = tuple(self._pending.pop((game.phase, game.game_index), ()))
        if game.call_indices is None:
            game = game.model_copy(update={"call_indices": calls})
        self._append(GAMES_FILE, game)
        self._phases[game.phase] += 1  # once written: a seal counts only the games on disk
        return game

    def append_call(self, entry: CallEntry | dict[str, Any]) -> CallEntry:
        call = CallEntry.model_validate(entry if isinstance(entry, dict) else entry.model_dump())
        if call.game_index is not None and call.phase is not None:
            self._pending.setdefault((call.phase, call.game_index), []).append(call.call_index)
        return self._append(CALLS_FILE, call)

    def _append(self, name: str, record: Record) -> Record:
        tail = self._tails[name]
        line = chain_line(tail.last_hash, record.model_dump_json().encode("utf-8"))
        handle = self._files[name]
        retried_when_freed(lambda: append_whole(handle, line + b"\n", self.run_dir / name), self.on_full)
        if self.fsync:
            os.fsync(handle.fileno())
        self._tails[name] = _Tail(tail.lines + 1, line_hash(line))
        return record

    def close(self) -> None:
        """Close the files and seal the manifest (if the run has one) with them."""
        if self._closed:
            return
        self._closed = True
        for handle in self._files.values():
            handle.close()
        manifest = read_manifest(self.run_dir)
        if manifest is not None:
            self._write_manifest_file(
                manifest.model_copy(update={"schema_version": TRANSCRIPT_SCHEMA, "chains": self.seals(), "sealed_at": datetime.now(UTC)})
            )

    def __enter__(self) -> TranscriptWriter:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _check_against_seal(chain: ChainScan, seal: ChainSeal | None) -> None:
    """Refuse to resume a file that lost or changed lines its manifest sealed (lines after the seal are fine)."""
    if seal is None or seal.lines == 0:
        return
    if len(chain.links) < seal.lines:
        raise TranscriptError(
            f"the manifest seals {seal.lines} line(s), the file holds {len(chain.links)}: lines were lost "
            "after the run was sealed, so it cannot be resumed safely ('arena replay' shows where)",
            chain.path,
        )
    sealed = chain.links[seal.lines - 1]
    if sealed.hash != seal.last_hash:
        raise TranscriptError(
            "this is not the line the manifest sealed: the file was changed after the run was sealed, "
            "so it cannot be resumed safely ('arena replay' shows where)",
            chain.path,
            sealed.number,
        )
