"""A numba kernel playing a whole game between two 1-ply weighted-piece-counter players (PosNet training).

Each player picks the placement maximising the WPC of the resulting position
from its own view (:class:`agents.heuristic.positional.PositionalAgent`'s rule): placing
at ``m`` and flipping ``F`` changes the WPC by ``table[m] + 2 * sum(table[F])``,
the same for every move's common part, so only that change is compared. Ties
(within ``TIE_TOLERANCE``, as in the agent) go to the lowest cell index, so a
game is a pure function of the two tables and the layout.

The board kernels are the engine's (``legal_moves``, ``flips_of``, ``place``)
on bitboards held as tuples of uint64 words: numba compiles this kernel once
per word count, exactly as it does the engine's, so one source serves every
board size. There is no turn limit: PosNet trains on the standard condition.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from numba import njit

from engine.bits import ONE, ZERO, bb_any, bb_bit, bb_count, bb_select, bb_xor, trailing_zeros
from engine.geometry import geometry_of
from engine.kernels import flips_of, legal_moves, place
from engine.layout import Layout
from engine.state import PASS

TIE_TOLERANCE = 1e-9


@njit(cache=True)
def table_sum(table, bits):
    """Sum of ``table`` over the set bits of a bitboard."""
    total = 0.0
    for w in range(len(bits)):
        word = bits[w]
        while word != ZERO:
            total += table[w * 64 + int(trailing_zeros(word))]
            word &= word - ONE
    return total


@njit(cache=True)
def best_wpc_move(table, own, opp, moves, geo):
    """The placement in ``moves`` with the best resulting WPC for the mover; ties to the lowest index."""
    best_score = -np.inf
    best_index = -1
    remaining = moves
    while bb_any(remaining):
        index = bb_select(remaining, 0)
        remaining = bb_xor(remaining, bb_bit(remaining, index))
        score = table[index] + 2.0 * table_sum(table, flips_of(own, opp, index, geo))
        if score > best_score + TIE_TOLERANCE:
            best_score = score
            best_index = index
    return best_index


@njit(cache=True)
def wpc_game(black_table, white_table, black, white, geo, moves_out):
    """Play a whole game from (black, white) discs, black to move; each side by its own table.

    Every ply goes into ``moves_out`` (a placement's flat index, or -1 for a
    forced pass; at most ``2 * cells + 1`` plies). Returns (black discs, white
    discs, plies).
    """
    own, opp = black, white
    black_to_move = True
    plies = 0
    while True:
        moves = legal_moves(own, opp, geo)
        if bb_any(moves):
            index = best_wpc_move(black_table if black_to_move else white_table, own, opp, moves, geo)
            own, opp = place(own, opp, index, geo)
        elif bb_any(legal_moves(opp, own, geo)):
            index = PASS
        else:
            break
        moves_out[plies] = index
        plies += 1
        own, opp = opp, own
        black_to_move = not black_to_move
    if black_to_move:
        return bb_count(own), bb_count(opp), plies
    return bb_count(opp), bb_count(own), plies


class WpcGame(NamedTuple):
    """A finished game between two tables: final disc counts and every ply (PASS = -1)."""

    black: int
    white: int
    moves: tuple[int, ...]


class KernelBoard(NamedTuple):
    """A layout as the kernel takes it: geometry tuple, starting bitboards and a ply buffer."""

    geo: tuple
    black: tuple
    white: tuple
    plies: np.ndarray


def kernel_board(layout: Layout) -> KernelBoard:
    """The kernel arguments of a layout (a fresh ply buffer each call)."""
    geometry = geometry_of(layout)
    return KernelBoard(
        geometry.kernel_args,
        geometry.words(layout.mask(layout.black)),
        geometry.words(layout.mask(layout.white)),
        np.empty(2 * layout.cells + 1, dtype=np.int64),
    )


def play_wpc_game(layout: Layout, black_table: np.ndarray, white_table: np.ndarray) -> WpcGame:
    """One game on ``layout`` (no turn limit) between two flat ``rows * cols`` tables, with its plies."""
    board = kernel_board(layout)
    black, white, plies = wpc_game(
        _table(black_table, layout), _table(white_table, layout), board.black, board.white, board.geo, board.plies
    )
    return WpcGame(int(black), int(white), tuple(int(move) for move in board.plies[:plies]))


def disc_counts(board: KernelBoard, black_table: np.ndarray, white_table: np.ndarray) -> tuple[int, int]:
    """(black discs, white discs) at the end of a game on a prepared board (tables float64, contiguous)."""
    black, white, _ = wpc_game(black_table, white_table, board.black, board.white, board.geo, board.plies)
    return int(black), int(white)


def _table(table: np.ndarray, layout: Layout) -> np.ndarray:
    table = np.ascontiguousarray(table, dtype=np.float64)
    if table.shape != (layout.cells,):
        raise ValueError(f"a table of {layout.name or layout.describe()} needs {layout.cells} values, got shape {table.shape}")
    return table
