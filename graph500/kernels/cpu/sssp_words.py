"""The state word and the prefetch shared by the CPU delta-steppings (`sssp_delta_stepping`, `sssp_distributed`).

A vertex's state is one 64-bit word: its float32 distance bits above its parent's label (32 bits), so that a
distance and its parent are written together and non-negative distances order like their words. A prefetch
asks for a cache line without waiting (LLVM's intrinsic; it never faults).
"""

import numba
import numpy as np
from llvmlite import ir
from numba.core import cgutils, types
from numba.cpython.unsafe.numbers import viewer
from numba.extending import intrinsic

MAX_VERTICES = 2**32 - 1  # the parent takes 32 bits of the word
_SHIFT = np.uint64(32)
_PARENT_MASK = np.uint64(0xFFFFFFFF)
UNREACHED = np.uint64(0x7F800000FFFFFFFF)  # distance +inf, parent all ones


# ---------------------------------------------------------------- prefetching

@intrinsic
def _prefetch(typingctx, array, index):
    """Ask for the cache line of ``array[index]`` (along the first axis) without waiting for it: LLVM's
    prefetch, for reading, high temporal locality. A prefetch never faults, so ``index`` is not checked."""
    def codegen(context, builder, signature, args):
        array_type, index_type = signature.args
        view = context.make_array(array_type)(context, builder, args[0])
        position = context.cast(builder, args[1], index_type, types.intp)
        pointer = cgutils.get_item_pointer(context, builder, array_type, view, [position])
        byte_pointer, int32 = ir.IntType(8).as_pointer(), ir.IntType(32)
        prefetch = cgutils.get_or_insert_function(
            builder.module, ir.FunctionType(ir.VoidType(), [byte_pointer, int32, int32, int32]), "llvm.prefetch.p0i8")
        builder.call(prefetch, [builder.bitcast(pointer, byte_pointer), int32(0), int32(3), int32(1)])
        return context.get_dummy_value()
    return types.void(array, index), codegen


# ---------------------------------------------------------------- state words

@numba.njit(inline="always", cache=True)
def _pack(distance, parent):
    return (np.uint64(viewer(distance, np.uint32)) << _SHIFT) | np.uint64(parent)


@numba.njit(inline="always", cache=True)
def _distance(word):
    return viewer(np.uint32(word >> _SHIFT), np.float32)


@numba.njit(inline="always", cache=True)
def _bucket(word, inverse_delta):
    return np.int64(np.float64(_distance(word)) * inverse_delta)
