"""The rich consoles the commands print to, created per call so redirected streams are honoured."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import Any

from rich.console import Console
from rich.measure import Measurement
from rich.progress import BarColumn, MofNCompleteColumn, Progress, ProgressColumn, TextColumn, TimeElapsedColumn, TimeRemainingColumn
from rich.table import Table
from rich.text import Text


def stdout_console() -> Console:
    """Results go to stdout (colour only on a terminal)."""
    return Console(highlight=False)


def stderr_console() -> Console:
    """Errors and progress go to stderr."""
    return Console(stderr=True, highlight=False)


DESCRIPTION = "[progress.description]{task.description}"  # a bar's label: its task's description


def stderr_progress(label: str = DESCRIPTION, *extra: ProgressColumn, remaining: bool = False, transient: bool = True) -> Progress:
    """A progress bar on stderr: ``label``, the bar, done of total, the ``extra`` columns, time elapsed (and left)."""
    columns = [TextColumn(label), BarColumn(), MofNCompleteColumn(), *extra, TimeElapsedColumn()]
    return Progress(*columns, *([TimeRemainingColumn()] if remaining else []), console=stderr_console(), transient=transient)


def print_lines(console: Console, *lines: str) -> None:
    """Each line printed as it is (no markup), soft-wrapped: a long path or figure is never cut."""
    for line in lines:
        console.print(Text(line), soft_wrap=True)


def print_error(message: str) -> None:
    """One red line ``error: <message>`` on stderr; the message is printed literally (no markup)."""
    stderr_console().print(Text(f"error: {message}", style="bold red"), soft_wrap=True)


def add_name_column(table: Table, header: str, **options: Any) -> None:
    """A column of names (agents, environments, models): a name is never cut to '…' (it folds if it must)."""
    table.add_column(header, overflow="fold", min_width=max(3, min(len(header), 12)), **options)


def fitting_table(build: Callable[[Callable[[str], str]], Table], names: Iterable[str], console: Console) -> tuple[Table, list[Text]]:
    """``build(label)``'s table with every name whole when it fits the console's width; otherwise with the names as
    #1, #2, ... and a legend (one line a name, printed soft-wrapped: never cut). ``label`` maps a name to its cell."""
    table = build(lambda name: name)
    if fits(table, console):
        return table, []
    short = {name: f"#{number}" for number, name in enumerate(dict.fromkeys(names), 1)}
    legend = [Text(f"{label} = {name}") for name, label in short.items()]
    return build(lambda name: short.get(name, name)), legend


def fits(table: Table, console: Console) -> bool:
    """Whether ``table`` prints within the console's width with no column squeezed."""
    return Measurement.get(console, console.options.update_width(10_000), table).maximum <= console.width


def stacked_tables(build: Callable[[Sequence[int]], Table], columns: int, console: Console) -> list[Table]:
    """``build(indexes)``'s table with all ``columns`` figure columns when it fits the console's width; otherwise
    the columns split, in order, over as few stacked tables as fit (each built with the label columns again), so
    that no figure or name is cut. A single column too wide alone still gets a table of its own."""
    everything = list(range(columns))
    if fits(build(everything), console):
        return [build(everything)]
    groups: list[list[int]] = [[]]
    for index in everything:
        if groups[-1] and not fits(build([*groups[-1], index]), console):
            groups.append([])
        groups[-1].append(index)
    return [build(group) for group in groups]
