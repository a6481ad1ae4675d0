"""Harness speed: milliseconds of harness work per model move, and model calls in flight at once.

The targets for the LLM-agent harness, both measured through :func:`harness.runs.llm_run.run_llm`,
the path ``arena run`` takes:

- **Overhead** (under 2 ms per move): ``games`` self-play games of ``llm-policy`` with
  ``mock/first-legal``, which answers at once, on the standard 8x8 board. Every move goes
  observation → prompt rendering → the model client (cache lookup, the mock, cache
  record) → parse → verify → play → transcript. The run's wall time (manifest, results
  and report included) over the model moves is the harness time per move: the mock's own
  work (reading the legal moves from the prompt) counts as harness time, so the figure
  is an upper bound. A one-game warm-up run first compiles the numba kernels; no belief
  checkpoints are asked.
- **Concurrency** (at least 32 calls in flight): ``concurrent_games`` frozen evaluation
  games against ``random`` (no adaptation games), the mock answering after ``latency``
  seconds (an asyncio sleep), with ``concurrency`` games and calls allowed at once. The
  peak is counted at the model (calls entered and not yet answered) and by the client's
  own in-flight counter; with a latency they agree and reach ``min(concurrency, games)``.

Everything runs in this process, in a temporary run directory.
"""

from __future__ import annotations

import contextlib
import tempfile
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from harness.models.cache import ResponseCache
from harness.models.client import ModelClient
from harness.models.mock import MockModel, MockReply, make_mock
from harness.records.transcript import TranscriptReader
from harness.runs.llm_run import CACHE_FILE, LlmRunConfig, Progress, run_llm

BENCH_ENV = 0  # Standard 8x8 / Majority: full games, no turn limit
BENCH_MODEL = "mock/first-legal"
OPPONENT = "random"
OVERHEAD_TARGET_S = 0.002  # per model move
IN_FLIGHT_TARGET = 32


@dataclass(frozen=True)
class OverheadResult:
    """Self-play games through the run path with an instant model: wall time and model moves."""

    games: int
    moves: int  # model calls made for moves (forced passes are not asked)
    seconds: float

    @property
    def seconds_per_move(self) -> float:
        return self.seconds / self.moves if self.moves else float("nan")

    @property
    def moves_per_second(self) -> float:
        return self.moves / self.seconds if self.seconds else float("nan")

    @property
    def passed(self) -> bool:
        return self.seconds_per_move < OVERHEAD_TARGET_S


@dataclass(frozen=True)
class ConcurrencyResult:
    """Evaluation games against a model with a fixed latency: calls, wall time and the peak in flight."""

    games: int
    concurrency: int
    latency_s: float
    calls: int
    seconds: float
    peak_in_flight: int  # counted at the model
    client_peak_in_flight: int  # the client's own counter

    @property
    def expected_peak(self) -> int:
        """What the limits allow: every game waiting on a call, at most ``concurrency`` of them."""
        return min(self.concurrency, self.games)

    @property
    def calls_per_second(self) -> float:
        return self.calls / self.seconds if self.seconds else float("nan")

    @property
    def ideal_calls_per_second(self) -> float:
        """``expected_peak`` calls every ``latency_s``: the model's latency the only cost."""
        return self.expected_peak / self.latency_s if self.latency_s else float("nan")

    @property
    def measurable(self) -> str:
        """Why the target cannot be reached with these settings ('' when it can)."""
        if not self.latency_s > 0:
            return "needs --latency > 0 (an instant model is never waited on)"
        if self.expected_peak < IN_FLIGHT_TARGET:
            return f"needs --concurrency and the games to be {IN_FLIGHT_TARGET} or more"
        return ""

    @property
    def passed(self) -> bool | None:
        """Whether the peak reached the target; None when the settings cannot reach it."""
        return None if self.measurable else self.peak_in_flight >= IN_FLIGHT_TARGET


class InFlightCounter:
    """A mock model wrapped to count the calls it is answering at once (begun, not yet returned)."""

    def __init__(self, model: MockModel) -> None:
        self.model = model
        self.now = self.peak = self.calls = 0

    async def acomplete(self, messages: Sequence[Mapping[str, Any]], params: Mapping[str, Any] | None = None) -> MockReply:
        self.calls += 1
        self.now += 1
        self.peak = max(self.peak, self.now)
        try:
            return await self.model.acomplete(messages, params)
        finally:
            self.now -= 1


def bench_overhead(games: int = 200, seed: int = 0, progress: Progress | None = None, out: str | Path | None = None) -> OverheadResult:
    """Time ``games`` self-play games of llm-policy with the instant mock model (after a one-game warm-up)."""
    with _run_directory(out) as parent:
        run_llm(_config(budget=1, eval_games=0, seed=seed + 1), out=parent, run_id="warm-up")
        started = time.perf_counter()
        run_dir = run_llm(_config(budget=games, eval_games=0, seed=seed), out=parent, run_id="overhead", progress=progress)
        seconds = time.perf_counter() - started
        moves = sum(call.game_index is not None for call in TranscriptReader(run_dir).calls())
    return OverheadResult(games, moves, seconds)


def bench_concurrency(
    games: int = 64,
    concurrency: int = 32,
    latency: float = 0.05,
    seed: int = 0,
    progress: Progress | None = None,
    out: str | Path | None = None,
) -> ConcurrencyResult:
    """Play ``games`` evaluation games against random with a mock answering after ``latency`` s; count calls in flight."""
    with _run_directory(out) as parent:
        model = InFlightCounter(make_mock(BENCH_MODEL, seed=seed, latency_s=latency))
        client = ModelClient(
            BENCH_MODEL, cache=ResponseCache(Path(parent) / "concurrency" / CACHE_FILE), concurrency=concurrency, seed=seed, mock=model
        )
        config = _config(budget=0, eval_games=games, seed=seed, concurrency=concurrency)
        started = time.perf_counter()
        run_llm(config, out=parent, run_id="concurrency", progress=progress, client=client)
        seconds = time.perf_counter() - started
    return ConcurrencyResult(games, concurrency, latency, model.calls, seconds, model.peak, client.max_in_flight)


def _config(budget: int, eval_games: int, seed: int, concurrency: int = 32) -> LlmRunConfig:
    return LlmRunConfig(
        agent="llm-policy",
        model=BENCH_MODEL,
        env=BENCH_ENV,
        budget=budget,
        eval_games=eval_games,
        opponents=(OPPONENT,),
        seed=seed,
        checkpoints=(),
        concurrency=concurrency,
    )


def _run_directory(out: str | Path | None) -> Any:
    """A temporary directory for the runs (removed afterwards), or ``out`` when given (kept)."""
    if out is None:
        return tempfile.TemporaryDirectory(prefix="arena-bench-harness-")
    Path(out).mkdir(parents=True, exist_ok=True)
    return contextlib.nullcontext(str(out))
