"""Requests to the owners of vertices: the exchange step of the multi-GPU kernels.

A rank's kernel that reaches a vertex another rank owns (a BFS claim, an
SSSP relaxation) sets its bit in ``touched`` (a bitmap of all N vertices)
and leaves a value in ``staging`` (one word per vertex of the whole graph:
the parent that claimed it, or the least (distance, parent) word so far).
`OwnerRequests.exchange` sends each touched vertex once with its value to
its owner: one kernel (``send_touched`` in ``requests.cu``) moves every
touched vertex and its value into its owner's segment of the send buffers
(a warp of 32 words reserves its slots with one atomic) and clears the
bitmap; the staging words keep what was sent (the SSSP stages a candidate
only where it beats the last one sent, `clear` starts a search afresh); the host reads the segments' sizes
(the exchange's one synchronisation), trades them through MPI, and one
grouped NCCL exchange moves the pairs. Each owner receives at most one pair
per vertex of its block from each rank, however many edges reached it, in
no particular order.

Data structures: the touched bitmap (N bits), staging and the send buffers
(one segment per rank, as long as its block: N vertices and N values), the
receive buffers (grown to the largest exchange seen, then reused: nothing is
allocated per exchange once a search has run).
"""

import numpy as np

from graph500.kernels.gpu import runtime
from graph500.kernels.gpu.runtime import cupy, i64

THREADS = 256
_VALUE_TYPES = {np.dtype(np.uint32): "unsigned int", np.dtype(np.uint64): "unsigned long long"}


class OwnerRequests:
    """Touched vertices and their staged values (``value_dtype``: uint32 or uint64; ``initial``: the value of
    every staging word at first and after `clear`) sent to their owners over ``comm`` (collective: every rank
    exchanges as often)."""

    def __init__(self, comm, blocks, value_dtype, initial):
        self.comm = comm
        self.value_dtype = np.dtype(value_dtype)
        self.initial = self.value_dtype.type(initial)
        num_vertices = blocks.num_vertices
        self._num_words = -(-num_vertices // 32)
        self._block = blocks.block
        self._segments = np.array([blocks.begin(rank) for rank in range(comm.size)], dtype=np.int64)
        self.touched = cupy.zeros(self._num_words, dtype=np.uint32)
        self.staging = cupy.full(max(num_vertices, 1), self.initial, dtype=self.value_dtype)
        self._sent = (cupy.empty(max(num_vertices, 1), dtype=np.int32),
                      cupy.empty(max(num_vertices, 1), dtype=self.value_dtype))
        self._received = (cupy.empty(0, dtype=np.int32), cupy.empty(0, dtype=self.value_dtype))
        self._cursors = runtime.DeviceCounters(comm.size)
        self._send = _send_touched(self.value_dtype)
        self._grid = runtime.persistent_blocks(self._send, THREADS, self._num_words)

    def clear(self):
        """Every staging word back to ``initial``."""
        self.staging.fill(self.initial)

    def exchange(self):
        """``(vertices, values)``: the pairs every rank sent this one (int32 global labels, grouped by source
        rank), views of reused buffers valid until the next exchange; ``touched`` is cleared."""
        self._cursors.reset()
        self._send((self._grid,), (THREADS,),
                   (self.touched, i64(self._num_words), i64(self._block), self.staging, *self._sent,
                    self._cursors.device))
        send_counts = self._cursors.read().astype(np.int64)
        _, receive_counts = self.comm.alltoallv((), send_counts)  # the counts alone
        total = int(np.sum(receive_counts))
        if self._received[0].shape[0] < total:
            size = max(total, 2 * self._received[0].shape[0])
            self._received = tuple(cupy.empty(size, dtype=array.dtype) for array in self._received)
        received, _ = self.comm.alltoallv(self._sent, send_counts, receive_counts, out=self._received,
                                          send_displacements=self._segments)
        return received


def load_kernels():
    """Compile this module's kernels (the warm-up's one-rank kernels call it: a run of several ranks then
    compiles nothing inside a timed step)."""
    for dtype in _VALUE_TYPES:
        _send_touched(dtype)


def _send_touched(dtype):
    return runtime.kernel("requests", f"send_touched<{_VALUE_TYPES[np.dtype(dtype)]}>",
                          tuple(f"send_touched<{value}>" for value in _VALUE_TYPES.values()))
