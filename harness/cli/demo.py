"""``arena demo``: a short match, the registered greedy agent against a random policy."""

from __future__ import annotations

from collections.abc import Callable
from typing import Annotated

import numpy as np
import typer
from rich import box
from rich.table import Table
from rich.text import Text

from agents.base import Agent, AgentContext
from agents.registry import make_agent
from engine import make_env
from engine.rules import Rules
from harness.cli.console import stdout_console
from harness.cli.options import parse_env_id
from harness.match import OUTCOMES, MatchResult, run_match
from harness.policy import RandomPolicy


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
    result = run_match(environment, greedy_factory(environment.rules), RandomPolicy, games, seed)
    stdout_console().print(match_table(result))


def greedy_factory(rules: Rules) -> Callable[[np.random.Generator], Agent]:
    """A factory of the registered ``greedy`` agent (most flips, ties by its generator) on ``rules``."""
    context = AgentContext(rules)
    return lambda rng: make_agent("greedy", context, rng)


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
