"""The state word shared by the CPU delta-steppings (`sssp_delta_stepping`, `sssp_distributed`).

A vertex's state is one 64-bit word: its float32 distance bits above its parent's label (32 bits), so that a
distance and its parent are written together and non-negative distances order like their words.
"""

import numba
import numpy as np
from numba.cpython.unsafe.numbers import viewer

MAX_VERTICES = 2**32 - 1  # the parent takes 32 bits of the word
_SHIFT = np.uint64(32)
_PARENT_MASK = np.uint64(0xFFFFFFFF)
UNREACHED = np.uint64(0x7F800000FFFFFFFF)  # distance +inf, parent all ones


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
