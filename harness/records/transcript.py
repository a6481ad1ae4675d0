"""Run transcripts: versioned records, an append-only JSONL writer, a validating reader, resume.

A run directory holds ``manifest.json`` (:class:`RunManifest`, written
atomically), ``games.jsonl`` (one :class:`GameEntry` per finished game) and
``calls.jsonl`` (one :class:`CallEntry` per model call). Every line is
validated before it is written, then written in one piece and flushed
(``fsync=True`` also forces it to disk).

Completeness: a line counts only once its trailing newline is on disk, so a
game counts only once its whole ``GameEntry`` line is. After ``kill -9`` the
last line of a file may be torn (no trailing newline); the reader skips it
with a warning and :meth:`TranscriptWriter.open` with ``resume=True``
truncates it away. Only an incomplete LAST line is ever dropped: a corrupted
line anywhere else (bad JSON, a record that does not validate, a repeated game
or call index) is a :class:`TranscriptError` naming the file and the line
number, and nothing is modified.

Resume: calls are written before the ``GameEntry`` of their game, so after an
interruption the tail of ``calls.jsonl`` may hold calls of a game that never
finished. The game is played again on resume, so those trailing calls (the
"orphan tail": calls after the last one that belongs to a finished game, or
to no game) are truncated too; :func:`resume_point` counts what stays.
"""

from __future__ import annotations

import os
import re
import warnings
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal, NamedTuple, TextIO, TypeVar

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    ValidationError,
    field_validator,
    model_validator,
)

from harness.play.decisions import FailureCounts

TRANSCRIPT_SCHEMA = 1
MANIFEST_FILE, GAMES_FILE, CALLS_FILE = "manifest.json", "games.jsonl", "calls.jsonl"

_SECRET_VALUE = re.compile(r"(?<![A-Za-z0-9])sk-[A-Za-z0-9_-]{16,}")
_SECRET_KEY_PARTS = ("api_key", "apikey", "secret", "password", "passwd")
# A key containing "token" is a secret unless it is a count or limit of tokens.
_TOKEN_COUNT_KEY = re.compile(r"tokens|token_(?:count|limit|budget|usage)|num_token", re.IGNORECASE)


class TranscriptError(ValueError):
    """A transcript that cannot be read or written as asked; names the file and line when there is one."""

    def __init__(self, message: str, path: Path | None = None, line: int | None = None) -> None:
        self.path, self.line = path, line
        where = f"{path}:{line}: " if path is not None and line is not None else f"{path}: " if path else ""
        super().__init__(where + message)


class _Record(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    schema_version: int = TRANSCRIPT_SCHEMA

    @field_validator("schema_version")
    @classmethod
    def _known_version(cls, version: int) -> int:
        if version != TRANSCRIPT_SCHEMA:
            raise ValueError(f"schema_version {version} is not supported (this code reads version {TRANSCRIPT_SCHEMA})")
        return version


def secret_paths(value: Any, path: str = "") -> list[str]:
    """Where ``value`` (nested dicts/lists) holds a key or a value that looks like a secret."""
    found: list[str] = []
    if isinstance(value, dict):
        for key, item in value.items():
            here = f"{path}.{key}" if path else str(key)
            name = str(key).lower()
            if any(part in name for part in _SECRET_KEY_PARTS) or ("token" in name and not _TOKEN_COUNT_KEY.search(name)):
                found.append(here)
            else:
                found.extend(secret_paths(item, here))
    elif isinstance(value, list | tuple):
        for index, item in enumerate(value):
            found.extend(secret_paths(item, f"{path}[{index}]"))
    elif isinstance(value, str) and _SECRET_VALUE.search(value):
        found.append(path or "<value>")
    return found


class RunManifest(_Record):
    """What a run was: its id, config, package versions, git commit, prompt template hashes, seeds. Never secrets.

    Refused (the error names the place, never the value): a key containing
    ``api_key``, ``secret``, ``password``, or ``token`` (except token counts and
    limits such as ``max_tokens``, ``tokens_in``, ``token_budget``), and any
    string that looks like an API key (``sk-`` and 16 or more key characters).
    """

    model_config = ConfigDict(frozen=True, extra="forbid", hide_input_in_errors=True)

    run_id: str
    config: dict[str, Any] = {}
    versions: dict[str, str] = {}
    git: dict[str, Any] | None = None
    template_hashes: dict[str, str] = {}
    seeds: dict[str, int] = {}
    created_at: datetime = Field(default_factory=lambda: datetime.now(UTC))

    @model_validator(mode="before")
    @classmethod
    def _no_secrets(cls, data: Any) -> Any:
        places = secret_paths(data) if isinstance(data, dict) else []
        if places:
            raise ValueError(
                f"the manifest would record something that looks like a secret at {', '.join(places)}; "
                "API keys are read from the environment and never written to a run"
            )
        return data


class GameEntry(_Record):
    """One finished game (``games.jsonl``). ``moves``: flat indices, PASS = -1; ``rewards``: (black, white)."""

    game_index: int = Field(ge=0)
    phase: Literal["adapt", "eval"]
    layout: str
    black: str
    white: str
    opponent: str
    agent_colour: Literal["black", "white", "both"]
    moves: tuple[int, ...]
    black_discs: int = Field(ge=0)
    white_discs: int = Field(ge=0)
    rewards: tuple[int, int]
    forfeit_by: Literal["black", "white"] | None = None
    failures: FailureCounts = FailureCounts()
    seed: int | None = None

    @model_validator(mode="after")
    def _forfeit_rewards(self) -> GameEntry:
        if self.forfeit_by is not None:
            expected = (-1, 1) if self.forfeit_by == "black" else (1, -1)
            if self.rewards != expected:
                raise ValueError(f"a game forfeited by {self.forfeit_by} must have rewards {expected}, not {self.rewards}")
        return self

    def to_game_record(self) -> Any:
        """The :class:`~harness.play.game.GameRecord` of this game (e.g. to rebuild an arena ledger on resume)."""
        from engine.protocol.record import GameRecord, rho_fraction

        return GameRecord(
            layout=self.layout, black_policy=self.black, white_policy=self.white, moves=self.moves,
            black=self.black_discs, white=self.white_discs,
            rho_black=float(rho_fraction(self.black_discs, self.white_discs)),
            rho_white=float(rho_fraction(self.white_discs, self.black_discs)),
            rewards=self.rewards, plies=len(self.moves),
        )


class CallEntry(_Record):
    """One model call (``calls.jsonl``); ``game_index`` None for calls outside a game (belief elicitation)."""

    call_index: int = Field(ge=0)
    game_index: int | None = None
    phase: Literal["adapt", "eval"] | None = None
    ply: int | None = None
    attempt: int = Field(default=0, ge=0)
    messages: list[dict[str, Any]]
    reply: str | None = None
    finish_reason: str | None = None
    parsed_move: str | None = None
    verdict: Literal["legal", "illegal", "unparsed", "call_failed"] | None = None
    failure_kind: str | None = None
    tokens_in: int = Field(default=0, ge=0)
    tokens_out: int = Field(default=0, ge=0)
    cost_usd: float = Field(default=0.0, ge=0)
    latency_s: float = Field(default=0.0, ge=0)
    retries: int = Field(default=0, ge=0)
    errors: list[str] = Field(default_factory=list)  # the client's failed attempts before this reply, classified
    reason: str | None = None  # why the reply was not used (verifier), or how the call failed for good
    cache_key: str | None = None
    cache_hit: bool = False
    template_hash: str | None = None


Record = TypeVar("Record", bound=_Record)


class ResumePoint(NamedTuple):
    """Complete games and the calls that stay after resume repair (the next call index)."""

    games_done: int
    calls_done: int


class _Scan(NamedTuple):
    records: list[Any]
    ends: list[int]  # byte offset just after each record's line
    good_bytes: int  # length of the complete prefix (everything but a torn last line)
    torn: bool


def _scan(path: Path, model: type[Record]) -> _Scan:
    """Every complete line validated; a last line without a newline is reported as torn, not parsed."""
    if not path.exists():
        return _Scan([], [], 0, False)
    data = path.read_bytes()
    records: list[Any] = []
    ends: list[int] = []
    offset, number = 0, 0
    while offset < len(data):
        number += 1
        end = data.find(b"\n", offset)
        if end == -1:
            return _Scan(records, ends, offset, True)
        raw = data[offset:end]
        if raw.strip():
            try:
                records.append(model.model_validate_json(raw))
                ends.append(end + 1)
            except ValidationError as error:
                problem = "; ".join(f"{'.'.join(map(str, e['loc'])) or 'line'}: {e['msg']}" for e in error.errors())
                raise TranscriptError(f"corrupted {model.__name__} line: {problem}", path, number) from None
        offset = end + 1
    return _Scan(records, ends, offset, False)


def _check_unique(path: Path, keys: list[Any], what: str) -> None:
    seen: dict[Any, int] = {}
    for number, key in enumerate(keys, 1):
        if key in seen:
            raise TranscriptError(f"{what} {key} appears again (first on line {seen[key]}): a record was double-written", path, number)
        seen[key] = number


class TranscriptReader:
    """Reads and validates a run directory; a torn last line is skipped with a warning, never modified."""

    def __init__(self, run_dir: str | Path) -> None:
        self.run_dir = Path(run_dir)
        if not self.run_dir.is_dir():
            raise TranscriptError("no such run directory", self.run_dir)

    def manifest(self) -> RunManifest:
        path = self.run_dir / MANIFEST_FILE
        try:
            return RunManifest.model_validate_json(path.read_bytes())
        except FileNotFoundError:
            raise TranscriptError("the run has no manifest", path) from None
        except ValidationError as error:
            raise TranscriptError(f"invalid manifest: {error.errors()[0]['msg']}", path) from None

    def games(self) -> list[GameEntry]:
        scan = self._read(GAMES_FILE, GameEntry)
        _check_unique(self.run_dir / GAMES_FILE, [(g.phase, g.game_index) for g in scan.records], "game (phase, index)")
        return scan.records

    def calls(self) -> list[CallEntry]:
        scan = self._read(CALLS_FILE, CallEntry)
        _check_unique(self.run_dir / CALLS_FILE, [c.call_index for c in scan.records], "call index")
        return scan.records

    def torn(self) -> dict[str, bool]:
        """Which files end in an incomplete line."""
        return {name: _scan(self.run_dir / name, model).torn for name, model in ((GAMES_FILE, GameEntry), (CALLS_FILE, CallEntry))}

    def _read(self, name: str, model: type[Record]) -> _Scan:
        scan = _scan(self.run_dir / name, model)
        if scan.torn:
            warnings.warn(f"{self.run_dir / name}: the last line is incomplete (interrupted write); it is ignored", stacklevel=3)
        return scan


def _plan_resume(run_dir: Path) -> tuple[_Scan, _Scan, int]:
    """Scans of both files and how many calls stay (the orphan tail of unfinished games dropped)."""
    games = _scan(run_dir / GAMES_FILE, GameEntry)
    calls = _scan(run_dir / CALLS_FILE, CallEntry)
    _check_unique(run_dir / GAMES_FILE, [(g.phase, g.game_index) for g in games.records], "game (phase, index)")
    _check_unique(run_dir / CALLS_FILE, [c.call_index for c in calls.records], "call index")
    finished = {(g.phase, g.game_index) for g in games.records}
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


class TranscriptWriter:
    """Appends validated records to ``games.jsonl`` and ``calls.jsonl``, each line flushed as it is written.

    A new writer refuses a directory that already holds records unless
    ``resume=True``, which first repairs an interrupted tail (see the module
    docstring). Use as a context manager or call :meth:`close`.
    """

    def __init__(self, run_dir: str | Path, *, fsync: bool = False, resume: bool = False) -> None:
        self.run_dir = Path(run_dir)
        self.fsync = fsync
        self.run_dir.mkdir(parents=True, exist_ok=True)
        if resume:
            self.resumed_from = self._repair()
        else:
            for name in (GAMES_FILE, CALLS_FILE):
                path = self.run_dir / name
                if path.exists() and path.stat().st_size:
                    raise TranscriptError("already holds records: resume the run, or choose a new run directory", path)
            self.resumed_from = ResumePoint(0, 0)
        self._files = {name: (self.run_dir / name).open("ab") for name in (GAMES_FILE, CALLS_FILE)}

    def _repair(self) -> ResumePoint:
        games, calls, keep = _plan_resume(self.run_dir)
        if games.torn:
            self._truncate(GAMES_FILE, games.good_bytes, "an incomplete last game line")
        if calls.torn or keep < len(calls.records):
            size = calls.ends[keep - 1] if keep else 0
            self._truncate(CALLS_FILE, size, f"{len(calls.records) - keep} call(s) of an unfinished game"
                           + (" and an incomplete last line" if calls.torn else ""))
        return ResumePoint(len(games.records), keep)

    def _truncate(self, name: str, size: int, what: str) -> None:
        path = self.run_dir / name
        warnings.warn(f"{path}: resuming: dropping {what} ({path.stat().st_size - size} bytes)", stacklevel=3)
        with path.open("r+b") as handle:
            handle.truncate(size)
            handle.flush()
            os.fsync(handle.fileno())

    def write_manifest(self, manifest: RunManifest | dict[str, Any]) -> RunManifest:
        """Validate and write ``manifest.json`` atomically (temporary file, then rename)."""
        manifest = RunManifest.model_validate(manifest if isinstance(manifest, dict) else manifest.model_dump())
        path = self.run_dir / MANIFEST_FILE
        temporary = path.with_suffix(".json.tmp")
        temporary.write_text(manifest.model_dump_json(indent=2) + "\n", encoding="utf-8")
        os.replace(temporary, path)
        return manifest

    def append_game(self, entry: GameEntry | dict[str, Any]) -> GameEntry:
        return self._append(GAMES_FILE, GameEntry, entry)

    def append_call(self, entry: CallEntry | dict[str, Any]) -> CallEntry:
        return self._append(CALLS_FILE, CallEntry, entry)

    def _append(self, name: str, model: type[Record], entry: Any) -> Record:
        record = model.model_validate(entry if isinstance(entry, dict) else entry.model_dump())
        handle = self._files[name]
        handle.write(record.model_dump_json().encode("utf-8") + b"\n")
        handle.flush()
        if self.fsync:
            os.fsync(handle.fileno())
        return record

    def close(self) -> None:
        for handle in self._files.values():
            handle.close()

    def __enter__(self) -> TranscriptWriter:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
