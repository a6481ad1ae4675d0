"""``arena bench cwm``: the code-world-model agent family by family: its reward code's K, and its wins against Random."""

from __future__ import annotations

from typing import Annotated

import typer
from rich import box
from rich.table import Table
from rich.text import Text

from harness.bench.cwm import FAMILY_ENVS, WIN_TARGET, CwmBenchRow, bench_cwm, benchmark_cases, random_cases
from harness.cli.console import stderr_progress, stdout_console
from harness.cli.options import at_least, parse_env_range
from harness.cwm.refine import MODES
from harness.sandbox.command import bubblewrap_problem
from harness.tournaments.stats import wilson


def cwm(
    envs: Annotated[
        str,
        typer.Option(
            "--envs",
            help="Benchmark environments (a range, a list, or 'none'); the default is one per condition family on the smallest board.",
        ),
    ] = ",".join(map(str, FAMILY_ENVS)),
    random: Annotated[
        int,
        typer.Option(
            "--random",
            help="Seeded random layouts (5-8 a side), each with a K outside the benchmark's eight (0.7, 0.3, -0.5, 1.5 in turn).",
        ),
    ] = 4,
    model: Annotated[str, typer.Option("--model", help="The model writing the programs (offline by default).")] = "mock/coder",
    budget: Annotated[int, typer.Option("--budget", help="Adaptation games per case (20 of them explore).")] = 24,
    games: Annotated[int, typer.Option("--games", help="Evaluation games against Random per case.")] = 20,
    simulations: Annotated[int, typer.Option("--simulations", help="MCTS simulations per evaluation move.")] = 1000,
    mcts_games: Annotated[
        int, typer.Option("--mcts-games", help="Evaluation games against mcts:n=100 (privileged) per case; 0: none.")
    ] = 10,
    mode: Annotated[str, typer.Option("--mode", help="Refinement: tree (REx) or conversation.")] = "tree",
    seed: Annotated[int, typer.Option("--seed", help="Seed of the cases, the agent and Random.")] = 0,
    unsandboxed: Annotated[
        bool, typer.Option("--unsandboxed", help="Run the programs with rlimits only, without bubblewrap (the table says so).")
    ] = False,
) -> None:
    """Adapt cwm on each case, then play Random: the K interval of its final reward code and its win rate.

    The true K is shown (a benchmark, not a run). Rows pass when the code's interval holds K
    and the win rate against Random is at least 90%. Exit 1 when a row fails.
    """
    at_least(1, ("--budget", budget), ("--games", games), ("--simulations", simulations))
    at_least(0, ("--mcts-games", mcts_games), ("--random", random))
    if mode not in MODES:
        raise typer.BadParameter(f"--mode {mode!r}: choose one of {', '.join(MODES)}")
    if not unsandboxed and (problem := bubblewrap_problem()) is not None:
        raise typer.BadParameter(
            f"the sandbox cannot run here ({problem}): install bubblewrap (make sandbox-tools, as root) or pass --unsandboxed"
        )
    cases = (benchmark_cases(parse_env_range(envs)) if envs != "none" else []) + random_cases(random, seed)
    if not cases:
        raise typer.BadParameter("no cases: give --envs or --random")
    with stderr_progress("bench cwm") as bar:
        task = bar.add_task("cases", total=len(cases))

        def done(row: CwmBenchRow) -> None:
            bar.console.print(row_line(row), markup=False)  # a line per case as it ends: long runs show progress
            bar.advance(task)

        rows = bench_cwm(
            cases,
            model=model,
            budget=budget,
            games=games,
            simulations=simulations,
            mode=mode,
            seed=seed,
            unsandboxed=unsandboxed,
            progress=done,
            mcts_games=mcts_games,
        )
    stdout_console().print(cwm_table(rows, model, simulations, unsandboxed))
    if not all(passed(row) for row in rows):
        raise typer.Exit(1)


def row_line(row: CwmBenchRow) -> str:
    """One case in a line (printed as each ends)."""
    verdict = "pass" if passed(row) else "FAIL"
    return (
        f"{row.case.label}: K {row.case.env.condition.k}, code {row.code_interval or 'none'}, "
        f"wins {row.wins}/{row.games}, draws {row.draws}"
        + (f"; vs mcts:n=100 wins {row.mcts_wins}/{row.mcts_games}" if row.mcts_games else "")
        + f"; planned on the {row.path or 'nothing'}: {verdict}"
    )


def passed(row: CwmBenchRow) -> bool:
    return row.contains_k and row.win_rate >= WIN_TARGET


def cwm_table(rows: list[CwmBenchRow], model: str, simulations: int, unsandboxed: bool) -> Table:
    """One row per case: K, the feasible set, the code's interval, calls, wins against Random [Wilson 95%]."""
    where = "UNSANDBOXED" if unsandboxed else "bubblewrap"
    table = Table(
        title=f"cwm with {model}, MCTS-{simulations} with its program ({where})",
        box=box.SIMPLE_HEAD,
        caption="feasible: K allowed by the agent's outcomes; code: K implied by its final returns(); path: engine (the "
        "kernels on the program's returns table) or program (search in the sandbox); mcts:n=100 is privileged (true K); "
        f"pass: code holds K and wins >= {WIN_TARGET:.0%} against Random",
    )
    headers = ("case", "layout", "true K", "feasible", "code", "calls", "steered", "path", "win [95%] / draw", "vs mcts:n=100", "adapt s")
    for header in (*headers, "result"):
        table.add_column(header, justify="left" if header in ("case", "layout", "feasible", "code") else "right")
    for row in rows:
        env = row.case.env
        low, high = row.wilson
        mark = Text("pass ✓", style="green") if passed(row) else Text("FAIL ✗", style="bold red")
        layout = f"{env.layout.rows}x{env.layout.cols}" + (f" limit {env.condition.turn_limit}" if env.condition.turn_limit else "")
        table.add_row(
            row.case.label,
            layout,
            str(env.condition.k),
            row.feasible,
            row.code_interval or "none",
            str(row.model_calls),
            str(row.steered),
            row.path or "-",
            f"{row.win_rate:.0%} [{100 * low:.0f}-{100 * high:.0f}] / {row.draws / row.games:.0%}",
            _mcts_cell(row),
            f"{row.adapt_s:.0f}",
            mark,
        )
    return table


def _mcts_cell(row: CwmBenchRow) -> str:
    if not row.mcts_games:
        return "-"
    low, high = wilson(row.mcts_wins, row.mcts_games)
    return f"{row.mcts_wins / row.mcts_games:.0%} [{100 * low:.0f}-{100 * high:.0f}] / {row.mcts_draws / row.mcts_games:.0%}"
