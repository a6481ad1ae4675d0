"""The ``az`` agent: the AlphaZero-style network with PUCT search under a per-game thinking budget.

Each real choice (not a pass or a lone placement) searches with PUCT
(:mod:`agents.az.search`, no root noise) until the move's share of the game's
budget is spent or ``simulations`` more simulations are done; the most visited
move is played (ties by the agent's generator). Leaves are valued ``leaves`` at
a time (virtual loss), which gives the network batches instead of single boards
(several times more simulations in the same time on one core). The tree is
kept between moves: the next search starts from the subtree of the position
actually reached (found among the grandchildren of the previous root: our move,
then the opponent's), with its visits. A move's share is what is left of
``seconds`` divided by the mover's remaining placements (half the empty cells,
rounded up), so a game never thinks much longer than ``seconds`` (the seed
paper's limit is 10 s per game). Thinking time is the process's CPU time by
default (``clock=cpu``; torch runs on one thread, so on an idle machine it is
the wall time): on a shared, loaded machine a wall clock would give the agent
whatever share of a core the other jobs leave, and results would depend on
the load. ``clock=wall`` counts wall time instead. A new game is noticed when fewer discs have
been placed than at the agent's previous move.

The network is fully convolutional, so any layout works; the weights are the
shipped ``agents/az/data/az.pt`` or ``weights=FILE.pt`` from ``arena train az``.
torch is imported when the agent is built, not when the registry lists it.
"""

from __future__ import annotations

import time
from typing import Any

import numpy as np

from agents.base import Agent, AgentContext, choose, forced_move
from agents.spec import Param, register, whole_number
from engine.protocol.observation import Observation

CHECK_EVERY = 2  # batches of leaves between clock checks
CLOCKS = {"cpu": time.process_time, "wall": time.perf_counter}


@register(
    "az",
    "AlphaZero-style network (depthwise-separable, fully convolutional; self-play on randomized boards) with PUCT search",
    {
        "seconds": Param(float, 10.0, "thinking time per game in seconds (the seed paper's limit: 10)"),
        "simulations": Param(int, 2000, "most PUCT simulations per move (the time share usually ends a search first)"),
        "clock": Param(str, "cpu", "what the thinking time counts: cpu (this process's CPU time) or wall"),
        "leaves": Param(int, 8, "leaves valued per network call (virtual loss); 1: one simulation at a time"),
        "weights": Param(str, "", "a .pt from `arena train az` (default: the shipped agents/az/data/az.pt)"),
    },
)
class AzAgent(Agent):
    """PUCT with the network's priors and values; the most visited move within the time share."""

    name = "az"

    def __init__(
        self,
        context: AgentContext,
        rng: np.random.Generator,
        seconds: float = 10.0,
        simulations: int = 2000,
        clock: str = "cpu",
        leaves: int = 8,
        weights: str = "",
    ) -> None:
        super().__init__(context, rng)
        if isinstance(seconds, bool) or not isinstance(seconds, (int, float)) or not seconds > 0:
            raise ValueError(f"az seconds={seconds!r}: give a thinking time per game > 0")
        whole_number("simulations", simulations, 1, prefix="az ")
        if clock not in CLOCKS:
            raise ValueError(f"az clock={clock!r}: give cpu or wall")
        if isinstance(leaves, bool) or not isinstance(leaves, int) or not 1 <= leaves <= 64:
            raise ValueError(f"az leaves={leaves!r}: give a whole number from 1 to 64")
        import torch

        from agents.az.net import evaluator, load_net

        torch.set_num_threads(1)
        self.seconds, self.simulations, self.leaves = float(seconds), simulations, leaves
        self._clock = CLOCKS[clock]
        self.net = load_net(weights or None)
        self._evaluate = evaluator(self.net)
        self._spent, self._last_placed = 0.0, -1
        self._tree: Any = None
        self.last_visits: dict[int, int] = {}
        self.reused = 0  # visits inherited from the previous move's tree at the last search

    def act(self, observation: Observation) -> int:
        """The most visited legal move after the move's share of simulations (forced moves at once)."""
        if observation.move_number < self._last_placed:
            self._spent, self._tree = 0.0, None
        self._last_placed = observation.move_number
        forced = forced_move(observation)
        if forced is not None:
            return forced
        start = self._clock()
        tree = self.search(observation, start)
        self._spent += self._clock() - start
        root = tree.root
        self.last_visits = {int(move): int(visits) for move, visits in zip(root.moves, root.visits)}
        most = root.visits.max()
        return choose(self.rng, [int(m) for m, v in zip(root.moves, root.visits) if v == most])

    def search(self, observation: Observation, start: float) -> Any:
        """The PUCT tree of the position after this move's simulations (kept for the next move)."""
        from agents.az.search import Tree, simulate

        rules = observation.rules
        empty = bin(rules.layout.playable_mask & ~(observation.state.black | observation.state.white)).count("1")
        share = max(0.0, self.seconds - self._spent) / max(1, (empty + 1) // 2)
        tree = Tree(rules, observation.state)
        reached = self._reached(observation)
        if reached is not None:
            tree.root = reached
        self.reused = int(tree.root.visits.sum())
        done = 0
        while done < self.simulations:
            steps = max(1, min(CHECK_EVERY, (self.simulations - done) // self.leaves))
            simulate([tree], self._evaluate, steps, leaves=self.leaves)
            done += steps * self.leaves
            if self._clock() - start >= share and tree.root.visits.sum() > 0:
                break
        self._tree = tree
        return tree

    def _reached(self, observation: Observation) -> Any:
        """The previous tree's node of this position (a grandchild of its root), or None."""
        if self._tree is None:
            return None
        for child in self._tree.root.children.values():
            for grandchild in child.children.values():
                if grandchild.state == observation.state:
                    return grandchild
        return None
