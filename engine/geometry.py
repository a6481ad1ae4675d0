"""Per-layout constants the kernels need: word count, direction shifts, masks and rays."""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from engine.bits import to_words
from engine.layout import Layout

# (d_row, d_col) of the eight directions: the first four lower the flat index, the last four raise it.
DIRECTIONS: tuple[tuple[int, int], ...] = (
    (-1, -1), (-1, 0), (-1, 1), (0, -1), (0, 1), (1, -1), (1, 0), (1, 1),
)


@dataclass(frozen=True)
class Geometry:
    """Kernel arguments derived from a layout (bitboards as tuples of uint64 words).

    ``kernel_args`` is the tuple every kernel takes as ``geo``:
    (playable, shifts, masks, reach, rays) where ``masks[d]`` holds the cells a step in
    direction d may land on without wrapping around a row end, ``reach[d]`` is the longest
    run of discs a line in direction d can hold between two others, and ``rays`` (flat uint64 array,
    index ``(cell * 8 + d) * n_words + word``) the cells from a cell to the edge in
    direction d.
    """

    n_words: int
    kernel_args: tuple

    def words(self, bits: int) -> tuple:
        return to_words(bits, self.n_words)


@lru_cache(maxsize=4096)
def geometry_of(layout: Layout) -> Geometry:
    """Geometry of a layout (cached: layouts are immutable values)."""
    rows, cols = layout.rows, layout.cols
    n_words = (rows * cols + 63) // 64
    masks = tuple(to_words(_landing_cells(rows, cols, d_row, d_col), n_words) for d_row, d_col in DIRECTIONS)
    shifts = tuple(d_row * cols + d_col for d_row, d_col in DIRECTIONS)
    reach = tuple(max(1, (rows if d_row else cols) - 2) if not (d_row and d_col) else max(1, min(rows, cols) - 2)
                  for d_row, d_col in DIRECTIONS)
    args = (to_words(layout.playable_mask, n_words), shifts, masks, reach, _rays(rows, cols, n_words))
    return Geometry(n_words, args)


def _landing_cells(rows: int, cols: int, d_row: int, d_col: int) -> int:
    land = 0
    for r in range(rows):
        for c in range(cols):
            if 0 <= r - d_row < rows and 0 <= c - d_col < cols:
                land |= 1 << (r * cols + c)
    return land


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
