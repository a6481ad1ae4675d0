"""Bit intrinsics and operations on bitboards held as tuples of 64-bit words.

A bitboard of an H x W board is a ``UniTuple(uint64, n)`` with ``n = ceil(H*W/64)``
words, bit ``i`` of the board in word ``i // 64``. Numba compiles every kernel once
per word count, so an 8x8 board runs on one machine word and a 16x16 board on four,
from the same source. All arithmetic is unsigned.
"""

from __future__ import annotations

import numpy as np
from llvmlite import binding as llvm_binding
from llvmlite import ir
from numba import njit, types
from numba.core import cgutils
from numba.core.errors import TypingError
from numba.cpython.unsafe.tuple import tuple_setitem
from numba.extending import intrinsic

U64 = np.uint64
ZERO = U64(0)
ONE = U64(1)


@intrinsic
def popcount(typingctx, word):
    """Number of set bits of a uint64 (LLVM ctpop)."""
    if word != types.uint64:
        raise TypingError("popcount takes a uint64")

    def codegen(context, builder, signature, args):
        return builder.ctpop(args[0])

    return types.uint64(types.uint64), codegen


@intrinsic
def trailing_zeros(typingctx, word):
    """Index of the lowest set bit of a uint64 (64 for zero) (LLVM cttz)."""
    if word != types.uint64:
        raise TypingError("trailing_zeros takes a uint64")

    def codegen(context, builder, signature, args):
        return builder.cttz(args[0], ir.Constant(ir.IntType(1), 0))

    return types.uint64(types.uint64), codegen


@intrinsic
def leading_zeros(typingctx, word):
    """Number of zero bits above the highest set bit of a uint64 (64 for zero) (LLVM ctlz)."""
    if word != types.uint64:
        raise TypingError("leading_zeros takes a uint64")

    def codegen(context, builder, signature, args):
        return builder.ctlz(args[0], ir.Constant(ir.IntType(1), 0))

    return types.uint64(types.uint64), codegen


@intrinsic
def _pdep(typingctx, source, mask):
    def codegen(context, builder, signature, args):
        i64 = ir.IntType(64)
        function = cgutils.get_or_insert_function(
            builder.module, ir.FunctionType(i64, [i64, i64]), "llvm.x86.bmi.pdep.64"
        )
        return builder.call(function, args)

    return types.uint64(types.uint64, types.uint64), codegen


HAS_PDEP = "+bmi2" in llvm_binding.get_host_cpu_features().flatten().split(",")


if HAS_PDEP:

    @njit(inline="always")
    def select_in_word(word, rank):
        """Index of the set bit of rank ``rank`` in ``word`` (BMI2 pdep)."""
        return int(trailing_zeros(_pdep(ONE << U64(rank), word)))

else:

    @njit(inline="always")
    def select_in_word(word, rank):
        """Index of the set bit of rank ``rank`` in ``word`` (portable loop)."""
        for _ in range(rank):
            word &= word - ONE
        return int(trailing_zeros(word))


@njit(inline="always")
def mask_if(condition_word, bits):
    """``bits`` if ``condition_word`` is non-zero, else 0, without a branch."""
    spread = (condition_word | (ZERO - condition_word)) >> U64(63)
    return bits & (ZERO - spread)


@njit(inline="always")
def bb_and(a, b):
    out = a
    for i in range(len(a)):
        out = tuple_setitem(out, i, a[i] & b[i])
    return out


@njit(inline="always")
def bb_or(a, b):
    out = a
    for i in range(len(a)):
        out = tuple_setitem(out, i, a[i] | b[i])
    return out


@njit(inline="always")
def bb_xor(a, b):
    out = a
    for i in range(len(a)):
        out = tuple_setitem(out, i, a[i] ^ b[i])
    return out


@njit(inline="always")
def bb_andnot(a, b):
    """a & ~b."""
    out = a
    for i in range(len(a)):
        out = tuple_setitem(out, i, a[i] & ~b[i])
    return out


@njit(inline="always")
def bb_any(a):
    acc = ZERO
    for i in range(len(a)):
        acc |= a[i]
    return acc != ZERO


@njit(inline="always")
def bb_count(a):
    total = 0
    for i in range(len(a)):
        total += popcount(a[i])
    return total


@njit(inline="always")
def bb_zero(a):
    out = a
    for i in range(len(a)):
        out = tuple_setitem(out, i, ZERO)
    return out


@njit(inline="always")
def bb_bit(a, index):
    """A bitboard shaped like ``a`` with only bit ``index`` set."""
    out = bb_zero(a)
    return tuple_setitem(out, index >> 6, ONE << U64(index & 63))


@njit(inline="always")
def bb_test(a, index):
    return (a[index >> 6] >> U64(index & 63)) & ONE != ZERO


@njit(inline="always")
def bb_shift(a, amount):
    """Shift towards higher bit indices by ``amount`` (lower if negative); |amount| < 64."""
    out = a
    n = len(a)
    if amount > 0:
        k = U64(amount)
        back = U64(64 - amount)
        for i in range(n - 1, 0, -1):
            out = tuple_setitem(out, i, (a[i] << k) | (a[i - 1] >> back))
        out = tuple_setitem(out, 0, a[0] << k)
    else:
        k = U64(-amount)
        back = U64(64 + amount)
        for i in range(n - 1):
            out = tuple_setitem(out, i, (a[i] >> k) | (a[i + 1] << back))
        out = tuple_setitem(out, n - 1, a[n - 1] >> k)
    return out


@njit(inline="always")
def bb_select(a, rank):
    """Flat index of the set bit of rank ``rank`` (0 = lowest)."""
    for i in range(len(a)):
        word = a[i]
        count = int(popcount(word))
        if rank < count:
            return i * 64 + select_in_word(word, rank)
        rank -= count
    return -1


def to_words(bits: int, n_words: int) -> tuple:
    """A Python-int bitboard as a tuple of uint64 words."""
    mask = (1 << 64) - 1
    return tuple(U64((bits >> (64 * i)) & mask) for i in range(n_words))


def from_words(words) -> int:
    """A tuple of uint64 words as a Python-int bitboard."""
    bits = 0
    for i, word in enumerate(words):
        bits |= int(word) << (64 * i)
    return bits


@njit(inline="always")
def bb_shift_far(a, amount):
    """Shift towards higher bit indices by ``amount`` (lower if negative), any size."""
    out = a
    n = len(a)
    distance = amount if amount >= 0 else -amount
    words = distance >> 6
    bits = U64(distance & 63)
    back = U64(64 - (distance & 63))
    for i in range(n):
        j = i - words if amount >= 0 else i + words
        near = a[j] if 0 <= j < n else ZERO
        k = j - 1 if amount >= 0 else j + 1
        far = a[k] if (0 <= k < n and bits != ZERO) else ZERO
        if amount >= 0:
            value = (near << bits) | (far >> back if bits != ZERO else ZERO)
        else:
            value = (near >> bits) | (far << back if bits != ZERO else ZERO)
        out = tuple_setitem(out, i, value)
    return out
