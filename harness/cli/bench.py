"""``arena bench ...``: speed measurements (``bench engine``, ``bench agents``, ``bench harness``, ``bench referee``)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Annotated

import typer
from rich import box
from rich.table import Table
from rich.text import Text

from engine import make_env
from harness.bench.agents import BENCH_ENV, AgentBenchRow, bench_agents
from harness.bench.engine import REFERENCE_UNAVAILABLE, EngineBenchRow, bench_engine
from harness.bench.harness import BENCH_ENV as HARNESS_ENV
from harness.bench.harness import (
    BENCH_MODEL,
    IN_FLIGHT_TARGET,
    OPPONENT,
    OVERHEAD_TARGET_S,
    ConcurrencyResult,
    OverheadResult,
    bench_concurrency,
    bench_overhead,
)
from harness.bench.referee import TARGET_RATIO, bench_referee
from harness.cli.bench_verdict import exit_if_any_failed
from harness.cli.console import stderr_console, stderr_progress, stdout_console
from harness.cli.options import at_least, parse_env_range


def engine(
    envs: Annotated[str, typer.Option("--envs", help="Environments: a range 0-6, a list 0,3,5, or all.")] = "0-6",
    games: Annotated[int | None, typer.Option("--games", help="Fast-engine games per environment (default: sized by --seconds).")] = None,
    seconds: Annotated[float, typer.Option("--seconds", help="About how long to time the fast engine on each environment.")] = 1.0,
    reference_games: Annotated[int, typer.Option("--reference-games", help="Games for the pure-Python reference engine (0 to skip).")] = 20,
    seed: Annotated[int, typer.Option("--seed", help="Seed of the random playouts.")] = 12345,
) -> None:
    """Random-playout games per second of the numba engine vs the pure-Python reference, on one core.

    Compilation is done before timing. The fast engine is timed on a batch sized
    to last about --seconds per environment (or exactly --games games), the
    reference on --reference-games games; the ratio is fast / reference.
    """
    env_ids = parse_env_range(envs)
    at_least(1, ("--games", games))
    if not seconds > 0:
        raise typer.BadParameter(f"--seconds must be more than 0, got {seconds}")
    at_least(0, ("--reference-games", reference_games))
    with stderr_progress() as progress:
        task = progress.add_task("bench engine", total=len(env_ids))
        rows = bench_engine(
            env_ids,
            seconds=seconds,
            games=games,
            reference_games=reference_games,
            seed=seed,
            on_env_done=lambda row: progress.update(task, advance=1, description=f"env {row.env_id} done"),
        )
    console = stdout_console()
    console.print(engine_table(rows, seconds, games, reference_games))
    if reference_games and any(row.reference_seconds is None for row in rows):
        console.print(Text(REFERENCE_UNAVAILABLE, style="yellow"))


def engine_table(rows: list[EngineBenchRow], seconds: float, games: int | None, reference_games: int) -> Table:
    """The bench figures, one row per environment, with how they were taken as the caption."""
    batch = f"{games} games" if games is not None else f"a batch of about {seconds:g} s"
    table = Table(
        title="Random-playout speed, one core (games per second)",
        caption=f"fast: {batch} per env, timed after compiling; reference: {reference_games} games per env",
    )
    headers = ("env", "name", "size", "fast\ngames/s", "mean\nplies/game", "reference\ngames/s", "ratio\nfast/ref")
    for header in headers:
        table.add_column(header, justify="left" if header == "name" else "right")
    for row in rows:
        reference = row.reference_games_per_second
        table.add_row(
            str(row.env_id),
            row.name,
            row.size,
            f"{row.games_per_second:,.0f}",
            f"{row.mean_plies:.1f}",
            f"{reference:,.1f}" if reference is not None else "n/a",
            f"{row.ratio:,.0f}x" if row.ratio is not None else "n/a",
        )
    return table


def agents(
    games: Annotated[int, typer.Option("--games", help="Games (Minimax, MCTS) and positions (endgame) to time.")] = 10,
    seed: Annotated[int, typer.Option("--seed", help="Seed of the games and positions.")] = 0,
) -> None:
    """Time the search agents on 8x8 against their targets: mean and p95 per move, worst endgame solve.

    minimax:depth=5 over full games vs random (target: mean under 20 ms/move),
    mcts:n=100 likewise (under 15 ms/move), and the exact endgame solver on random
    14-empty positions (every one under 1 s). Only the agent's own moves are
    timed, after a warm-up that compiles the numba kernels; one core.
    """
    at_least(1, ("--games", games))
    at_least(0, ("--seed", seed))
    with stderr_progress() as progress:
        task = progress.add_task("bench agents", total=3)
        rows = bench_agents(games, seed, on_done=lambda row: progress.update(task, advance=1, description=f"{row.name} done"))
    env = make_env(BENCH_ENV)
    stdout_console().print(agents_table(rows, f"env {env.id} ({env.layout.name}, no turn limit)"))
    exit_if_any_failed(row.passed for row in rows)


def agents_table(rows: list[AgentBenchRow], board: str) -> Table:
    """Mean, p95 and worst time per sample of each measurement, its target and a pass/fail mark."""
    table = Table(
        title=f"Agent speed on {board}, one core",
        caption="n: moves timed (minimax, mcts) or positions solved (endgame), after a warm-up that compiles "
        "the kernels; per-move rows are judged by the mean, the endgame row by the worst position",
        box=box.SIMPLE_HEAD,
    )
    table.add_column("measurement", min_width=15)
    for header in ("n", "mean", "p95", "max", "target"):
        table.add_column(header, justify="right", no_wrap=True)
    table.add_column("result", min_width=6)
    for row in rows:
        show = (lambda s: f"{1000 * s:.2f} ms") if row.unit == "ms/move" else (lambda s: f"{s:.3f} s")
        limit = f"{1000 * row.target:g} ms" if row.unit == "ms/move" else f"{row.target:g} s"
        target = f"{row.judged_by} < {limit}"
        name = Text(row.name)
        name.append(f"\n{row.setting}", style="dim")
        if row.passed is None:
            table.add_row(name, "0", "-", "-", "-", target, Text(f"n/a: {row.skipped}", style="yellow"))
            continue
        mark = Text("pass ✓", style="green") if row.passed else Text("FAIL ✗", style="bold red")
        table.add_row(name, str(len(row.samples)), show(row.mean), show(row.p95), show(row.max), target, mark)
    return table


def harness(
    games: Annotated[int, typer.Option("--games", help="Self-play games timed for the overhead per move.")] = 200,
    seed: Annotated[int, typer.Option("--seed", help="Seed of the runs.")] = 0,
    concurrency: Annotated[int, typer.Option("--concurrency", help="Model calls in flight and evaluation games played at once.")] = 32,
    latency: Annotated[float, typer.Option("--latency", help="Seconds the mock model takes per call (concurrency part).")] = 0.05,
    concurrent_games: Annotated[
        int | None, typer.Option("--concurrent-games", help="Evaluation games of the concurrency part (default: 2 x --concurrency).")
    ] = None,
    stub: Annotated[
        bool,
        typer.Option(
            "--stub",
            help="Instead: an llm-policy run against the stub server on 127.0.0.1 "
            "answering after --latency s; steady-state calls/s of adaptation "
            "and evaluation, and full runs projected.",
        ),
    ] = False,
    wave: Annotated[int, typer.Option("--wave", help="--stub: adaptation games at once.")] = 64,
    budget: Annotated[int, typer.Option("--budget", help="--stub: adaptation games played.")] = 128,
    eval_games: Annotated[int, typer.Option("--eval-games", help="--stub: evaluation games vs random.")] = 64,
    faults: Annotated[str | None, typer.Option("--faults", help="--stub: the stub's fault spec, e.g. rate_limit=0.3.")] = None,
) -> None:
    """Time the LLM-agent harness against its targets: under 2 ms per move, at least 32 calls in flight.

    Overhead: --games self-play games of llm-policy with mock/first-legal (answers at
    once) through the path of 'arena run' (prompts, model client with its response
    cache, parse, verification, transcript); run wall time over model moves, after a
    warm-up run. Concurrency: evaluation games against random with the mock answering
    after --latency seconds; the peak number of calls in flight is counted at the model.
    """
    at_least(1, ("--games", games))
    at_least(0, ("--seed", seed))
    at_least(1, ("--concurrency", concurrency))
    at_least(0, ("--latency", latency), unit=" seconds")
    if stub:
        from harness.cli.bench_throughput import stub_bench

        if min(wave, budget, eval_games) < 1 or not latency > 0:
            raise typer.BadParameter("--stub needs --latency > 0 and --wave, --budget, --eval-games of 1 or more")
        from harness.cli.bench_throughput import phase_passed

        measured, _ = stub_bench(latency, concurrency, wave, budget, eval_games, faults, seed)
        exit_if_any_failed(phase_passed(measured, phase) for phase in (measured.adapt, measured.evaluation))
        return
    concurrent_games = 2 * concurrency if concurrent_games is None else concurrent_games
    at_least(1, ("--concurrent-games", concurrent_games))
    with stderr_progress() as progress:
        tasks: dict[str, int] = {}

        def advance(label: str) -> Callable[[str, int, int], None]:
            def update(phase: str, done: int, total: int) -> None:
                if label not in tasks:
                    tasks[label] = progress.add_task(label, total=total)
                progress.update(tasks[label], completed=done)

            return update

        overhead = bench_overhead(games, seed, progress=advance("overhead: self-play games"))
        concurrent = bench_concurrency(concurrent_games, concurrency, latency, seed, progress=advance("concurrency: eval games"))
    stdout_console().print(harness_table(overhead, concurrent))
    exit_if_any_failed((overhead.passed, concurrent.passed))


def harness_table(overhead: OverheadResult, concurrent: ConcurrencyResult) -> Table:
    """The overhead per move and the calls in flight, each with its target and a pass/fail mark."""
    env = make_env(HARNESS_ENV)
    table = Table(
        title=f"LLM-agent harness speed on env {env.id} ({env.layout.name}), llm-policy with mock models",
        caption="overhead: run wall time / model moves after a warm-up run, the mock's own work counted as harness "
        "time; in flight: counted at the model (the client's counter in brackets), ideal = min(concurrency, "
        "games) / latency",
        box=box.SIMPLE_HEAD,
    )
    table.add_column("measurement", min_width=15)
    for header in ("n", "figures", "target"):
        table.add_column(header, justify="right", no_wrap=True)
    table.add_column("result", min_width=6)
    name = Text("harness overhead")
    name.append(f"\nself-play, {BENCH_MODEL} (instant), {overhead.games} games", style="dim")
    table.add_row(
        name,
        f"{overhead.moves:,} moves",
        f"{1000 * overhead.seconds_per_move:.2f} ms/move\n{overhead.moves_per_second:,.0f} moves/s",
        f"< {1000 * OVERHEAD_TARGET_S:g} ms/move",
        _mark(overhead.passed),
    )
    name = Text("model calls in flight")
    name.append(
        f"\n{concurrent.games} eval games vs {OPPONENT}, latency {1000 * concurrent.latency_s:g} ms, "
        f"--concurrency {concurrent.concurrency}",
        style="dim",
    )
    ideal = f"ideal {concurrent.ideal_calls_per_second:,.0f}" if concurrent.latency_s > 0 else "no latency"
    table.add_row(
        name,
        f"{concurrent.calls:,} calls",
        f"peak {concurrent.peak_in_flight} ({concurrent.client_peak_in_flight})\n{concurrent.calls_per_second:,.0f} calls/s ({ideal})",
        f">= {IN_FLIGHT_TARGET} in flight",
        _mark(concurrent.passed, concurrent.measurable),
    )
    return table


def _mark(passed: bool | None, why_not: str = "") -> Text:
    if passed is None:
        return Text(f"n/a: {why_not}", style="yellow")
    return Text("pass ✓", style="green") if passed else Text("FAIL ✗", style="bold red")


def referee(
    env: Annotated[int, typer.Option("--env", help="Environment id 0-55.")] = 14,
    agent: Annotated[str, typer.Option("--agent", help="Adaptive agent spec.")] = "adaptive-minimax",
    budget: Annotated[int, typer.Option("--budget", help="Adaptation games.")] = 2000,
    seed: Annotated[int, typer.Option("--seed", help="Seed of the agent (the same both ways).")] = 0,
    repeats: Annotated[int, typer.Option("--repeats", help="Alternate the two ways this many times; medians compared.")] = 3,
) -> None:
    """Time one adaptation in-process and through the referee process; the ratio's target is <= 1.10.

    Both ways play the same games from the same seed (checked: the two ledgers are
    compared). Through the referee, each game is played in the agent's own process
    and sent as one message; the referee re-plays it, charges the ledger and answers
    with the rewards. The agent process's start-up is shown apart ('session wall').
    """
    at_least(1, ("--budget", budget), ("--repeats", repeats))
    try:
        make_env(env)
    except KeyError as error:
        raise typer.BadParameter(str(error)) from None
    with stderr_console().status(f"adapting {agent} on env {env} for {budget} games, in-process then refereed"):
        result = bench_referee(env, agent, budget, seed, repeats)
    title = f"referee overhead: {agent} on env {env}, {result.games} games, median of {repeats}"
    table = Table(
        box=box.SIMPLE_HEAVY,
        title=title,
        caption="each repeat (in-process / referee s): " + ", ".join(f"{a:.2f} / {b:.2f}" for a, b in result.samples),
    )
    for column in ("in-process s", "referee s", "ratio", "target", "session wall s", "same games", "result"):
        table.add_column(column, justify="right")
    mark = Text("pass ✓", style="green") if result.passed else Text("FAIL ✗", style="bold red")
    table.add_row(
        f"{result.in_process_seconds:.2f}",
        f"{result.referee_seconds:.2f}",
        f"{result.ratio:.3f}",
        f"<= {TARGET_RATIO:.2f}",
        f"{result.session_seconds:.2f}",
        "yes" if result.same_games else "NO",
        mark,
    )
    stdout_console().print(table)
    exit_if_any_failed((result.passed,))
