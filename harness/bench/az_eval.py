"""Win rates of an agent (the ``az`` agent by default) on boards it was not trained on, with Wilson intervals.

The held-out boards (:func:`held_out_layouts`) are drawn from a seed no training
run uses: 8x8 with four random blocked cells, 7x7 (a size the ``az`` training
never plays) with three, and 10x10 with eight; standard 8x8 and, with
``benchmark=True``, the 7 benchmark layouts (the obstacle ones are among the
training boards) come beside them. Outcomes use the standard rule (more discs
wins); colours alternate, the agent is black in even games; a draw is half a
win in the rate and the interval is Wilson's on wins + draws / 2 rounded down.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from agents.base import AgentContext
from engine.environments import layouts as benchmark_layouts
from engine.environments import make_env
from engine.layout import Layout, standard_layout
from engine.layout_gen import random_layout
from engine.rules import Rules
from harness.play.game import play_game
from harness.registry.specs import make_agent
from harness.tournaments.stats import wilson

HELD_OUT_SEED = 18_018


@dataclass(frozen=True)
class WinRow:
    """One board and opponent: the agent's wins, draws and losses."""

    board: str
    opponent: str
    wins: int
    draws: int
    losses: int

    @property
    def games(self) -> int:
        return self.wins + self.draws + self.losses

    @property
    def rate(self) -> float:
        return (self.wins + 0.5 * self.draws) / self.games if self.games else 0.0

    @property
    def interval(self) -> tuple[float, float]:
        return wilson(int(self.wins + 0.5 * self.draws), self.games)


def held_out_layouts(benchmark: bool = False) -> list[Layout]:
    """Standard 8x8 and three boards from :data:`HELD_OUT_SEED` (module docstring); the benchmark's seven too if asked."""
    rng = np.random.default_rng(HELD_OUT_SEED)
    boards = [
        standard_layout(8, 8, name="Standard 8x8"),
        random_layout(rng, rows=8, cols=8, obstacle_density=4 / 64, name="held-out 8x8, 4 blocked"),
        random_layout(rng, rows=7, cols=7, obstacle_density=3 / 49, name="held-out 7x7, 3 blocked"),
        random_layout(rng, rows=10, cols=10, obstacle_density=8 / 100, name="held-out 10x10, 8 blocked"),
    ]
    return boards + list(benchmark_layouts()) if benchmark else boards


def win_rates(spec: str, opponents: list[str], boards: list[Layout], games: int, seed: int = 0,
              on_game: Callable[[], None] | None = None) -> list[WinRow]:
    """Play ``games`` games of ``spec`` against each opponent on each board (module docstring)."""
    if games < 1:
        raise ValueError(f"games={games}: give 1 or more")
    condition = make_env(0).condition  # Majority: more discs wins
    rows = []
    for b, board in enumerate(boards):
        rules = Rules(board)
        for o, opponent in enumerate(opponents):
            tally = [0, 0, 0]
            for game in range(games):
                agent = make_agent(spec, AgentContext(rules), np.random.default_rng([seed, b, o, game, 1]))
                other = make_agent(opponent, AgentContext(rules), np.random.default_rng([seed, b, o, game, 2]))
                colour = game % 2
                black, white = (agent, other) if colour == 0 else (other, agent)
                reward = play_game(rules, condition, black, white).rewards[colour]
                tally[0 if reward > 0 else 1 if reward == 0 else 2] += 1
                if on_game is not None:
                    on_game()
            rows.append(WinRow(board.name, opponent, *tally))
    return rows
