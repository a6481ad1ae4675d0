"""``arena sweep plan FILE`` and ``arena sweep run FILE --out DIR``: a grid of runs on a local pool or a Ray cluster.

The file's grammar: :mod:`harness.sweep.spec`; the cells: :mod:`harness.sweep.cells`;
the backends: :mod:`harness.sweep.backends`. ``run`` on a directory that already holds
the same sweep skips the finished cells and resumes the others. Ctrl-C starts no new cell,
gives those in flight the grace period, and ends with the command that continues (exit 130).
"""

from __future__ import annotations

import shlex
from pathlib import Path

import typer
from rich.text import Text

from harness.cli.console import stderr_console, stdout_console
from harness.records.interrupts import INTERRUPTED_EXIT_CODE, stop_on_interrupt
from harness.sweep.backends import run_sweep
from harness.sweep.cells import CellOutcome
from harness.sweep.plan import plan_lines
from harness.sweep.spec import Sweep, SweepError, load_sweep
from harness.tournaments.resume import RunInterrupted

sweep_app = typer.Typer(
    help="Grids of runs: 'sweep plan FILE' shows the cells and their cost, 'sweep run FILE --out DIR' runs them.", no_args_is_help=True
)
BACKENDS = ("local", "ray")


def _load(file: Path) -> Sweep:
    try:
        return load_sweep(file)
    except SweepError as error:
        raise typer.BadParameter(f"{file}: {error}") from None


def plan(
    file: Path = typer.Argument(..., help="The sweep file (TOML)."),
    jobs: int = typer.Option(1, "--jobs", min=1, help="Workers the wall-time estimate assumes (with --time)."),
    time: bool = typer.Option(False, "--time", help="Also time the bench agents (plays a few probe games here)."),
) -> None:
    """Print the cells and an estimate of games, model calls and cost; nothing is written or called."""
    for line in plan_lines(_load(file), jobs, timed=time):
        print(line)


def run(
    file: Path = typer.Argument(..., help="The sweep file (TOML)."),
    out: Path = typer.Option(..., "--out", help="The sweep directory (cells under DIR/cells; on a cluster: a shared path)."),
    backend: str = typer.Option("local", "--backend", help="local (worker processes here) or ray."),
    jobs: int = typer.Option(1, "--jobs", min=1, help="Worker processes (local), or CPUs of a local Ray instance."),
    address: str = typer.Option(None, "--address", help="Ray: a running cluster's address (default RAY_ADDRESS, else a local instance)."),
) -> None:
    """Run every cell not finished yet; each cell is an ordinary run directory."""
    if backend not in BACKENDS:
        raise typer.BadParameter(f"--backend {backend!r}: give local or ray")
    sweep = _load(file)
    console = stdout_console()

    def report(outcome: CellOutcome) -> None:
        console.print(
            f"{outcome.status:7} {outcome.id} ({outcome.seconds:.1f} s)" + (f": {outcome.error}" if outcome.error else ""),
            markup=False,
            highlight=False,
        )

    try:
        with stop_on_interrupt(unit="cells") as stop:
            outcomes = run_sweep(
                sweep, out, backend="ray" if backend == "ray" else "local", jobs=jobs, address=address, on_outcome=report, stop=stop
            )
    except SweepError as error:
        raise typer.BadParameter(str(error)) from None
    except RunInterrupted as stopped:
        how = "the cells in flight were stopped" if stopped.forced or backend == "ray" else "the cells in flight finished"
        console = stderr_console()
        console.print(
            Text(
                f"interrupted: {stopped.recorded} of {stopped.total} cells finished or skipped ({how}; a cell "
                f"left half-way resumes from its own records)"
            ),
            soft_wrap=True,
        )
        again = ["arena", "sweep", "run", str(file), "--out", str(out), "--backend", backend, "--jobs", str(jobs)]
        console.print(Text(f"continue with: {shlex.join(again)}"), soft_wrap=True)
        raise typer.Exit(INTERRUPTED_EXIT_CODE) from None
    failed = [o for o in outcomes if o.status == "failed"]
    console.print(
        f"{len(outcomes)} cells: {sum(o.status == 'ok' for o in outcomes)} run, "
        f"{sum(o.status == 'skipped' for o in outcomes)} finished before, {len(failed)} failed"
        f"{capped_note(outcomes)}; in {out}",
        markup=False,
        highlight=False,
    )
    if failed:
        raise typer.Exit(1)


def capped_note(outcomes: list[CellOutcome]) -> str:
    """', N stopped by a cost cap (raise it and run the sweep again to finish them)', or nothing."""
    capped = sum(o.status == "capped" for o in outcomes)
    return f", {capped} stopped by a cost cap (raise it and run the sweep again to finish them)" if capped else ""
