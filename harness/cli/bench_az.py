"""``arena bench az``: win rates of the ``az`` agent (or any spec) on chosen boards, with Wilson intervals (resumable)."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Annotated

import typer
from rich.table import Table
from rich.text import Text

from harness.bench.az_eval import BOARD_SETS, board_set, win_rates
from harness.cli.console import stderr_progress, stdout_console
from harness.cli.options import use_plugins
from harness.cli.perft import duration

DEFAULT_OPPONENTS = ["random", "positional"]


def az_command(
    spec: Annotated[str, typer.Argument(help="The agent spec to measure, e.g. az:seconds=10.")] = "az",
    opponents: Annotated[
        list[str] | None, typer.Option("--opponent", help="An opponent spec (repeatable; default: random and positional).")
    ] = None,
    games: Annotated[int, typer.Option("--games", help="Games per board and opponent, colours alternating.")] = 20,
    boards_name: Annotated[
        str, typer.Option("--boards", help=f"Board set: {', '.join(BOARD_SETS)} (check: 8x8, 6x6, 8x8 with 4 blocked cells).")
    ] = "held-out",
    benchmark: Annotated[bool, typer.Option("--benchmark", help="Add the 7 benchmark layouts.")] = False,
    out: Annotated[
        Path | None,
        typer.Option(
            "--out",
            metavar="FILE.jsonl",
            help=("Append every game to FILE as it ends; run again with the same FILE to play only the missing games."),
        ),
    ] = None,
    seed: Annotated[int, typer.Option("--seed", help="Seed of every agent's generator.")] = 0,
    opening: Annotated[
        int,
        typer.Option(
            "--opening",
            help=("Place the first N discs of every game at random (both sides), so deterministic players meet in many openings."),
        ),
    ] = 0,
    plugins: Annotated[list[str] | None, typer.Option("--plugin", help="A module or .py file declaring agents.")] = None,
) -> None:
    """Play SPEC against each opponent on a board set (default: standard 8x8 and three boards no az training saw).

    Prints each board and opponent's win rate (draws count half, more discs wins) with a
    95% Wilson interval, and the time taken. The held-out boards come from a fixed seed
    (harness/bench/az_eval.py). With --out the games are kept as they end and resumed.
    """
    use_plugins(plugins)
    if games < 1:
        raise typer.BadParameter(f"--games {games}: give 1 or more")
    if boards_name not in BOARD_SETS:
        raise typer.BadParameter(f"--boards {boards_name!r}: give one of {', '.join(BOARD_SETS)}")
    if out is not None and out.is_dir():
        raise typer.BadParameter(f"--out {str(out)!r} is a directory: give a .jsonl file")
    chosen = opponents or DEFAULT_OPPONENTS
    boards = board_set(boards_name) + (board_set("benchmark") if benchmark and boards_name != "benchmark" else [])
    start = time.perf_counter()
    with stderr_progress() as progress:
        task = progress.add_task(f"{spec} on {len(boards)} boards", total=games * len(boards) * len(chosen))
        try:
            rows = win_rates(spec, chosen, boards, games, seed, on_game=lambda: progress.advance(task), results=out, opening=opening)
        except ValueError as error:
            raise typer.BadParameter(str(error)) from None
    opened = f", first {opening} discs random" if opening else ""
    table = Table(title=f"{spec}: win rate (draws half), 95% Wilson interval, {games} games each{opened}")
    for column in ("board", "opponent", "W-D-L", "rate", "95%"):
        table.add_column(column)
    for row in rows:
        record = row.record
        low, high = record.interval
        table.add_row(
            row.board, row.opponent, f"{record.wins}-{record.draws}-{record.losses}", f"{record.rate:.0%}", f"{low:.0%}-{high:.0%}"
        )
    console = stdout_console()
    console.print(table)
    console.print(Text(f"{sum(r.record.games for r in rows)} games in {duration(time.perf_counter() - start)}"), soft_wrap=True)
