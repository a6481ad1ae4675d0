"""The evaluation of a position: a weighted sum of named features, on any layout.

Per-layout data is built once in Python by :func:`layout_features` and packed
into a tuple of bitboards and arrays that the numba kernels take as ``feat``.
:func:`evaluate` scores a position from the mover's point of view; each feature
lies in [-1, 1] (positive is good for the mover), in the order of ``FEATURES``:

- ``discs``: (own - opp) / (own + opp) discs.
- ``mobility``: (own - opp) / (own + opp) legal placements (0 when neither has one).
- ``corners``: (own - opp) corner discs / number of corner cells.
- ``corner_closeness``: (opp - own) discs on the C- and X-cells of *empty*
  corners / number of C- and X-cells.
- ``frontier``: (opp - own) / (own + opp) frontier discs (discs with an empty
  neighbour in one of the eight directions; 0 when there are none).
- ``positional``: the weighted piece counter of a table of cell values (by default
  ``agents.heuristic.positional.positional_table``; :func:`build_layout_features` takes any):
  (sum of own cell values - sum of opponent cell values) / sum of |cell values|.
- ``stability``: (own - opp) / (own + opp) stable discs (0 when there are none),
  counted by :func:`stable_discs`, a lower bound of the discs that can never flip.

Cell kinds (obstacles count as the board edge, "blocked" = off the board or an obstacle):

- **corner**: a playable cell blocked on at least one horizontal side (left or
  right) *and* at least one vertical side (up or down). On a plain board these
  are the four corners; on No Corners the old C-squares. This is the same rule as
  ``agents.heuristic.positional`` uses. Such a cell may still be flippable along a diagonal
  next to an obstacle; the ``stability`` feature is what measures unflippability.
- **C-cells** of a corner: its playable orthogonal neighbours; **X-cells**: its
  playable diagonal neighbours. A corner is never a C- or X-cell.
- **edge**: a playable cell with a blocked orthogonal neighbour (reported in
  :class:`LayoutFeatures`, not scored).

Weights: the search kernels take static weights (a vector, one weight per
feature) or a *count-indexed* table ``table[own_discs, opp_discs, feature]``
(:func:`weight_table`), so that the weights of a position may depend on its disc
counts (the Adaptive Minimax's WeightNet). :func:`weights_at` gives the vector
of a position, indexed from the root mover's side.

Stable discs: :func:`agents.search.stability.stable_discs` (a lower bound, proved there).
"""

from __future__ import annotations

from functools import lru_cache
from typing import NamedTuple

import numpy as np
from numba import njit
from numba.extending import overload

from agents.heuristic.positional import positional_table
from agents.search.primitives import borrowed, count
from agents.search.stability import axis_neighbours, row_bitboard, stable_discs
from engine.bits import U64, ZERO, bb_and, bb_andnot, bb_or, bb_zero, lanes_merge, lanes_of, to_words
from engine.geometry import DIRECTIONS, LANES
from engine.kernels import legal_moves
from engine.layout import Cell, Layout

FEATURES: tuple[str, ...] = ("discs", "mobility", "corners", "corner_closeness", "frontier", "positional", "stability")
DEFAULT_WEIGHTS: dict[str, float] = {
    "discs": 1.0,
    "mobility": 6.0,
    "corners": 12.0,
    "corner_closeness": 4.0,
    "frontier": 3.0,
    "positional": 12.0,
    "stability": 6.0,
}
DISCS, MOBILITY, CORNERS, CLOSENESS, FRONTIER, POSITIONAL, STABILITY = range(len(FEATURES))

_ORTHOGONAL = ((0, -1), (0, 1), (-1, 0), (1, 0))
_DIAGONAL = ((-1, -1), (-1, 1), (1, -1), (1, 1))


class LayoutFeatures(NamedTuple):
    """Cell kinds of a layout (flat indices, ascending) and the packed kernel tuple ``kernel_args``."""

    corners: tuple[int, ...]
    c_cells: tuple[tuple[int, ...], ...]  # per corner, in the order of ``corners``
    x_cells: tuple[tuple[int, ...], ...]
    edges: tuple[int, ...]
    table: np.ndarray
    kernel_args: tuple

    @property
    def positional_norm(self) -> float:
        """The divisor of the ``positional`` feature: the sum of |cell values| over the playable cells."""
        return float(self.kernel_args[7][2])


def weights_array(weights: dict[str, float] | np.ndarray | list | tuple | None = None) -> np.ndarray:
    """Weights as the float64 array the kernels take: ``None`` = defaults; a dict may name some features."""
    if weights is None:
        weights = {}
    if isinstance(weights, dict):
        unknown = sorted(set(weights) - set(FEATURES))
        if unknown:
            raise ValueError(f"unknown feature(s) {', '.join(unknown)}; valid features: {', '.join(FEATURES)}")
        merged = DEFAULT_WEIGHTS | {name: float(value) for name, value in weights.items()}
        return np.array([merged[name] for name in FEATURES], dtype=np.float64)
    array = np.asarray(weights, dtype=np.float64).reshape(-1)
    if array.shape != (len(FEATURES),) or not np.all(np.isfinite(array)):
        raise ValueError(f"weights: give {len(FEATURES)} finite numbers in the order {', '.join(FEATURES)}")
    return array.copy()


def weight_table(weights: dict[str, float] | np.ndarray | list | tuple | None, cells: int) -> np.ndarray:
    """The weights the search kernels take (module docstring): a vector, or a count-indexed table.

    Static weights (anything :func:`weights_array` takes) give the vector; a
    ``(cells + 1, cells + 1, F)`` array is checked and used as it is
    (C-contiguous float64), ``[own, opp]`` being the root mover's and the other
    player's discs.
    """
    if isinstance(weights, np.ndarray) and weights.ndim == 3:
        shape = (cells + 1, cells + 1, len(FEATURES))
        if weights.shape != shape or not np.all(np.isfinite(weights)):
            raise ValueError(f"weight table of shape {weights.shape}: give finite numbers of shape {shape}")
        return np.ascontiguousarray(weights, dtype=np.float64)
    return weights_array(weights)


def _blocked(layout: Layout, row: int, col: int) -> bool:
    return not (0 <= row < layout.rows and 0 <= col < layout.cols) or (row, col) in layout.obstacles


def _playable_cells(layout: Layout) -> list[Cell]:
    return [(r, c) for r in range(layout.rows) for c in range(layout.cols) if (r, c) not in layout.obstacles]


def corner_cells(layout: Layout) -> list[Cell]:
    """Playable cells blocked on a horizontal side and on a vertical side (row-major)."""
    return [
        (r, c)
        for r, c in _playable_cells(layout)
        if (_blocked(layout, r, c - 1) or _blocked(layout, r, c + 1)) and (_blocked(layout, r - 1, c) or _blocked(layout, r + 1, c))
    ]


def _neighbours(layout: Layout, cell: Cell, steps, exclude: set[Cell]) -> tuple[int, ...]:
    found = [(cell[0] + dr, cell[1] + dc) for dr, dc in steps]
    return tuple(sorted(layout.index(n) for n in found if not _blocked(layout, *n) and n not in exclude))


def _segments(layout: Layout) -> list[tuple[int, int]]:
    """(lane, mask) of every run of >= 2 playable cells along each lane's axis."""
    found = []
    for lane, (dr, dc) in enumerate(DIRECTIONS[:LANES]):
        for r, c in _playable_cells(layout):
            if not _blocked(layout, r - dr, c - dc):
                continue  # not the start of a run
            mask, length, rr, cc = 0, 0, r, c
            while not _blocked(layout, rr, cc):
                mask, length, rr, cc = mask | 1 << layout.index((rr, cc)), length + 1, rr + dr, cc + dc
            if length >= 2:
                found.append((lane, mask))
    return found


def _blocked_lanes(layout: Layout, n_words: int) -> tuple:
    """Lane bitboard: in lane l, the playable cells with a blocked neighbour along lane l's axis."""
    masks = []
    for dr, dc in DIRECTIONS[:LANES]:
        mask = 0
        for r, c in _playable_cells(layout):
            if _blocked(layout, r + dr, c + dc) or _blocked(layout, r - dr, c - dc):
                mask |= 1 << layout.index((r, c))
        masks.append(to_words(mask, n_words))
    return tuple(masks[lane][w] for w in range(n_words) for lane in range(LANES))


def _byte_table(table: np.ndarray, n_words: int) -> np.ndarray:
    """``out[w * 8 + b, v]``: the sum of the table over the set bits of value ``v`` in byte b of word w."""
    padded = np.zeros(n_words * 64, dtype=np.float64)
    padded[: len(table)] = table
    bits = (np.arange(256)[:, None] >> np.arange(8)[None, :]) & 1  # [value, bit]
    return np.ascontiguousarray(padded.reshape(n_words * 8, 8) @ bits.T.astype(np.float64))


@lru_cache(maxsize=256)
def layout_features(layout: Layout) -> LayoutFeatures:
    """The feature data of a layout with ``positional_table`` (cached per layout; treat the arrays as read-only)."""
    return build_layout_features(layout, positional_table(layout))


def build_layout_features(layout: Layout, positional: np.ndarray) -> LayoutFeatures:
    """The feature data of a layout whose ``positional`` feature uses the given flat table of cell values."""
    n_words = (layout.cells + 63) // 64
    corners = corner_cells(layout)
    corner_set = set(corners)
    c_cells = tuple(_neighbours(layout, cell, _ORTHOGONAL, corner_set) for cell in corners)
    x_cells = tuple(_neighbours(layout, cell, _DIAGONAL, corner_set) for cell in corners)
    edges = tuple(
        layout.index(cell)
        for cell in _playable_cells(layout)
        if any(_blocked(layout, cell[0] + dr, cell[1] + dc) for dr, dc in _ORTHOGONAL)
    )
    near = np.zeros((max(1, len(corners)), n_words), dtype=np.uint64)
    for i, cells in enumerate(zip(c_cells, x_cells)):
        near[i] = to_words(sum(1 << index for group in cells for index in group), n_words)
    near_cells = {index for group in (*c_cells, *x_cells) for index in group}
    segments = _segments(layout)
    seg_words = np.array([to_words(mask, n_words) for _, mask in segments], dtype=np.uint64).reshape(-1, n_words)
    seg_lane = np.array([lane for lane, _ in segments], dtype=np.int64)
    table = np.asarray(positional, dtype=np.float64).reshape(-1)
    if table.shape != (layout.cells,) or not np.all(np.isfinite(table)):
        raise ValueError(
            f"positional table of shape {table.shape}: give {layout.cells} finite cell values for the {layout.rows}x{layout.cols} layout"
        )
    playable = np.array([not _blocked(layout, *layout.cell(i)) for i in range(layout.cells)])
    table_norm = float(np.abs(table[playable]).sum()) or 1.0
    corner_index = np.array([layout.index(cell) for cell in corners], dtype=np.int64)
    norms = np.array([max(1, len(corners)), max(1, len(near_cells)), table_norm], dtype=np.float64)
    kernel_args = (
        to_words(layout.mask(frozenset(corners)), n_words),
        corner_index,
        near,
        _byte_table(table, n_words),
        _blocked_lanes(layout, n_words),
        seg_words,
        seg_lane,
        norms,
    )
    return LayoutFeatures(tuple(int(i) for i in corner_index), c_cells, x_cells, edges, table, kernel_args)


@njit(cache=True)
def borrow_features(feat):
    """The feature tuple with its arrays borrowed (``primitives.borrowed``)."""
    return (
        feat[0],
        borrowed(feat[1]),
        borrowed(feat[2]),
        borrowed(feat[3]),
        feat[4],
        borrowed(feat[5]),
        borrowed(feat[6]),
        borrowed(feat[7]),
    )


@njit(cache=True)
def _ratio(a, b):
    total = a + b
    return 0.0 if total == 0 else (a - b) / total


@njit(cache=True)
def _table_sum(discs, byte_table):
    total = 0.0
    for w in range(len(discs)):
        word = discs[w]
        for b in range(8):
            total += byte_table[w * 8 + b, int((word >> U64(8 * b)) & U64(255))]
    return total


@njit(cache=True)
def _closeness(own, opp, feat):
    """(own, opp) discs on the C/X cells of empty corners."""
    corner_index, near = feat[1], feat[2]
    occupied = bb_or(own, opp)
    danger = bb_zero(own)
    for i in range(len(corner_index)):
        cell = corner_index[i]
        if (occupied[cell >> 6] >> U64(cell & 63)) & U64(1) == ZERO:
            danger = bb_or(danger, row_bitboard(near, i, own))
    return count(bb_and(own, danger)), count(bb_and(opp, danger))


@njit(cache=True)
def _frontier(own, opp, geo):
    empty = bb_andnot(geo[0], bb_or(own, opp))
    beside_empty = lanes_merge(axis_neighbours(lanes_of(empty, geo[2]), geo), own)
    return count(bb_and(own, beside_empty)), count(bb_and(opp, beside_empty))


def weights_at(weights, own, opp, side):
    """The weight vector of a position (``own``: the mover's discs, ``side`` to move).

    Static weights (a vector) are returned as they are; a count-indexed table
    is indexed by the root mover's discs first, so the counts swap when side 1
    (the root mover's opponent) is to move. In kernels the choice is made at
    compile time (:func:`_weights_at_kernel`), so static weights compile to the
    plain evaluation with no lookup at all.
    """
    if weights.ndim == 1:
        return weights
    mover, other = count(own), count(opp)
    return weights[mover, other] if side == 0 else weights[other, mover]


@overload(weights_at, inline="always")
def _weights_at_kernel(weights, own, opp, side):
    if weights.ndim == 1:
        return lambda weights, own, opp, side: weights

    def row(weights, own, opp, side):
        if side == 0:
            return weights[count(own), count(opp)]
        return weights[count(opp), count(own)]

    return row


@njit(cache=True)
def evaluate_counts(own, opp, own_moves, opp_moves, geo, feat, weights):
    """:func:`evaluate` with the two players' legal-move counts already known."""
    corners, norms = feat[0], feat[7]
    value = weights[DISCS] * _ratio(count(own), count(opp))
    value += weights[MOBILITY] * _ratio(own_moves, opp_moves)
    if weights[CORNERS] != 0.0:
        value += weights[CORNERS] * (count(bb_and(own, corners)) - count(bb_and(opp, corners))) / norms[0]
    if weights[CLOSENESS] != 0.0:
        own_near, opp_near = _closeness(own, opp, feat)
        value += weights[CLOSENESS] * (opp_near - own_near) / norms[1]
    if weights[FRONTIER] != 0.0:
        own_front, opp_front = _frontier(own, opp, geo)
        value += weights[FRONTIER] * _ratio(opp_front, own_front)
    if weights[POSITIONAL] != 0.0:
        value += weights[POSITIONAL] * (_table_sum(own, feat[3]) - _table_sum(opp, feat[3])) / norms[2]
    if weights[STABILITY] != 0.0:
        own_stable, opp_stable = stable_discs(own, opp, geo, feat)
        value += weights[STABILITY] * _ratio(count(own_stable), count(opp_stable))
    return value


@njit(cache=True)
def evaluate(own, opp, geo, feat, weights):
    """The weighted feature sum from the mover's view (mobility: plain legal moves, no turn limit)."""
    own_moves = count(legal_moves(own, opp, geo))
    opp_moves = count(legal_moves(opp, own, geo))
    return evaluate_counts(own, opp, own_moves, opp_moves, geo, feat, weights)


@njit(cache=True)
def feature_values(own, opp, geo, feat):
    """The unweighted features (in the order of ``FEATURES``), for learners and tests."""
    out = np.zeros(len(FEATURES), dtype=np.float64)
    for i in range(len(FEATURES)):
        unit = np.zeros(len(FEATURES), dtype=np.float64)
        unit[i] = 1.0
        out[i] = evaluate(own, opp, geo, feat, unit)
    return out
