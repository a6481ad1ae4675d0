"""Small helpers of the search kernels: disc counts, applying a move, borrowed arrays, a clock.

Every call between numba functions that LLVM does not inline (the recursive
searches above all) increments and decrements the reference count of each
array it passes, an atomic operation each way: with the twenty-odd arrays of a
search context that cost more than the node itself. The kernels' entry points
therefore pass :func:`borrowed` views of their arrays down: the same data and
shape without a reference count (a NULL meminfo, for which numba's
``NRT_incref``/``NRT_decref`` do nothing). A borrowed view must not outlive the
call of the entry point that made it, which holds the real array.

With numba's JIT off (``NUMBA_DISABLE_JIT=1``: ``make coverage``, ``make mutation``)
the kernels run as Python, where an intrinsic cannot run: :func:`borrowed` is then
the identity (the array itself), chosen like ``engine.bits`` chooses its stand-ins.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import cast

import numpy as np
from numba import config, njit, objmode, types
from numba.core import cgutils
from numba.core.errors import TypingError
from numba.extending import intrinsic

from engine.bits import bb_bit, bb_or, bb_xor, popcount


@njit(cache=True)
def count(bits):
    """Set bits of a bitboard, as an int64.

    (``bb_count`` is inlined into its caller, where numba's type inference may
    first see its running total as the literal 0 and compile the callee a
    second time for literal arguments; a plain function's return type is fixed.)
    """
    total = 0
    for i in range(len(bits)):
        total += int(popcount(bits[i]))
    return total


@njit(cache=True)
def apply(own, opp, index, flipped):
    """(own, opp) after the mover places at ``index`` flipping ``flipped``."""
    return bb_or(bb_xor(own, flipped), bb_bit(own, index)), bb_xor(opp, flipped)


@njit(cache=True)
def now():
    """``time.perf_counter()`` from inside a kernel (about a microsecond: call it sparingly)."""
    with objmode(t="float64"):
        t = time.perf_counter()
    return t


@intrinsic
def _borrowed_ir(typingctx, array):
    """A view of ``array`` that is not reference-counted (see the module docstring)."""
    if not isinstance(array, types.Array):
        raise TypingError("borrowed takes an array")

    def codegen(context, builder, signature, args):
        source = context.make_array(array)(context, builder, value=args[0])
        view = context.make_array(array)(context, builder)
        for field in ("nitems", "itemsize", "data", "shape", "strides"):
            setattr(view, field, getattr(source, field))
        view.meminfo = cgutils.get_null_value(view.meminfo.type)
        view.parent = cgutils.get_null_value(view.parent.type)
        return view._getvalue()

    return array(array), codegen


def _borrowed_py(array: np.ndarray) -> np.ndarray:
    """The array itself: without the JIT nothing is reference-counted by numba."""
    return array


# The name the kernels call: the intrinsic when compiling, the identity when the JIT is off.
borrowed = cast(Callable[[np.ndarray], np.ndarray], _borrowed_py if config.DISABLE_JIT else _borrowed_ir)


@njit(cache=True)
def borrow_geo(geo):
    """The geometry tuple with its ray array borrowed."""
    return (geo[0], geo[1], geo[2], geo[3], geo[4], borrowed(geo[5]))
