"""One agent's wins, draws and losses over some games, with its score and a 95% interval.

The score counts a draw as half a win. The interval is chosen by
``interval_method``: ``"wilson"`` (Wilson's score interval on wins + draws / 2
rounded down: a rate near 0 or 1 on few games, as in ``arena bench az``) or
``"normal"`` (the normal interval of the mean points per game, points 1, 0.5
and 0: the Othello League's report).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Literal

from harness.tournaments.stats import Z95, wilson

IntervalMethod = Literal["wilson", "normal"]


@dataclass(frozen=True)
class WinDrawLoss:
    """Wins, draws and losses; ``rate`` counts draws half; ``interval`` by ``interval_method`` (module docstring)."""

    wins: int
    draws: int
    losses: int
    interval_method: IntervalMethod = "wilson"

    @property
    def games(self) -> int:
        return self.wins + self.draws + self.losses

    @property
    def rate(self) -> float:
        return (self.wins + 0.5 * self.draws) / self.games if self.games else 0.0

    @property
    def interval(self) -> tuple[float, float]:
        """The 95% interval of ``rate``; (0, 1) before any game."""
        if self.interval_method == "wilson":
            return wilson(int(self.wins + 0.5 * self.draws), self.games)
        if not self.games:
            return (0.0, 1.0)
        mean = self.rate
        variance = (self.wins * (1 - mean) ** 2 + self.draws * (0.5 - mean) ** 2 + self.losses * mean**2) / self.games
        half = Z95 * math.sqrt(variance / self.games)
        return (max(0.0, mean - half), min(1.0, mean + half))
