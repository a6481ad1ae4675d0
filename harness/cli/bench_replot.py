"""``arena bench replot DIR``: draw the figures of a recorded ``arena bench paper`` run again, playing nothing.

Reads the run's ``manifest.json`` and ``results.jsonl`` and replaces the PNGs in
the run directory (convergence, PosNet value tables, WeightNet weights): the
way to refresh figures after a change to the drawing code, without the hours of
a full benchmark.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.text import Text

from harness.bench.paper_plan import SCHEMA
from harness.cli.console import stdout_console
from harness.cli.options import refuse_newer_schema


def replot(
    run_dir: Annotated[Path, typer.Argument(metavar="DIR", show_default=False, help="A run directory written by 'arena bench paper'.")],
) -> None:
    """Redraw the figures of an 'arena bench paper' run from its recorded results, without playing again."""
    if not run_dir.is_dir():
        raise typer.BadParameter(f"{str(run_dir)!r} is not a directory: give the run directory of 'arena bench paper'")
    refuse_newer_schema(run_dir / "manifest.json", SCHEMA)
    from harness.bench.paper_plots import redraw_figures  # matplotlib only when drawing

    paths, notes = redraw_figures(run_dir)
    console = stdout_console()
    for path in paths:
        console.print(Text(f"wrote {path}"), soft_wrap=True)
    for note in notes:
        console.print(Text(note, style="dim"), soft_wrap=True)
