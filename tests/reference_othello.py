"""A slow, obviously-correct pure-Python Othello on arbitrary layouts.

This is the reference the fast engine is checked against, so it is written
independently of ``engine/``: no bitboards, one entry per cell, and every rule
walks the eight directions cell by cell. Only a layout's ``rows``, ``cols``,
``obstacles``, ``black`` and ``white`` fields are read.

Conventions (the benchmark's): cells are flat indices ``r * cols + c``; black
(colour 0) moves first; a player with no legal placement passes; the game is
over when neither colour may place a legal disc. An optional turn limit ``L``
counts placements (never passes) either ``"per_player"`` (a colour may place
while it has made fewer than ``L`` placements) or ``"total"`` (while both
together have made fewer than ``L``).
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from fractions import Fraction
from functools import lru_cache

BLACK, WHITE = 0, 1
PASS = -1
EMPTY, OBSTACLE = -1, -2  # cell contents besides a colour (0 or 1)
COUNTINGS = ("per_player", "total")
DIRECTIONS = ((-1, -1), (-1, 0), (-1, 1), (0, -1), (0, 1), (1, -1), (1, 0), (1, 1))


@dataclass(frozen=True)
class Board:
    """The fixed part of a game: size, obstacle cells and the turn limit."""

    rows: int
    cols: int
    obstacles: frozenset[int]
    turn_limit: int | None = None
    counting: str = "per_player"

    def __post_init__(self) -> None:
        if self.counting not in COUNTINGS:
            raise ValueError(f"counting must be one of {COUNTINGS}, not {self.counting!r}")


@dataclass(frozen=True)
class RefState:
    """A position: the board, every cell's content, the colour to move, placements per colour."""

    board: Board
    cells: tuple[int, ...]  # row-major; BLACK, WHITE, EMPTY or OBSTACLE
    to_move: int = BLACK
    placed: tuple[int, int] = (0, 0)


def initial_state(layout, turn_limit: int | None = None, counting: str = "per_player") -> RefState:
    """The start position of ``layout`` (any object with rows/cols/obstacles/black/white of (r, c))."""
    rows, cols = layout.rows, layout.cols
    cells = [EMPTY] * (rows * cols)
    for content, group in ((OBSTACLE, layout.obstacles), (BLACK, layout.black), (WHITE, layout.white)):
        for r, c in group:
            cells[r * cols + c] = content
    obstacles = frozenset(r * cols + c for r, c in layout.obstacles)
    return RefState(Board(rows, cols, obstacles, turn_limit or None, counting), tuple(cells))


@lru_cache(maxsize=64)
def _rays(rows: int, cols: int) -> tuple[tuple[tuple[int, ...], ...], ...]:
    """For each cell, the 8 lines of cells walking away from it up to the board edge."""
    rays = []
    for r in range(rows):
        for c in range(cols):
            lines = []
            for dr, dc in DIRECTIONS:
                line = []
                rr, cc = r + dr, c + dc
                while 0 <= rr < rows and 0 <= cc < cols:
                    line.append(rr * cols + cc)
                    rr, cc = rr + dr, cc + dc
                lines.append(tuple(line))
            rays.append(tuple(lines))
    return tuple(rays)


def _flips_for(state: RefState, colour: int, move: int) -> list[int]:
    """Opponent cells that ``colour`` placing at ``move`` would flip ([] if the cell is not empty)."""
    cells = state.cells
    if cells[move] != EMPTY:
        return []
    opponent = 1 - colour
    flipped: list[int] = []
    for line in _rays(state.board.rows, state.board.cols)[move]:
        run: list[int] = []
        for cell in line:
            content = cells[cell]
            if content == opponent:
                run.append(cell)
                continue
            if content == colour and run:
                flipped.extend(run)
            break  # own disc, empty cell, obstacle: the line ends here
    return sorted(flipped)


def may_place(state: RefState, colour: int) -> bool:
    """Whether the turn limit still lets ``colour`` put a disc down."""
    limit = state.board.turn_limit
    if limit is None:
        return True
    if state.board.counting == "total":
        return state.placed[0] + state.placed[1] < limit
    return state.placed[colour] < limit


def placements(state: RefState, colour: int) -> list[int]:
    """Cells where ``colour`` may legally place now (ascending; [] once its turn limit is used up)."""
    if not may_place(state, colour):
        return []
    return [move for move, content in enumerate(state.cells) if content == EMPTY and _flips_for(state, colour, move)]


def _can_place(state: RefState, colour: int) -> bool:
    """``placements(state, colour) != []``, stopping at the first one found."""
    return may_place(state, colour) and any(
        content == EMPTY and _flips_for(state, colour, move) for move, content in enumerate(state.cells)
    )


def legal_moves(state: RefState) -> list[int]:
    """The mover's placements; ``[PASS]`` if it has none but the opponent has; ``[]`` when the game is over."""
    own = placements(state, state.to_move)
    if own:
        return own
    return [PASS] if _can_place(state, 1 - state.to_move) else []


def flips(state: RefState, move: int) -> list[int]:
    """Cells the mover's placement at ``move`` flips (ascending; [] if it flips none)."""
    return _flips_for(state, state.to_move, move)


def is_over(state: RefState) -> bool:
    return legal_moves(state) == []


def play(state: RefState, move: int) -> RefState:
    """The position after the mover plays ``move`` (a cell index or PASS); ValueError if illegal."""
    if move == PASS:
        legal = legal_moves(state) == [PASS]
    else:
        legal = 0 <= move < len(state.cells) and may_place(state, state.to_move) and bool(flips(state, move))
    if not legal:
        raise ValueError(f"illegal move {move} for colour {state.to_move}")
    return _apply(state, move)


def _apply(state: RefState, move: int) -> RefState:
    """``play`` without the legality check, for a move just taken from ``legal_moves``."""
    if move == PASS:
        return RefState(state.board, state.cells, 1 - state.to_move, state.placed)
    cells = list(state.cells)
    for cell in flips(state, move) + [move]:
        cells[cell] = state.to_move
    placed = list(state.placed)
    placed[state.to_move] += 1
    return RefState(state.board, tuple(cells), 1 - state.to_move, (placed[0], placed[1]))


def discs(state: RefState, colour: int) -> list[int]:
    """Cells holding a disc of ``colour``, ascending."""
    return [cell for cell, content in enumerate(state.cells) if content == colour]


def mask(indices: list[int]) -> int:
    """Bitmask with bit ``i`` set for each cell index ``i`` (to compare with bitboards)."""
    bits = 0
    for cell in indices:
        bits |= 1 << cell
    return bits


def counts(state: RefState) -> tuple[int, int]:
    """(black discs, white discs)."""
    return (state.cells.count(BLACK), state.cells.count(WHITE))


def wins(own: int, opponent: int, k) -> bool:
    """rho = own / (own + opponent) strictly inside (min(K, 1/2), max(K, 1/2)), in exact Fractions."""
    k = Fraction(str(k)) if not isinstance(k, Fraction) else k
    if k == Fraction(1, 2):
        raise ValueError("K = 1/2 gives an empty winning interval")
    if own + opponent == 0:
        return False
    rho = Fraction(own, own + opponent)
    return min(k, Fraction(1, 2)) < rho < max(k, Fraction(1, 2))


def outcome(state: RefState, k) -> tuple[int, int]:
    """Rewards (black, white): (+1, -1), (-1, +1) or (0, 0) for a draw."""
    black, white = counts(state)
    if wins(black, white, k):
        return (1, -1)
    if wins(white, black, k):
        return (-1, 1)
    return (0, 0)


def perft(state: RefState, depth: int) -> int:
    """Leaves at ``depth`` plies: a forced pass is one ply, a finished game one leaf, depth 0 one leaf."""
    if depth == 0:
        return 1
    moves = legal_moves(state)
    if not moves:
        return 1
    return sum(perft(_apply(state, move), depth - 1) for move in moves)


def random_game(layout, rng: random.Random, turn_limit: int | None = None, counting: str = "per_player") -> RefState:
    """Play uniformly random legal moves from the start of ``layout`` to the end; the final position."""
    state = initial_state(layout, turn_limit, counting)
    while True:
        moves = legal_moves(state)
        if not moves:
            return state
        state = _apply(state, rng.choice(moves))


def rewards_for_counts(black: int, white: int, k) -> tuple[int, int]:
    """Rewards (black, white) of final counts under threshold ``k``: the rule written out independently."""
    if wins(black, white, k):
        return (1, -1)
    if wins(white, black, k):
        return (-1, 1)
    return (0, 0)
