"""Board layouts: size, obstacle cells and the initial discs.

A layout is pure data. Cells are ``(row, col)``, 0-based, row 0 at the top; the
flat index of a cell is ``row * cols + col`` (the bit used by the kernels).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import cast

Cell = tuple[int, int]

MIN_SIDE = 4
MAX_SIDE = 16


class LayoutError(ValueError):
    """A layout that cannot be played: bad size, symbols, cells or start."""


@dataclass(frozen=True)
class Layout:
    """An H x W board with obstacle cells and the discs on it before move one."""

    rows: int
    cols: int
    obstacles: frozenset[Cell] = field(default_factory=frozenset)
    black: frozenset[Cell] = field(default_factory=frozenset)
    white: frozenset[Cell] = field(default_factory=frozenset)
    name: str = ""

    def __post_init__(self) -> None:
        for side, value in (("rows", self.rows), ("cols", self.cols)):
            if not isinstance(value, int) or not MIN_SIDE <= value <= MAX_SIDE:
                raise LayoutError(f"layout {side}={value!r} is out of range: rows and cols must be integers from {MIN_SIDE} to {MAX_SIDE}")
        for label, cells in (("obstacle", self.obstacles), ("black", self.black), ("white", self.white)):
            object.__setattr__(self, _attr(label), frozenset(_as_cell(label, c) for c in cells))
            for r, c in getattr(self, _attr(label)):
                if not (0 <= r < self.rows and 0 <= c < self.cols):
                    raise LayoutError(f"{label} cell {(r, c)} lies outside the {self.rows} x {self.cols} board")
        clash = (self.obstacles & self.black) | (self.obstacles & self.white) | (self.black & self.white)
        if clash:
            raise LayoutError(f"cells {sorted(clash)} are given two contents (obstacle/black/white)")

    @property
    def cells(self) -> int:
        return self.rows * self.cols

    @property
    def shape(self) -> tuple[int, int]:
        return (self.rows, self.cols)

    def index(self, cell: Cell) -> int:
        """Flat index (bit position) of a cell."""
        return cell[0] * self.cols + cell[1]

    def cell(self, index: int) -> Cell:
        return divmod(index, self.cols)

    def mask(self, cells: frozenset[Cell]) -> int:
        """Bitmask (Python int) with one bit per cell."""
        bits = 0
        for cell in cells:
            bits |= 1 << self.index(cell)
        return bits

    @property
    def playable_mask(self) -> int:
        return ((1 << self.cells) - 1) & ~self.mask(self.obstacles)

    def describe(self) -> str:
        return f"{self.rows}x{self.cols}, {len(self.obstacles)} obstacles"


def _as_cell(label: str, cell: object) -> Cell:
    """A (row, col) pair of ints, or a LayoutError naming the bad entry."""
    try:
        row, col = cast("Iterable[object]", cell)
    except (TypeError, ValueError):
        raise LayoutError(f"{label} cell {cell!r} is not a (row, col) pair") from None
    if not (isinstance(row, int) and not isinstance(row, bool) and isinstance(col, int) and not isinstance(col, bool)):
        raise LayoutError(f"{label} cell {cell!r}: row and col must be integers")
    return (row, col)


def _attr(label: str) -> str:
    return "obstacles" if label == "obstacle" else label


def centre_discs(rows: int, cols: int) -> tuple[frozenset[Cell], frozenset[Cell]]:
    """The benchmark's starting discs: black on (r0,c0),(r0+1,c0+1), white on the other two."""
    r0, c0 = rows // 2 - 1, cols // 2 - 1
    black = frozenset({(r0, c0), (r0 + 1, c0 + 1)})
    white = frozenset({(r0, c0 + 1), (r0 + 1, c0)})
    return black, white


def standard_layout(rows: int, cols: int, obstacles: Iterable[Cell] = (), name: str = "") -> Layout:
    """A layout with the four centre discs; a centre cell that is an obstacle stays one."""
    blocked = frozenset(cast(Cell, tuple(c)) for c in obstacles)
    black, white = centre_discs(rows, cols)
    return Layout(rows, cols, blocked, black - blocked, white - blocked, name)
