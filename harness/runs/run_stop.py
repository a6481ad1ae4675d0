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
then answered by the cache (cache hits, free).

Caps across a resume: the tokens and dollars spent are those of the paid calls on
record (:func:`spent`), and the model client of a resumed run gets what is left of the
caps (:func:`remaining_caps`). ``--resume`` may set new caps: they are recorded in the
manifest's config with the games done when they changed (:func:`with_new_caps`).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from engine.protocol.arena import Ledger
from harness.models.cache import CachedFailure, ResponseCache
from harness.models.messages import ModelResponse
from harness.play.arena import Arena
from harness.records.interrupts import StopRequest
from harness.records.transcript import CallEntry
from harness.referee.model_process import RunInterrupted
from harness.runs.llm_config import CapChange, LlmRunConfig

UNFINISHED_GAME = ("paid for in a game that had not finished when the run stopped; the game is played again on resume "
                   "(its calls then come from the response cache)")


class RunStopped(RuntimeError):
    """The run stopped early and can be resumed; ``run_dir`` holds what was kept."""

    def __init__(self, message: str, run_dir: Path) -> None:
        super().__init__(message)
        self.run_dir = run_dir


class RunInterruptedError(RunStopped):
    """The operator interrupted the run (Ctrl-C, SIGTERM); what was played and paid for is kept."""


class CapReached(RunStopped):
    """A cost or token cap stopped the run; ``--resume DIR --max-tokens N`` (or ``--max-cost-usd``) raises it."""


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

    def paid(self, key: str, entry: ModelResponse | CachedFailure) -> None:
        """A new cache entry: a reply (not a cache hit) was paid for."""
        if isinstance(entry, ModelResponse) and not entry.cache_hit:
            self._open.setdefault(key, []).append(entry)

    def recorded(self, fields: dict[str, Any]) -> None:
        """A call record was written: it claims the reply it paid for, if any."""
        key = fields.get("cache_key")
        if not fields.get("cache_hit") and isinstance(key, str) and self._open.get(key):
            self._open[key].pop(0)

    def unrecorded(self) -> list[dict[str, Any]]:
        """Call fields (all but ``call_index``) of the paid replies no record claimed, in the order they were paid for."""
        return [{"game_index": None, "phase": None, "messages": [], "reply": reply.text, "finish_reason": reply.finish_reason,
                 "tokens_in": reply.prompt_tokens, "tokens_out": reply.completion_tokens, "cost_usd": reply.cost_usd,
                 "latency_s": reply.latency_s, "retries": reply.retries, "errors": list(reply.errors), "cache_key": key,
                 "reason": UNFINISHED_GAME}
                for key, replies in self._open.items() for reply in replies]


class WatchedCache(ResponseCache):
    """The run's response cache in this process (in-process runs): new entries reported, no call once a stop is asked."""

    def __init__(self, path: Path, stop: StopRequest, paid: PaidCalls) -> None:
        super().__init__(path)
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


