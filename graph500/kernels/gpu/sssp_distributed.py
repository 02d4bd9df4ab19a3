"""Kernel 3, ``gpu-distributed-delta-stepping``: delta-stepping SSSP over the GPUs of P ranks.

Algorithm: Meyer and Sanders' delta-stepping ("Δ-stepping: a parallelizable
shortest path algorithm", J. Algorithms 2003) on the 1D vertex partition
(`graph500.partition.VertexBlocks`), with the relaxation requests reduced
per target on the sending GPU before they are exchanged, as in
docs/multi-gpu.md. Rank r owns a block of vertices and their rows
(neighbours global) in its GPU's memory, and the state of its vertices: one
64-bit word each, distance and parent (``state_of`` in ``common.cuh``: an
atomic minimum lowers both together).

Buckets of width ``delta``, one at a time, [low, low + delta):

1. The bucket's frontier: the rank's vertices at a distance in it
   (``bucket_frontier``, one pass over the block's states).
2. A round: each rank relaxes every edge of its frontier vertices
   (``relax_to_staging``, edge-parallel, the load-balanced expansion of
   ``common.cuh``); a candidate (distance, parent) for neighbour v goes to
   v's word in the rank's staging array of all N vertices when it is less
   (an atomic minimum), and marks v in a touched bitmap. The touched
   vertices, in label order, are grouped by owner already (blocks are
   contiguous): a prefix sum of the bitmap's words gives each owner's count,
   their staging words are taken as the requests (``take_requests``, which
   resets them), and one alltoallv sends (vertex, word) pairs to their
   owners: at most one request per vertex and sending rank a round, however
   many edges reached it. Each owner applies its requests with an atomic
   minimum (``apply_requests``); a vertex whose state dropped to a distance
   inside the bucket joins the next frontier once. Rounds repeat until no
   rank's frontier has a vertex: the bucket is settled.
3. The next bucket starts at the least distance past the bucket (each rank's
   least, from a pass over its states, then an allreduce), rounded down to a
   multiple of delta: empty buckets are skipped.

Every edge of a frontier vertex is relaxed in every round it is in the
frontier (no light/heavy split yet, unlike the single-GPU kernel), and every
request crosses the exchange, to the rank itself included. At P = 1 (a whole
graph, a one-rank communicator) the exchange is a copy.

Data structures per GPU (N vertices, n owned, m row entries): the rows with
weights (12 bytes an entry); states (uint64, n), frontier queues and stamps
(int32, n each); staging words (uint64, N), the touched bitmap (N bits), the
touched vertices and their requests (12 bytes per vertex of N, the largest a
round can send); prefix sums (uint64, max(n, N / 32)).

Tunables: ``delta`` (default: the single-GPU kernel's ``delta_for`` the
graph's largest degree, with DELTA_SCALE 25.5: the bucket width this kernel
was measured with on two GPUs; the single-GPU kernel's narrower default
comes with its Bellman-Ford tail, which this kernel lacks).
"""

import math

import numpy as np

from graph500.kernels import register
from graph500.kernels.gpu import runtime
from graph500.kernels.gpu.bfs import bitmap_to_queue
from graph500.kernels.gpu.bfs_distributed import device_part
from graph500.kernels.gpu.frontier import EXPAND_TILE, PrefixSums
from graph500.kernels.gpu.runtime import cupy, i32, u64
from graph500.kernels.gpu.sssp import delta_for

DELTA_SCALE = 25.5

THREADS = 256  # common.cuh's BLOCK_THREADS
FRONTIER_SIZE, FRONTIER_EDGES, BEYOND = range(3)  # sssp_distributed.cu's counters
UNSENT = np.uint64(0xFFFFFFFFFFFFFFFF)
UNREACHED = np.uint64(0x7F800000FFFFFFFF)  # common.cuh's UNREACHED


@register(distributed_default=True)
class DistributedDeltaSteppingSSSP:
    """Delta-stepping over the ranks of ``graph.comm``, one GPU each, requests reduced per target."""

    name = "gpu-distributed-delta-stepping"
    kind = "sssp"
    backend = "gpu"
    distributed = True

    def __init__(self, graph, *, delta=None):
        self.graph = graph = device_part(graph, self.name)
        self.comm = comm = graph.comm
        n = graph.num_local
        degrees = cupy.diff(graph.offsets)
        max_degree = int(comm.allreduce(int(degrees.max()) if n else 0, "max"))
        self.delta = float(np.float32(delta_for(max_degree, DELTA_SCALE) if delta is None else delta))
        word_counts = [(graph.blocks.count(rank) + 31) // 32 for rank in range(comm.size)]
        self._num_words = sum(word_counts)
        self._block_last_word = cupy.asarray(np.cumsum(word_counts) - 1)  # each rank's block's last word
        self._state = cupy.empty(max(n, 1), dtype=np.uint64)
        self._stamp = cupy.full(max(n, 1), -1, dtype=np.int32)
        self._iteration = 0  # stamps are never cleared: ids grow over the kernel's life
        self._queue = cupy.empty(max(n, 1), dtype=np.int32)
        self._next_queue = cupy.empty(max(n, 1), dtype=np.int32)
        self._staging = cupy.full(max(graph.num_vertices, 1), UNSENT, dtype=np.uint64)
        self._touched = cupy.zeros(self._num_words, dtype=np.uint32)
        self._touched_vertices = cupy.empty(max(graph.num_vertices, 1), dtype=np.int32)
        self._requests = cupy.empty(max(graph.num_vertices, 1), dtype=np.uint64)
        self._prefix_sums = PrefixSums(max(n, self._num_words), graph.num_edges)
        self._row_end = graph.offsets[1:]
        self._counters = runtime.DeviceCounters(3)
        self._scan_grid = runtime.persistent_blocks(runtime.kernel("sssp_distributed", "bucket_frontier"), THREADS,
                                                    n)
        cupy.cuda.get_current_stream().synchronize()  # precomputation ends with the constructor

    def search(self, root):
        """``(parents, distances)`` of this rank's vertices (int32 global labels, -1 unreached; float32, inf
        unreached) from ``root`` (collective: every rank passes the same root)."""
        graph = self.graph
        root = int(root)
        self._state.fill(UNREACHED)
        local_root = root - graph.first_vertex
        size = edges = 0
        if 0 <= local_root < graph.num_local:
            self._state[local_root] = np.uint64(root)  # distance 0.0, parent root
            self._queue[0] = local_root
            size, edges = 1, int(graph.offsets[local_root + 1] - graph.offsets[local_root])
        high = np.float32(self.delta)
        while True:
            while self._global_sum(size):
                self._relax(size, edges)
                size, edges = self._exchange(high)
            least = self.comm.allreduce(self._least_from(high), "min")
            if math.isinf(least):
                break
            low, high = self._bucket(least)
            size, edges = self._frontier_between(low, high)
        return self._result()

    def _global_sum(self, count):
        return int(self.comm.allreduce(np.array([count], dtype=np.int64), "sum")[0])

    def _bucket(self, least):
        """``(low, high)``, float32: the bucket of width delta, aligned to a multiple of it, that holds
        ``least`` (float32 rounding never leaves ``least`` outside)."""
        low = min(np.float32(math.floor(least / self.delta) * self.delta), np.float32(least))
        high = np.float32(low + np.float32(self.delta))
        if high <= least:
            high = np.nextafter(np.float32(least), np.float32(np.inf))
        return low, high

    def _relax(self, size, edges):
        """Relax the edges of the frontier queue's ``size`` vertices (``edges`` of them) into staging."""
        graph = self.graph
        if not edges:
            return
        edge_end, tile_first = self._prefix_sums.of_edge_counts(self._queue, size, graph.offsets, self._row_end,
                                                                edges)
        runtime.kernel("sssp_distributed", "relax_to_staging")(
            (runtime.blocks_for(edges, EXPAND_TILE),), (THREADS,),
            (self._queue, edge_end, tile_first, i32(size), u64(edges), graph.offsets, graph.neighbors,
             graph.weights, self._state, i32(graph.first_vertex), self._staging, self._touched))

    def _exchange(self, high):
        """Send the touched vertices' requests to their owners, apply those received; ``(size, edges)`` of the
        next frontier (vertices whose state dropped below ``high``)."""
        graph = self.graph
        word_end = self._prefix_sums.of_populations(self._touched, self._num_words)
        sent_through = word_end[self._block_last_word].get()  # requests to ranks 0 .. r, for each r
        send_counts = np.diff(sent_through, prepend=0).astype(np.int64)
        total = int(sent_through[-1])
        if total:
            bitmap_to_queue(self._touched, self._num_words, word_end, self._touched_vertices)
            runtime.kernel("sssp_distributed", "take_requests")(
                (runtime.blocks_for(total, THREADS),), (THREADS,),
                (self._touched_vertices, i32(total), self._staging, self._requests))
            self._touched.fill(0)
        (vertices, requests), received_counts = self.comm.alltoallv(
            (self._touched_vertices[:total], self._requests[:total]), send_counts)
        received = int(received_counts.sum())
        self._counters.reset()
        self._iteration += 1
        if received:
            apply = runtime.kernel("sssp_distributed", "apply_requests")
            apply((runtime.persistent_blocks(apply, THREADS, received),), (THREADS,),
                  (vertices, requests, i32(received), i32(graph.first_vertex), np.float32(high),
                   i32(self._iteration), graph.offsets, self._state, self._stamp, self._next_queue,
                   self._counters.device))
        counts = self._counters.read()
        self._queue, self._next_queue = self._next_queue, self._queue
        return int(counts[FRONTIER_SIZE]), int(counts[FRONTIER_EDGES])

    def _scan_states(self, low, high):
        """Queue the rank's vertices at a distance in [low, high); the counters say how many, their edges and
        the least distance past ``high``."""
        self._counters.reset()
        runtime.kernel("sssp_distributed", "bucket_frontier")(
            (self._scan_grid,), (THREADS,),
            (i32(self.graph.num_local), self._state, np.float32(low), np.float32(high), self.graph.offsets,
             self._queue, self._counters.device))
        return self._counters.read()

    def _least_from(self, bound):
        """The least finite distance at or past ``bound`` among the rank's vertices (inf: none)."""
        beyond = int(self._scan_states(bound, bound)[BEYOND])
        return float(np.uint32(0xFFFFFFFF - beyond).view(np.float32)) if beyond else math.inf

    def _frontier_between(self, low, high):
        counts = self._scan_states(low, high)
        return int(counts[FRONTIER_SIZE]), int(counts[FRONTIER_EDGES])

    def _result(self):
        n = self.graph.num_local
        parents = cupy.empty(n, dtype=np.int32)
        distances = cupy.empty(n, dtype=np.float32)
        split = runtime.kernel("sssp", "split_state")
        split((runtime.persistent_blocks(split, THREADS, n),), (THREADS,),
              (runtime.i64(n), runtime.i64(n), runtime.i32(-1), self._state, runtime.NULL, runtime.NULL, parents,
               distances))
        return parents, distances
