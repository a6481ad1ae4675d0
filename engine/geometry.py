"""Per-layout constants the kernels need: word count, lane shifts and masks, rays.

The kernels treat the eight directions as two groups of four *lanes*: the first
group raises the flat index (a left shift), the second lowers it (a right
shift), and lane ``l`` of both groups moves by the same number of bits
(1, cols - 1, cols, cols + 1). Four lanes doing the same operation is what lets
LLVM turn the direction loop into SIMD instructions.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from typing import Any

import numpy as np

from engine.bits import to_words
from engine.layout import Layout

LANES = 4
# (d_row, d_col): E, SW, S, SE raise the index; W, NE, N, NW lower it, lane by lane.
DIRECTIONS: tuple[tuple[int, int], ...] = ((0, 1), (1, -1), (1, 0), (1, 1), (0, -1), (-1, 1), (-1, 0), (-1, -1))


@dataclass(frozen=True)
class Geometry:
    """Kernel arguments derived from a layout (bitboards as tuples of uint64 words).

    ``kernel_args`` is the tuple every kernel takes as ``geo``:
    (playable, amounts, up_masks, down_masks, reach, rays):

    - ``playable``: the non-obstacle cells;
    - ``amounts``: the bit distance of lane l (uint64, 4 of them);
    - ``up_masks``/``down_masks``: word ``w`` of lane ``l`` at ``w * 4 + l``: the cells a
      step of that lane's direction may land on without wrapping around a row end;
    - ``reach``: the longest run of discs any line can hold between two others
      (obstacles shorten lines), i.e. how many fill steps find every move;
    - ``rays``: flat uint64 array, index ``(cell * 8 + d) * n_words + w``: the cells
      from ``cell`` to the edge in direction ``d``.
    """

    n_words: int
    kernel_args: tuple[Any, ...]

    def words(self, bits: int) -> tuple[np.uint64, ...]:
        return to_words(bits, self.n_words)


@lru_cache(maxsize=4096)
def geometry_of(layout: Layout) -> Geometry:
    """Geometry of a layout (cached: layouts are immutable values)."""
    rows, cols = layout.rows, layout.cols
    n_words = (rows * cols + 63) // 64
    landing = [to_words(_landing_cells(rows, cols, d_row, d_col), n_words) for d_row, d_col in DIRECTIONS]
    up = tuple(landing[lane][w] for w in range(n_words) for lane in range(LANES))
    down = tuple(landing[LANES + lane][w] for w in range(n_words) for lane in range(LANES))
    amounts = tuple(np.uint64(d_row * cols + d_col) for d_row, d_col in DIRECTIONS[:LANES])
    reach = max(1, max(_longest_line(layout, d_row, d_col) for d_row, d_col in DIRECTIONS) - 2)
    args = (to_words(layout.playable_mask, n_words), amounts, up, down, reach, _rays(rows, cols, n_words))
    return Geometry(n_words, args)


def _landing_cells(rows: int, cols: int, d_row: int, d_col: int) -> int:
    land = 0
    for r in range(max(0, d_row), rows + min(0, d_row)):
        for c in range(max(0, d_col), cols + min(0, d_col)):
            land |= 1 << (r * cols + c)
    return land


def _longest_line(layout: Layout, d_row: int, d_col: int) -> int:
    """Most playable cells in a row along a direction (obstacles cut lines like the edge)."""
    longest = 0
    for r in range(layout.rows):
        for c in range(layout.cols):
            before = (r - d_row, c - d_col)
            if before in layout.obstacles or not (0 <= before[0] < layout.rows and 0 <= before[1] < layout.cols):
                length, rr, cc = 0, r, c  # (r, c) starts a line
                while 0 <= rr < layout.rows and 0 <= cc < layout.cols and (rr, cc) not in layout.obstacles:
                    length, rr, cc = length + 1, rr + d_row, cc + d_col
                longest = max(longest, length)
    return longest


def _rays(rows: int, cols: int, n_words: int) -> np.ndarray:
    rays = np.zeros((rows * cols, len(DIRECTIONS), n_words), dtype=np.uint64)
    for cell in range(rows * cols):
        for d, (d_row, d_col) in enumerate(DIRECTIONS):
            r, c = divmod(cell, cols)
            ray = 0
            r, c = r + d_row, c + d_col
            while 0 <= r < rows and 0 <= c < cols:
                ray |= 1 << (r * cols + c)
                r, c = r + d_row, c + d_col
            rays[cell, d] = to_words(ray, n_words)
    rays.setflags(write=False)
    return rays.reshape(-1)
