"""A plain minimax over the public ``Rules`` API, the independent reference of the search-kernel mutation tests.

Nothing here calls the search kernels: legal moves, passes, the end of the game
and the disc counts come from ``engine.rules.Rules``; the evaluation is the
``discs`` and ``mobility`` features only (written out below), so a kernel value
can be checked against a number computed another way.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from fractions import Fraction

import numpy as np

from agents.search.features import FEATURES
from engine.condition import Condition
from engine.layout import Layout, standard_layout
from engine.rules import Rules
from engine.state import PASS, State

FOUR = standard_layout(4, 4, name="4x4")
SIX = standard_layout(6, 6, name="6x6")
# Two obstacles beside the start square: lines stop at them.
BLOCKED = standard_layout(6, 6, obstacles=[(1, 2), (4, 3), (0, 5)], name="6x6 blocked")


def ratio(a: int, b: int) -> float:
    return 0.0 if a + b == 0 else (a - b) / (a + b)


def k_utility(cells: int, k: str) -> np.ndarray:
    """+1 win, -1 loss, 0 draw for (own, opp) final discs under threshold K (``Condition.wins``)."""
    condition = Condition(Fraction(k))
    table = np.zeros((cells + 1, cells + 1))
    for a in range(cells + 1):
        for b in range(cells + 1 - a):
            table[a, b] = 1.0 if condition.wins(a, b) else -1.0 if condition.wins(b, a) else 0.0
    return table


def vector(discs: float, mobility: float) -> np.ndarray:
    """Static kernel weights with only ``discs`` and ``mobility`` non-zero."""
    weights = np.zeros(len(FEATURES))
    weights[FEATURES.index("discs")], weights[FEATURES.index("mobility")] = discs, mobility
    return weights


@dataclass
class Minimax:
    """Fixed-depth minimax values from the mover's view, in the kernels' units (``agents.search.api``).

    ``weights``: a (discs, mobility) pair, or a count-indexed table ``[root discs, other discs] -> pair``;
    ``utility``: the root mover's utility of finished games, or None to evaluate them (mobility 0).
    """

    rules: Rules
    root: int
    weights: tuple[float, float] | np.ndarray
    utility: np.ndarray | None
    nodes: int = field(default=0)

    @property
    def scale(self) -> float:
        if self.utility is None:
            return 1.0
        bound = float(np.abs(np.asarray(self.weights)).reshape(-1, 2).sum(axis=1).max())
        nonzero = np.abs(self.utility[self.utility != 0])
        return (1.0 + bound) / (float(nonzero.min()) if nonzero.size else 1.0)

    def _mobility(self, state: State) -> tuple[int, int]:
        other = state._replace(to_move=1 - state.to_move)
        return self.rules.legal_mask(state).bit_count(), self.rules.legal_mask(other).bit_count()

    def evaluation(self, state: State, mobility: tuple[int, int]) -> float:
        own, opp = state.own.bit_count(), state.opponent.bit_count()
        if isinstance(self.weights, tuple):
            discs, moves = self.weights
        else:
            root_discs, other = (own, opp) if state.to_move == self.root else (opp, own)
            discs, moves = (float(w) for w in self.weights[root_discs, other])
        return discs * ratio(own, opp) + moves * ratio(*mobility)

    def finished(self, state: State) -> float:
        if self.utility is None:
            return self.evaluation(state, (0, 0))
        mine, theirs = state.discs(self.root).bit_count(), state.discs(1 - self.root).bit_count()
        value = float(self.utility[mine, theirs]) * self.scale
        return value if state.to_move == self.root else -value

    def value(self, state: State, depth: int) -> float:
        """The mover's minimax value ``depth`` plies deep (a forced pass is a ply)."""
        self.nodes += 1
        legal = self.rules.legal_moves(state)
        if not legal:
            return self.finished(state)
        if depth == 0:
            return self.evaluation(state, self._mobility(state))
        return max(-self.value(self.rules.play(state, move), depth - 1) for move in legal)

    def children(self, state: State, depth: int) -> dict[int, float]:
        """Each root move's value (``PASS`` when forced)."""
        return {move: -self.value(self.rules.play(state, move), depth - 1) for move in self.rules.legal_moves(state)}


def tie_set(values: dict[int, float]) -> set[int]:
    best = max(values.values())
    return {move for move, value in values.items() if abs(value - best) <= 1e-9 * max(1.0, abs(best))}


def first_order(layout_table: np.ndarray, legal: list[int]) -> list[int]:
    """The root order before the first iteration: best positional value first (``SearchTables.root_moves``)."""
    return sorted(legal, key=lambda move: -layout_table[move] if move != PASS else 0.0)


def layout_of(name: str) -> Layout:
    return {"4x4": FOUR, "6x6": SIX, "blocked": BLOCKED}[name]
