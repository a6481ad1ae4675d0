"""How an ``arena run`` stops early and honestly: interrupts, caps, and the calls paid for before a stop.

Interrupts (:func:`run_stop_request`, handled by :mod:`harness.records.interrupts` like
every command's): the first SIGINT (Ctrl-C) or SIGTERM asks the run to stop: no new game
or model call starts (the agent process is told, see :mod:`harness.referee.model_process`),
the calls under way finish, every record is flushed, and
:func:`~harness.runs.llm_run.run_llm` raises :class:`RunInterruptedError` naming what was
kept. A second one ends the agent process and this one at once (``os._exit``, code 130):
every line written so far is on disk, the writer lock dies with the process, so the run
resumes as after ``kill -9``.

Paid calls (:class:`PaidCalls`): every reply the model was paid for enters the response
cache; a call is written to ``calls.jsonl`` when its game finishes. When the run stops
in the middle of a game (a cap, an interrupt), the replies of that game, paid for, are
written as calls outside any game (``game_index`` null, ``reason`` saying so), so
``calls.jsonl`` holds every paid call; the game is played again on resume, its calls
then answered by the cache (cache hits, free). Calls that failed for good (their retries
spent) go to the cache too: each one's record gets every attempt's error (``errors``: the
retried ones, then the last), and those of an unfinished game are written the same way
(:data:`UNFINISHED_FAILURE`), as is the call that found the endpoint down
(:func:`endpoint_down_call`), so the report counts every failed request by kind.

A full disk (:mod:`harness.records.reserve`): the first write that fails for want of space frees the run's
reserve and asks for the same clean stop (:func:`disk_full_reason` says why, naming the file and the error);
the calls on the wire finish and are written in the freed space, and the run raises :class:`DiskFull`.

Caps across a resume: the tokens and dollars spent are those of the paid calls on
record (:func:`spent`), and the model client of a resumed run gets what is left of the
caps (:func:`remaining_caps`). ``--resume`` may set new caps: they are recorded in the
manifest's config with the games done when they changed (:func:`with_new_caps`).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from engine.protocol.arena import Ledger
from harness.models.cache import CachedFailure, OnFull, ResponseCache, append_whole, retried_when_freed
from harness.models.errors import REPLAYED, EndpointDown
from harness.models.messages import ModelResponse
from harness.play.arena import Arena
from harness.records.interrupts import StopRequest
from harness.records.transcript import CallEntry, open_log_for_append
from harness.referee.model_process import RunInterrupted
from harness.runs.llm_config import CapChange, LlmRunConfig

UNFINISHED_GAME = ("paid for in a game that had not finished when the run stopped; the game is played again on resume "
                   "(its calls then come from the response cache)")
UNFINISHED_FAILURE = ("failed for good in a game that had not finished when the run stopped; the game is played again on "
                      "resume (the failure then comes from the response cache)")


class RunStopped(RuntimeError):
    """The run stopped early and can be resumed; ``run_dir`` holds what was kept."""

    def __init__(self, message: str, run_dir: Path) -> None:
        super().__init__(message)
        self.run_dir = run_dir


class RunInterruptedError(RunStopped):
    """The operator interrupted the run (Ctrl-C, SIGTERM); what was played and paid for is kept."""


class CapReached(RunStopped):
    """A cost or token cap stopped the run; ``--resume DIR --max-tokens N`` (or ``--max-cost-usd``) raises it."""


class DiskFull(RunStopped):
    """A write failed for want of space: the run stopped before its next model call, every paid call on record."""


def disk_full_reason(error: OSError) -> str:
    """Why the run stops, in the words of its report: the OS's error and the file it could not write."""
    where = f" writing {error.filename}" if error.filename else ""
    return f"the disk is full ({error.strerror or error}{where})"


class AppendLog:
    """An auxiliary JSONL log of the run (beliefs, strategies): a torn last line cut away, then each record appended
    whole or not at all (``on_full``: see :mod:`harness.records.reserve`)."""

    def __init__(self, path: Path, on_full: OnFull | None = None) -> None:
        open_log_for_append(path).close()
        self.path, self.on_full = path, on_full

    def write(self, record: dict[str, Any]) -> None:
        data = (json.dumps(record) + "\n").encode("utf-8")

        def append() -> None:
            with self.path.open("ab", buffering=0) as handle:
                append_whole(handle, data, self.path)

        retried_when_freed(append, self.on_full)


def run_stop_request(run_dir: Path, on_first: Callable[[], None], on_force: Callable[[], None]) -> StopRequest:
    """The run's Ctrl-C handling (:mod:`harness.records.interrupts`): the calls under way finish, a second signal exits."""
    return StopRequest(grace_s=None, unit="games or model calls", on_first=on_first, on_force=on_force,
                       exit_hint=f"arena run --resume {run_dir}")


def raise_if_requested(stop: StopRequest) -> None:
    """Refuse to start a game or a model call once the operator asked the run to stop."""
    if stop.requested:
        raise RunInterrupted(stop.reason())


class PaidCalls:
    """The replies paid for in this process's share of the run that no call record has claimed yet."""

    def __init__(self) -> None:
        self._open: dict[str, list[ModelResponse]] = {}
        self._failed: list[CachedFailure] = []  # calls that failed for good, no record has claimed yet

    def paid(self, key: str, entry: ModelResponse | CachedFailure) -> None:
        """A new cache entry: a reply (not a cache hit) was paid for, or a call failed for good."""
        if isinstance(entry, CachedFailure):
            self._failed.append(entry)
        elif not entry.cache_hit:
            self._open.setdefault(key, []).append(entry)

    def recorded(self, fields: dict[str, Any]) -> dict[str, Any]:
        """A call record is to be written: it claims the reply it paid for, or the failure it met (whose attempts'
        errors it gets, when it lists none); returns the record's fields."""
        key = fields.get("cache_key")
        if not fields.get("cache_hit") and isinstance(key, str) and self._open.get(key):
            self._open[key].pop(0)
        reason = fields.get("reason")
        if fields.get("verdict") != "call_failed" or fields.get("cache_hit") or str(reason).endswith(REPLAYED):
            return fields
        failure = next((f for f in self._failed if f.message == reason), None if reason else next(iter(self._failed), None))
        if failure is None:
            return fields
        self._failed.remove(failure)
        return fields if fields.get("errors") else {**fields, "errors": list(failure.errors), "retries": failure.retries}

    def unrecorded(self) -> list[dict[str, Any]]:
        """Call fields (all but ``call_index``) of the paid replies no record claimed, in the order they were paid for."""
        return [{"game_index": None, "phase": None, "messages": [], "reply": reply.text, "finish_reason": reply.finish_reason,
                 "tokens_in": reply.prompt_tokens, "tokens_out": reply.completion_tokens, "cost_usd": reply.cost_usd,
                 "latency_s": reply.latency_s, "retries": reply.retries, "errors": list(reply.errors), "cache_key": key,
                 "reason": UNFINISHED_GAME}
                for key, replies in self._open.items() for reply in replies] + [
            {**_failed_call(failure.kind, failure.errors, failure.retries), "reason": f"{UNFINISHED_FAILURE}: {failure.message}"}
            for failure in self._failed]


def _failed_call(kind: str, errors: list[str], retries: int) -> dict[str, Any]:
    """The fields of a call outside any game that failed for good (``kind``: the client's classification)."""
    move_kind = "timeout" if kind == "timeout" else "api_error"  # as a move's failed attempt counts it
    return {"game_index": None, "phase": None, "messages": [], "verdict": "call_failed", "failure_kind": move_kind,
            "errors": list(errors), "retries": retries}


def endpoint_down_call(down: EndpointDown) -> dict[str, Any]:
    """The record of the call that found the endpoint down (not cached: a resume asks again), with its attempts where
    they are known (else one)."""
    errors = list(down.errors) or [f"{down.kind}: {down.cause}"]
    return {**_failed_call(down.kind, errors, len(errors) - 1), "reason": f"the run stopped: {down}"}


class WatchedCache(ResponseCache):
    """The run's response cache in this process (in-process runs): new entries reported, no call once a stop is asked."""

    def __init__(self, path: Path, stop: StopRequest, paid: PaidCalls, on_full: OnFull | None = None) -> None:
        super().__init__(path, on_full)
        self._stop, self._paid = stop, paid

    def lookup(self, key: str, occurrence: int = 0) -> ModelResponse | CachedFailure | None:
        raise_if_requested(self._stop)
        return super().lookup(key, occurrence)

    def put(self, key: str, response: ModelResponse | CachedFailure) -> None:
        super().put(key, response)
        self._paid.paid(key, response)


def spent(calls: list[CallEntry]) -> tuple[int, float]:
    """(tokens, dollars) of the paid calls (cache hits cost nothing)."""
    paid = [call for call in calls if not call.cache_hit]
    return sum(call.tokens_in + call.tokens_out for call in paid), sum(call.cost_usd for call in paid)


def remaining_caps(config: LlmRunConfig, calls: list[CallEntry]) -> tuple[int | None, float | None]:
    """(max tokens, max dollars) left for the model client after the paid calls on record."""
    tokens, dollars = spent(calls)
    return (None if config.max_tokens is None else config.max_tokens - tokens,
            None if config.max_cost_usd is None else config.max_cost_usd - dollars)


def cap_message(config: LlmRunConfig, calls: list[CallEntry]) -> str:
    """Which cap stopped the run, with the whole run's spending (over every resume)."""
    tokens, dollars = spent(calls)
    if config.max_tokens is not None and tokens >= config.max_tokens:
        return f"token cap reached: {tokens} tokens used of --max-tokens {config.max_tokens}"
    if config.max_cost_usd is not None:
        return f"cost cap reached: ${dollars:.4f} spent of --max-cost-usd {config.max_cost_usd:g}"
    return f"a cap was reached ({tokens} tokens, ${dollars:.4f})"


def raise_cap_hint(config: LlmRunConfig, calls: list[CallEntry], run_dir: Path) -> str:
    """The command that continues a capped run with its cap raised (doubled, or at least past what was spent)."""
    tokens, dollars = spent(calls)
    flags = []
    if config.max_tokens is not None and tokens >= config.max_tokens:
        flags.append(f"--max-tokens {max(2 * config.max_tokens, tokens + 1)}")
    elif config.max_cost_usd is not None:
        flags.append(f"--max-cost-usd {max(2 * config.max_cost_usd, round(dollars * 1.01, 4)):g}")
    return f"arena run --resume {run_dir} {' '.join(flags)}".rstrip()


def with_new_caps(config: LlmRunConfig, caps: dict[str, Any], games_done: dict[str, int]) -> LlmRunConfig:
    """``config`` with the caps given to ``--resume`` (names as the config's fields), each change recorded;
    ``jobs`` (how fast, not what, the strategist plays) replaces the recorded one without a change record."""
    config = config.model_copy(update={name: caps[name] for name in ("jobs",) if name in caps})
    changed = {name: value for name, value in caps.items() if name != "jobs" and getattr(config, name) != value}
    if not changed:
        return config
    change = CapChange(adapt_games=games_done.get("adapt", 0), eval_games=games_done.get("eval", 0), **changed)
    return config.model_copy(update={**changed, "cap_changes": (*config.cap_changes, change)})


class StoppableArena(Arena):
    """The in-process arena, refusing to start a game once the operator asked the run to stop."""

    def __init__(self, env: Any, budget: int, ledger: Ledger, stop: StopRequest) -> None:
        super().__init__(env, budget, ledger)
        self._stop = stop

    async def play_verified(self, decide_black: Any, decide_white: Any, names: tuple[str, str] | None = None) -> Any:
        raise_if_requested(self._stop)
        return await super().play_verified(decide_black, decide_white, names)


