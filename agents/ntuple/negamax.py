"""Depth-limited negamax alpha-beta with an n-tuple network at the leaves (numba).

The project's main search (:mod:`agents.search.negamax`) evaluates leaves with
its weighted features, compiled in; this kernel is the same negamax scheme with
the network of :mod:`agents.ntuple.kernel` instead. The network values
*afterstates* from the view of the player who just moved, so a leaf with ``X``
to move is worth ``-value(leaf, for X's opponent)`` to ``X``; depth 1 therefore
plays exactly as the 1-ply player. A finished game is worth
``FINISHED * sign(disc difference) + disc difference`` (standard outcome,
beyond every network value). A forced pass is a ply. No transposition table:
the network is meant for shallow searches.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from agents.ntuple.kernel import BLACK_CODE, WHITE_CODE, evaluate, next_placement, try_placement, undo_placement
from engine.bits import bb_any, bb_count
from engine.kernels import legal_moves, place

FINISHED = 1e9


@njit(cache=True)
def _finished(own, opp):
    margin = bb_count(own) - bb_count(opp)
    if margin > 0:
        return FINISHED + margin
    if margin < 0:
        return -FINISHED + margin
    return 0.0


@njit(cache=True)
def negamax(codes, own, opp, white_moves, depth, alpha, beta, net, geo):
    """Value for the mover (``white_moves``: the mover is white) of a depth-``depth`` search in [alpha, beta]."""
    moves = legal_moves(own, opp, geo)
    if not bb_any(moves):
        if not bb_any(legal_moves(opp, own, geo)):
            return _finished(own, opp)
        if depth == 0:
            return -evaluate(codes, not white_moves, net)
        return -negamax(codes, opp, own, not white_moves, depth - 1, -beta, -alpha, net, geo)
    if depth == 0:
        return -evaluate(codes, not white_moves, net)
    mover = WHITE_CODE if white_moves else BLACK_CODE
    best = -np.inf
    remaining = moves
    while bb_any(remaining):
        index, remaining = next_placement(remaining)
        flipped = try_placement(codes, own, opp, index, mover, geo)
        child_own, child_opp = place(own, opp, index, geo)
        value = -negamax(codes, child_opp, child_own, not white_moves, depth - 1, -beta, -alpha, net, geo)
        undo_placement(codes, flipped, index, mover)
        if value > best:
            best = value
        if value > alpha:
            alpha = value
        if alpha >= beta:
            break
    return best


@njit(cache=True)
def root_values(codes, own, opp, white_moves, depth, net, geo, moves_out, values_out):
    """Each root placement's exact depth-``depth`` value for the mover (full window); returns how many."""
    mover = WHITE_CODE if white_moves else BLACK_CODE
    k = 0
    remaining = legal_moves(own, opp, geo)
    while bb_any(remaining):
        index, remaining = next_placement(remaining)
        flipped = try_placement(codes, own, opp, index, mover, geo)
        child_own, child_opp = place(own, opp, index, geo)
        values_out[k] = -negamax(codes, child_opp, child_own, not white_moves, depth - 1, -np.inf, np.inf, net, geo)
        moves_out[k] = index
        undo_placement(codes, flipped, index, mover)
        k += 1
    return k
