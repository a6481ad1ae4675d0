"""Bit operations against Python integers: the intrinsics' pure-Python stand-ins (NUMBA_DISABLE_JIT=1),
both select_in_word paths, and word tuples spanning the 64-bit boundary (expected values from int arithmetic)."""

from __future__ import annotations

import numpy as np
import pytest
from numba import njit

from engine import bits
from engine.bits import U64, from_words, to_words

WORDS = [0, 1, 2, 3, 0x8000_0000_0000_0000, 0xFFFF_FFFF_FFFF_FFFF, 0x0123_4567_89AB_CDEF, 0xF0F0_0000_0000_0F00, 1 << 40]


@pytest.mark.parametrize("word", WORDS)
def test_stand_ins_match_int_arithmetic(word):
    assert bits._popcount_py(U64(word)) == bin(word).count("1")
    assert bits._trailing_zeros_py(U64(word)) == (64 if word == 0 else (word & -word).bit_length() - 1)
    assert bits._leading_zeros_py(U64(word)) == 64 - word.bit_length()


@pytest.mark.parametrize("mask", WORDS)
def test_pdep_stand_in_deposits_the_low_bits_into_the_mask(mask):
    set_bits = [i for i in range(64) if mask >> i & 1]
    for rank in range(len(set_bits)):
        assert bits._pdep_py(U64(1 << rank), U64(mask)) == 1 << set_bits[rank]
    assert bits._pdep_py(U64(0xFFFF_FFFF_FFFF_FFFF), U64(mask)) == mask
    assert bits._pdep_py(U64(0), U64(mask)) == 0


def test_tuple_setitem_stand_in_replaces_one_item():
    assert bits._tuple_setitem_py((1, 2, 3), 0, 9) == (9, 2, 3)
    assert bits._tuple_setitem_py((1, 2, 3), 2, 9) == (1, 2, 9)


@njit
def _select_pdep(word, rank):
    return bits._select_pdep(word, rank)


@njit
def _select_loop(word, rank):
    return bits._select_loop(word, rank)


@pytest.mark.parametrize("word", [w for w in WORDS if w])
@pytest.mark.parametrize("select", [_select_loop, *([_select_pdep] if bits.HAS_PDEP else [])], ids=lambda f: f.__name__)
def test_select_in_word_finds_the_bit_of_each_rank(word, select):
    set_bits = [i for i in range(64) if word >> i & 1]
    for rank, index in enumerate(set_bits):
        assert select(U64(word), rank) == index


@njit
def _ops(a, b, index, rank):
    return (
        bits.bb_and(a, b),
        bits.bb_or(a, b),
        bits.bb_xor(a, b),
        bits.bb_andnot(a, b),
        bits.bb_any(a),
        bits.bb_count(a),
        bits.bb_bit(a, index),
        bits.bb_test(a, index),
        bits.bb_select(a, rank),
    )


@pytest.mark.parametrize("n_words", [1, 2, 4])
def test_bitboard_ops_match_python_ints(n_words):
    rng = np.random.default_rng(n_words)
    for _ in range(5):
        a_int = int(rng.integers(0, 1 << 62)) | (int(rng.integers(0, 1 << 62)) << (64 * (n_words - 1)))
        b_int = int(rng.integers(0, 1 << 62)) << (64 * (n_words - 1))
        a, b = to_words(a_int, n_words), to_words(b_int, n_words)
        index = 64 * n_words - 1 if n_words > 1 else 63
        rank = bin(a_int).count("1") - 1  # the highest set bit, in the last word
        result = _ops(a, b, index, rank)
        assert [from_words(x) for x in result[:4]] == [a_int & b_int, a_int | b_int, a_int ^ b_int, a_int & ~b_int]
        assert result[4] == (a_int != 0) and result[5] == bin(a_int).count("1")
        assert from_words(result[6]) == 1 << index and result[7] == bool(a_int >> index & 1)
        assert result[8] == a_int.bit_length() - 1
    assert _ops(to_words(0, n_words), to_words(0, n_words), 0, 0)[8] == -1  # no set bit of that rank
