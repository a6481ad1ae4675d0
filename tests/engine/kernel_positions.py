"""Hand-drawn boards and reference positions for the kernel tests (``test_kernels_mutants.py``,
``test_kernels_playouts_mutants.py``): a layout from a picture, and a reference state with the kernels'
arguments for it."""

from __future__ import annotations

import numpy as np
import reference_othello as ref

from engine import kernels
from engine.bits import from_words, to_words
from engine.geometry import geometry_of
from engine.layout import Layout

MASK64 = (1 << 64) - 1
COUNTING = {"per_player": kernels.COUNT_PER_PLAYER, "total": kernels.COUNT_TOTAL}


def board(picture: str) -> Layout:
    """A layout from rows of ``X`` (black), ``O`` (white), ``#`` (obstacle) and ``.`` (empty)."""
    rows = picture.split()
    cells = {kind: frozenset((r, c) for r, row in enumerate(rows) for c, ch in enumerate(row) if ch == kind) for kind in "XO#"}
    return Layout(len(rows), len(rows[0]), obstacles=cells["#"], black=cells["X"], white=cells["O"])


def cells_of(mask: int) -> set[int]:
    return {i for i in range(mask.bit_length()) if mask >> i & 1}


class Position:
    """A reference state and the kernels' arguments for it (own = the mover's discs)."""

    def __init__(self, state: ref.RefState, layout: Layout) -> None:
        self.state, self.layout = state, layout
        self.geometry = geometry_of(layout)
        self.geo = self.geometry.kernel_args
        self.own = ref.mask(ref.discs(state, state.to_move))
        self.opp = ref.mask(ref.discs(state, 1 - state.to_move))
        limit = state.board.turn_limit
        self.limit_args = (limit or kernels.NO_LIMIT, COUNTING[state.board.counting])
        self.placed = (state.placed[state.to_move], state.placed[1 - state.to_move])

    @classmethod
    def start(cls, layout: Layout, turn_limit: int | None = None, counting: str = "per_player") -> Position:
        return cls(ref.initial_state(layout, turn_limit, counting), layout)

    def words(self, bits: int) -> tuple[np.uint64, ...]:
        return to_words(bits, self.geometry.n_words)

    def legal(self, swap: bool = False) -> int:
        own, opp = (self.opp, self.own) if swap else (self.own, self.opp)
        return from_words(kernels.legal_moves(self.words(own), self.words(opp), self.geo))

    def flips(self, index: int) -> int:
        return from_words(kernels.flips_of(self.words(self.own), self.words(self.opp), index, self.geo))

    def playout(self, seed: int, max_turns: int = -1) -> tuple[int, int, int, int]:
        own, opp, plies, new_seed = kernels.random_playout(
            self.words(self.own), self.words(self.opp), *self.placed, *self.limit_args, self.geo, np.uint64(seed), max_turns
        )
        return int(own), int(opp), int(plies), int(new_seed)

    def perft(self, depth: int) -> int:
        return int(kernels.perft(self.words(self.own), self.words(self.opp), *self.placed, depth, *self.limit_args, self.geo))


# 9 x 8 = 72 cells: cells 0-63 in word 0, 64-71 in word 1 (row 8).
WORD_BOUNDARY = board("""
........
........
........
........
........
.......X
.....X.O
OO....OO
X.X.....
""")

# 16 x 16, four words (cells 0-63, 64-127, 128-191, 192-255). Columns 0 and 15: a run of 14 white discs
# (the longest a 16-cell line holds) through all four words. Column 8: white at rows 1, 3, 4, empty at
# rows 0 and 2, black at row 5 (word 1). Column 9: black at row 10, white at rows 11, 12 and 14, empty
# at rows 13 and 15 (words 2 and 3).
SIXTEEN = board(
    "\n".join(
        "".join(
            "X"
            if (r, c) in {(0, 0), (15, 15), (5, 8), (10, 9)}
            else "O"
            if (c in (0, 15) and 1 <= r <= 14) or (c == 8 and r in (1, 3, 4)) or (c == 9 and r in (11, 12, 14))
            else "."
            for c in range(16)
        )
        for r in range(16)
    )
)

# 8 x 8 with obstacle corners: the obstacles at a1 (0) and h1 (7) and d4 (27) would be legal for black if
# they were empty cells; white's run b7-g7 (49-54) is six long, the longest line of this layout holds.
OBSTACLES = board("""
#OX....#
O......O
X......X
.XO#O...
........
........
XOOOOOO.
#......#
""")

# 4 x 4: black cannot move, white can (c1 = 2 or b3 = 9); after either, black must pass again.
PASSES = board("""
OX..
....
..XO
....
""")
