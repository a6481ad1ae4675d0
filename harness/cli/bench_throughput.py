"""``arena bench harness --stub``: calls per second against the stub server, and full runs projected from them.

Starts :class:`~harness.testing.stub_server.StubServer` on 127.0.0.1 in a process of its own
(:class:`~harness.testing.stub_process.StubProcess`: a legal move after ``--latency`` seconds, faults
from ``--faults``), measures an llm-policy run through it with
:func:`harness.bench.throughput.bench_throughput`, and prints two tables: the steady-state
calls/s of adaptation and evaluation against the target (0.8 x concurrency / latency)
with the CPU milliseconds a call took in each process (and the calls/s the agent process's CPU
allows on one core), and the projected calls, tokens, cost and wall time of full runs of each model agent on env 0
and on a 16x16 board.
"""

from __future__ import annotations

import math

from rich import box
from rich.table import Table

from harness.bench.throughput import ENV_16, PRICE_MODEL, PhaseRate, Projection, Throughput, bench_throughput, project
from harness.cli.console import stderr_console, stdout_console
from harness.runs.estimate import duration
from harness.testing.faults import FaultSpec, FaultSpecError
from harness.testing.stub_process import StubProcess

RECOMMENDED_WAVE = 8  # the README's recommended --wave (the wave sweep), projected beside W=1 and the measured W


def stub_bench(
    latency: float, concurrency: int, wave: int, budget: int, eval_games: int, faults: str | None, seed: int
) -> tuple[Throughput, list[Projection]]:
    """Run the measurement and the projections; prints both tables."""
    try:
        spec = FaultSpec.parse(faults, seed=seed) if faults else None
    except FaultSpecError as error:
        import typer

        raise typer.BadParameter(f"--faults {faults!r}: {error}") from None
    stderr_console().print(
        f"stub server: {latency:g} s a call, faults {spec.describe() if spec else 'none'}; llm-policy "
        f"{budget} adaptation games in waves of {wave}, {eval_games} evaluation games, "
        f"--concurrency {concurrency} ..."
    )
    with StubProcess(latency_s=latency, faults=faults, seed=seed, retry_after=min(1.0, latency)) as server:
        measured = bench_throughput(
            server,
            concurrency=concurrency,
            wave=wave,
            budget=budget,
            eval_games=eval_games,
            faults=spec.describe() if spec else "none",
            seed=seed,
        )
    policy_waves = sorted({1, RECOMMENDED_WAVE, wave})
    projections = [
        project(measured, agent, env, wave=w)
        for env in (0, ENV_16)
        for agent, w in (*(("llm-policy", w) for w in policy_waves), ("llm-strategist", 1), ("cwm", 1))
    ]
    console = stdout_console()
    console.print(throughput_table(measured))
    console.print(projection_table(measured, projections))
    return measured, projections


def phase_passed(measured: Throughput, phase: PhaseRate) -> bool:
    """Whether a phase's steady calls/s reached the bar (no rate measured: it did not)."""
    return not math.isnan(phase.calls_per_second) and phase.calls_per_second >= measured.target


def throughput_table(measured: Throughput) -> Table:
    table = Table(
        title=f"llm-policy against the stub server: {measured.latency_s:g} s a call, --concurrency "
        f"{measured.concurrency}, waves of {measured.wave}, faults {measured.faults}",
        caption="steady state: requests at the stub over the middle 80% of each phase; bar: 0.8 x concurrency / latency",
        box=box.SIMPLE_HEAD,
    )
    for header in ("phase", "requests", "steady calls/s", "bar", "result"):
        table.add_column(header, justify="left" if header in ("phase", "result") else "right")
    for phase in (measured.adapt, measured.evaluation):
        rate = phase.calls_per_second
        mark = "pass ✓" if phase_passed(measured, phase) else "FAIL ✗"
        table.add_row(phase.phase, f"{phase.requests:,}", f"{rate:,.1f}", f"{measured.target:,.1f}", mark)
    settled = "n/a" if measured.settled_concurrency is None else f"{measured.settled_concurrency:g}"
    lowest = "n/a" if measured.lowest_concurrency is None else f"{measured.lowest_concurrency:g}"
    table.add_row("concurrency", "", f"settled {settled}", f"lowest {lowest}", f"wall {duration(measured.wall_s)}")
    cpu = measured.cpu
    if cpu is not None:
        stub = "" if cpu.stub_s is None else f", stub {cpu.ms_per_call(cpu.stub_s):.1f}"
        table.add_row(
            "CPU ms a call",
            f"{cpu.calls:,}",
            f"agent {cpu.ms_per_call(cpu.agent_s):.1f}",
            f"referee {cpu.ms_per_call(cpu.referee_s):.1f}{stub}",
            f"1 core: {cpu.one_core_calls_per_second:,.0f} calls/s",
        )
    return table


def projection_table(measured: Throughput, projections: list[Projection]) -> Table:
    table = Table(
        title=f"Full runs projected (2,000 adaptation games, 20 evaluation games vs random) at {measured.latency_s:g} s a call",
        caption=f"calls and tokens: the --dry-run estimate; cost: litellm's price table for {PRICE_MODEL} "
        "(no prompt caching counted); wall: llm-policy's calls at the measured rates (fewer games at once "
        "than measured: that share of the rate), the strategist's plans and cwm's calls one after "
        "another (their search not counted)",
        box=box.SIMPLE_HEAD,
    )
    for header in ("agent", "env", "calls", "prompt tokens", "reply tokens", "cost", "wall"):
        table.add_column(header, justify="left" if header in ("agent", "env") else "right")
    for row in projections:
        cost = "n/a" if row.cost_usd is None else f"${row.cost_usd:,.2f}"
        table.add_row(row.label, row.env, f"{row.calls:,}", f"{row.prompt_tokens:,}", f"{row.reply_tokens:,}", cost, duration(row.wall_s))
    return table
