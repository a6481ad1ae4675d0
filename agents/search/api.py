"""Python entry points of the search kernels: alpha-beta search and the exact endgame solver.

Values are from the point of view of the player to move in ``state`` (the *root
mover*), and a utility table ``utility[own_final, opp_final]`` is always from
that player's view (default: disc difference, standard Othello).

Units of :func:`search_position` values: heuristic evaluations are weighted
feature sums (``agents.search.features``), bounded by ``sum(|weights|)``; a
finished game is worth ``utility * scale`` with
``scale = (1 + sum(|weights|)) / (smallest non-zero |utility|)``, so any
utility above 0 beats every heuristic value and any below 0 loses to all of
them. :func:`solve_position` values are plain utilities.

Weights are static (a dict or a vector in the order of ``FEATURES``) or a
count-indexed table ``[own, opp, feature]`` from the root mover's view
(:func:`agents.search.features.weight_table`). With ``evaluate_finished=True``
finished games are scored by the evaluation like any other leaf, with no
utility (scale 1): for agents that do not know the outcome rule.

A :class:`Searcher` fixes the rules, tables, weights and utility once and then
searches many positions; :func:`search_position` builds one per call.

Each layout gets cached :class:`SearchTables` (features, Zobrist keys, a
transposition table, move buffers) that the module-level functions share; an
agent should own its tables (pass ``tables=``). Tables are not thread-safe.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from agents.search import endgame, negamax
from agents.search.features import build_layout_features, layout_features, weight_table
from agents.search.ttable import DEFAULT_BITS, TranspositionTable, zobrist_keys
from engine.layout import Layout
from engine.rules import Rules
from engine.state import PASS, State


class SearchTables:
    """Per-layout search state: feature data, Zobrist keys, a transposition table, move buffers.

    ``positional``: the flat table of cell values of the ``positional`` feature
    (and of move ordering); default ``agents.heuristic.positional.positional_table``.
    """

    def __init__(self, layout: Layout, tt_bits: int = DEFAULT_BITS, positional: np.ndarray | None = None) -> None:
        self.layout = layout
        self.features = layout_features(layout) if positional is None else build_layout_features(layout, positional)
        self.zobrist = zobrist_keys(layout.cells)
        self.tt = TranspositionTable(tt_bits)
        plies = 2 * layout.cells + 2  # a game's placements and passes, with room to spare
        self.move_buffer = np.zeros((plies, layout.cells), dtype=np.int64)
        self.score_buffer = np.zeros((plies, layout.cells), dtype=np.float64)
        self.order = np.ascontiguousarray(self.features.table, dtype=np.float64)
        self.stats = np.zeros(3, dtype=np.int64)

    def root_moves(self, rules: Rules, state: State, legal: Sequence[int] | None = None) -> np.ndarray:
        """The legal moves (``[PASS]`` when forced), best positional value first; ValueError at the end.

        ``legal``: the legal moves of ``state`` when the caller has them already (an observation's).
        """
        legal = rules.legal_moves(state) if legal is None else legal
        if not legal:
            raise ValueError("no legal moves: the game is over")
        return np.array(sorted(legal, key=lambda move: -self.order[move] if move != PASS else 0.0), dtype=np.int64)


@lru_cache(maxsize=16)
def shared_tables(layout: Layout) -> SearchTables:
    """The tables the module-level functions use for a layout when none are passed."""
    return SearchTables(layout)


@dataclass(frozen=True)
class SearchResult:
    """A root search: the best move and value, every root move's value, nodes visited.

    ``values[i]`` belongs to ``moves[i]``; it is exact when it equals ``value``
    (ties are exact) and otherwise only an upper bound. ``depth`` is the deepest
    completed iteration (the remaining empties for the endgame solver).
    """

    move: int
    value: float
    nodes: int
    depth: int
    moves: tuple[int, ...]
    values: tuple[float, ...]
    scale: float = 1.0

    @property
    def ties(self) -> list[int]:
        """The moves whose value equals the best value (at least ``move``)."""
        return [move for move, value in zip(self.moves, self.values) if value == self.value]


@lru_cache(maxsize=64)
def _disc_difference(cells: int) -> np.ndarray:
    table = endgame.disc_difference_utility(cells)
    table.flags.writeable = False
    return table


def _utility(rules: Rules, utility_table: np.ndarray | None) -> np.ndarray:
    cells = rules.layout.cells
    return _disc_difference(cells) if utility_table is None else endgame.check_utility(utility_table, cells)


def terminal_scale(weights: np.ndarray, utility: np.ndarray) -> float:
    """Factor that puts every non-zero utility beyond the reach of the heuristic (module docstring).

    ``weights``: a vector, or a weight table (its largest ``sum(|weights|)`` counts).
    """
    magnitudes = np.abs(utility[utility != 0.0])
    smallest = float(magnitudes.min()) if magnitudes.size else 1.0
    bound = float(np.abs(weights).sum(axis=-1).max()) if weights.ndim > 1 else float(np.abs(weights).sum())
    return (1.0 + bound) / smallest


_NO_UTILITY = np.zeros((0, 0), dtype=np.float64)  # the kernels' "score finished games by the evaluation"


def _tables(rules: Rules, tables: SearchTables | None) -> SearchTables:
    tables = shared_tables(rules.layout) if tables is None else tables
    if tables.layout != rules.layout:
        raise ValueError("search tables were built for another layout")
    return tables


def _position(rules: Rules, state: State) -> tuple:
    g = rules.geometry
    colour = state.to_move
    return g.words(state.own), g.words(state.opponent), state.placed(colour), state.placed(1 - colour)


def _table_args(tables: SearchTables, use_tt: bool) -> tuple:
    """The part of a kernel context both searches share: hashing, the table, the move buffers and the counters."""
    return (tables.zobrist, tables.tt.arrays, use_tt, tables.move_buffer, tables.score_buffer, tables.order, tables.stats)


def _search_context(rules, tables, weights, term, use_tt, deadline) -> tuple:
    limit, counting = rules.limit_args
    return (limit, counting, rules.geometry.kernel_args, tables.features.kernel_args, weights, term, *_table_args(tables, use_tt), deadline)


def _check_depth(depth: int) -> None:
    if isinstance(depth, bool) or not isinstance(depth, int) or depth < 1:
        raise ValueError(f"depth={depth!r}: give a whole number >= 1")


class Searcher:
    """Alpha-beta search with the rules, tables, weights and finished-game scoring fixed once.

    ``weights``: static weights or a count-indexed table (module docstring);
    ``utility_table``: the root mover's utility of finished games (default: disc
    difference), or ``evaluate_finished=True`` to score them by the evaluation.
    """

    def __init__(
        self,
        rules: Rules,
        weights=None,
        utility_table: np.ndarray | None = None,
        *,
        use_tt: bool = True,
        tables: SearchTables | None = None,
        evaluate_finished: bool = False,
    ) -> None:
        if evaluate_finished and utility_table is not None:
            raise ValueError("give a utility_table or evaluate_finished=True, not both")
        self.rules = rules
        self.tables = _tables(rules, tables)
        self.weights = weight_table(weights, rules.layout.cells)
        if evaluate_finished:
            self.scale, term = 1.0, _NO_UTILITY
        else:
            utility = _utility(rules, utility_table)
            self.scale = terminal_scale(self.weights, utility)
            term = utility * self.scale
        self.use_tt = use_tt
        self._context = _search_context(rules, self.tables, self.weights, term, use_tt, 0.0)

    def search(self, state: State, depth: int, time_limit: float = 0.0, legal: Sequence[int] | None = None) -> SearchResult:
        """Iterative-deepening alpha-beta to ``depth`` plies (``time_limit`` seconds, 0 = none).

        ``legal``: the legal moves of ``state`` if the caller has them (saves computing them again).
        """
        _check_depth(depth)
        if time_limit < 0:
            raise ValueError(f"time_limit={time_limit!r}: give seconds >= 0 (0 = no limit)")
        tables = self.tables
        root_moves = tables.root_moves(self.rules, state, legal)
        values = np.full(len(root_moves), -np.inf)
        if self.use_tt:
            tables.tt.clear()
        tables.stats[:] = 0
        cx = self._context
        if time_limit > 0:
            cx = cx[:-1] + (time.perf_counter() + time_limit,)
        completed, value = negamax.iterative_deepening(*_position(self.rules, state), depth, cx, root_moves, values)
        return SearchResult(
            int(root_moves[0]),
            float(value),
            int(tables.stats[negamax.NODES]),
            int(completed),
            tuple(root_moves.tolist()),
            tuple(values.tolist()),
            self.scale,
        )

    def minimax_value(self, state: State, depth: int) -> float:
        """Plain minimax value at ``depth`` (no pruning, no table), in :meth:`search`'s units."""
        return float(negamax.minimax_value(*_position(self.rules, state), depth, self._context))


def search_position(
    rules: Rules,
    state: State,
    depth: int,
    weights=None,
    utility_table: np.ndarray | None = None,
    time_limit: float = 0.0,
    *,
    use_tt: bool = True,
    tables: SearchTables | None = None,
    evaluate_finished: bool = False,
) -> SearchResult:
    """Iterative-deepening alpha-beta to ``depth`` plies (``time_limit`` seconds, 0 = none)."""
    _check_depth(depth)
    searcher = Searcher(rules, weights, utility_table, use_tt=use_tt, tables=tables, evaluate_finished=evaluate_finished)
    return searcher.search(state, depth, time_limit)


def search(
    rules: Rules, state: State, depth: int, weights=None, utility_table: np.ndarray | None = None, time_limit: float = 0.0
) -> tuple[int, float, int]:
    """(best move, value, nodes) of :func:`search_position` (the first best move in search order)."""
    result = search_position(rules, state, depth, weights, utility_table, time_limit)
    return result.move, result.value, result.nodes


def minimax_value(
    rules: Rules, state: State, depth: int, weights=None, utility_table: np.ndarray | None = None, *, evaluate_finished: bool = False
) -> float:
    """Plain minimax value at ``depth`` (no pruning, no table), in :func:`search_position`'s units."""
    searcher = Searcher(rules, weights, utility_table, use_tt=False, evaluate_finished=evaluate_finished)
    return searcher.minimax_value(state, depth)


def empties(rules: Rules, state: State) -> int:
    """Empty playable cells."""
    return (rules.layout.playable_mask & ~(state.black | state.white)).bit_count()


def solve_position(
    rules: Rules, state: State, utility_table: np.ndarray | None = None, *, use_tt: bool = True, tables: SearchTables | None = None
) -> SearchResult:
    """Perfect play to the end for the utility (root mover's view); values exact where they tie the best."""
    tables = _tables(rules, tables)
    utility = _utility(rules, utility_table)
    root_moves = tables.root_moves(rules, state)
    values = np.full(len(root_moves), -np.inf)
    tables.tt.clear()
    limit, counting = rules.limit_args
    cx = (limit, counting, rules.geometry.kernel_args, utility, *_table_args(tables, use_tt))
    remaining = empties(rules, state)
    value = endgame.solve_root(*_position(rules, state), remaining, cx, root_moves, values)
    best = int(root_moves[int(np.argmax(values))])
    return SearchResult(
        best, float(value), int(tables.stats[negamax.NODES]), remaining, tuple(int(m) for m in root_moves), tuple(float(v) for v in values)
    )


def solve_endgame(rules: Rules, state: State, utility_table: np.ndarray | None = None) -> tuple[float, int]:
    """(exact value, a best move) for the root mover under the utility (default: disc difference)."""
    result = solve_position(rules, state, utility_table)
    return result.value, result.move
