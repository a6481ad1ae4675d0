"""Reading a run directory for the viewer: which kind it is, its games, and each game's model calls by byte offset.

Kinds: ``llm`` (``arena run``: ``manifest.json`` with ``run_id`` and ``config``; games are
:class:`~harness.records.entries.GameEntry` lines), ``tournament`` (``arena match``/``tournament``: games are
:class:`~harness.tournaments.plan.GameLine` lines) and ``paper`` (``arena bench paper``: ``results.jsonl``, no games).
Model calls are never all held at once: :class:`CallIndex` keeps the byte offset of every line of ``calls.jsonl``
and reads a game's lines when its chunk is written.
"""

from __future__ import annotations

import json
from collections import defaultdict
from collections.abc import Hashable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from harness.models.errors import attempt_failures
from harness.prompting.waves import wave_label, wave_size
from harness.records.entries import CALLS_FILE, GAMES_FILE, MANIFEST_FILE, CallEntry, GameEntry, TranscriptError
from harness.tournaments.plan import GameLine
from harness.view.data import RunKind

PAPER_RESULTS = "results.jsonl"
BELIEFS, STRATEGIES, METRICS, AGENT_REPORT = "beliefs.jsonl", "strategies.jsonl", "metrics.json", "agent.json"
_TOURNAMENT_CALL_KEYS = ("env_id", "pairing", "game", "side", "agent")


@dataclass(frozen=True)
class SourceGame:
    """One recorded game in the viewer's common form."""

    id: int
    env_id: int | str  # an id 0-55, or the key of another environment (a layout file, a suite's)
    phase: str
    index: int
    opponent: str
    agent_colour: str  # black / white / both: whose reward and share the overview plots
    record: dict[str, Any]
    call_key: Hashable  # the key of its calls in the run's CallIndex
    moves: tuple[int, ...]
    layout: str
    black: str
    white: str
    black_discs: int
    white_discs: int
    rewards: tuple[int, int]
    forfeit_by: str | None = None


@dataclass
class CallIndex:
    """Where each game's calls sit in ``calls.jsonl`` (byte offsets), and the calls outside any game."""

    path: Path | None
    by_game: dict[Hashable, list[int]] = field(default_factory=lambda: defaultdict(list))
    outside: list[int] = field(default_factory=list)
    latency: list[float] = field(default_factory=list)  # per call, in file order
    totals: dict[str, float] = field(default_factory=lambda: defaultdict(float))
    failure_kinds: dict[str, int] = field(default_factory=lambda: defaultdict(int))
    request_failures: dict[str, int] = field(default_factory=lambda: defaultdict(int))  # "retried: kind", "failed for good: kind"

    def read(self, offsets: list[int]) -> list[dict[str, Any]]:
        """The calls at ``offsets``, as CallEntry dumps (a tournament's keep their game and side keys)."""
        if self.path is None or not offsets:
            return []
        calls = []
        with self.path.open("rb") as file:
            for offset in offsets:
                file.seek(offset)
                calls.append(_call_dump(json.loads(file.readline())))
        return calls


def _call_dump(raw: dict[str, Any]) -> dict[str, Any]:
    extra = {key: raw.pop(key) for key in _TOURNAMENT_CALL_KEYS if key in raw}
    raw.pop("prev_hash", None)
    if "game" in extra:
        raw["game_index"] = extra["game"]
    return {**CallEntry.model_validate(raw).model_dump(mode="json", exclude_defaults=True), **extra}


@dataclass(frozen=True)
class RunSource:
    """A run directory as the viewer reads it."""

    kind: RunKind
    run_dir: Path
    manifest: dict[str, Any]
    games: tuple[SourceGame, ...]
    extras: dict[str, Any]  # metrics, beliefs, strategies, results: what the overview needs

    def title(self) -> str:
        if self.kind == "llm":
            config = self.manifest.get("config", {})
            agent = str(config.get("agent"))
            return f"{wave_label(agent, wave_size(agent, config))} with {config.get('model')} on env {config.get('env')}"
        if self.kind == "tournament":
            return f"{self.manifest.get('kind', 'tournament')} {self.manifest.get('run_id', self.run_dir.name)}"
        return f"bench paper {self.run_dir.name}"


def run_kind(run_dir: Path) -> RunKind:
    """The kind of ``run_dir``; TranscriptError naming what is missing otherwise."""
    if not run_dir.is_dir():
        raise TranscriptError(
            "no such run directory (give a directory that `arena run`, `match`, `tournament` or `bench paper` wrote)", run_dir
        )
    manifest = _read_json(run_dir / MANIFEST_FILE)
    if not isinstance(manifest, dict):
        raise TranscriptError(
            "not a run directory: it has no manifest.json (arena run, match, tournament and bench paper write one)", run_dir
        )
    if "run_id" in manifest and "config" in manifest:
        return "llm"
    if manifest.get("kind") in ("tournament", "match") or (run_dir / "results.json").exists():
        return "tournament"
    if (run_dir / PAPER_RESULTS).exists() or "plan" in manifest:
        return "paper"
    raise TranscriptError("the manifest is neither an 'arena run', a 'match'/'tournament' nor a 'bench paper' one", run_dir / MANIFEST_FILE)


def read_run(run_dir: str | Path) -> RunSource:
    """Read ``run_dir`` (any kind) for the viewer; a game still being written (a torn last line) is left out."""
    run_dir = Path(run_dir)
    kind = run_kind(run_dir)
    manifest = _read_json(run_dir / MANIFEST_FILE)
    if kind == "llm":
        games = tuple(_llm_games(run_dir, int(manifest["config"].get("env", 0))))
        extras = {
            "metrics": _read_json(run_dir / METRICS),
            "beliefs": list(_jsonl(run_dir / BELIEFS)),
            "strategies": list(_jsonl(run_dir / STRATEGIES)),
            "agent_report": _read_json(run_dir / AGENT_REPORT),
        }
    elif kind == "tournament":
        games = tuple(_tournament_games(run_dir))
        extras = {"results": _read_json(run_dir / "results.json")}
    else:
        games = ()
        extras = {"results": list(_jsonl(run_dir / PAPER_RESULTS))}
    return RunSource(kind, run_dir, manifest, games, extras)


def index_calls(source: RunSource) -> CallIndex:
    """One pass over ``calls.jsonl``: each line's offset under its game's key, latencies, totals, failure kinds."""
    path = source.run_dir / CALLS_FILE
    index = CallIndex(path if path.exists() else None)
    if index.path is None:
        return index
    by_call_index: dict[int, Hashable] = {}
    for game in source.games:  # schema 2 arena runs list each game's calls
        for call_index in game.record.get("call_indices") or ():
            by_call_index[call_index] = game.call_key
    offset = 0
    with index.path.open("rb") as file:
        for line in file:
            here, offset = offset, offset + len(line)
            if not line.endswith(b"\n"):
                break  # a call still being written
            raw = json.loads(line)
            key = by_call_index.get(raw.get("call_index", -1)) or _call_key(source.kind, raw)
            (index.by_game[key] if key is not None else index.outside).append(here)
            _count(index, raw)
    return index


def _count(index: CallIndex, raw: dict[str, Any]) -> None:
    index.latency.append(float(raw.get("latency_s") or 0.0))
    for name in ("tokens_in", "tokens_out", "cost_usd"):
        index.totals[name] += float(raw.get(name) or 0)
    index.totals["calls"] += 1
    index.totals["cache_hits"] += bool(raw.get("cache_hit"))
    if raw.get("failure_kind"):
        index.failure_kinds[str(raw["failure_kind"])] += 1
    retried, final = attempt_failures(
        list(raw.get("errors") or []), int(raw.get("retries") or 0), raw.get("verdict"), raw.get("reason"), bool(raw.get("cache_hit"))
    )
    for kind in retried:
        index.request_failures[f"retried: {kind}"] += 1
    if final is not None:
        index.request_failures[f"failed for good: {final}"] += 1


def _call_key(kind: RunKind, raw: dict[str, Any]) -> Hashable:
    if kind == "tournament":
        return (raw.get("env_id"), raw.get("pairing"), raw.get("game"))
    return None if raw.get("game_index") is None else (raw.get("phase"), raw["game_index"])


def _llm_games(run_dir: Path, env_id: int) -> Iterator[SourceGame]:
    for number, raw in enumerate(_jsonl(run_dir / GAMES_FILE)):
        raw.pop("prev_hash", None)
        game = GameEntry.model_validate(raw)
        yield SourceGame(
            number,
            env_id,
            game.phase,
            game.game_index,
            game.opponent,
            game.agent_colour,
            game.model_dump(mode="json"),
            (game.phase, game.game_index),
            game.moves,
            game.layout,
            game.black,
            game.white,
            game.black_discs,
            game.white_discs,
            game.rewards,
            game.forfeit_by,
        )


def _tournament_games(run_dir: Path) -> Iterator[SourceGame]:
    for number, raw in enumerate(_jsonl(run_dir / GAMES_FILE)):
        line = GameLine.model_validate(raw)
        yield SourceGame(
            number,
            line.env_id,
            f"env {line.env_id}",
            line.game,
            f"{line.agent_a} vs {line.agent_b}",
            line.a_colour,
            line.model_dump(mode="json"),
            (line.env_id, line.pairing, line.game),
            line.moves,
            line.env_name,
            line.black,
            line.white,
            line.black_discs,
            line.white_discs,
            line.rewards,
        )


def _jsonl(path: Path) -> Iterator[dict[str, Any]]:
    """The complete lines of a JSONL file (none if it is missing; a torn last line is still being written)."""
    if not path.exists():
        return
    with path.open(encoding="utf-8") as file:
        for number, line in enumerate(file, 1):
            if not line.endswith("\n"):
                return
            if line.strip():
                try:
                    yield json.loads(line)
                except ValueError as error:
                    raise TranscriptError(f"not a JSON line: {error}", path, number) from None


def _read_json(path: Path) -> Any:
    if not path.exists():
        return None
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except ValueError as error:
        raise TranscriptError(f"invalid JSON: {error}", path) from None
