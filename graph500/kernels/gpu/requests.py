"""Requests to the owners of vertices: the exchange step of the multi-GPU kernels.

A rank's kernel that reaches a vertex another rank owns (a BFS claim, an
SSSP relaxation) sets its bit in ``touched`` (a bitmap of all N vertices)
and leaves a value in ``staging`` (one word per vertex of the whole graph:
the parent that claimed it, or the least (distance, parent) word so far).
`OwnerRequests.exchange` sends each touched vertex once with its value to
its owner: the blocks of `graph500.partition.VertexBlocks` are contiguous,
so the touched vertices in label order are grouped by owner already. A
prefix sum of the bitmap's words gives each owner's count (``owner_counts``
in ``requests.cu``), the sorted queue of touched vertices comes from the
BFS's ``bitmap_to_queue``, their values from ``take_values`` (which resets
their staging words), and one grouped NCCL exchange moves the pairs, their
counts read once by the host (the exchange's one synchronisation) and
traded through MPI. Each owner receives at most one pair per vertex of its
block from each rank however many edges reached it.

Buffers grow to the largest exchange seen and are then reused: nothing is
allocated per exchange once a search has run.
"""

import numpy as np

from graph500.kernels.gpu import runtime
from graph500.kernels.gpu.bfs import bitmap_to_queue
from graph500.kernels.gpu.frontier import PrefixSums
from graph500.kernels.gpu.runtime import cupy, i32

THREADS = 256
_VALUE_TYPES = {np.dtype(np.uint32): "unsigned int", np.dtype(np.uint64): "unsigned long long"}


class OwnerRequests:
    """Touched vertices and their staged values (``value_dtype``: uint32 or uint64) sent to their owners over
    ``comm`` (collective: every rank exchanges as often)."""

    def __init__(self, comm, blocks, value_dtype, reset):
        self.comm = comm
        self.value_dtype = np.dtype(value_dtype)
        self.reset = self.value_dtype.type(reset)
        word_counts = [(blocks.count(rank) + 31) // 32 for rank in range(comm.size)]
        num_words = sum(word_counts)
        self.touched = cupy.zeros(num_words, dtype=np.uint32)
        self.staging = cupy.full(max(blocks.num_vertices, 1), self.reset, dtype=self.value_dtype)
        self._num_words = num_words
        self._block_last_word = cupy.asarray(np.cumsum(word_counts) - 1, dtype=np.int32)
        self._prefix_sums = PrefixSums(num_words, 0)
        self._counts = runtime.DeviceCounters(comm.size)
        self._sent = self._received = (cupy.empty(0, dtype=np.int32), cupy.empty(0, dtype=self.value_dtype))
        self._take = _take_values(self.value_dtype)

    def exchange(self):
        """``(vertices, values)``: the pairs every rank sent this one (int32 global labels, grouped by source
        rank), views of reused buffers valid until the next exchange; ``touched`` is cleared."""
        word_end = self._prefix_sums.of_populations(self.touched, self._num_words)
        runtime.kernel("requests", "owner_counts")((1,), (THREADS,), (word_end, self._block_last_word,
                                                                      i32(self.comm.size), self._counts.device))
        send_counts = self._counts.read().astype(np.int64)
        total = int(send_counts.sum())
        self._sent = _grown(self._sent, total)
        vertices, values = self._sent
        if total:
            bitmap_to_queue(self.touched, self._num_words, word_end, vertices)
            self._take((runtime.blocks_for(total, THREADS),), (THREADS,),
                       (vertices, i32(total), self.staging, self.reset, values))
            stream = cupy.cuda.get_current_stream()
            cupy.cuda.runtime.memsetAsync(self.touched.data.ptr, 0, self.touched.nbytes, stream.ptr)
        _, receive_counts = self.comm.alltoallv((), send_counts)  # the counts alone
        self._received = _grown(self._received, int(np.sum(receive_counts)))
        received, _ = self.comm.alltoallv((vertices[:total], values[:total]), send_counts, receive_counts,
                                          out=self._received)
        return received


def load_kernels():
    """Compile this module's kernels (the warm-up's one-rank kernels call it: a run of several ranks then
    compiles nothing inside a timed step)."""
    for dtype in _VALUE_TYPES:
        _take_values(dtype)
    runtime.kernel("requests", "owner_counts")


def _take_values(dtype):
    return runtime.kernel("requests", f"take_values<{_VALUE_TYPES[np.dtype(dtype)]}>",
                          tuple(f"take_values<{value}>" for value in _VALUE_TYPES.values()))


def _grown(buffers, count):
    """``buffers`` (a pair of arrays), or new ones of room for at least ``count`` items (twice their size)."""
    if buffers[0].shape[0] >= count:
        return buffers
    size = max(count, 2 * buffers[0].shape[0])
    return tuple(cupy.empty(size, dtype=array.dtype) for array in buffers)
