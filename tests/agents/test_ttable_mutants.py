"""The transposition table's arrays and the Zobrist keys' layout (mutation testing: docs/mutation_search.md)."""

from __future__ import annotations

import numpy as np
import pytest

from agents.search.ttable import EMPTY, ZOBRIST_SEED, TranspositionTable, zobrist_keys


def test_zobrist_keys_have_one_word_per_disc_side_placement_count_and_mover():
    cells = 10
    keys = zobrist_keys(cells)
    # 2 per cell (a disc of either side), 1 for side 1 to move, 2 * (cells + 1) placement counts
    assert keys.shape == (4 * cells + 3,) and keys.dtype == np.uint64
    assert len(set(keys.tolist())) == len(keys)


def test_zobrist_keys_depend_on_the_seed_only():
    assert np.array_equal(zobrist_keys(9), zobrist_keys(9, ZOBRIST_SEED))
    assert np.array_equal(zobrist_keys(9, 5), zobrist_keys(9, 5))
    assert not np.array_equal(zobrist_keys(9, 5), zobrist_keys(9, 6))


def test_the_table_has_2_to_the_bits_slots_of_the_documented_types():
    table = TranspositionTable(4)
    keys, depth, value, flag, move = table.arrays
    assert [len(a) for a in table.arrays] == [16] * 5
    assert (keys.dtype, depth.dtype, value.dtype, flag.dtype, move.dtype) == (np.uint64, np.int16, np.float64, np.int8, np.int16)
    assert np.all(depth == EMPTY) and np.all(move == -1) and np.all(keys == 0) and np.all(flag == 0)
    assert table.used() == 0


@pytest.mark.parametrize("bits", [3, 29, -1])
def test_the_table_refuses_sizes_out_of_range(bits: int):
    with pytest.raises(ValueError, match=rf"^transposition table bits={bits}: give 4 to 28$"):
        TranspositionTable(bits)


def test_used_counts_the_slots_holding_an_entry():
    table = TranspositionTable(5)
    table.depth[3] = 0
    table.depth[7] = 9
    assert table.used() == 2
    table.clear()
    assert table.used() == 0
