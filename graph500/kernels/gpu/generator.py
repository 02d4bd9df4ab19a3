"""The reference's Kronecker generator on the GPU, bit-identical to ``graph500.generators.kronecker``.

Each edge ``ei`` is a pure function of ``ei`` and the user seeds: its random
stream starts ``ei * 2^64`` steps into the MRG stream (``mrg.py``), from which
it draws SCALE quadrants (rejecting draws below ``(2^31-1) mod 10000``), then
its weight; both endpoints go through the reference's scramble. See
``kronecker.py`` for the full statement.

GPU structure (``generator.cu``): a grid of T threads; thread t generates the
edges t, t + T, t + 2T, ... of the range, so that neighbouring threads write
neighbouring edges. A thread computes its first edge's state once by
square-and-multiply over the powers ``(A^(2^64))^(2^k)``, then moves T edges
ahead per edge with one 5x5 matrix-vector product modulo p by
``(A^(2^64))^T`` (computed on the host with exact integers). All arithmetic
is integer, except the weight's conversion, written exactly as the
reference's (float32, then double, then float32, round to nearest).

Tunables: ``CHUNK_EDGES`` (edges per launch, so progress can be reported).
"""

import functools

import numpy as np

from graph500.generators import kronecker, mrg
from graph500.kernels.graph import neighbor_dtype
from graph500.kernels.gpu import runtime
from graph500.kernels.gpu.runtime import cupy, i32, u64

CHUNK_EDGES = 1 << 27
THREADS = 256  # common.cuh's BLOCK_THREADS
_LABEL_TYPES = {np.dtype(np.int32): "int", np.dtype(np.int64): "long long"}
_INSTANCES = tuple(f"generate_edges<{label}>" for label in _LABEL_TYPES.values())


def generate_edges(scale, edgefactor=16, seed1=2, seed2=3, start=0, stop=None, progress=None, empty=None,
                   out=None):
    """Edges ``start`` to ``stop`` (default: all) as CuPy arrays ``(src, dst, weights)``.

    Labels are int32 when ``2^scale <= 2^31``, else int64; weights float32.
    Equal, value for value, to ``kronecker.generate_edges``.
    ``progress(n)`` is told of each chunk of edges. ``empty(count, dtype)``
    allocates the three arrays (default ``cupy.empty``, device memory;
    ``runtime.host_mapped_empty`` puts them in host memory, written in place
    by the kernel); ``out``: the three arrays to write instead (generated
    again).
    """
    empty = empty or cupy.empty
    kronecker.check_parameters(scale, edgefactor, seed1, seed2)
    num_edges = edgefactor << scale
    stop = num_edges if stop is None else stop
    if not 0 <= start <= stop <= num_edges:
        raise ValueError(f"edge range [{start}, {stop}) is outside [0, {num_edges})")
    label = neighbor_dtype(1 << scale)
    count = stop - start
    if out is None:
        out = (empty(count, label), empty(count, label), empty(count, np.float32))
    elif [(array.shape, array.dtype) for array in out] != [((count,), label)] * 2 + [((count,), np.float32)]:
        raise ValueError(f"out must be {count} {np.dtype(label)} labels twice and {count} float32 weights")
    src, dst, weights = out
    kernel = runtime.kernel("generator", f"generate_edges<{_LABEL_TYPES[label]}>", _INSTANCES)
    val0, val1 = kronecker.scramble_constants(seed1, seed2)
    seed = cupy.asarray(mrg.seed_state(seed1, seed2))
    stride_powers = _stride_powers()
    for first in range(0, count, CHUNK_EDGES):
        last = min(first + CHUNK_EDGES, count)
        blocks = runtime.persistent_blocks(kernel, THREADS, last - first)
        kernel((blocks,), (THREADS,),
               (u64(start + first), u64(last - first), i32(scale), seed, stride_powers,
                _thread_stride(blocks * THREADS), val0, val1, src[first:last], dst[first:last], weights[first:last]))
        if progress:
            progress(last - first)
    return src, dst, weights


@functools.lru_cache(maxsize=None)
def _stride_powers():
    return cupy.asarray(mrg.EDGE_STRIDE_POWERS)


@functools.lru_cache(maxsize=None)
def _thread_stride(threads):
    return cupy.asarray(mrg.edge_skip_matrix(threads))
