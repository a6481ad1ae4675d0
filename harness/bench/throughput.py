"""What users wait for: model calls per second of a real ``arena run`` against a stub server, and a full run projected.

:func:`bench_throughput` starts the OpenAI-compatible stub server
(:class:`~harness.testing.stub_server.StubServer`) on 127.0.0.1, answering every request
with a legal move after ``latency_s`` seconds (and, with ``faults``, a fault spec such as
``rate_limit=0.3``), and plays an llm-policy run through it exactly as ``arena run`` does:
litellm over HTTP, the agent in its own process under the referee, the adaptive
concurrency of the model client. Adaptation plays ``budget`` games in waves of ``wave``;
evaluation ``eval_games`` games against random, ``concurrency`` at once.

Steady state: the stub records each request's arrival (monotonic clock); each phase's
requests (adaptation: those that arrived before its last game was written) are counted
over the middle 80% of the phase's span, which leaves out the agent process's start,
litellm's import and a wave's ragged end. The run's metrics give the concurrency the
client settled at.

Projection (:func:`project`): the calls, tokens and cost of a full run come from
:func:`harness.runs.estimate.estimate_run` (the estimate ``arena run --dry-run`` prints:
prompts rendered as the agents render them, litellm's local price table for
``price_model``), and the wall time from the calls divided by the measured rates
(adaptation calls at the adaptation rate, evaluation calls at the evaluation rate).
"""

from __future__ import annotations

import functools
import json
import os
import resource
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from engine import EnvKey
from engine.env_spec import env_key
from harness.models.options import ModelOptions
from harness.prompting.waves import wave_label, wave_size
from harness.runs.estimate import RunEstimate, estimate_run
from harness.runs.llm_config import METRICS_FILE, LlmRunConfig
from harness.runs.llm_run import run_llm

FULL_BUDGET, FULL_EVAL_GAMES = 2000, 20  # a full run: the paper's budget, 20 evaluation games per opponent
BOARD_16 = Path(__file__).resolve().parent / "data" / "board16x16.txt"
ENV_16 = f"layout={BOARD_16},condition=majority<0.7"  # an open 16x16 board, the largest the engine plays
PRICE_MODEL = "openai/gpt-4o-mini"
STEADY_SHARE = 0.8  # the middle of a phase's span counted as steady state
STUB_KEY = "stub-key-not-a-secret"  # litellm's openai provider wants a key; the stub ignores it
STUB_MODEL = "openai/stub-model"  # the stub server's model, through litellm's openai provider


class Stub(Protocol):
    """The stub server as the benchmark uses it (``arena bench harness --stub`` starts one, harness.testing's)."""

    latency_s: float

    @property
    def url(self) -> str: ...

    @property
    def requests(self) -> list[dict[str, Any]]: ...

    def stop(self) -> None: ...


@dataclass(frozen=True)
class PhaseRate:
    """One phase's requests at the stub: all of them, and the steady-state rate over the middle of its span."""

    phase: str
    requests: int
    seconds: float  # first to last arrival
    steady_requests: int
    steady_seconds: float

    @property
    def calls_per_second(self) -> float:
        return self.steady_requests / self.steady_seconds if self.steady_seconds > 0 else float("nan")


@dataclass(frozen=True)
class Throughput:
    """A run against the stub: its settings, each phase's rate and the client's concurrency."""

    latency_s: float
    concurrency: int
    wave: int
    faults: str
    adapt: PhaseRate
    evaluation: PhaseRate
    settled_concurrency: float | None
    lowest_concurrency: float | None
    wall_s: float
    cpu: CpuShare | None = None

    @property
    def target(self) -> float:
        """0.8 x concurrency / latency calls a second: the target."""
        return 0.8 * self.concurrency / self.latency_s if self.latency_s > 0 else float("nan")


@dataclass(frozen=True)
class CpuShare:
    """CPU seconds of the run's processes over its requests: what a call costs whatever else loads the machine.

    ``agent_s``: the agent process (prompts, the model client, parsing; one asyncio loop, so one core at most),
    from the run's children's resource usage (its start-up, litellm's import included); ``referee_s``: the
    process that ran ``arena run``'s referee, ledger and records (the bench's own process: it holds the stub
    server too when that is not in a process of its own); ``stub_s``: the stub's process, when it has one.
    """

    calls: int
    agent_s: float
    referee_s: float
    stub_s: float | None

    def ms_per_call(self, seconds: float) -> float:
        return 1000 * seconds / self.calls if self.calls else float("nan")

    @property
    def one_core_calls_per_second(self) -> float:
        """The calls a second the agent process could make on one core of its own (its CPU the only limit)."""
        return self.calls / self.agent_s if self.agent_s > 0 else float("nan")


@dataclass(frozen=True)
class Projection:
    """A full run of one agent on one environment: calls, tokens and cost from the estimate, wall time from a rate."""

    label: str
    env: str
    calls: int
    prompt_tokens: int
    reply_tokens: int
    cost_usd: float | None
    wall_s: float


def _phase(phase: str, times: list[float]) -> PhaseRate:
    if len(times) < 2:
        return PhaseRate(phase, len(times), 0.0, 0, 0.0)
    first, last = min(times), max(times)
    span = last - first
    margin = span * (1 - STEADY_SHARE) / 2
    steady = [t for t in times if first + margin <= t <= last - margin]
    return PhaseRate(phase, len(times), span, len(steady), span - 2 * margin)


def bench_throughput(
    server: Stub,
    concurrency: int = 64,
    wave: int = 64,
    budget: int = 128,
    eval_games: int = 64,
    env: EnvKey = 0,
    faults: str = "none",
    seed: int = 0,
    out: str | Path | None = None,
) -> Throughput:
    """Play the run against ``server`` (running; answering after its ``latency_s``) and measure it (module docstring)."""
    os.environ.setdefault("OPENAI_API_KEY", STUB_KEY)
    latency_s = server.latency_s
    written: dict[str, float] = {}

    def progress(phase: str, done: int, total: int) -> None:
        written[phase] = time.monotonic()

    config = LlmRunConfig(
        agent="llm-policy",
        model=STUB_MODEL,
        env=env,
        budget=budget,
        eval_games=eval_games,
        opponents=("random",),
        seed=seed,
        checkpoints=(),
        concurrency=concurrency,
        wave=wave,
        backoff_base_s=0.05,
        model_options=ModelOptions(api_base=server.url, timeout=30 + 5 * latency_s),
    )
    with tempfile.TemporaryDirectory(prefix="arena-bench-throughput-") as scratch:
        before = _cpu_seconds()
        started = time.monotonic()
        run_dir = run_llm(config, out=out or scratch, run_id=f"throughput-w{wave}-c{concurrency}", progress=progress)
        wall = time.monotonic() - started
        after = _cpu_seconds()
        metrics = json.loads((run_dir / METRICS_FILE).read_text(encoding="utf-8"))
    server.stop()  # a stub in its own process hands back its requests now
    arrivals = [float(r["time"]) for r in server.requests]
    cpu = CpuShare(len(arrivals), after[1] - before[1], after[0] - before[0], getattr(server, "cpu_s", None))
    adapt_end = written.get("adapt", started)
    concurrency_report = metrics.get("concurrency") or {}
    return Throughput(
        latency_s,
        concurrency,
        wave,
        faults,
        _phase("adaptation", [t for t in arrivals if t <= adapt_end]),
        _phase("evaluation", [t for t in arrivals if t > adapt_end]),
        concurrency_report.get("settled"),
        concurrency_report.get("lowest"),
        wall,
        cpu,
    )


def _cpu_seconds() -> tuple[float, float]:
    """CPU seconds (user + system) of this process and of its ended children."""
    own, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime, children.ru_utime + children.ru_stime


@functools.lru_cache(maxsize=16)
def _full_run_estimate(agent: str, env: EnvKey, batch: int, price_model: str) -> RunEstimate:
    """The dry-run estimate of a full run (its wall time is not used: the wave changes only that)."""
    config = LlmRunConfig(
        agent=agent,  # type: ignore[arg-type]
        model=price_model,
        env=env_key(str(env)),
        budget=FULL_BUDGET,
        eval_games=FULL_EVAL_GAMES,
        batch=batch,
    )
    return estimate_run(config)


def project(measured: Throughput, agent: str, env: EnvKey, wave: int = 1, batch: int = 50, price_model: str = PRICE_MODEL) -> Projection:
    """A full run of ``agent`` on ``env`` (2,000 games, 20 evaluation games vs random) at the measured rates."""
    estimate = _full_run_estimate(agent, env, batch, price_model)
    kinds = {k.kind: k.calls for k in estimate.kinds}
    adapt_rate = measured.adapt.calls_per_second * min(1.0, wave / measured.wave)  # fewer games at once: fewer calls
    eval_calls = kinds.get("move (evaluation)", 0)
    other = estimate.calls - eval_calls
    sequential = agent != "llm-policy"  # the strategist's plans and cwm's calls are one after another
    wall = (other * measured.latency_s if sequential else other / adapt_rate) + (
        eval_calls / measured.evaluation.calls_per_second if eval_calls else 0.0
    )
    label = wave_label(agent, wave_size(agent, {"wave": wave, "batch": batch}))
    return Projection(
        label,
        "env 0" if env == 0 else "16x16" if env == ENV_16 else str(env),
        estimate.calls,
        estimate.prompt_tokens,
        estimate.reply_tokens,
        estimate.cost_usd,
        wall,
    )
