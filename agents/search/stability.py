"""Stable discs of a position on any layout: a lower bound of the discs that can never flip (numba kernels).

Stable discs (a correct lower bound): a disc can only flip along one of the
four axes (horizontal, vertical, two diagonals), and only when it lies strictly
between an empty cell and a disc of the other colour on that axis. A disc is
counted stable when, on *every* axis, (a) a neighbour along the axis is blocked,
or (b) the axis' run of playable cells through it (between blocked cells) is
full, or (c) a neighbour along the axis is a same-coloured disc already counted
stable; counted from nothing up to a fixed point. By induction over the order
in which discs are counted no move can ever flip one: for (c), the first
counted disc a move flipped would need its counted neighbour flipped in the
same move, and that neighbour was counted earlier. Cells never empty again, so
(a)-(c) stay true.

The kernels take the layout's geometry tuple ``geo`` and the feature tuple ``feat``
of :func:`agents.search.features.layout_features` (blocked lanes ``feat[4]``,
segment words ``feat[5]`` and their lanes ``feat[6]``).
"""

from __future__ import annotations

from numba import njit

from agents.search.primitives import count
from engine.bits import ZERO, bb_and, bb_andnot, bb_or, bb_zero, lanes_and, lanes_down, lanes_of, lanes_or, lanes_up, tuple_setitem


@njit(cache=True)
def row_bitboard(array, row, template):
    out = template
    for w in range(len(template)):
        out = tuple_setitem(out, w, array[row, w])
    return out


@njit(cache=True)
def _lanes_all(x, template):
    """Per word, the cells set in all four lanes, as a plain bitboard shaped like ``template``."""
    out = template
    for w in range(len(template)):
        acc = ~ZERO
        for lane in range(4):
            acc &= x[w * 4 + lane]
        out = tuple_setitem(out, w, acc)
    return out


@njit(cache=True)
def axis_neighbours(lanes, geo):
    """Lane bitboard: in lane l, the cells with a neighbour in ``lanes`` (lane l) along lane l's axis."""
    amounts, up_masks, down_masks = geo[1], geo[2], geo[3]
    up = lanes_and(lanes_up(lanes, amounts), up_masks)
    down = lanes_and(lanes_down(lanes, amounts), down_masks)
    return lanes_or(up, down)


@njit(cache=True)
def _full_lanes(empty, geo, feat):
    """Lane bitboard: in lane l, the cells whose run along lane l's axis holds no empty cell."""
    seg_words, seg_lane = feat[5], feat[6]
    full = bb_zero(geo[2])
    n = len(empty)
    for s in range(seg_words.shape[0]):
        hits = ZERO
        for w in range(n):
            hits |= seg_words[s, w] & empty[w]
        if hits == ZERO:
            lane = seg_lane[s]
            for w in range(n):
                full = tuple_setitem(full, w * 4 + lane, full[w * 4 + lane] | seg_words[s, w])
    return full


@njit(cache=True)
def _stable_of(discs, settled, geo):
    """Fixed point of the stability rule for one colour; ``settled`` = blocked | full, per lane."""
    stable = bb_zero(discs)
    while True:
        ok = lanes_or(settled, axis_neighbours(lanes_of(stable, geo[2]), geo))
        grown = bb_and(_lanes_all(ok, discs), discs)
        if count(bb_andnot(grown, stable)) == 0:
            return stable
        stable = bb_or(stable, grown)


@njit(cache=True)
def stable_discs(own, opp, geo, feat):
    """(own, opp) stable-disc bitboards (the lower bound of the module docstring)."""
    empty = bb_andnot(geo[0], bb_or(own, opp))
    settled = lanes_or(_full_lanes(empty, geo, feat), feat[4])
    return _stable_of(own, settled, geo), _stable_of(opp, settled, geo)
