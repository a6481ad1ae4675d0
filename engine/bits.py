"""Bit intrinsics and operations on bitboards held as tuples of 64-bit words.

A bitboard of an H x W board is a ``UniTuple(uint64, n)`` with ``n = ceil(H*W/64)``
words, bit ``i`` of the board in word ``i // 64``. Numba compiles every kernel once
per word count, so an 8x8 board runs on one machine word and a 16x16 board on four,
from the same source. All arithmetic is unsigned.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any, TypeVar, cast

import numpy as np
from llvmlite import binding as llvm_binding
from llvmlite import ir
from numba import config, njit, types
from numba.core import cgutils
from numba.core.errors import TypingError
from numba.cpython.unsafe.tuple import tuple_setitem as _tuple_setitem_ir
from numba.extending import intrinsic

U64 = np.uint64
ZERO = U64(0)
ONE = U64(1)


@intrinsic
def _popcount_ir(typingctx, word):
    """Number of set bits of a uint64 (LLVM ctpop)."""
    if word != types.uint64:
        raise TypingError("popcount takes a uint64")

    def codegen(context, builder, signature, args):
        return builder.ctpop(args[0])

    return types.uint64(types.uint64), codegen


@intrinsic
def _trailing_zeros_ir(typingctx, word):
    """Index of the lowest set bit of a uint64 (64 for zero) (LLVM cttz)."""
    if word != types.uint64:
        raise TypingError("trailing_zeros takes a uint64")

    def codegen(context, builder, signature, args):
        return builder.cttz(args[0], ir.Constant(ir.IntType(1), 0))

    return types.uint64(types.uint64), codegen


@intrinsic
def _leading_zeros_ir(typingctx, word):
    """Number of zero bits above the highest set bit of a uint64 (64 for zero) (LLVM ctlz)."""
    if word != types.uint64:
        raise TypingError("leading_zeros takes a uint64")

    def codegen(context, builder, signature, args):
        return builder.ctlz(args[0], ir.Constant(ir.IntType(1), 0))

    return types.uint64(types.uint64), codegen


@intrinsic
def _pdep_ir(typingctx, source, mask):
    def codegen(context, builder, signature, args):
        i64 = ir.IntType(64)
        function = cgutils.get_or_insert_function(builder.module, ir.FunctionType(i64, [i64, i64]), "llvm.x86.bmi.pdep.64")
        return builder.call(function, args)

    return types.uint64(types.uint64, types.uint64), codegen


# Pure-Python stand-ins for the intrinsics above, used when numba's JIT is disabled
# (NUMBA_DISABLE_JIT=1: `make coverage` and `make mutation` run the kernels as Python, so
# their lines are traced). An intrinsic cannot run outside compiled code.
_MASK64 = (1 << 64) - 1
_T = TypeVar("_T")


def _popcount_py(word: np.uint64) -> np.uint64:
    return U64(int(word).bit_count())


def _trailing_zeros_py(word: np.uint64) -> np.uint64:
    value = int(word)
    return U64(64 if value == 0 else (value & -value).bit_length() - 1)


def _leading_zeros_py(word: np.uint64) -> np.uint64:
    return U64(64 - int(word).bit_length())


def _pdep_py(source: np.uint64, mask: np.uint64) -> np.uint64:
    src, remaining, out, k = int(source), int(mask), 0, 0
    while remaining:
        low = remaining & -remaining
        if (src >> k) & 1:
            out |= low
        remaining ^= low
        k += 1
    return U64(out & _MASK64)


def _tuple_setitem_py(tup: tuple[_T, ...], index: int, value: _T) -> tuple[_T, ...]:
    return tup[:index] + (value,) + tup[index + 1 :]


# The names the kernels call: the intrinsic when compiling, the stand-in when the JIT is off
# (the cast gives the intrinsic the signature it has inside compiled code).
Word = np.uint64
popcount = cast(Callable[[Word], Word], _popcount_py if config.DISABLE_JIT else _popcount_ir)
trailing_zeros = cast(Callable[[Word], Word], _trailing_zeros_py if config.DISABLE_JIT else _trailing_zeros_ir)
leading_zeros = cast(Callable[[Word], Word], _leading_zeros_py if config.DISABLE_JIT else _leading_zeros_ir)
_pdep = cast(Callable[[Word, Word], Word], _pdep_py if config.DISABLE_JIT else _pdep_ir)
tuple_setitem = cast(Callable[[tuple[Any, ...], int, Any], tuple[Any, ...]], _tuple_setitem_py if config.DISABLE_JIT else _tuple_setitem_ir)

HAS_PDEP = "+bmi2" in llvm_binding.get_host_cpu_features().flatten().split(",")


@njit(inline="always")
def _select_pdep(word, rank):
    """Index of the set bit of rank ``rank`` in ``word`` (BMI2 pdep)."""
    return int(trailing_zeros(_pdep(ONE << U64(rank), word)))


@njit(inline="always")
def _select_loop(word, rank):
    """Index of the set bit of rank ``rank`` in ``word`` (portable loop)."""
    for _ in range(rank):
        word &= word - ONE
    return int(trailing_zeros(word))


# Both are defined (and tested); the kernels call the one this CPU runs.
select_in_word = _select_pdep if HAS_PDEP else _select_loop


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
        total += popcount(a[i])  # type: ignore[assignment]  # numba types the total itself
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
def bb_select(a, rank):
    """Flat index of the set bit of rank ``rank`` (0 = lowest)."""
    for i in range(len(a)):
        word = a[i]
        count = int(popcount(word))
        if rank < count:
            return i * 64 + select_in_word(word, rank)
        rank -= count
    return -1


def to_words(bits: int, n_words: int) -> tuple[np.uint64, ...]:
    """A Python-int bitboard as a tuple of uint64 words."""
    mask = (1 << 64) - 1
    if n_words == 1 and 0 <= bits <= mask:  # the common case (boards up to 64 cells), without the generator
        return (U64(bits),)
    return tuple(U64((bits >> (64 * i)) & mask) for i in range(n_words))


def from_words(words: Iterable[np.uint64 | int]) -> int:
    """A tuple of uint64 words as a Python-int bitboard."""
    bits = 0
    for i, word in enumerate(words):
        bits |= int(word) << (64 * i)
    return bits


# Lane bitboards: four bitboards side by side, word w of lane l at index w * 4 + l.


@njit(inline="always")
def lanes_of(a, template):
    """Four copies of bitboard ``a`` as a lane bitboard shaped like ``template``."""
    out = template
    for w in range(len(a)):
        for lane in range(4):
            out = tuple_setitem(out, w * 4 + lane, a[w])
    return out


lanes_and = bb_and
lanes_or = bb_or


@njit(inline="always")
def lanes_up(x, amounts):
    """Lane l shifted towards higher indices by ``amounts[l]`` bits (each < 64)."""
    out = x
    n = len(x) // 4
    for w in range(n - 1, -1, -1):
        for lane in range(4):
            value = x[w * 4 + lane] << amounts[lane]
            if w > 0:
                value |= x[(w - 1) * 4 + lane] >> (U64(64) - amounts[lane])
            out = tuple_setitem(out, w * 4 + lane, value)
    return out


@njit(inline="always")
def lanes_down(x, amounts):
    """Lane l shifted towards lower indices by ``amounts[l]`` bits (each < 64)."""
    out = x
    n = len(x) // 4
    for w in range(n):
        for lane in range(4):
            value = x[w * 4 + lane] >> amounts[lane]
            if w < n - 1:
                value |= x[(w + 1) * 4 + lane] << (U64(64) - amounts[lane])
            out = tuple_setitem(out, w * 4 + lane, value)
    return out


@njit(inline="always")
def lanes_merge(x, template):
    """The union of the four lanes, as a plain bitboard shaped like ``template``."""
    out = template
    for w in range(len(template)):
        acc = ZERO
        for lane in range(4):
            acc |= x[w * 4 + lane]
        out = tuple_setitem(out, w, acc)
    return out
