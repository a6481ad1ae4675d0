"""The bitboard helpers of ``engine/bits.py`` the kernels lean on, against Python-int arithmetic: the
branch-free ``mask_if``, single bits and tests at word edges, rank selection across words, the
word conversions at their fast-path edges, and the lane shifts with their carries between words.

Written for the mutation run of the bits group (``tests/mutation_run.py``, JIT off); fast either way.
"""

from __future__ import annotations

import numpy as np
import pytest
from numba import njit

from engine import bits
from engine.bits import U64, from_words, to_words

ALL = (1 << 64) - 1


@njit
def _mask_if(condition_word, value):
    return bits.mask_if(condition_word, value)


@pytest.mark.parametrize("condition", [1, 2, 1 << 62, 1 << 63, ALL, 0x0123_4567_89AB_CDEF])
@pytest.mark.parametrize("value", [ALL, 1, 0x8000_0000_0000_0001, 0xF0F0])
def test_mask_if_keeps_every_bit_when_the_condition_is_non_zero(condition, value):
    assert int(_mask_if(U64(condition), U64(value))) == value
    assert int(_mask_if(U64(0), U64(value))) == 0


@njit
def _bit_ops(a, index):
    return bits.bb_bit(a, index), bits.bb_test(a, index), bits.bb_zero(a)


@pytest.mark.parametrize("n_words", [1, 2, 4])
def test_single_bits_and_tests_at_every_word_edge(n_words):
    # every third bit: 64 % 3 == 1, so each word holds a different pattern (a wrong word is noticed)
    pattern = sum(1 << i for i in range(64 * n_words) if i % 3 == 0)
    a = to_words(pattern, n_words)
    for index in sorted({0, 1, 62, 63, 64, 65, 127, 128, 191, 192, 255} & set(range(64 * n_words))):
        bit, test, zero = _bit_ops(a, index)
        assert from_words(bit) == 1 << index, index
        assert bool(test) == bool(pattern >> index & 1), index
        assert from_words(zero) == 0 and len(zero) == n_words


@njit
def _select(a, rank):
    return bits.bb_select(a, rank)


@njit
def _count_any(a):
    return bits.bb_count(a), bits.bb_any(a)


@pytest.mark.parametrize("n_words", [2, 4])
def test_select_and_count_across_words(n_words):
    for pattern in [1 << (64 * n_words - 1), (1 << 63) | (1 << 64), sum(1 << i for i in range(0, 64 * n_words, 5)), 1 << 64]:
        a = to_words(pattern, n_words)
        set_bits = [i for i in range(64 * n_words) if pattern >> i & 1]
        assert [_select(a, rank) for rank in range(len(set_bits))] == set_bits
        assert _select(a, len(set_bits)) == -1
        assert tuple(_count_any(a)) == (len(set_bits), True)
    assert tuple(_count_any(to_words(0, n_words))) == (0, False)


@pytest.mark.parametrize(
    ("value", "n_words", "words"),
    [(0, 1, (0,)), (ALL, 1, (ALL,)), (5, 2, (5, 0)), (1 << 64, 2, (0, 1)), (ALL, 2, (ALL, 0)), (3 << 127, 4, (0, 1 << 63, 1, 0))],
)
def test_to_words_and_back(value, n_words, words):
    converted = to_words(value, n_words)
    assert tuple(int(w) for w in converted) == words
    assert all(type(w) is np.uint64 for w in converted)
    assert from_words(converted) == value
    assert from_words([1, 2, 3]) == 1 | 2 << 64 | 3 << 128


AMOUNTS = (U64(1), U64(7), U64(8), U64(9))


@njit
def _lanes(a, template, amounts):
    lanes = bits.lanes_of(a, template)
    return lanes, bits.lanes_up(lanes, amounts), bits.lanes_down(lanes, amounts), bits.lanes_merge(lanes, a)


def _lane(lanes, lane: int, n_words: int) -> int:
    return from_words(lanes[w * 4 + lane] for w in range(n_words))


@pytest.mark.parametrize("n_words", [1, 2, 4])
@pytest.mark.parametrize("amounts", [AMOUNTS, (U64(15), U64(16), U64(17), U64(63))], ids=["small", "large"])
def test_lane_shifts_carry_between_words_and_drop_what_leaves_the_board(n_words, amounts):
    width = 64 * n_words
    for pattern in [ALL << (width - 64) | 1, sum(1 << i for i in range(0, width, 7)), (1 << 63) | (1 << (width - 1)) | 1 << 64 % width]:
        pattern &= (1 << width) - 1
        a = to_words(pattern, n_words)
        template = to_words(0, 4 * n_words)
        lanes, up, down, merged = _lanes(a, template, amounts)
        for lane in range(4):
            shift = int(amounts[lane])
            assert _lane(lanes, lane, n_words) == pattern
            assert _lane(up, lane, n_words) == (pattern << shift) & ((1 << width) - 1), (lane, shift)
            assert _lane(down, lane, n_words) == pattern >> shift, (lane, shift)
        assert from_words(merged) == pattern


@njit
def _merge(x, template):
    return bits.lanes_merge(x, template)


def test_lanes_merge_is_the_union_of_the_four_lanes():
    x = tuple(U64(1 << (w * 4 + lane)) for w in range(2) for lane in range(4))
    assert from_words(_merge(x, to_words(0, 2))) == 0b1111 | (0b1111_0000 << 64)
