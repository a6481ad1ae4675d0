"""Exact endgame solver: perfect play to the end of the game for a utility of the final disc counts.

``utility[own_final, opp_final]`` (float64, ``(cells + 1) x (cells + 1)``) is the
value of the end of the game for the *root mover* (the player to move where the
solve starts), ``own_final`` being its discs. The game is zero-sum: the
opponent minimises it, so in negamax form a finished game is worth
``utility[own, opp]`` with the root mover to move and ``-utility[opp, own]``
otherwise. The search is fail-soft alpha-beta over the whole remaining tree
(forced passes and turn limits included), so the root value is exact.

Move order: the table's move first; with more than ``FASTEST_FIRST_EMPTIES``
empty cells, fastest-first (the move leaving the opponent the fewest
placements, then the positional table); below that, the positional table
(corners first) alone, since counting replies costs more than it saves near
the end. A transposition table (optional; entries are always exact to the
end, so any stored bound may cut) serves positions with at least
``TT_MIN_EMPTIES`` empties. Layouts are arbitrary, so no region parity.

The Python helpers build the usual utility tables.
"""

from __future__ import annotations

from fractions import Fraction

import numpy as np
from numba import njit

from agents.search.negamax import ABORTED, NODES, borrow_table, collect_moves, pick_next, terminal_value
from agents.search.primitives import apply, borrow_geo, borrowed, count
from agents.search.ttable import EXACT, LOWER, UPPER, child_key, pass_key, root_key, tt_slot, tt_store
from engine.bits import bb_any
from engine.condition import Condition, as_fraction
from engine.kernels import flips_of, mover_moves

CONTEXT_FIELDS = ("turn_limit", "counting", "geo", "utility", "zobrist", "tt", "use_tt", "move_buffer", "score_buffer", "order", "stats")
FASTEST_FIRST_EMPTIES = 6
TT_MIN_EMPTIES = 7
FIRST = 1e300


def disc_difference_utility(cells: int) -> np.ndarray:
    """``own - opp``: standard Othello scoring."""
    own, opp = np.indices((cells + 1, cells + 1))
    return (own - opp).astype(np.float64)


def outcome_utility(cells: int, k: float | Fraction | str) -> np.ndarray:
    """+1 win / 0 draw / -1 loss under threshold ``k`` (the exact integer rule of ``Condition.wins``)."""
    condition = Condition(as_fraction(k))
    table = np.zeros((cells + 1, cells + 1), dtype=np.float64)
    for own in range(cells + 1):
        for opp in range(cells + 1 - own):
            table[own, opp] = 1.0 if condition.wins(own, opp) else (-1.0 if condition.wins(opp, own) else 0.0)
    return table


def target_utility(cells: int, target: int) -> np.ndarray:
    """``-|own - target|``: 0 exactly when the root mover ends with ``target`` discs."""
    own = np.arange(cells + 1, dtype=np.float64)[:, None]
    return np.broadcast_to(-np.abs(own - target), (cells + 1, cells + 1)).copy()


def ratio_utility(cells: int, target: float) -> np.ndarray:
    """``table[own, opp] = -|own / (own + opp) - target|`` (0 discs in all: -1, never reached in play)."""
    own, opp = np.indices((cells + 1, cells + 1), dtype=np.float64)
    total = own + opp
    with np.errstate(invalid="ignore", divide="ignore"):
        table = -np.abs(np.where(total > 0, own / np.where(total > 0, total, 1.0), 0.0) - target)
    table[0, 0] = -1.0
    return table


def check_utility(utility: np.ndarray, cells: int) -> np.ndarray:
    """The table as a contiguous float64 ``(cells + 1) x (cells + 1)`` array, or ValueError."""
    table = np.ascontiguousarray(utility, dtype=np.float64)
    if table.shape != (cells + 1, cells + 1):
        raise ValueError(f"utility table: shape {table.shape}, expected {(cells + 1, cells + 1)} (final own x opp discs)")
    if not np.all(np.isfinite(table)):
        raise ValueError("utility table: all entries must be finite")
    return table


@njit(cache=True)
def _order_moves(own, opp, pm, po, moves, empties, ply, first, cx):
    """Fill the buffers with the moves and their order scores; returns their number."""
    limit, counting, geo, move_buffer, score_buffer, order = cx[0], cx[1], cx[2], cx[7], cx[8], cx[9]
    n = collect_moves(moves, ply, move_buffer, score_buffer, order, first)
    if empties > FASTEST_FIRST_EMPTIES:
        for i in range(n):
            move = move_buffer[ply, i]
            if move != first:
                child_own, child_opp = apply(own, opp, move, flips_of(own, opp, move, geo))
                replies = count(mover_moves(child_opp, child_own, po, pm + 1, limit, counting, geo))
                score_buffer[ply, i] = order[move] - 1000.0 * replies
    return n


@njit(cache=True)
def _solve(own, opp, pm, po, side, empties, alpha, beta, key, ply, cx):
    """Exact fail-soft alpha-beta value for the mover."""
    limit, counting, geo, util, zob, tt, use_tt, stats = cx[0], cx[1], cx[2], cx[3], cx[4], cx[5], cx[6], cx[10]
    stats[NODES] += 1
    if empties == 0:
        return terminal_value(own, opp, side, util)
    probe = use_tt and empties >= TT_MIN_EMPTIES
    first = -1
    if probe:
        slot = tt_slot(tt, key)
        if slot >= 0:
            first = tt[4][slot]
            value, flag = tt[2][slot], tt[3][slot]
            if flag == EXACT or (flag == LOWER and value >= beta) or (flag == UPPER and value <= alpha):
                return value
    moves = mover_moves(own, opp, pm, po, limit, counting, geo)
    if not bb_any(moves):
        if not bb_any(mover_moves(opp, own, po, pm, limit, counting, geo)):
            return terminal_value(own, opp, side, util)
        return -_solve(opp, own, po, pm, 1 - side, empties, -beta, -alpha, pass_key(key, zob), ply + 1, cx)
    n = _order_moves(own, opp, pm, po, moves, empties, ply, first, cx)
    best = -np.inf
    best_move = -1
    floor = alpha
    limited = limit != 0
    for i in range(n):
        move = pick_next(ply, i, n, cx[7], cx[8])
        flipped = flips_of(own, opp, move, geo)
        child_own, child_opp = apply(own, opp, move, flipped)
        child = child_key(key, move, flipped, side, pm, limited, zob) if probe else key
        value = -_solve(child_opp, child_own, po, pm + 1, 1 - side, empties - 1, -beta, -floor, child, ply + 1, cx)
        if value > best:
            best = value
            best_move = move
            if value > floor:
                floor = value
                if floor >= beta:
                    break
    if probe:
        flag = UPPER if best <= alpha else (LOWER if best >= beta else EXACT)
        tt_store(tt, key, empties, best, flag, best_move)
    return best


@njit(cache=True)
def solve_root(own, opp, pm, po, empties, cx, root_moves, values):
    """Every root move's value (exact where it ties the best; PASS = -1 for a forced pass); returns the best."""
    cx = (
        cx[0],
        cx[1],
        borrow_geo(cx[2]),
        borrowed(cx[3]),
        borrowed(cx[4]),
        borrow_table(cx[5]),
        cx[6],
        borrowed(cx[7]),
        borrowed(cx[8]),
        borrowed(cx[9]),
        borrowed(cx[10]),
    )
    geo, zob, stats = cx[2], cx[4], cx[10]
    stats[NODES] = 0
    stats[ABORTED] = 0
    limited = cx[0] != 0
    key = root_key(own, opp, pm, po, limited, zob)
    best = -np.inf
    zero, one = np.int64(0), np.int64(1)  # not literals (see negamax._root)
    for i in range(len(root_moves)):
        move = root_moves[i]
        floor = -np.inf if best == -np.inf else np.nextafter(best, -np.inf)
        if move < 0:
            value = -_solve(opp, own, po, pm, one, empties, -np.inf, -floor, pass_key(key, zob), one, cx)
        else:
            flipped = flips_of(own, opp, move, geo)
            child_own, child_opp = apply(own, opp, move, flipped)
            child = child_key(key, move, flipped, zero, pm, limited, zob)
            value = -_solve(child_opp, child_own, po, pm + 1, one, empties - 1, -np.inf, -floor, child, one, cx)
        values[i] = value
        best = max(best, value)
    return best
