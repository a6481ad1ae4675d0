"""Depth-limited negamax alpha-beta with iterative deepening and a transposition table (numba).

Values are from the mover's point of view. A forced pass is a ply. A finished
game (neither player may place, under the turn limit too) scores
``term[own, opp]`` (side 0, the root mover, to move) or ``-term[opp, own]``
(side 1), where ``term`` is the root mover's utility table already scaled so
that results dominate heuristics (see ``agents.search.api``); an empty ``term``
(shape ``(0, 0)``) scores finished games with the evaluation instead, like any
leaf (no legal moves: mobility 0), for agents that do not know the outcome
rule. At depth 0 an unfinished position scores
:func:`~agents.search.features.evaluate_counts`, with mobility = legal
placements under the turn limit and ``weights`` static (a vector) or
count-indexed (:func:`~agents.search.features.weights_at`); the kind is
settled by the array's type at compile time, so static weights compile to the
plain code and a count-indexed table to its own specialisation of the same
kernels. (Kernels pass ``cx`` whole only to functions that are not inlined:
binding it to a new name inside inlined code references every array in it.)

Every kernel takes the search context ``cx``, a tuple built by
``agents.search.api`` (see :data:`CONTEXT_FIELDS`). ``stats`` holds the node count,
an abort flag and an "armed" flag: once the first iteration is complete, every
``CHECK_EVERY`` nodes the kernel reads the clock (``time.perf_counter`` through
``primitives.now``) and aborts when it is past ``deadline`` (0: no deadline).
An aborted iteration is thrown away: the result is that of the deepest complete
one, so depth 1 always completes.

Transposition-table entries cut the search off only when stored at exactly the
depth being searched (deeper or shallower entries only order moves), so the
value of every node is its fixed-depth minimax value and the table changes no
value: tests compare alpha-beta with and without it against plain minimax.

Move order: the table's best move, then by ``order`` (the positional table,
higher first). At the root, each iteration searches the moves in the order of
the previous iteration's values; a move is searched with the window
``(nextafter(best so far, -inf), +inf)`` so that every move tying with the best
value gets its exact value and the caller can break ties.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from agents.search.features import borrow_features, evaluate_counts, weights_at
from agents.search.primitives import apply, borrow_geo, borrowed, count, now
from agents.search.ttable import EXACT, LOWER, UPPER, child_key, pass_key, root_key, tt_slot, tt_store
from engine.bits import ONE, ZERO, bb_any, trailing_zeros
from engine.kernels import flips_of, mover_moves

CONTEXT_FIELDS = (
    "turn_limit",
    "counting",
    "geo",
    "feat",
    "weights",
    "term",
    "zobrist",
    "tt",
    "use_tt",
    "move_buffer",
    "score_buffer",
    "order",
    "stats",
    "deadline",
)
NODES, ABORTED, ARMED = 0, 1, 2
CHECK_EVERY = 1024
FIRST = 1e300  # order score of the table's move


@njit(cache=True)
def borrow_table(tt):
    """The transposition-table arrays, borrowed (``primitives.borrowed``)."""
    return (borrowed(tt[0]), borrowed(tt[1]), borrowed(tt[2]), borrowed(tt[3]), borrowed(tt[4]))


@njit(cache=True)
def borrow_context(cx):
    """The search context with every array borrowed, for the recursive kernels."""
    return (
        cx[0],
        cx[1],
        borrow_geo(cx[2]),
        borrow_features(cx[3]),
        borrowed(cx[4]),
        borrowed(cx[5]),
        borrowed(cx[6]),
        borrow_table(cx[7]),
        cx[8],
        borrowed(cx[9]),
        borrowed(cx[10]),
        borrowed(cx[11]),
        borrowed(cx[12]),
        cx[13],
    )


@njit(cache=True)
def terminal_value(own, opp, side, term):
    """A finished game's value for the mover: ``term`` is from side 0's view, zero-sum."""
    a = count(own)
    b = count(opp)
    if side == 0:
        return term[a, b]
    return -term[b, a]


@njit(cache=True)
def finished_value(own, opp, side, geo, feat, weights, term):
    """A finished game's value for the mover: the utility ``term``, or the evaluation when ``term`` is empty."""
    if term.shape[0] == 0:
        return evaluate_counts(own, opp, 0, 0, geo, feat, weights_at(weights, own, opp, side))
    return terminal_value(own, opp, side, term)


@njit(cache=True)
def _out_of_time(stats, deadline):
    stats[NODES] += 1
    if deadline > 0.0 and stats[ARMED] == 1 and stats[NODES] % CHECK_EVERY == 0 and now() > deadline:
        stats[ABORTED] = 1
    return stats[ABORTED] == 1


@njit(cache=True)
def collect_moves(moves, ply, move_buffer, score_buffer, order, first):
    """Write the moves of bitboard ``moves`` in row ``ply`` of the buffers with their order scores."""
    k = 0
    for w in range(len(moves)):
        word = moves[w]
        while word != ZERO:
            index = w * 64 + int(trailing_zeros(word))
            move_buffer[ply, k] = index
            score_buffer[ply, k] = FIRST if index == first else order[index]
            k += 1
            word &= word - ONE
    return k


@njit(cache=True)
def pick_next(ply, i, n, move_buffer, score_buffer):
    """Move the best-scored of entries ``i..n-1`` of row ``ply`` to ``i`` and return it."""
    best = i
    for j in range(i + 1, n):
        if score_buffer[ply, j] > score_buffer[ply, best]:
            best = j
    if best != i:
        move, score = move_buffer[ply, best], score_buffer[ply, best]
        move_buffer[ply, best], score_buffer[ply, best] = move_buffer[ply, i], score_buffer[ply, i]
        move_buffer[ply, i], score_buffer[ply, i] = move, score
    return move_buffer[ply, i]


@njit(cache=True)
def _leaf(own, opp, pm, po, side, moves, cx):
    """Value of a position at depth 0 (``moves``: the mover's placements)."""
    limit, counting, geo, feat, weights, term = cx[0], cx[1], cx[2], cx[3], cx[4], cx[5]
    replies = mover_moves(opp, own, po, pm, limit, counting, geo)
    if not bb_any(moves) and not bb_any(replies):
        return finished_value(own, opp, side, geo, feat, weights, term)
    return evaluate_counts(own, opp, count(moves), count(replies), geo, feat, weights_at(weights, own, opp, side))


@njit(cache=True)
def _node(own, opp, pm, po, side, depth, alpha, beta, key, ply, cx):
    """Fail-soft alpha-beta value of a position searched ``depth`` plies deep."""
    limit, counting, geo, zob, tt, use_tt = cx[0], cx[1], cx[2], cx[6], cx[7], cx[8]
    move_buffer, score_buffer, order, stats, deadline = cx[9], cx[10], cx[11], cx[12], cx[13]
    if _out_of_time(stats, deadline):
        return 0.0
    first = -1
    if use_tt and depth > 0:
        slot = tt_slot(tt, key)
        if slot >= 0:
            first = tt[4][slot]
            if tt[1][slot] == depth:
                value, flag = tt[2][slot], tt[3][slot]
                if flag == EXACT or (flag == LOWER and value >= beta) or (flag == UPPER and value <= alpha):
                    return value
    moves = mover_moves(own, opp, pm, po, limit, counting, geo)
    if depth == 0:
        return _leaf(own, opp, pm, po, side, moves, cx)
    if not bb_any(moves):
        if not bb_any(mover_moves(opp, own, po, pm, limit, counting, geo)):
            return finished_value(own, opp, side, geo, cx[3], cx[4], cx[5])
        return -_node(opp, own, po, pm, 1 - side, depth - 1, -beta, -alpha, pass_key(key, zob), ply + 1, cx)
    n = collect_moves(moves, ply, move_buffer, score_buffer, order, first)
    best = -np.inf
    best_move = -1
    floor = alpha
    limited = limit != 0
    for i in range(n):
        move = pick_next(ply, i, n, move_buffer, score_buffer)
        flipped = flips_of(own, opp, move, geo)
        child_own, child_opp = apply(own, opp, move, flipped)
        child = child_key(key, move, flipped, side, pm, limited, zob) if use_tt else key
        value = -_node(child_opp, child_own, po, pm + 1, 1 - side, depth - 1, -beta, -floor, child, ply + 1, cx)
        if stats[ABORTED] == 1:
            return 0.0
        if value > best:
            best = value
            best_move = move
            if value > floor:
                floor = value
                if floor >= beta:
                    break
    if use_tt:
        flag = UPPER if best <= alpha else (LOWER if best >= beta else EXACT)
        tt_store(tt, key, depth, best, flag, best_move)
    return best


@njit(cache=True)
def _root(own, opp, pm, po, depth, key, cx, root_moves, values):
    """One iteration at the root: every move's value (exact where it ties the best); returns the best."""
    geo, zob, use_tt, stats = cx[2], cx[6], cx[8], cx[12]
    limited = cx[0] != 0
    best = -np.inf
    zero, one = np.int64(0), np.int64(1)  # not literals: those would compile second (recursive) specialisations
    for i in range(len(root_moves)):
        move = root_moves[i]
        floor = -np.inf if best == -np.inf else np.nextafter(best, -np.inf)
        if move < 0:  # a forced pass
            value = -_node(opp, own, po, pm, one, depth - 1, -np.inf, -floor, pass_key(key, zob), one, cx)
        else:
            flipped = flips_of(own, opp, move, geo)
            child_own, child_opp = apply(own, opp, move, flipped)
            child = child_key(key, move, flipped, zero, pm, limited, zob) if use_tt else key
            value = -_node(child_opp, child_own, po, pm + 1, one, depth - 1, -np.inf, -floor, child, one, cx)
        if stats[ABORTED] == 1:
            return best
        values[i] = value
        best = max(best, value)
    return best


@njit(cache=True)
def _sort_by_value(root_moves, values):
    """Stable insertion sort of the root moves by value, best first."""
    for i in range(1, len(values)):
        move, value = root_moves[i], values[i]
        j = i - 1
        while j >= 0 and values[j] < value:
            root_moves[j + 1], values[j + 1] = root_moves[j], values[j]
            j -= 1
        root_moves[j + 1], values[j + 1] = move, value


@njit(cache=True)
def iterative_deepening(own, opp, pm, po, max_depth, cx, root_moves, values):
    """Search depths 1..max_depth until the deadline; returns (deepest complete depth, its value).

    ``root_moves`` (PASS = -1 for a forced pass) come in the initial order and
    leave sorted by the deepest complete iteration's values, written to ``values``.
    """
    cx = borrow_context(cx)
    stats, zob = cx[12], cx[6]
    stats[ARMED] = 0
    stats[ABORTED] = 0
    key = root_key(own, opp, pm, po, cx[0] != 0, zob)
    scratch = np.empty(len(root_moves), dtype=np.float64)
    completed = 0
    best = -np.inf
    for depth in range(1, max_depth + 1):
        scratch[:] = -np.inf
        value = _root(own, opp, pm, po, depth, key, cx, root_moves, scratch)
        if stats[ABORTED] == 1:
            break
        completed = depth
        best = value
        values[:] = scratch
        _sort_by_value(root_moves, values)
        stats[ARMED] = 1
    return completed, best


@njit(cache=True)
def minimax_value(own, opp, pm, po, depth, cx):
    """Plain minimax value of a root position: :func:`minimax` with side 0 to move."""
    return minimax(own, opp, pm, po, np.int64(0), depth, borrow_context(cx))


@njit(cache=True)
def minimax(own, opp, pm, po, side, depth, cx):
    """Plain minimax (negamax form) without pruning or table, the reference for the tests."""
    limit, counting, geo = cx[0], cx[1], cx[2]
    cx[12][NODES] += 1
    moves = mover_moves(own, opp, pm, po, limit, counting, geo)
    if depth == 0:
        return _leaf(own, opp, pm, po, side, moves, cx)
    if not bb_any(moves):
        if not bb_any(mover_moves(opp, own, po, pm, limit, counting, geo)):
            return finished_value(own, opp, side, geo, cx[3], cx[4], cx[5])
        return -minimax(opp, own, po, pm, 1 - side, depth - 1, cx)
    best = -np.inf
    for w in range(len(moves)):
        word = moves[w]
        while word != ZERO:
            move = w * 64 + int(trailing_zeros(word))
            word &= word - ONE
            child_own, child_opp = apply(own, opp, move, flips_of(own, opp, move, geo))
            best = max(best, -minimax(child_opp, child_own, po, pm + 1, 1 - side, depth - 1, cx))
    return best
