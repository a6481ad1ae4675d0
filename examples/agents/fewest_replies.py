"""An example agent: play the move that leaves the opponent the fewest replies (ties at random)."""

from __future__ import annotations

import numpy as np

from agents.base import Agent, AgentContext, choose, forced_move
from agents.spec import Param, register
from engine.protocol.observation import Observation
from engine.state import PASS


class FewestRepliesAgent(Agent):
    """One ply of lookahead with the public rules: minimise the opponent's legal moves."""

    def __init__(self, context: AgentContext, rng: np.random.Generator, pass_is_zero: bool = True) -> None:
        super().__init__(context, rng)
        self.pass_is_zero = pass_is_zero

    def act(self, observation: Observation) -> int:
        forced = forced_move(observation)  # PASS, or the only placement
        if forced is not None:
            return forced
        rules, state = observation.rules, observation.state
        replies = {move: self._replies(rules.legal_moves(rules.play(state, move))) for move in observation.legal_moves}
        fewest = min(replies.values())
        return choose(self.rng, [move for move, count in replies.items() if count == fewest])

    def _replies(self, moves: list[int]) -> int:
        return 0 if self.pass_is_zero and moves == [PASS] else len(moves)


@register(
    "fewest-replies",
    "1-ply: the move that leaves the opponent the fewest replies",
    params={"pass_is_zero": Param(bool, True, "a forced pass counts as no reply at all")},
)
def fewest_replies(context: AgentContext, rng: np.random.Generator, pass_is_zero: bool = True) -> Agent:
    return FewestRepliesAgent(context, rng, pass_is_zero)
