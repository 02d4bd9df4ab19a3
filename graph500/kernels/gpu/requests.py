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
first ``width`` requests (the blind part: no more than the caller's bound on
any segment), so the owner's kernel takes the requests without the host
knowing how many came. The width of a pair of ranks: ``capacity`` or less
where the bound is smaller, rounded up to a power of two (a few widths,
each one's transfers prepared once; what a captured step always sends); or,
for an exchange that asks it (``wide``) with a bound past the capacity, the
pair's share of this bound times WIDTH_MARGIN, its share being the requests
it sent per unit of the bound in the last such exchange: the SSSP's large
steps send a steady share of their bound (4.5-13% on two GPUs at SCALE
26-27, most steps within a tenth of the step before), so their requests fit
where a fixed part would leave most of them to a second exchange (the BFS's
rare top-down levels vary too much: they keep the fixed part). Both ranks
of a pair know the count behind a share (one sent it, the other received
it), so they agree on the width without a word between them. The sizes
sent and received sit in the caller's `DeviceCounters`, which it reads
after that kernel as it does after every step; `rest` then
moves what did not fit (a segment longer than its width) in a second
exchange between the ranks concerned, whose sizes the host now knows.
Each owner receives at most one request per vertex of its block from each
rank, however many edges reached it, in no particular order.

Data structures: the touched and sent bitmaps (N bits each), staging and the send buffers
(one segment per rank, as long as its block: N vertices and N values), the
blind part's receive buffers (``capacity`` requests per rank), the wide
parts' and the rest's receive buffers (grown to the largest seen, then
reused: nothing is allocated per exchange once a search has run), 2 P
counters.

Tunables: ``capacity`` (BLIND_CAPACITY, 2^16 requests a rank: under 1 MB a
rank sent blind, a few microseconds of NVLink, while most small exchanges
fit in it); ``margin`` (WIDTH_MARGIN 1.25: on the requests of two GPUs'
searches, 2 of 52 large steps at SCALE 26 then needed the second exchange
and 6 of 64 at 27, where the fixed part left 52 and 64, for 1.6x and 1.3x
the requests' bytes; 0: the fixed part only).
"""

import numpy as np

from graph500.kernels.gpu import runtime
from graph500.kernels.gpu.runtime import NULL, cupy, i32, i64

THREADS = 256
BLIND_CAPACITY = 1 << 16
WIDTH_MARGIN = 1.25
WIDTH_GRAIN = 1 << 12  # a wide part's width is a multiple of it
_VALUE_TYPES = {np.dtype(np.uint32): "unsigned int", np.dtype(np.uint64): "unsigned long long"}


class Received:
    """Requests received, in parts: each part ``num_segments`` segments of ``stride`` items in ``vertices`` and
    ``values``, segment s holding its first ``counts[s]`` items (a device array), or every item where ``counts``
    is None. ``parts``: each part's ``(arguments, items)``, the kernels' parameters (``vertices, values, stride,
    num_segments, counts``) and the items they cover (none of no items); ``items``: every part's. No parts: nothing
    was received."""

    def __init__(self, *parts):
        self.parts = [((vertices, values, i64(stride), i32(num_segments), NULL if counts is None else counts),
                       stride * num_segments) for vertices, values, stride, num_segments, counts in parts
                      if stride * num_segments]
        self.items = sum(items for _, items in self.parts)

    def launch(self, kernel, *arguments, leading=()):
        """``kernel`` once a part, a grid of blocks of THREADS for its items, on ``leading``, the part's parameters,
        then ``arguments``."""
        for parameters, items in self.parts:
            kernel((runtime.persistent_blocks(kernel, THREADS, items),), (THREADS,),
                   (*leading, *parameters, *arguments))


class OwnerRequests:
    """Touched vertices and their staged values (``value_dtype``: uint32 or uint64; ``initial``: the value of
    every staging word at first and after `clear`) sent to their owners over ``comm`` (collective: every rank
    exchanges as often). ``counters`` (`runtime.DeviceCounters`) holds the sizes sent and received from
    ``first_counter`` on: `num_counters` of them. ``capacity``: the blind part's requests a rank (default
    BLIND_CAPACITY); ``margin``: a wide exchange's width over the last one's share (default WIDTH_MARGIN; 0: no
    wide exchange)."""

    def __init__(self, comm, blocks, value_dtype, initial, counters, first_counter, capacity=None, margin=None):
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
        self.margin = WIDTH_MARGIN if margin is None else float(margin)
        self._blind = (cupy.empty(max(size * self.capacity, 1), dtype=np.int32),
                       cupy.empty(max(size * self.capacity, 1), dtype=self.value_dtype))
        self._received = (cupy.empty(0, dtype=np.int32), cupy.empty(0, dtype=self.value_dtype))
        self._counters, self._first = counters, first_counter
        self._sizes = counters.device[first_counter:first_counter + 2 * size]  # sent to each rank, received from it
        self._layouts = {}  # a blind part's transfers by width (`transfer`)
        self._blind_sent, self._blind_received = [0] * size, [0] * size  # the last blind part's, each rank's
        self._wide_bound = 0  # the last exchange's bound where it was wide (past the capacity), else 0
        self._shares = None  # the last wide exchange's requests sent to each rank, then from each, per bound
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

    def exchange(self, bound, wide=False):
        """Send the touched vertices to their owners: enqueued, no host round trip. ``bound``: at most that many
        requests go to any one rank (the same on every rank; the edges the step relaxed, say); ``wide``: each
        pair's blind part as wide as the last wide exchange's share predicts (a step the host launches; a
        captured one sends the fixed part). Returns the `Received` blind part (valid until the next exchange; no
        parts where ``bound`` is 0); ``touched`` is cleared. After it the caller reads its counters and calls
        `rest`."""
        stream = cupy.cuda.get_current_stream()
        cupy.cuda.runtime.memsetAsync(self._sizes.data.ptr, 0, self._sizes.nbytes, stream.ptr)
        self._send((self._grid,), (THREADS,),
                   (self.touched, self._sent_vertices, i64(self._num_words), i64(self._block), self.staging,
                    *self._sent, self._sizes))
        self._wide_bound = int(bound) if wide and self.margin > 0 and bound > self.capacity else 0
        widths = self._wide_widths(self._wide_bound)
        return self.transfer(bound) if widths is None else self._wide_transfer(*widths)

    def transfer(self, width):
        """The blind exchange of what the send buffers hold: each rank's size and the first ``width`` requests of
        its segment (rounded up to a power of two, at most ``capacity``: the same on every rank), enqueued as one
        NCCL group of transfers whose parts, addresses of the fixed buffers, are prepared once per width. The
        `Received` blind part (no parts where ``width`` is 0)."""
        width = self._fixed_width(width)
        layout = self._layouts.get(width)
        if layout is None:
            layout = self._layouts[width] = self._blind_layout(width)
        self._blind_sent, self._blind_received, transfers, received = layout
        if transfers is not None:
            self.comm.transfers(*transfers)
        return received

    def _fixed_width(self, bound):
        """The fixed blind part's width for ``bound``: at most ``capacity``, a power of two (or 0)."""
        width = min(self.capacity, int(bound))
        return min(self.capacity, 1 << (width - 1).bit_length()) if width else 0

    def _fixed_widths(self, width):
        """``(sent to each rank, received from each)``: each pair's items in a fixed blind part of ``width``."""
        widths = [width] * self.comm.size
        return blind_widths(self.comm.rank, self._block_counts, widths, widths)

    def _blind_layout(self, width):
        """``(sent to each rank, received from each, (sends, receives), Received)`` of a blind part of ``width``."""
        size = self.comm.size
        blind_sent, blind_received = self._fixed_widths(width)
        if not width:
            return blind_sent, blind_received, None, Received()
        received = max(blind_received)  # from every peer alike
        receive_at = [peer * received for peer in range(size)]
        sends, receives = self._parts(blind_sent, blind_received, self._blind, receive_at)
        return (blind_sent, blind_received, (sends, receives),
                Received((*self._blind, received, size, self._sizes[size:])))

    def _parts(self, sent, received, buffers, receive_at):
        """``(sends, receives)``: the `transfers` of an exchange's blind part: the sizes, then ``sent[peer]``
        requests of each peer's segment, and ``received[peer]`` of each peer's into ``buffers`` at
        ``receive_at[peer]``."""
        size, rank, comm = self.comm.size, self.comm.rank, self.comm
        peers = [peer for peer in range(size) if peer != rank]  # a rank sends itself nothing: its size stays 0
        sends = [comm.part(self._sizes, peer, 1, peer) for peer in peers]
        receives = [comm.part(self._sizes, size + peer, 1, peer) for peer in peers]
        for send_buffer, receive_buffer in zip(self._sent, buffers):
            sends += [comm.part(send_buffer, self._segments[peer], sent[peer], peer) for peer in peers]
            receives += [comm.part(receive_buffer, receive_at[peer], received[peer], peer) for peer in peers]
        return sends, receives

    def _wide_widths(self, bound):
        """``(sent to each rank, received from each)``: each pair's items in a wide exchange of ``bound``
        (`predicted_widths` from the last wide exchange's shares); None where they are the fixed part's."""
        if not bound or self._shares is None:
            return None
        size, fixed = self.comm.size, self._fixed_width(bound)
        widths = predicted_widths(self._shares, bound, fixed, self.margin)
        wide = blind_widths(self.comm.rank, self._block_counts, widths[:size], widths[size:])
        return None if wide == self._fixed_widths(fixed) else wide

    def _wide_transfer(self, sent, received):
        """A wide blind part (``sent`` to each rank, ``received`` from each), received one peer after another into
        the grown receive buffers; its transfers made for it. The `Received`: a part a peer."""
        size = self.comm.size
        receive_at = np.concatenate([[0], np.cumsum(received[:-1])]).tolist()
        self._grow_received(sum(received))
        self.comm.transfers(*self._parts(sent, received, self._received, receive_at))
        self._blind_sent, self._blind_received = sent, received
        return Received(*((self._received[0][receive_at[peer]:], self._received[1][receive_at[peer]:],
                           received[peer], 1, self._sizes[size + peer:size + peer + 1])
                          for peer in range(size) if received[peer]))

    def _grow_received(self, items):
        """The wide parts' and the rest's receive buffers, at least ``items`` long (grown at least twofold)."""
        if self._received[0].shape[0] < items:
            grown = max(items, 2 * self._received[0].shape[0])
            self._received = tuple(cupy.empty(grown, dtype=array.dtype) for array in self._received)

    def rest(self):
        """After the caller has read its counters: the requests that did not fit the last exchange's blind part,
        as a `Received` (valid until the next exchange), or None where this rank sends and receives none. A wide
        exchange's counts become the next one's shares."""
        size = self.comm.size
        counts = self._counters.host[self._first:self._first + 2 * size].tolist()
        if self._wide_bound:
            self._shares = [count / self._wide_bound for count in counts]
        send_counts = [max(count - blind, 0) for count, blind in zip(counts[:size], self._blind_sent)]
        receive_counts = [max(count - blind, 0) for count, blind in zip(counts[size:], self._blind_received)]
        if not any(send_counts) and not any(receive_counts):
            return None
        total = sum(receive_counts)
        self._grow_received(total)
        received, _ = self.comm.alltoallv(self._sent, np.array(send_counts), np.array(receive_counts),
                                          out=self._received,
                                          send_displacements=self._segments + np.array(self._blind_sent))
        return Received((*received, total, 1, None))


def blind_widths(rank, block_counts, send_widths, receive_widths):
    """``(sent to each rank, received from each)``: the items of ``rank``'s blind part with each peer, where the
    pair's width is ``send_widths[peer]`` and ``receive_widths[peer]``: at most the receiver's block (a segment
    holds no more), none to or from itself."""
    own = int(block_counts[rank])
    sent = [min(int(width), int(count)) if peer != rank else 0
            for peer, (width, count) in enumerate(zip(send_widths, block_counts))]
    received = [min(int(width), own) if peer != rank else 0 for peer, width in enumerate(receive_widths)]
    return sent, received


def predicted_widths(shares, bound, fixed, margin):
    """The widths of a wide exchange of ``bound``: each pair's ``share`` (its last wide exchange's requests per
    edge of that bound: to each rank, then from each) of this bound times ``margin``, a multiple of WIDTH_GRAIN, at
    most the bound, at least the fixed part's width ``fixed``. Both ranks of a pair hold the same share (one sent
    the requests, the other received them), so they agree on its width."""
    return [max(fixed, min(bound, -(-int(share * bound * margin) // WIDTH_GRAIN) * WIDTH_GRAIN)) for share in shares]


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
