"""``arena demo``: a short match between two built-in policies, until the full harness exists."""

from __future__ import annotations

from typing import Annotated

import numpy as np
import typer
from rich import box
from rich.table import Table
from rich.text import Text

from engine import PASS, make_env
from harness.cli.console import stdout_console
from harness.cli.options import parse_env_id
from harness.match import OUTCOMES, MatchResult, run_match
from harness.observation import Observation
from harness.policy import RandomPolicy


class GreedyPolicy:
    """The placement that flips the most discs; ties broken uniformly by the given generator."""

    name = "greedy"

    def __init__(self, rng: np.random.Generator) -> None:
        self.rng = rng

    def act(self, observation: Observation) -> int:
        """A legal move flipping the most discs (PASS when that is the only move)."""
        moves = [m for m in observation.legal_moves if m != PASS]
        if not moves:
            if observation.legal_moves:
                return PASS
            raise ValueError("no legal moves: the game is over")
        rules, state = observation.rules, observation.state
        flips = [rules.flips(state, move).bit_count() for move in moves]
        best = [move for move, count in zip(moves, flips, strict=True) if count == max(flips)]
        return int(best[int(self.rng.integers(len(best)))])


def demo(
    env: Annotated[str, typer.Option("--env", metavar="ID", help="Environment id, 0-55.")] = "0",
    games: Annotated[int, typer.Option("--games", help="Games to play, colours alternating.")] = 20,
    seed: Annotated[int, typer.Option("--seed", help="Seed of the match.")] = 0,
) -> None:
    """Play a short match, greedy (most flips) vs random, and print win/draw/lose rates.

    Rates are from the greedy policy's side, with Wilson 95% intervals, overall
    and by colour. The winning condition K stays hidden from both policies.
    """
    if games < 1:
        raise typer.BadParameter(f"--games must be 1 or more, got {games}")
    environment = make_env(parse_env_id(env))
    result = run_match(environment, GreedyPolicy, RandomPolicy, games, seed)
    stdout_console().print(match_table(result))


def match_table(result: MatchResult) -> Table:
    """A rich table of ``result.table()``: rate [Wilson 95% interval] (games) per outcome, in percent."""
    table = Table(
        title=f"{result.policy_a} vs {result.policy_b}, env {result.env_id} ({result.env_name}), seed {result.seed}",
        caption=f"{result.policy_a}'s results: rate % [Wilson 95% interval] (games)",
        box=box.SIMPLE_HEAD,
    )
    table.add_column("scope")
    table.add_column("games", justify="right")
    for outcome in OUTCOMES:
        table.add_column(outcome, justify="right")
    scopes = {"A black": "as black", "A white": "as white"}
    for row in result.table():
        cells = [
            Text(f"{row[f'{o}_rate']:.0%} [{100 * row[f'{o}_low']:.0f}-{100 * row[f'{o}_high']:.0f}] ({row[o]})")
            for o in OUTCOMES
        ]
        table.add_row(scopes.get(str(row["scope"]), str(row["scope"])), str(row["games"]), *cells)
    return table
