"""Zobrist keys and a fixed-size transposition table in numpy arrays, for the search kernels.

Positions are hashed relative to the *root mover* of a search (side 0) and its
opponent (side 1): a key XORs one random word per (cell, side of the disc on
it), one word when side 1 is to move, and, under a turn limit only, one word
per (side, placements that side has made), since the turn limit makes those
counts part of the position. The value of a position from its mover's view
depends on exactly these (the utility is from the root mover's view), so equal
keys mean equal values up to 64-bit collisions.

The table has ``2**bits`` slots indexed by ``key & (size - 1)``, each holding
the full key, the search depth of the entry (-1: empty), its value, a bound
flag (:data:`EXACT`, :data:`LOWER`: value is a lower bound, :data:`UPPER`) and
the best move found (-1: none). Replacement is by depth: a store overwrites a
slot holding the same key, or one whose entry is not deeper.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from engine.bits import ONE, U64, ZERO, trailing_zeros

EXACT, LOWER, UPPER = 0, 1, 2
EMPTY = -1
DEFAULT_BITS = 18
ZOBRIST_SEED = 0x5EED_0F_0E11


def zobrist_keys(cells: int, seed: int = ZOBRIST_SEED) -> np.ndarray:
    """uint64 keys: ``[2 * cell + side]`` discs, ``[2 * cells]`` side 1 to move,
    ``[2 * cells + 1 + side * (cells + 1) + placed]`` placements made by a side."""
    rng = np.random.default_rng(seed)
    return rng.integers(0, 2**64, size=2 * cells + 1 + 2 * (cells + 1), dtype=np.uint64, endpoint=False)


class TranspositionTable:
    """The arrays of a table with ``2**bits`` slots; ``arrays`` is the tuple the kernels take."""

    def __init__(self, bits: int = DEFAULT_BITS) -> None:
        if not 4 <= bits <= 28:
            raise ValueError(f"transposition table bits={bits}: give 4 to 28")
        size = 1 << bits
        self.keys = np.zeros(size, dtype=np.uint64)
        self.depth = np.full(size, EMPTY, dtype=np.int16)
        self.value = np.zeros(size, dtype=np.float64)
        self.flag = np.zeros(size, dtype=np.int8)
        self.move = np.full(size, -1, dtype=np.int16)

    @property
    def arrays(self) -> tuple:
        return (self.keys, self.depth, self.value, self.flag, self.move)

    def clear(self) -> None:
        """Forget every entry (a new search: another root mover or utility)."""
        self.depth.fill(EMPTY)

    def used(self) -> int:
        """Slots holding an entry."""
        return int(np.count_nonzero(self.depth != EMPTY))


@njit(cache=True, inline="always")
def _xor_cells(key, bits, zob, side):
    for w in range(len(bits)):
        word = bits[w]
        while word != ZERO:
            key ^= zob[2 * (w * 64 + int(trailing_zeros(word))) + side]
            word &= word - ONE
    return key


@njit(cache=True)
def root_key(own, opp, placed_mover, placed_other, limited, zob):
    """Key of a search's root position (root mover to move)."""
    key = _xor_cells(U64(0), own, zob, 0)
    key = _xor_cells(key, opp, zob, 1)
    if limited:
        cells = (len(zob) - 3) // 4
        key ^= zob[2 * cells + 1 + placed_mover] ^ zob[2 * cells + 1 + cells + 1 + placed_other]
    return key


@njit(cache=True)
def child_key(key, index, flipped, side, placed_mover, limited, zob):
    """Key after ``side`` (to move, with ``placed_mover`` placements) places at ``index`` flipping ``flipped``."""
    cells = (len(zob) - 3) // 4
    key ^= zob[2 * index + side] ^ zob[2 * cells]
    for w in range(len(flipped)):
        word = flipped[w]
        while word != ZERO:
            cell = w * 64 + int(trailing_zeros(word))
            key ^= zob[2 * cell] ^ zob[2 * cell + 1]
            word &= word - ONE
    if limited:
        base = 2 * cells + 1 + side * (cells + 1) + placed_mover
        key ^= zob[base] ^ zob[base + 1]
    return key


@njit(cache=True)
def pass_key(key, zob):
    """Key after a forced pass."""
    return key ^ zob[2 * ((len(zob) - 3) // 4)]


@njit(cache=True)
def tt_store(tt, key, depth, value, flag, move):
    """Store an entry unless its slot holds a deeper entry of another position."""
    keys, depths, values, flags, moves = tt
    slot = np.int64(key & U64(len(keys) - 1))
    if keys[slot] == key or depths[slot] <= depth:
        keys[slot] = key
        depths[slot] = depth
        values[slot] = value
        flags[slot] = flag
        moves[slot] = move


@njit(cache=True)
def tt_slot(tt, key):
    """The slot holding ``key``, or -1."""
    keys, depths = tt[0], tt[1]
    slot = np.int64(key & U64(len(keys) - 1))
    if keys[slot] == key and depths[slot] != EMPTY:
        return slot
    return -1
