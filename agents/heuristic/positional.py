"""Positional play: a weighted piece counter (WPC) over a table of cell values, on any layout.

On an 8 x 8 board without obstacles the table is the Standard WPC Heuristic
(SWH) of Yoshioka et al. (1999), Table I of Jaskowski et al.'s n-tuple paper
and Figure 3 of the arena paper. On every other layout it is derived from the
layout by :func:`derived_table`, with obstacles treated like the board edge.

Cell kinds of a layout (a cell is *blocked* when it is an obstacle or off the board):

- **corner**: a playable cell with no playable neighbour on one horizontal side
  (left or right) and on one vertical side (up or down). On the No-Corners
  layout the old C-squares become corners. Only the four orthogonal neighbours
  count: an obstacle corner may still be flippable along a diagonal.
- **C-cells** of a corner: its playable orthogonal neighbours on the open
  sides; **X-cell**: the playable diagonal neighbour between them. A corner
  blocked on both sides of an axis points both ways along that axis, so it may
  have more than two C-cells. Corners are never C- or X-cells of another corner.
- **A-cell**: an edge cell two steps from a corner along a row or column
  (beyond a C-cell); **B-cell**: two steps from a corner along its diagonal.
- **ring**: the Chebyshev distance to the nearest blocked cell; ring 1 are the
  *edge* cells (next to the board edge or an obstacle, diagonals included).

Derived values, first matching rule wins (chosen so that the plain 8 x 8 board
gets exactly the SWH table, see ``tests/agents/test_positional.py``):

======================  ======
corner                   1.00
C-cell or X-cell        -0.25
A-cell                   0.10
B-cell                   0.05
ring 1 (edge)            0.05
ring 2                   0.01
ring 3                   0.02
ring 4 and deeper        0.01
obstacle                 0.00
======================  ======
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import lru_cache
from types import MappingProxyType
from typing import NamedTuple

import numpy as np

from agents.base import Agent, AgentContext, choose
from agents.spec import register
from engine.layout import Cell, Layout
from engine.protocol.observation import OPPONENT, OWN, Observation
from engine.state import PASS

SWH_TABLE = np.array(
    [
        [1.00, -0.25, 0.10, 0.05, 0.05, 0.10, -0.25, 1.00],
        [-0.25, -0.25, 0.01, 0.01, 0.01, 0.01, -0.25, -0.25],
        [0.10, 0.01, 0.05, 0.02, 0.02, 0.05, 0.01, 0.10],
        [0.05, 0.01, 0.02, 0.01, 0.01, 0.02, 0.01, 0.05],
        [0.05, 0.01, 0.02, 0.01, 0.01, 0.02, 0.01, 0.05],
        [0.10, 0.01, 0.05, 0.02, 0.02, 0.05, 0.01, 0.10],
        [-0.25, -0.25, 0.01, 0.01, 0.01, 0.01, -0.25, -0.25],
        [1.00, -0.25, 0.10, 0.05, 0.05, 0.10, -0.25, 1.00],
    ],
    dtype=np.float64,
)
SWH_TABLE.flags.writeable = False

CORNER_VALUE = 1.00
C_X_VALUE = -0.25
A_VALUE = 0.10
B_VALUE = 0.05
RING_VALUES = {1: 0.05, 2: 0.01, 3: 0.02}  # deeper rings: INTERIOR_VALUE
INTERIOR_VALUE = 0.01

# (d_row, d_col) towards the blocked side: up/down and left/right.
_VERTICAL = (-1, 1)
_HORIZONTAL = (-1, 1)
_KING_STEPS = tuple((dr, dc) for dr in (-1, 0, 1) for dc in (-1, 0, 1) if (dr, dc) != (0, 0))


class CornerNeighbours(NamedTuple):
    """The cells next to one corner: orthogonal (C) and diagonal (X), each sorted."""

    c_cells: tuple[Cell, ...]
    x_cells: tuple[Cell, ...]


def _playable(layout: Layout, row: int, col: int) -> bool:
    return 0 <= row < layout.rows and 0 <= col < layout.cols and (row, col) not in layout.obstacles


def _playable_cells(layout: Layout) -> list[Cell]:
    return [(r, c) for r in range(layout.rows) for c in range(layout.cols) if (r, c) not in layout.obstacles]


def _inward_directions(layout: Layout, cell: Cell) -> list[tuple[int, int]]:
    """(d_row, d_col) pointing away from each (blocked vertical side, blocked horizontal side) pair."""
    row, col = cell
    vertical = [dr for dr in _VERTICAL if not _playable(layout, row + dr, col)]
    horizontal = [dc for dc in _HORIZONTAL if not _playable(layout, row, col + dc)]
    return [(-dr, -dc) for dr in vertical for dc in horizontal]


@lru_cache(maxsize=256)
def corner_cells(layout: Layout) -> tuple[Cell, ...]:
    """Playable cells blocked (edge or obstacle) on one horizontal and one vertical side, in row-major order."""
    return tuple(cell for cell in _playable_cells(layout) if _inward_directions(layout, cell))


@lru_cache(maxsize=256)
def corner_neighbours(layout: Layout) -> Mapping[Cell, CornerNeighbours]:
    """For each corner, its C-cells (orthogonal, on the open sides) and X-cells (diagonal between them).

    Only playable cells that are not corners themselves are listed. Cached per
    layout, read-only, corners in row-major order.
    """
    corners = set(corner_cells(layout))
    result: dict[Cell, CornerNeighbours] = {}
    for corner in corner_cells(layout):
        c_cells: set[Cell] = set()
        x_cells: set[Cell] = set()
        for dr, dc in _inward_directions(layout, corner):
            row, col = corner
            c_cells |= {(row + dr, col), (row, col + dc)}
            x_cells.add((row + dr, col + dc))
        result[corner] = CornerNeighbours(_kept(layout, c_cells, corners), _kept(layout, x_cells, corners))
    return MappingProxyType(result)


def _kept(layout: Layout, cells: set[Cell], corners: set[Cell]) -> tuple[Cell, ...]:
    """The playable non-corner ``cells``, sorted."""
    return tuple(sorted(cell for cell in cells if _playable(layout, *cell) and cell not in corners))


def _rings(layout: Layout) -> dict[Cell, int]:
    """Chebyshev distance of each playable cell to the nearest blocked cell (1 = next to edge or obstacle)."""
    ring = {}
    frontier = [
        cell for cell in _playable_cells(layout) if any(not _playable(layout, cell[0] + dr, cell[1] + dc) for dr, dc in _KING_STEPS)
    ]
    depth = 1
    while frontier:
        for cell in frontier:
            ring[cell] = depth
        depth += 1
        frontier = sorted(
            {
                (r + dr, c + dc)
                for r, c in frontier
                for dr, dc in _KING_STEPS
                if _playable(layout, r + dr, c + dc) and (r + dr, c + dc) not in ring
            }
        )
    return ring


def _two_steps_from_corners(layout: Layout) -> tuple[set[Cell], set[Cell]]:
    """(A-cells candidates along rows/columns, B-cells along diagonals) two steps from some corner."""
    straight, diagonal = set(), set()
    for row, col in corner_cells(layout):
        for dr, dc in _inward_directions(layout, (row, col)):
            straight |= {(row + 2 * dr, col), (row, col + 2 * dc)}
            diagonal.add((row + 2 * dr, col + 2 * dc))
    return straight, diagonal


@lru_cache(maxsize=256)
def derived_table(layout: Layout) -> np.ndarray:
    """The layout-derived positional table (float64, ``rows * cols``, read-only); rules in the module docstring."""
    corners = set(corner_cells(layout))
    near = {cell for hood in corner_neighbours(layout).values() for cell in (*hood.c_cells, *hood.x_cells)}
    straight, diagonal = _two_steps_from_corners(layout)
    rings = _rings(layout)
    table = np.zeros(layout.cells, dtype=np.float64)
    for cell, ring in rings.items():
        if cell in corners:
            value = CORNER_VALUE
        elif cell in near:
            value = C_X_VALUE
        elif cell in straight and ring == 1:
            value = A_VALUE
        elif cell in diagonal:
            value = B_VALUE
        else:
            value = RING_VALUES.get(ring, INTERIOR_VALUE)
        table[layout.index(cell)] = value
    table.flags.writeable = False
    return table


@lru_cache(maxsize=256)
def positional_table(layout: Layout) -> np.ndarray:
    """Cell values (float64, ``rows * cols``, read-only): SWH on a plain 8 x 8 board, else :func:`derived_table`."""
    if layout.shape == (8, 8) and not layout.obstacles:
        return SWH_TABLE.reshape(-1)
    return derived_table(layout)


def wpc(table: np.ndarray, grid: np.ndarray) -> float:
    """Weighted piece counter of a mover's-view grid (own 1, opponent -1): own values minus opponent values."""
    cells = np.asarray(grid).reshape(-1)
    return float(table[cells == OWN].sum() - table[cells == OPPONENT].sum())


def mask_cells(mask: int, cells: int) -> np.ndarray:
    """A bitmask (bit i = flat cell i) as a boolean array of length ``cells``."""
    raw = np.frombuffer(mask.to_bytes((cells + 7) // 8, "little"), dtype=np.uint8)
    return np.unpackbits(raw, bitorder="little")[:cells].astype(bool)


@register("positional", "Weighted piece counter: SWH table on plain 8x8, a layout-derived table elsewhere (1-ply)")
class PositionalAgent(Agent):
    """The legal move maximising the WPC of the resulting position (own discs +, opponent -); ties by rng."""

    name = "positional"

    def __init__(self, context: AgentContext, rng: np.random.Generator) -> None:
        super().__init__(context, rng)
        self.table = self.table_for(context.rules.layout)

    def table_for(self, layout: Layout) -> np.ndarray:
        """The cell values to play by (subclasses with another table override this)."""
        return positional_table(layout)

    def act(self, observation: Observation) -> int:
        """The placement with the best resulting WPC (PASS when forced)."""
        if observation.must_pass:
            return PASS
        scores = self.move_scores(observation)
        best = max(scores.values())
        return choose(self.rng, [move for move, score in scores.items() if score >= best - 1e-9])

    def move_scores(self, observation: Observation) -> dict[int, float]:
        """WPC after each legal placement, from the mover's view."""
        rules, state = observation.rules, observation.state
        cells = rules.layout.cells
        scores = {}
        for move in observation.legal_moves:
            if move == PASS:
                continue
            flipped = rules.flips(state, move)
            own = state.own | flipped | (1 << move)
            opponent = state.opponent & ~flipped
            scores[move] = float(self.table[mask_cells(own, cells)].sum() - self.table[mask_cells(opponent, cells)].sum())
        if not scores:
            raise ValueError("no legal moves: the game is over")
        return scores
