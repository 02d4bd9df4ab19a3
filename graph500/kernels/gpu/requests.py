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
only where it beats the last one sent, `clear` starts a search afresh:
it resets the words sent since the last clear, which ``send_touched`` marks
in a second bitmap, instead of all N).

No host round trip of its own: the counts travel with the requests. One
group of NCCL transfers (`graph500.comm.NCCLCommunicator.transfers`),
enqueued at once, sends each owner the size of its segment and the segment's
first ``width`` requests (``width``: the ``capacity`` or less where the
caller knows a smaller bound on any segment, rounded up to a power of two,
the same on every rank: a blind part of a fixed size, its transfers
prepared once per width), so the owner's kernel takes the requests without the
host knowing how many came. The sizes sent and received sit in the caller's
`DeviceCounters`, which it reads after that kernel as it does after every
step; `rest` then moves what did not fit (a segment longer than ``width``)
in a second exchange between the ranks concerned, whose sizes the host now
knows. Each owner receives at most one request per vertex of its block from
each rank, however many edges reached it, in no particular order.

Data structures: the touched and sent bitmaps (N bits each), staging and the send buffers
(one segment per rank, as long as its block: N vertices and N values), the
blind part's receive buffers (``capacity`` requests per rank), the rest's
receive buffers (grown to the largest seen, then reused: nothing is
allocated per exchange once a search has run), 2 P counters.

Tunable: ``capacity`` (BLIND_CAPACITY, 2^16 requests a rank: under 1 MB a
rank sent blind, a few microseconds of NVLink, while most exchanges of a
search fit in it).
"""

import numpy as np

from graph500.kernels.gpu import runtime
from graph500.kernels.gpu.runtime import NULL, cupy, i32, i64

THREADS = 256
BLIND_CAPACITY = 1 << 16
_VALUE_TYPES = {np.dtype(np.uint32): "unsigned int", np.dtype(np.uint64): "unsigned long long"}


class Received:
    """Requests received: ``num_segments`` segments of ``stride`` items in ``vertices`` and ``values``,
    segment s holding its first ``counts[s]`` items (a device array), or every item where ``counts`` is None.
    ``arguments``: the kernels' parameters (``vertices, values, stride, num_segments, counts``) and ``items``
    what they cover."""

    def __init__(self, vertices, values, stride, num_segments, counts=None):
        self.items = stride * num_segments
        self.arguments = (vertices, values, i64(stride), i32(num_segments), NULL if counts is None else counts)


class OwnerRequests:
    """Touched vertices and their staged values (``value_dtype``: uint32 or uint64; ``initial``: the value of
    every staging word at first and after `clear`) sent to their owners over ``comm`` (collective: every rank
    exchanges as often). ``counters`` (`runtime.DeviceCounters`) holds the sizes sent and received from
    ``first_counter`` on: `num_counters` of them. ``capacity``: the blind part's requests a rank (default
    BLIND_CAPACITY)."""

    def __init__(self, comm, blocks, value_dtype, initial, counters, first_counter, capacity=None):
        self.comm = comm
        self.value_dtype = np.dtype(value_dtype)
        self.initial = self.value_dtype.type(initial)
        num_vertices, size = blocks.num_vertices, comm.size
        self._num_words = -(-num_vertices // 32)
        self._block = blocks.block
        self._segments = np.array([blocks.begin(rank) for rank in range(size)], dtype=np.int64)
        self._block_counts = np.array([blocks.count(rank) for rank in range(size)], dtype=np.int64)
        self.touched = cupy.zeros(self._num_words, dtype=np.uint32)
        self._sent_vertices = cupy.zeros(self._num_words, dtype=np.uint32)  # sent since the last `clear`
        self.staging = cupy.full(max(num_vertices, 1), self.initial, dtype=self.value_dtype)
        self._sent = (cupy.empty(max(num_vertices, 1), dtype=np.int32),
                      cupy.empty(max(num_vertices, 1), dtype=self.value_dtype))
        self.capacity = BLIND_CAPACITY if capacity is None else int(capacity)
        self._blind = (cupy.empty(max(size * self.capacity, 1), dtype=np.int32),
                       cupy.empty(max(size * self.capacity, 1), dtype=self.value_dtype))
        self._received = (cupy.empty(0, dtype=np.int32), cupy.empty(0, dtype=self.value_dtype))
        self._counters, self._first = counters, first_counter
        self._sizes = counters.device[first_counter:first_counter + 2 * size]  # sent to each rank, received from it
        self._layouts = {}  # a blind part's transfers by width (`transfer`)
        self._blind_sent, self._blind_received = [0] * size, 0  # the last blind part: sent to each rank, got from each
        self._send = _kernel("send_touched", self.value_dtype)
        self._clear = _kernel("clear_sent", self.value_dtype)
        self._grid = runtime.persistent_blocks(self._send, THREADS, self._num_words)

    @staticmethod
    def num_counters(comm):
        return 2 * comm.size

    def clear(self):
        """Every staging word back to ``initial``: those sent since the last clear (every other one is)."""
        self._clear((runtime.persistent_blocks(self._clear, THREADS, self._num_words),), (THREADS,),
                    (self._sent_vertices, i64(self._num_words), self.staging, self.initial))

    @property
    def send_buffers(self):
        """``(vertices, values, sizes)``: the send buffers (rank r's segment from ``r * blocks.block``) and the
        sizes sent to each rank then received from each (2 P words), for a kernel that places its requests
        itself (`transfer` then sends them)."""
        return (*self._sent, self._sizes)

    def segment(self, rank):
        """Where rank ``rank``'s segment of the send buffers begins (``rank * segment_items``)."""
        return int(self._segments[rank])

    @property
    def segment_items(self):
        return self._block

    def allgather_segments(self, counts, count_words):
        """Every rank's own segment of the send buffers (``counts[r]`` items from rank r, host-known) and its word
        ``count_words[r]`` (a uint64 device array of P words) sent to every other rank and received in place, as
        one NCCL group: the buffers' other use, between exchanges (a pull's members, `graph500.kernels.gpu.sssp`)."""
        comm = self.comm
        sends, receives = comm.allgather_parts(count_words, np.ones(comm.size, dtype=np.int64))
        for buffer in self._sent:
            buffer_sends, buffer_receives = comm.allgather_parts(buffer, counts, self._segments)
            sends += buffer_sends
            receives += buffer_receives
        comm.transfers(sends, receives)

    def exchange(self, bound):
        """Send the touched vertices to their owners: enqueued, no host round trip. ``bound``: at most that many
        requests go to any one rank (the same on every rank; the edges the step relaxed, say). Returns the
        `Received` blind part (valid until the next exchange), or None where ``bound`` is 0; ``touched`` is
        cleared. After it the caller reads its counters and calls `rest`."""
        stream = cupy.cuda.get_current_stream()
        cupy.cuda.runtime.memsetAsync(self._sizes.data.ptr, 0, self._sizes.nbytes, stream.ptr)
        self._send((self._grid,), (THREADS,),
                   (self.touched, self._sent_vertices, i64(self._num_words), i64(self._block), self.staging,
                    *self._sent, self._sizes))
        return self.transfer(bound)  # clamped to the capacity there

    def transfer(self, width):
        """The blind exchange of what the send buffers hold: each rank's size and the first ``width`` requests of
        its segment (rounded up to a power of two, at most ``capacity``: the same on every rank), enqueued as one
        NCCL group of transfers whose parts, addresses of the fixed buffers, are prepared once per width. The
        `Received` blind part, or None where ``width`` is 0."""
        width = min(self.capacity, int(width))
        if width:
            width = min(self.capacity, 1 << (width - 1).bit_length())  # a few widths, each one's layout kept
        layout = self._layouts.get(width)
        if layout is None:
            layout = self._layouts[width] = self._blind_layout(width)
        self._blind_sent, self._blind_received, transfers, received = layout
        if transfers is not None:
            self.comm.transfers(*transfers)
        return received

    def _blind_layout(self, width):
        """``(sent to each rank, received from each, (sends, receives), Received)`` of a blind part of ``width``."""
        size, rank, comm = self.comm.size, self.comm.rank, self.comm
        blind_sent = [min(width, int(count)) if peer != rank else 0 for peer, count in enumerate(self._block_counts)]
        received = min(width, int(self._block_counts[rank]))
        if not width:
            return blind_sent, received, None, None
        peers = [peer for peer in range(size) if peer != rank]  # a rank sends itself nothing: its size stays 0
        sends = [comm.part(self._sizes, peer, 1, peer) for peer in peers]
        receives = [comm.part(self._sizes, size + peer, 1, peer) for peer in peers]
        for sent, blind in zip(self._sent, self._blind):
            sends += [comm.part(sent, self._segments[peer], blind_sent[peer], peer) for peer in peers]
            receives += [comm.part(blind, peer * received, received, peer) for peer in peers]
        return blind_sent, received, (sends, receives), Received(*self._blind, received, size, self._sizes[size:])

    def rest(self):
        """After the caller has read its counters: the requests that did not fit the last exchange's blind part,
        as a `Received` (valid until the next exchange), or None where this rank sends and receives none."""
        size = self.comm.size
        counts = self._counters.host[self._first:self._first + 2 * size].tolist()
        send_counts = [max(count - blind, 0) for count, blind in zip(counts[:size], self._blind_sent)]
        receive_counts = [max(count - self._blind_received, 0) for count in counts[size:]]
        if not any(send_counts) and not any(receive_counts):
            return None
        total = sum(receive_counts)
        if self._received[0].shape[0] < total:
            grown = max(total, 2 * self._received[0].shape[0])
            self._received = tuple(cupy.empty(grown, dtype=array.dtype) for array in self._received)
        received, _ = self.comm.alltoallv(self._sent, np.array(send_counts), np.array(receive_counts),
                                          out=self._received,
                                          send_displacements=self._segments + np.array(self._blind_sent))
        return Received(*received, total, 1)


_TEMPLATES = ("send_touched", "clear_sent")


def load_kernels():
    """Compile this module's kernels (the warm-up's one-rank kernels call it: a run of several ranks then
    compiles nothing inside a timed step)."""
    for name in _TEMPLATES:
        for dtype in _VALUE_TYPES:
            _kernel(name, dtype)


def _kernel(name, dtype):
    return runtime.kernel("requests", f"{name}<{_VALUE_TYPES[np.dtype(dtype)]}>",
                          tuple(f"{template}<{value}>" for template in _TEMPLATES for value in _VALUE_TYPES.values()))
