"""What ``arena match`` and ``arena tournament`` show: the progress bar while games are played, then the results tables."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path

from rich import box
from rich.progress import Progress, ProgressColumn, Task
from rich.table import Table
from rich.text import Text

from harness.cli.console import DESCRIPTION, add_name_column, fitting_table, stderr_progress, stdout_console
from harness.tournaments.results import (
    CELL_NOTE,
    OVERALL_COLUMNS,
    PER_ENV_COLUMNS,
    SCOPES,
    TournamentResults,
    describe,
    overall_rows,
    per_env_rows,
)


class RateColumn(ProgressColumn):
    """Games finished per second."""

    def render(self, task: Task) -> Text:
        speed = task.finished_speed or task.speed
        return Text(f"{speed:.2f} games/s" if speed else "- games/s", style="progress.data.speed")


def progress_bar() -> Progress:
    """The bar ``arena match`` and ``arena tournament`` show on stderr: games done, games per second, time left."""
    return stderr_progress(DESCRIPTION, RateColumn(), remaining=True, transient=False)


def print_results(results: TournamentResults, run_dir: Path) -> None:
    """The per-environment table (when there are several), the over-all table, footnotes and the run directory."""
    console = stdout_console()
    names = [name for row in overall_rows(results) for name in row[:2] if name]
    tables = ([lambda label: per_env_table(results, label)] if len(results.env_ids) > 1 else []) + [
        lambda label: overall_table(results, label)
    ]
    for build in tables:  # a narrow terminal gets the agents as #1, #2, ... and a legend, never a name cut to '…'
        table, legend = fitting_table(build, names, console)
        console.print(table)
        for line in legend:
            console.print(line, soft_wrap=True)
    for note in results.notes:
        console.print(Text(note))
    console.print(Text(f"run recorded in {run_dir}"))


def overall_table(results: TournamentResults, label: Callable[[str], str] = str) -> Table:
    """A's results over all environments: overall, as black, as white, for each pairing (agents shown as ``label`` says)."""
    envs = results.over_envs[0].env_name if results.over_envs else ""
    table = _table(f"Over {envs}", OVERALL_COLUMNS, f"{describe(results)}\n{CELL_NOTE}")
    rows = overall_rows(results)
    for start in range(0, len(rows), len(SCOPES)):
        if start:
            table.add_section()
        for offset, row in enumerate(rows[start : start + len(SCOPES)]):
            table.add_row(*([label(row[0]), label(row[1]), *row[2:]] if offset == 0 else ["", "", *row[2:]]))
    return table


def per_env_table(results: TournamentResults, label: Callable[[str], str] = str) -> Table:
    """A's results on each environment, with the counts and win rate by colour (env ids as in `arena envs`)."""
    table = _table("Per environment", PER_ENV_COLUMNS, f"{CELL_NOTE}; env ids as in `arena envs`")
    previous = None
    for row in per_env_rows(results):
        if previous is not None and row[0] != previous:
            table.add_section()
        previous = row[0]
        table.add_row(row[0], label(row[1]), label(row[2]), *row[3:])
    return table


def _table(title: str, columns: Sequence[str], caption: str) -> Table:
    table = Table(title=title, caption=caption, box=box.SIMPLE_HEAD)
    for column in columns:
        if column in ("A", "B", "env"):
            add_name_column(table, column)
        elif column == "scope":
            table.add_column(column, no_wrap=True)
        else:  # a rate cell wraps at its spaces on a narrow terminal, never cut
            table.add_column(column, justify="right", overflow="fold")
    return table
