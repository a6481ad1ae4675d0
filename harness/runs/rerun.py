"""Rerun a model-agent run from its response cache, with no network, and find the first divergence.

:func:`rerun` runs the agent again into a new directory with a
:class:`CacheOnlyClient` (the run's ``cache.jsonl``; a request not in the cache
raises :class:`CacheMiss`) and compares its games move by move with the original.
First it lists where the cache disagrees with the calls log
(:func:`cache_disagreements`): a call whose recorded reply is not the reply the
cache holds for its request, or whose request the cache does not hold at all.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from engine import make_env
from harness.models.cache import CacheFileError, ResponseCache
from harness.models.client import ModelClient
from harness.models.messages import ModelRequest, ModelResponse
from harness.play.game import move_notation
from harness.records.transcript import (
    CallEntry,
    GameEntry,
    Log,
    TranscriptError,
    TranscriptReader,
)
from harness.runs.llm_run import CACHE_FILE, LlmRunConfig, run_llm
from harness.runs.replay import llm_config, run_kind


class CacheMiss(RuntimeError):
    """A cache-only client was asked something its cache does not hold (it never calls the network)."""



class _NoNetwork:
    """Stands in for the model behind a :class:`CacheOnlyClient`: any call is a cache miss."""

    async def acomplete(self, messages: list[dict[str, Any]], params: dict[str, Any]) -> Any:
        raise CacheMiss("the cache-only client was asked to call the model")


class CacheOnlyClient(ModelClient):
    """A model client answering from a response cache only; a request not in it raises :class:`CacheMiss`.

    It never imports litellm and never calls a model (``network_calls`` stays 0).
    """

    def __init__(self, model: str, cache: ResponseCache, seed: int = 0) -> None:
        super().__init__(model, cache=cache, mock=_NoNetwork(), seed=seed)
        self.misses: list[str] = []

    async def complete(self, request: ModelRequest) -> ModelResponse:
        key = request.key()
        if self.cache is None or self.cache.lookup(key, self._occurrences.get(key, -1) + 1) is None:
            self.misses.append(key)
            raise CacheMiss(f"no cached reply for request {key[:12]}… (the rerun asked something the original run did not)")
        return await super().complete(request)


@dataclass
class RerunReport:
    original: Path
    rerun_dir: Path
    games_compared: int
    divergence: str | None  # None: reproduced exactly
    cache_miss: str | None
    cache_disagreements: tuple[str, ...] = ()

    @property
    def reproduced(self) -> bool:
        return self.divergence is None and self.cache_miss is None and not self.cache_disagreements

    def summary(self) -> str:
        if self.reproduced:
            return f"reproduced exactly: {self.games_compared} games identical move by move (rerun in {self.rerun_dir})"
        lines = [f"cache disagrees with the calls log: {d}" for d in self.cache_disagreements]
        if self.cache_miss:
            lines.append(f"cache miss: {self.cache_miss}")
        if self.divergence:
            lines.append(f"first divergence: {self.divergence}")
        lines.append(f"({self.games_compared} games compared; rerun in {self.rerun_dir})")
        return "\n".join(lines)


def rerun(run_dir: str | Path, out: str | Path) -> RerunReport:
    """Run the agent of ``run_dir`` again into ``out/<run id>-rerun`` from its cached replies only; compare the games."""
    run_dir = Path(run_dir)
    if run_kind(run_dir) != "llm":
        raise TranscriptError("rerun needs an 'arena run' directory (a tournament makes no model calls)", run_dir)
    config = llm_config(run_dir)
    original = TranscriptReader(run_dir).games()
    cache_path = run_dir / CACHE_FILE
    if not cache_path.exists():
        raise TranscriptError("the run has no response cache, so it cannot be rerun offline", cache_path)
    try:
        cache = ResponseCache(cache_path)
    except CacheFileError as error:
        raise TranscriptError(f"the response cache cannot be read: {error}", cache_path) from None
    disagreements = cache_disagreements(TranscriptReader(run_dir).calls_log(), cache)
    client = CacheOnlyClient(config.model, cache, seed=config.seed)
    run_id = f"{run_dir.name}-rerun"
    miss: str | None = None
    try:
        new_dir = run_llm(config, out=out, run_id=run_id, client=client)
    except CacheMiss as error:
        new_dir = Path(out) / run_id
        miss = str(error)
    got = TranscriptReader(new_dir).games()
    divergence, compared = _first_divergence(original, got, config, miss is not None)
    if miss is not None:
        done = {(g.phase, g.game_index) for g in got}
        first_missing = next((g for g in original if (g.phase, g.game_index) not in done), None)
        where = f"while playing {first_missing.phase} game {first_missing.game_index}" if first_missing else "after the last game"
        miss = f"{where}: {miss}"
    return RerunReport(run_dir, new_dir, compared, divergence, miss, disagreements)


def cache_disagreements(calls: Log[CallEntry], cache: ResponseCache) -> tuple[str, ...]:
    """Each call that got a reply, whose request's reply in the cache differs or is missing; names call and line."""
    found = []
    for position, call in enumerate(calls.records):
        if call.cache_key is None or call.reply is None:
            continue  # a call that failed for good, or one recorded without its request's key
        cached = cache.get(call.cache_key)
        where = f"call {call.call_index} (calls.jsonl:{calls.line(position)})"
        if cached is None:
            found.append(f"{where}: the cache holds no reply for its request {call.cache_key[:12]}...")
        elif call.tool_calls is not None and cached.tool_calls != call.tool_calls:  # a move as a call: its reply is the arguments
            found.append(f"{where}: the cache's tool calls for its request {call.cache_key[:12]}... differ from the recorded ones")
        elif call.tool_calls is None and cached.text != call.reply:
            found.append(f"{where}: the cache's reply to its request {call.cache_key[:12]}... is {_short(cached.text)}, "
                         f"the call recorded {_short(call.reply)}")
    return tuple(found)


def _short(text: str, limit: int = 60) -> str:
    return repr(text if len(text) <= limit else text[:limit] + "...")


def _first_divergence(expected: list[GameEntry], got: list[GameEntry], config: LlmRunConfig, stopped: bool) -> tuple[str | None, int]:
    rules = make_env(config.env).rules
    by_key = {(g.phase, g.game_index): g for g in got}
    compared = 0
    for game in expected:
        other = by_key.get((game.phase, game.game_index))
        if other is None:
            if stopped:
                return None, compared  # the cache miss says where it stopped
            return f"{game.phase} game {game.game_index}: recorded, not played by the rerun", compared
        compared += 1
        for ply, (a, b) in enumerate(zip(game.moves, other.moves, strict=False)):
            if a != b:
                return (f"{game.phase} game {game.game_index}, ply {ply}: expected {move_notation(a, rules)}, "
                        f"got {move_notation(b, rules)}"), compared
        if len(game.moves) != len(other.moves):
            return (f"{game.phase} game {game.game_index}: expected {len(game.moves)} plies, got {len(other.moves)}"), compared
        if (game.rewards, game.forfeit_by) != (other.rewards, other.forfeit_by):
            return (f"{game.phase} game {game.game_index}: expected rewards {game.rewards} (forfeit {game.forfeit_by}), "
                    f"got {other.rewards} (forfeit {other.forfeit_by})"), compared
    extra = [g for g in got if all((g.phase, g.game_index) != (e.phase, e.game_index) for e in expected)]
    if extra:
        return f"{extra[0].phase} game {extra[0].game_index}: played by the rerun, not in the original", compared
    return None, compared
