"""``arena bench league SPEC``: the Othello League measure (vs the Standard WPC Heuristic, epsilon 0.1) of any agent."""

from __future__ import annotations

import time
from typing import Annotated

import typer
from rich.text import Text

from harness.bench.league import LEAGUE_DOUBLE_GAMES, LEAGUE_EPSILON, league
from harness.cli.console import stderr_progress, stdout_console
from harness.cli.options import use_plugins
from harness.cli.perft import duration
from harness.registry.specs import canonical_spec


def league_command(
    spec: Annotated[str, typer.Argument(help="The agent spec to measure, e.g. ntuple or positional.")],
    games: Annotated[int, typer.Option("--games", help="Double games (one per colour).")] = LEAGUE_DOUBLE_GAMES,
    epsilon: Annotated[float, typer.Option("--epsilon", help="Probability of a random move, both sides.")] = LEAGUE_EPSILON,
    seed: Annotated[int, typer.Option("--seed", help="Seed of the agents and the random moves.")] = 0,
    plugins: Annotated[list[str] | None, typer.Option("--plugin", help="A module or .py file declaring agents.")] = None,
) -> None:
    """Score SPEC on standard 8x8 against the Standard WPC Heuristic player (Table I of Jaskowski 2014).

    Both sides move at random with probability --epsilon; a win counts 1, a draw 0.5;
    the League score is the mean over 2 x --games games, with a 95% interval.
    """
    use_plugins(plugins)
    if games < 1:
        raise typer.BadParameter(f"--games {games}: give 1 or more double games")
    if not 0 <= epsilon <= 1:
        raise typer.BadParameter(f"--epsilon {epsilon}: give a probability from 0 to 1")
    start = time.perf_counter()
    with stderr_progress() as progress:
        task = progress.add_task(f"league {spec}", total=2 * games)
        result = league(spec, games, seed, epsilon, on_game=lambda: progress.advance(task))
    low, high = result.interval
    stdout_console().print(
        Text(
            f"{canonical_spec(spec)}: League score {result.rate:.3f} (95% {low:.3f}-{high:.3f}) over {result.games} games vs SWH "
            f"(epsilon {epsilon:g}): {result.wins} wins, {result.draws} draws, {result.losses} losses; "
            f"{duration(time.perf_counter() - start)}"
        ),
        soft_wrap=True,
    )
