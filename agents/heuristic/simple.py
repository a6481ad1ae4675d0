"""The simple baselines: Random, Greedy (most discs flipped) and Corner (a corner when it can, else greedy).

None of them looks past the move it plays; all break ties with their own
generator. A forced pass is normally played by the harness, but each answers
PASS if asked anyway.
"""

from __future__ import annotations

import numpy as np

from agents.base import Agent, AgentContext, choose, placements
from agents.heuristic.positional import corner_cells
from agents.spec import register
from engine.protocol.observation import Observation
from engine.state import PASS


def most_flips(observation: Observation, moves: list[int]) -> list[int]:
    """Those of ``moves`` (placements) that flip the most discs, in the given order."""
    rules, state = observation.rules, observation.state
    flips = [rules.flips(state, move).bit_count() for move in moves]
    top = max(flips)
    return [move for move, count in zip(moves, flips, strict=True) if count == top]


class OnePlyAgent(Agent):
    """PASS when forced, else a placement drawn by the agent's generator from :meth:`candidates`."""

    def act(self, observation: Observation) -> int:
        if observation.must_pass:
            return PASS
        return choose(self.rng, self.candidates(observation, placements(observation)))

    def candidates(self, observation: Observation, moves: list[int]) -> list[int]:
        """The placements to draw from (default: all of ``moves``)."""
        return moves


@register("random", "Uniformly random legal move")
class RandomAgent(OnePlyAgent):
    """A legal placement drawn uniformly from the agent's generator."""

    name = "random"


@register("greedy", "The move that flips the most discs; ties at random")
class GreedyAgent(OnePlyAgent):
    """The placement flipping the most discs; ties broken uniformly by the agent's generator."""

    name = "greedy"

    def candidates(self, observation: Observation, moves: list[int]) -> list[int]:
        return most_flips(observation, moves)


@register("corner", "A corner (edge or obstacle corner) when one is legal, else greedy")
class CornerAgent(OnePlyAgent):
    """A corner of the layout when one is legal (the one flipping most), otherwise greedy.

    Corners are :func:`agents.heuristic.positional.corner_cells`: obstacles count as edge.
    """

    name = "corner"

    def __init__(self, context: AgentContext, rng: np.random.Generator) -> None:
        super().__init__(context, rng)
        layout = context.rules.layout
        self.corners = frozenset(layout.index(cell) for cell in corner_cells(layout))

    def candidates(self, observation: Observation, moves: list[int]) -> list[int]:
        corners = [move for move in moves if move in self.corners]
        return most_flips(observation, corners or moves)
