"""``arena train posnet``: meta-learn PosNet by survival-only evolution over random layouts.

Writes the final population with the run's metadata to an .npz (default
``runs/<timestamp>-train-posnet/posnet.npz``) and, beside it, a PNG of the
ensembled tables on the seven benchmark layouts (Figure 1 of the paper). The
shipped weights (``agents/data/posnet.npz``) are only replaced when ``--out``
names that file.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Annotated

import typer
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)
from rich.text import Text

from agents.posnet import ensemble_table
from agents.posnet_train import (
    DEFAULT_SIGMA,
    PAPER_GENERATIONS,
    PAPER_LAYOUTS,
    PAPER_POPULATION,
    TrainConfig,
    TrainConfigError,
    TrainResult,
    save_result,
    train_posnet,
    training_layouts,
)
from engine.environments import layouts as benchmark_layouts
from harness.bench.posnet_plot import plot_value_tables
from harness.cli.console import stderr_console, stdout_console
from harness.cli.perft import duration
from harness.tournaments.tournament import default_run_dir


def posnet(
    population: Annotated[int, typer.Option("--population", help="Individuals (even, 2 or more).")] = PAPER_POPULATION,
    generations: Annotated[int, typer.Option("--generations", help="Generations (0 or more).")] = PAPER_GENERATIONS,
    layouts: Annotated[int, typer.Option("--layouts", help="Random training layouts (1 or more).")] = PAPER_LAYOUTS,
    sigma: Annotated[float, typer.Option("--sigma", help="Mutation scale (standard deviation, 0 or more).")] = DEFAULT_SIGMA,
    seed: Annotated[int, typer.Option("--seed", help="Seed of the layouts and of the evolution (0 or more).")] = 0,
    out: Annotated[Path | None, typer.Option(
        "--out", metavar="FILE.npz", show_default=False,
        help="Where to write the population (default: runs/<timestamp>-train-posnet/posnet.npz); the PNG goes beside it.",
    )] = None,
) -> None:
    """Train PosNet (paper Appendix C): pairs of 1-ply positional players on random layouts, more discs wins.

    Each generation every pair plays two games (colours swapped) on a layout drawn
    from the training set, each individual under a random rotation/reflection;
    winners are duplicated, everyone is mutated and shuffled. Paper scale is the
    default: 200 individuals, 1,000 generations, 1,000 layouts (200,000 games).
    """
    try:
        config = TrainConfig(population, generations, layouts, sigma, seed)
    except TrainConfigError as error:
        raise typer.BadParameter(str(error)) from None
    path = _output_path(out)
    console = stdout_console()
    with Progress(
        TextColumn("[progress.description]{task.description}"), BarColumn(), MofNCompleteColumn(),
        TimeElapsedColumn(), TimeRemainingColumn(), console=stderr_console(), transient=True,
    ) as progress:
        task = progress.add_task(f"drawing {layouts} layouts", total=generations)
        start = time.perf_counter()
        training_layouts(seed, layouts)
        drawing_seconds = time.perf_counter() - start
        progress.update(task, description="generations")
        result = train_posnet(config, on_generation=lambda generation, _: progress.update(task, completed=generation))
    save_result(result, path)
    picture = plot_value_tables(*_benchmark_tables(result), path.with_suffix(".png"))
    console.print(Text(
        f"{result.games:,} games in {generations} generations, population {population}, {layouts} layouts, "
        f"sigma {sigma:g}, seed {seed}: {duration(result.elapsed_seconds)} (drawing the layouts: {duration(drawing_seconds)})"
    ), soft_wrap=True)
    console.print(Text(f"population: {path}"), soft_wrap=True)
    console.print(Text(f"tables:     {picture}"), soft_wrap=True)


def _output_path(out: Path | None) -> Path:
    if out is None:
        return default_run_dir("train-posnet") / "posnet.npz"
    if out.suffix != ".npz":
        raise typer.BadParameter(f"--out {str(out)!r}: give a file name ending in .npz")
    if out.is_dir():
        raise typer.BadParameter(f"--out {str(out)!r} is a directory: give a file name ending in .npz")
    return out


def _benchmark_tables(result: TrainResult) -> tuple[dict, tuple]:
    """The ensembled tables of the trained population on the benchmark layouts, titled by layout."""
    boards = benchmark_layouts()
    tables = {f"{i + 1}. {layout.name}": ensemble_table(result.population, layout) for i, layout in enumerate(boards)}
    return tables, boards
