"""Minimax: iterative-deepening negamax alpha-beta with a heuristic evaluation, exact near the end.

Each move, the agent searches to ``depth`` plies (within ``time`` seconds, 0 = no
limit; the deepest completed iteration counts) with the evaluation of
``agents.search.features`` (weights are data: pass ``weights``), or, with at most
``endgame`` empty cells left, solves the rest of the game exactly
(``agents.search.endgame``). Finished games are scored by ``utility``, a table
over the final (own, opponent) discs from the agent's view, by default the disc
difference (standard Othello); the opponent is assumed to minimise it.

Ties: all moves whose search value equals the best value are found exactly
(see ``agents.search.negamax``) and one is drawn with the agent's generator, so
repeated games differ. A lone legal move is played without a search. The
kernels live in ``agents/search/``; :func:`search` and :func:`solve_endgame` are
the Python API other agents use.
"""

from __future__ import annotations

import numpy as np

from agents.base import Agent, AgentContext, choose, forced_move
from agents.search.api import SearchResult, SearchTables, empties, search_position, solve_position
from agents.search.endgame import check_utility, disc_difference_utility
from agents.search.features import weights_array
from agents.spec import Param, register, whole_number
from engine.protocol.observation import Observation


@register(
    "minimax",
    "Alpha-beta (iterative deepening, transposition table) on a weighted feature evaluation; exact endgame",
    {
        "depth": Param(int, 5, "search depth in plies"),
        "time": Param(float, 0.0, "seconds per move, 0 = no limit (the deepest completed depth is used)"),
        "endgame": Param(int, 12, "solve exactly at or below this many empty cells, 0 = never"),
    },
)
class MinimaxAgent(Agent):
    """Negamax alpha-beta to ``depth`` plies, exact endgame at ``endgame`` empties or fewer."""

    name = "minimax"

    def __init__(
        self,
        context: AgentContext,
        rng: np.random.Generator,
        depth: int = 5,
        time: float = 0.0,
        endgame: int = 12,
        weights: dict[str, float] | np.ndarray | None = None,
        utility: np.ndarray | None = None,
    ) -> None:
        super().__init__(context, rng)
        whole_number("depth", depth, 1, prefix="minimax ")
        if time < 0:
            raise ValueError(f"minimax time={time!r}: give seconds >= 0 (0 = no limit)")
        if isinstance(endgame, bool) or not isinstance(endgame, int) or endgame < 0:
            raise ValueError(f"minimax endgame={endgame!r}: give a number of empty cells >= 0 (0 = never)")
        self.depth, self.time, self.endgame = depth, float(time), endgame
        self.weights = weights_array(weights)
        cells = self.rules.layout.cells
        self.utility = disc_difference_utility(cells) if utility is None else check_utility(utility, cells)
        self.tables = SearchTables(self.rules.layout)
        self.last: SearchResult | None = None

    def act(self, observation: Observation) -> int:
        """The move to play: a best move of the search (or of the exact solve), ties drawn at random."""
        forced = forced_move(observation)
        if forced is not None:
            return forced
        self.last = self.analyse(observation)
        return choose(self.rng, self.last.ties)

    def analyse(self, observation: Observation) -> SearchResult:
        """The search (or exact solve) the agent would run for this position."""
        rules, state = observation.rules, observation.state
        if self.endgame and empties(rules, state) <= self.endgame:
            return solve_position(rules, state, self.utility, tables=self.tables)
        return search_position(rules, state, self.depth, self.weights, self.utility, self.time, tables=self.tables)
