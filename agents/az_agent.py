"""The ``az`` agent: the AlphaZero-style network with PUCT search under a per-game thinking budget.

Each real choice (not a pass or a lone placement) builds a fresh PUCT tree
(:mod:`agents.az_search`, no root noise) and simulates until the move's share
of the game's budget is spent or ``simulations`` is reached; the most visited
move is played (ties by the agent's generator). A move's share is what is left
of ``seconds`` divided by the mover's remaining placements (half the empty
cells, rounded up), so a game never thinks much longer than ``seconds`` (the
seed paper's limit is 10 s per game). A new game is noticed when fewer discs
have been placed than at the agent's previous move.

The network is fully convolutional, so any layout works; the weights are the
shipped ``agents/data/az.pt`` or ``weights=FILE.pt`` from ``arena train az``.
torch is imported when the agent is built, not when the registry lists it.
"""

from __future__ import annotations

import time
from typing import Any

import numpy as np

from agents.base import Agent, AgentContext, choose, forced_move
from agents.spec import Param, register
from engine.protocol.observation import Observation

CHECK_EVERY = 4  # simulations between clock checks


@register(
    "az",
    "AlphaZero-style network (depthwise-separable, fully convolutional; self-play on randomized boards) with PUCT search",
    {"seconds": Param(float, 10.0, "thinking time per game in seconds (the seed paper's limit: 10)"),
     "simulations": Param(int, 400, "most PUCT simulations per move"),
     "weights": Param(str, "", "a .pt from `arena train az` (default: the shipped agents/data/az.pt)")},
)
class AzAgent(Agent):
    """PUCT with the network's priors and values; the most visited move within the time share."""

    name = "az"

    def __init__(self, context: AgentContext, rng: np.random.Generator, seconds: float = 10.0,
                 simulations: int = 400, weights: str = "") -> None:
        super().__init__(context, rng)
        if isinstance(seconds, bool) or not isinstance(seconds, (int, float)) or not seconds > 0:
            raise ValueError(f"az seconds={seconds!r}: give a thinking time per game > 0")
        if isinstance(simulations, bool) or not isinstance(simulations, int) or simulations < 1:
            raise ValueError(f"az simulations={simulations!r}: give a whole number >= 1")
        import torch

        from agents.az_net import evaluator, load_net

        torch.set_num_threads(1)
        self.seconds, self.simulations = float(seconds), simulations
        self.net = load_net(weights or None)
        self._evaluate = evaluator(self.net)
        self._spent, self._last_placed = 0.0, -1
        self.last_visits: dict[int, int] = {}

    def act(self, observation: Observation) -> int:
        """The most visited legal move after the move's share of simulations (forced moves at once)."""
        if observation.move_number < self._last_placed:
            self._spent = 0.0
        self._last_placed = observation.move_number
        forced = forced_move(observation)
        if forced is not None:
            return forced
        start = time.perf_counter()
        tree = self.search(observation, start)
        self._spent += time.perf_counter() - start
        root = tree.root
        self.last_visits = {int(move): int(visits) for move, visits in zip(root.moves, root.visits)}
        most = root.visits.max()
        return choose(self.rng, [int(m) for m, v in zip(root.moves, root.visits) if v == most])

    def search(self, observation: Observation, start: float) -> Any:
        """A PUCT tree of the position after this move's simulations."""
        from agents.az_search import Tree, simulate

        rules = observation.rules
        empty = bin(rules.layout.playable_mask & ~(observation.state.black | observation.state.white)).count("1")
        share = max(0.0, self.seconds - self._spent) / max(1, (empty + 1) // 2)
        tree = Tree(rules, observation.state)
        done = 0
        while done < self.simulations:
            batch = min(CHECK_EVERY, self.simulations - done)
            simulate([tree], self._evaluate, batch)
            done += batch
            if time.perf_counter() - start >= share and tree.root.visits.sum() > 0:
                break
        return tree
