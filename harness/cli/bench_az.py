"""``arena bench az``: win rates of the ``az`` agent (or any spec) on held-out boards, with Wilson intervals."""

from __future__ import annotations

import time
from typing import Annotated

import typer
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table
from rich.text import Text

from harness.bench.az_eval import held_out_layouts, win_rates
from harness.cli.console import stderr_console, stdout_console
from harness.cli.options import use_plugins
from harness.cli.perft import duration

DEFAULT_OPPONENTS = ["random", "positional"]


def az_command(
    spec: Annotated[str, typer.Argument(help="The agent spec to measure, e.g. az:seconds=10.")] = "az",
    opponents: Annotated[list[str] | None, typer.Option(
        "--opponent", help="An opponent spec (repeatable; default: random and positional).")] = None,
    games: Annotated[int, typer.Option("--games", help="Games per board and opponent, colours alternating.")] = 20,
    benchmark: Annotated[bool, typer.Option("--benchmark", help="Add the 7 benchmark layouts.")] = False,
    seed: Annotated[int, typer.Option("--seed", help="Seed of every agent's generator.")] = 0,
    plugins: Annotated[list[str] | None, typer.Option("--plugin", help="A module or .py file declaring agents.")] = None,
) -> None:
    """Play SPEC against each opponent on standard 8x8 and three boards no az training run saw (more discs wins).

    Prints each board and opponent's win rate (draws count half) with a 95% Wilson
    interval, and the time taken. The boards come from a fixed seed (harness/bench/az_eval.py).
    """
    use_plugins(plugins)
    if games < 1:
        raise typer.BadParameter(f"--games {games}: give 1 or more")
    chosen = opponents or DEFAULT_OPPONENTS
    boards = held_out_layouts(benchmark)
    start = time.perf_counter()
    with Progress(TextColumn("[progress.description]{task.description}"), BarColumn(), MofNCompleteColumn(),
                  TimeElapsedColumn(), console=stderr_console(), transient=True) as progress:
        task = progress.add_task(f"{spec} on {len(boards)} boards", total=games * len(boards) * len(chosen))
        rows = win_rates(spec, chosen, boards, games, seed, on_game=lambda: progress.advance(task))
    table = Table(title=f"{spec}: win rate (draws half), 95% Wilson interval, {games} games each")
    for column in ("board", "opponent", "W-D-L", "rate", "95%"):
        table.add_column(column)
    for row in rows:
        low, high = row.interval
        table.add_row(row.board, row.opponent, f"{row.wins}-{row.draws}-{row.losses}", f"{row.rate:.0%}",
                      f"{low:.0%}-{high:.0%}")
    console = stdout_console()
    console.print(table)
    console.print(Text(f"{sum(r.games for r in rows)} games in {duration(time.perf_counter() - start)}"), soft_wrap=True)
