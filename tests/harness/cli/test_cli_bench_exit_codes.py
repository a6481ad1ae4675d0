"""Every ``arena bench ...`` with targets exits 1 when a row it printed failed, 0 when every judged row passed.

Each bench's measurement is replaced by figures made to pass or to miss one target (nothing is timed here);
the command's own table and verdict run as they are. ``bench paper`` and ``bench cwm`` have their own tests.
"""

from __future__ import annotations

from dataclasses import replace

import pytest

from harness.bench.agents import AgentBenchRow
from harness.bench.harness import ConcurrencyResult, OverheadResult
from harness.bench.referee import RefereeBench
from harness.bench.sandbox import EnginePathRates, Rate, SandboxBench
from harness.bench.throughput import PhaseRate, Throughput
from harness.cli import bench, bench_adaptive, bench_env, bench_sandbox, bench_throughput
from harness.envs.speed import Speed
from harness.sweep.adaptive import Outcome
from harness.sweep.adaptive_bench import Pool, SeedResult

FAILED = 1


def agent_rows(mcts_mean_s: float) -> list[AgentBenchRow]:
    return [
        AgentBenchRow("minimax:depth=5", "vs random", "ms/move", (0.010,), 0.020, "mean"),
        AgentBenchRow("mcts:n=100", "vs random", "ms/move", (mcts_mean_s,), 0.015, "mean"),
        AgentBenchRow("endgame solver", "none", "s/position", (), 1.0, "max", "not built"),  # n/a: no failure
    ]


@pytest.mark.parametrize(("mcts_mean_s", "code"), [(0.010, 0), (0.030, FAILED)])
def test_bench_agents(invoke, monkeypatch, mcts_mean_s, code):
    monkeypatch.setattr(bench, "bench_agents", lambda games, seed, on_done=None: agent_rows(mcts_mean_s))
    result = invoke("bench", "agents", "--games", "1")
    assert result.exit_code == code, result.output
    assert ("FAIL" in result.output) == (code == FAILED)


@pytest.mark.parametrize(("seconds", "peak", "code"), [(0.1, 32, 0), (10.0, 32, FAILED), (0.1, 5, FAILED)])
def test_bench_harness(invoke, monkeypatch, seconds, peak, code):
    monkeypatch.setattr(bench, "bench_overhead", lambda games, seed, progress=None: OverheadResult(1, 100, seconds))
    concurrent = ConcurrencyResult(64, 32, 0.05, 640, 1.0, peak, peak)
    monkeypatch.setattr(bench, "bench_concurrency", lambda *args, progress=None: concurrent)
    result = invoke("bench", "harness", "--games", "1")
    assert result.exit_code == code, result.output
    assert ("FAIL" in result.output) == (code == FAILED)


@pytest.mark.parametrize(("steady_requests", "code"), [(60, 0), (40, FAILED)])
def test_bench_harness_stub(invoke, monkeypatch, steady_requests, code):
    adapt = PhaseRate("adaptation", 100, 2.0, steady_requests, 1.0)  # the bar: 0.8 x 64 / 1 s = 51.2 calls/s
    measured = Throughput(1.0, 64, 8, "none", adapt, replace(adapt, phase="evaluation", steady_requests=60), 64.0, 64.0, 3.0)
    monkeypatch.setattr(bench_throughput, "stub_bench", lambda *args: (measured, []))
    result = invoke("bench", "harness", "--stub", "--latency", "1")
    assert result.exit_code == code, result.output


@pytest.mark.parametrize(("referee_s", "same", "code"), [(1.05, True, 0), (2.0, True, FAILED), (1.0, False, FAILED)])
def test_bench_referee(invoke, monkeypatch, referee_s, same, code):
    measured = RefereeBench(26, "interval", 10, 1.0, referee_s, 1.5, same)
    monkeypatch.setattr(bench, "bench_referee", lambda *args: measured)
    result = invoke("bench", "referee", "--env", "26", "--budget", "10", "--repeats", "1")
    assert result.exit_code == code, result.output
    assert ("FAIL" in result.output) == (code == FAILED)


def sandbox_figures(batched_per_s: int, engine_mcts_s: float) -> SandboxBench:
    second = Rate(10, 1.0)
    path = EnginePathRates(Rate(1, 0.1), Rate(10, engine_mcts_s), Rate(10, 1.0), second, second, 2)
    return SandboxBench(True, 0.1, Rate(100, 1.0), Rate(batched_per_s, 1.0), 10, second, second, 5, second, second, engine_path=path)


@pytest.mark.parametrize(("batched", "mcts_s", "code"), [(20_000, 1.0, 0), (5_000, 1.0, FAILED), (20_000, 100.0, FAILED)])
def test_bench_sandbox(invoke, monkeypatch, batched, mcts_s, code):
    monkeypatch.setattr(bench_sandbox, "bench_sandbox", lambda *args, **kwargs: sandbox_figures(batched, mcts_s))
    result = invoke("bench", "sandbox")
    assert result.exit_code == code, result.output
    assert ("FAIL" in result.output) == (code == FAILED)


@pytest.mark.parametrize(("vector_steps", "code"), [(2_000_000, 0), (10_000, FAILED)])
def test_bench_env(invoke, monkeypatch, vector_steps, code):
    def measure(name, steps):
        return lambda env_id, seconds, clock, **extra: Speed(env_id, name, steps, 1.0)

    faces = {"bare engine": measure("bare engine", 5e6), "vector env": measure("vector env", vector_steps)}
    monkeypatch.setattr(bench_env, "FACES", faces)
    result = invoke("bench", "env", "--envs", "0")
    assert result.exit_code == code, result.output
    assert ("NOT met" in result.output) == (code == FAILED)


@pytest.mark.parametrize(("successes", "code"), [(9, 0), (8, FAILED)])
def test_bench_adaptive(invoke, monkeypatch, successes, code):
    order = Pool().true_order

    def results(pool, seeds, alpha, max_games):
        good, wrong = Outcome(order, True, 10, 0.0, "decision"), Outcome(order[::-1], True, 10, 0.0, "decision")
        rounds = Outcome(order, True, 40, 0.0, "decision")
        return [SeedResult(seed, good if seed < successes else wrong, rounds) for seed in seeds]

    monkeypatch.setattr(bench_adaptive, "bench_adaptive", results)
    result = invoke("bench", "adaptive", "--seeds", "10")
    assert result.exit_code == code, result.output
    assert f"in {successes} of 10 seeds" in result.output
