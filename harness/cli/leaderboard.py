"""``arena leaderboard DIR...``: one Bradley-Terry rating over every evaluation game of runs, bench runs and sweeps.

How the games are found and named: :mod:`harness.sweep.leaderboard`; the fit (Davidson's
draws, L-BFGS, Random = 0 on the 400/ln10 scale, bootstrap by game): :mod:`harness.sweep.rating`.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import typer
from rich.table import Table

from harness.cli.console import stdout_console
from harness.sweep.leaderboard import leaderboard as build_leaderboard
from harness.sweep.leaderboard import markdown, plot


def leaderboard(
    directories: list[Path] = typer.Argument(..., help="Run, bench-paper or sweep directories (searched at any depth)."),
    anchor: str = typer.Option(None, "--anchor", help="The agent rated 0 (default Random, else the first by name)."),
    bootstrap: int = typer.Option(200, "--bootstrap", min=0, help="Bootstrap refits for the intervals (0: none)."),
    seed: int = typer.Option(0, "--seed", min=0, help="Seed of the bootstrap resampling."),
    markdown_out: Path = typer.Option(None, "--markdown", help="Also write the tables as Markdown to this file."),
    json_out: Path = typer.Option(None, "--json", help="Also write everything as JSON to this file."),
    plot_out: Path = typer.Option(None, "--plot", help="Also draw the ratings with their intervals to this PNG."),
) -> None:
    """Rank every agent of the given directories by one fit over all their evaluation games, per condition set.

    The published 56, each held-out suite and custom layouts are fitted and printed
    separately (their ratings are not comparable and never pooled).
    """
    try:
        board = build_leaderboard(directories, anchor=anchor, bootstrap=bootstrap, seed=seed)
    except ValueError as error:
        raise typer.BadParameter(str(error)) from None
    for section in board["sections"]:  # one table per condition set: the published 56 never pooled with a suite
        stdout_console().print(section_table(section))
    if board["unrated"]:
        stdout_console().print(f"not rated (fewer than two agents): {', '.join(board['unrated'])}", markup=False)
    if markdown_out is not None:
        markdown_out.write_text(markdown(board), encoding="utf-8")
    if json_out is not None:
        json_out.write_text(json.dumps(board, indent=2) + "\n", encoding="utf-8")
    if plot_out is not None:
        plot(board, plot_out)


def section_table(section: dict[str, Any]) -> Table:
    """One condition set's ratings."""
    table = Table(title=f"{section['condition_set']}: {section['games']:,} games; {section['anchor']} = 0; {section['draws']}")
    for column in ("#", "agent", "rating", "95% interval", "games", "W-D-L", "calls", "$", "frontier"):
        table.add_column(column, justify="right" if column in ("#", "rating", "games", "calls", "$") else "left")
    for rank, r in enumerate(section["ratings"], 1):
        table.add_row(
            str(rank),
            r["agent"],
            f"{r['rating']:.0f}",
            f"[{r['low']:.0f}, {r['high']:.0f}]",
            str(r["games"]),
            f"{r['wins']}-{r['draws']}-{r['losses']}",
            str(r["calls"]),
            f"{r['cost_usd']:.2f}",
            "yes" if r["frontier"] else "",
        )
    return table
