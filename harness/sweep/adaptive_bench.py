"""The adaptive tournament's benchmark: a pool of agents with known strengths, adaptive vs the full round robin.

Games are drawn from Davidson's model (:mod:`harness.sweep.rating`): with ``pi = 10^(elo/400)``,
``P(i wins) = pi_i / D``, ``P(draw) = nu sqrt(pi_i pi_j) / D``. The outcome of game ``k``
of the pair (i, j) comes from a generator seeded by (seed, i, j, k) alone, so the adaptive
schedule and the round robin see the same outcome for the same game of the same pair
(common random numbers: the comparison is of schedules, not of luck). Both schedules stop by
the same anytime-valid test at the same alpha (:mod:`harness.sweep.adaptive`).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from harness.sweep.adaptive import ALPHA, Outcome, PlayGame, run_adaptive, run_round_robin

DEFAULT_ELOS = (0.0, 100.0, 200.0, 300.0, 400.0, 500.0)
DEFAULT_NU = 0.5  # 20% draws between equals


@dataclass(frozen=True)
class Pool:
    """Agents ``agent0 .. agentN-1`` with known Elo ratings and Davidson's draw parameter ``nu``."""

    elos: tuple[float, ...] = DEFAULT_ELOS
    nu: float = DEFAULT_NU

    @property
    def agents(self) -> tuple[str, ...]:
        return tuple(f"agent{i}" for i in range(len(self.elos)))

    @property
    def true_order(self) -> tuple[str, ...]:
        return tuple(sorted(self.agents, key=lambda name: -self.elos[self.agents.index(name)]))

    def probabilities(self, i: int, j: int) -> tuple[float, float, float]:
        """(i wins, draw, j wins)."""
        pi, pj = 10 ** (self.elos[i] / 400), 10 ** (self.elos[j] / 400)
        tie = self.nu * math.sqrt(pi * pj)
        total = pi + pj + tie
        return pi / total, tie / total, pj / total

    def player(self, seed: int, cost_per_game: float = 0.0) -> PlayGame:
        """The game oracle: (A, B, game index of the pair) -> (A's score, cost)."""
        agents = self.agents

        def play(a: str, b: str, index: int) -> tuple[float, float]:
            i, j = agents.index(a), agents.index(b)
            win, draw, _ = self.probabilities(i, j)
            u = np.random.default_rng([seed, min(i, j), max(i, j), index]).random()
            score = 1.0 if u < win else 0.5 if u < win + draw else 0.0
            return score, cost_per_game

        return play


@dataclass(frozen=True)
class SeedResult:
    """One seed: both schedules' outcomes."""

    seed: int
    adaptive: Outcome
    round_robin: Outcome

    def correct(self, pool: Pool, outcome: Outcome) -> bool:
        return outcome.decided and outcome.ranking == pool.true_order

    def success(self, pool: Pool) -> bool:
        """Adaptive decided the true order with at most half the round robin's games (the round robin also decided)."""
        return self.correct(pool, self.adaptive) and self.round_robin.decided and 2 * self.adaptive.games <= self.round_robin.games


def bench_adaptive(
    pool: Pool, seeds: Sequence[int], *, alpha: float = ALPHA, max_games: int = 100_000, cost_per_game: float = 0.0
) -> list[SeedResult]:
    """Both schedules on every seed."""
    results = []
    for seed in seeds:
        play = pool.player(seed, cost_per_game)
        adaptive = run_adaptive(pool.agents, play, alpha=alpha, max_games=max_games)
        fixed = run_round_robin(pool.agents, play, alpha=alpha, max_games=max_games)
        results.append(SeedResult(seed, adaptive, fixed))
    return results
