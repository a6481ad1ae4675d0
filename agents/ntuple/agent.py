"""The ``ntuple`` agent: an all-2 n-tuple network (shipped weights per layout) as a 1-ply player or alpha-beta's evaluation.

``ntuple`` (``depth=1``) is the paper's player: the placement whose resulting
position the network values most, ties at random. ``ntuple:depth=3`` searches
3 plies with :mod:`agents.ntuple.negamax`, the network valuing the leaves.
The weights are the shipped ones of the layout (:func:`agents.ntuple.network.shipped_network`:
the 7 benchmark layouts have them, trained by ``arena train ntuple``), or those of
``weights=FILE.npz`` (any layout: an .npz that ``arena train ntuple`` wrote for it);
on a layout without them the agent cannot be built and says how to train some.
Games are scored by the standard rule (more discs) in the search: the agent does
not know a hidden condition.
"""

from __future__ import annotations

import numpy as np

from agents.base import Agent, AgentContext, choose, forced_move
from agents.ntuple.kernel import codes_of, ntuple_scores
from agents.ntuple.negamax import root_values
from agents.ntuple.network import NTupleNetwork, load_network, shipped_network
from agents.spec import Param, register, whole_number
from engine.geometry import geometry_of
from engine.protocol.observation import Observation
from engine.state import WHITE

TIE_TOLERANCE = 1e-9


@register(
    "ntuple",
    "All-2 n-tuple network (Jaskowski 2014; shipped weights per benchmark layout): 1-ply, or alpha-beta at depth > 1",
    {
        "depth": Param(int, 1, "search depth in plies (1: the paper's 1-ply player)"),
        "weights": Param(str, "", "an .npz from `arena train ntuple` for this layout (default: the shipped weights)"),
    },
)
class NTupleAgent(Agent):
    """The best placement by the network, 1-ply or by a depth-limited alpha-beta; ties by the agent's generator."""

    name = "ntuple"

    def __init__(
        self, context: AgentContext, rng: np.random.Generator, depth: int = 1, network: NTupleNetwork | None = None, weights: str = ""
    ) -> None:
        super().__init__(context, rng)
        self.depth = whole_number("depth", depth, 1, prefix="ntuple ")
        if network is None:
            network = load_network(context.rules.layout, weights) if weights else shipped_network(context.rules.layout)
        self.network = network
        if self.network.layout.cells != context.rules.layout.cells:
            raise ValueError("the n-tuple network was built for another layout")
        shape = self.network.shape
        self._net = (shape.expansions, shape.orbit, self.network.luts)
        self._geometry = geometry_of(context.rules.layout)

    def act(self, observation: Observation) -> int:
        """The placement with the best value (PASS or a lone placement without evaluating)."""
        forced = forced_move(observation)
        if forced is not None:
            return forced
        scores = self.move_values(observation)
        best = max(scores.values())
        return choose(self.rng, [move for move, score in scores.items() if score >= best - TIE_TOLERANCE])

    def move_values(self, observation: Observation) -> dict[int, float]:
        """Each legal placement's value for the mover: the network after it (depth 1) or the search value."""
        state, geometry = observation.state, self._geometry
        cells = observation.rules.layout.cells
        black, white = geometry.words(state.black), geometry.words(state.white)
        own, opp = geometry.words(state.own), geometry.words(state.opponent)
        codes = codes_of(black, white, cells)
        moves = np.empty(cells, dtype=np.int64)
        values = np.empty(cells, dtype=np.float64)
        white_moves = state.to_move == WHITE
        if self.depth == 1:
            legal = geometry.words(sum(1 << move for move in observation.legal_moves if move >= 0))
            count = ntuple_scores(codes, own, opp, legal, white_moves, self._net, geometry.kernel_args, values, moves)
        else:
            count = root_values(codes, own, opp, white_moves, self.depth, self._net, geometry.kernel_args, moves, values)
        return {int(moves[k]): float(values[k]) for k in range(count)}
