"""arena bench harness --stub: a small run against the stub server, its rates and the full runs projected from them."""

from __future__ import annotations

import functools

import pytest
from typer.testing import CliRunner

from harness.bench.throughput import ENV_16, PhaseRate, Throughput, project
from harness.cli import bench_throughput
from harness.cli.main import app


def test_bench_harness_stub_prints_rates_and_projections(monkeypatch: pytest.MonkeyPatch) -> None:
    # the projections priced for a mock model: its tokens counted at four characters each (litellm's tokenizer is slow)
    monkeypatch.setattr(bench_throughput, "project", functools.partial(project, price_model="mock/first-legal"))
    result = CliRunner().invoke(
        app,
        ["bench", "harness", "--stub", "--latency", "0.01", "--concurrency", "4", "--wave", "2", "--budget", "2", "--eval-games", "1"],
        env={"COLUMNS": "200", "NO_COLOR": "1"},
    )
    assert result.exit_code == (1 if "FAIL" in result.output else 0), result.output  # a timing: either, told by the exit code
    assert "adaptation" in result.output and "evaluation" in result.output
    assert "llm-policy (W=1)" in result.output and "llm-policy (W=2)" in result.output and "16x16" in result.output
    assert "llm-policy (W=8)" in result.output and "cwm" in result.output  # the recommended W; cwm's calls
    assert "CPU ms a call" in result.output and "stub " in result.output  # the stub in its own process reports its CPU


def test_waves_shorten_the_projected_run_and_bad_options_are_named() -> None:
    measured = Throughput(
        1.0, 64, 64, "none", PhaseRate("adaptation", 1000, 20.0, 800, 16.0), PhaseRate("evaluation", 500, 10.0, 400, 8.0), 64.0, 64.0, 30.0
    )
    one, wave = project(measured, "llm-policy", 0, wave=1), project(measured, "llm-policy", 0, wave=64)
    assert one.calls == wave.calls and wave.wall_s * 32 < one.wall_s  # the same calls, 64 at once instead of one
    assert wave.wall_s < 3600  # 50 calls/s: a full run on env 0 in under an hour
    assert project(measured, "llm-policy", ENV_16, wave=64).calls > wave.calls
    result = CliRunner().invoke(app, ["bench", "harness", "--stub", "--latency", "0", "--wave", "4"])
    assert result.exit_code == 2 and "--latency > 0" in result.output
