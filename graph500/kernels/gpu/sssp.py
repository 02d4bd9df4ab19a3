"""Kernel 3 on the GPU: delta-stepping single-source shortest paths.

Algorithm: delta-stepping (Meyer and Sanders, "Delta-stepping: a
parallelizable shortest path algorithm", J. Algorithms 2003), bucketed as on
GPUs by Davidson, Baxter, Garland, Owens ("Work-efficient parallel GPU
methods for single-source shortest paths", IPDPS 2014). Distances are cut
into buckets ``[k * delta, (k + 1) * delta)``, settled in increasing order:

1. Collect (``collect_bucket``, one pass over the vertices): the bucket's
   vertices form the first light frontier and the bucket's member list (a
   queue keeps only vertices with edges of its kind, as the edge-parallel
   expansion requires); the same pass finds the least distance past the
   bucket, so that empty buckets are skipped in one step.
2. Light phase: relax the light edges (weight <= delta) of the frontier,
   edge-parallel with the BFS's load-balanced expansion
   (``for_each_frontier_edge``); a vertex whose distance drops inside the
   bucket joins the next frontier (once per iteration) and the members (once
   per bucket). Repeat until the frontier is empty: the bucket is settled.
3. Heavy phase: relax the heavy edges of the members once. A heavy edge
   (w > delta) from a vertex of the bucket lands past the bucket, so it
   never adds to it.

A vertex's distance and parent are one 64-bit word, ``float32 bits << 32 |
parent``: a relaxation is one ``atomicMin`` on it, so distance and parent
always agree, and the stored distance is exactly ``dist[parent] + w`` in
float32, the validator's check. A relaxation is attempted only when it
lowers the distance (checked on a fresh L2 read first), so a parent is never
replaced by another at the same distance: parent pointers follow the order
in which distances were set and cannot form a cycle, also along edges whose
weight vanishes in float32 rounding.

Light and heavy edges are split once, at construction (charged to kernel 1):
``split_light_heavy`` reorders every row of the graph *in place*, light edges
first, and records where the heavy ones begin (``light_end``). The graph
stays the same graph (every row keeps its entries, weights with their
neighbours), but its rows are no longer sorted by neighbour: no extra copy of
the edges at SCALE 26, where the device could not hold one.

Host work: one copy of five counters per collect and per light iteration
(frontier size and light edges, members and their heavy edges, the least
distance past the bucket); no Python loop over vertices or edges.

Settled vertices: each collect, which reads every distance anyway, sets a
bit for every vertex below the bucket (final distances); relaxations test
that bitmap (N/8 bytes, in L2) before reading the target's state from
memory, which most edges into the settled part of the graph then skip.

Data structures (N vertices): ``state`` (uint64), ``settled`` (N/8 bytes),
``light_end`` (int64), three queues (frontier, next frontier, members; int32), stamps of the last
iteration and bucket each vertex joined (int32; never cleared: ids grow over
the kernel's life), prefix sums (uint64).

Tunables: ``delta`` (DELTA; Graph500 weights are uniform in [0, 1)),
``trace`` (keep ``self.trace`` of the last search: buckets, light
iterations, edges relaxed and, timed with CUDA events, the seconds of the
collect, light and heavy phases; off for timed runs).
"""

import numpy as np

from graph500.kernels import register
from graph500.kernels.gpu import runtime
from graph500.kernels.gpu.frontier import PrefixSums
from graph500.kernels.gpu.runtime import cupy, i32, i64, u64

DELTA = 0.05  # measured on an H100 at SCALE 22-26: 0.05 to 0.1 best (benchmarks/gpu.py)

THREADS = 256  # common.cuh's BLOCK_THREADS
EXPAND_TILE = 256 * 4  # common.cuh's EXPAND_TILE
FRONTIER_SIZE, FRONTIER_EDGES, MEMBERS_SIZE, MEMBERS_EDGES, BEYOND = range(5)  # sssp.cu's counters
NUM_COUNTERS = 5
_ALL_ONES = 0xFFFFFFFF


def _kernel(name):
    return runtime.kernel("sssp", name)


@register(default=True)
class DeltaSteppingSSSP:
    """Bucketed delta-stepping with edge-parallel relaxations and packed (distance, parent) atomics."""

    name = "gpu-delta-stepping"
    kind = "sssp"
    backend = "gpu"

    def __init__(self, graph, *, delta=DELTA, trace=False):
        if graph.weights is None:
            raise ValueError("delta-stepping needs a weighted graph")
        if not delta > 0:
            raise ValueError(f"delta must be positive, got {delta}")
        self.graph = graph
        self.delta = np.float32(delta)
        n = graph.num_vertices
        self._light_end = cupy.empty(n, dtype=np.int64)
        split = _kernel("split_light_heavy")
        split((runtime.persistent_blocks(split, THREADS, n),), (THREADS,),
              (i64(n), graph.offsets, graph.neighbors, graph.weights, self.delta, self._light_end))
        self._row_end = graph.offsets[1:]
        self._state = cupy.empty(n, dtype=np.uint64)
        self._settled = cupy.empty((n + 31) // 32, dtype=np.uint32)
        self._queue = cupy.empty(max(n, 1), dtype=np.int32)
        self._next_queue = cupy.empty(max(n, 1), dtype=np.int32)
        self._members = cupy.empty(max(n, 1), dtype=np.int32)
        self._frontier_stamp = cupy.full(n, -1, dtype=np.int32)
        self._member_stamp = cupy.full(n, -1, dtype=np.int32)
        self._prefix_sums = PrefixSums(n, graph.num_edges)
        self._counters = runtime.DeviceCounters(NUM_COUNTERS)
        self._frontier_id = 0
        self._bucket_id = 0
        self.record_trace = trace
        self.trace = {}
        cupy.cuda.get_current_stream().synchronize()  # precomputation ends with the constructor

    def search(self, root):
        """``(parents, distances)``: int32 and float32 CuPy arrays; -1 and inf where unreached."""
        n = self.graph.num_vertices
        start = _kernel("start_search")
        start((runtime.persistent_blocks(start, THREADS, n),), (THREADS,),
              (i32(root), i64(n), self._state, self._settled))
        low = np.float32(0)
        buckets = light_iterations = relaxed = 0
        timer = runtime.PhaseTimer(self.record_trace)
        while True:
            high = self._bucket_end(low)
            timer.start("collect_seconds")
            counts = self._collect(low, high)
            if not counts[FRONTIER_SIZE] and not counts[MEMBERS_SIZE]:
                if not counts[BEYOND]:
                    break
                low = np.uint32(_ALL_ONES - counts[BEYOND]).view(np.float32)
                continue
            buckets += 1
            size, edges = counts[FRONTIER_SIZE], counts[FRONTIER_EDGES]
            timer.start("light_seconds")
            while size:
                relaxed += edges
                counts = self._relax_light(size, edges, high)
                size, edges = counts[FRONTIER_SIZE], counts[FRONTIER_EDGES]
                light_iterations += 1
            timer.start("heavy_seconds")
            relaxed += counts[MEMBERS_EDGES]
            self._relax(self._members, counts[MEMBERS_SIZE], counts[MEMBERS_EDGES], self._light_end,
                        self._row_end, high, self._queue)
            low = high
        self.trace = {"buckets": buckets, "light_iterations": light_iterations, "relaxed_edges": relaxed,
                      **timer.totals()}
        return self._result()

    def _bucket_end(self, low):
        high = np.float32(low + self.delta)
        return high if high > low else np.nextafter(low, np.float32(np.inf))

    def _collect(self, low, high):
        """Start the bucket [low, high): its vertices become the frontier and the members. Host counts."""
        n = self.graph.num_vertices
        self._bucket_id += 1
        self._counters.reset()
        collect = _kernel("collect_bucket")
        collect((runtime.persistent_blocks(collect, THREADS, n),), (THREADS,),
                (i64(n), self._state, low, high, i32(self._bucket_id), self.graph.offsets, self._light_end,
                 self._queue, self._members, self._member_stamp, self._settled, self._counters.device))
        return [int(c) for c in self._counters.read()]

    def _relax_light(self, size, edges, high):
        """One light iteration over the frontier; the next frontier becomes the frontier. Host counts."""
        self._counters.reset(MEMBERS_SIZE)  # frontier counts only: the members' accumulate over the bucket
        self._relax(self._queue, size, edges, self.graph.offsets, self._light_end, high, self._next_queue)
        self._queue, self._next_queue = self._next_queue, self._queue
        return [int(c) for c in self._counters.read()]

    def _relax(self, queue, size, edges, row_begin, row_end, high, next_queue):
        """Relax the edges [row_begin[v], row_end[v]) of the queue's vertices (``edges`` of them)."""
        if not edges:
            return
        graph = self.graph
        self._frontier_id += 1
        edge_end, tile_first = self._prefix_sums.of_edge_counts(queue, size, row_begin, row_end, edges)
        _kernel("relax_edges")(
            (runtime.blocks_for(edges, EXPAND_TILE),), (THREADS,),
            (queue, edge_end, tile_first, i32(size), u64(edges), row_begin, graph.neighbors, graph.weights, high,
             i32(self._frontier_id), i32(self._bucket_id), graph.offsets, self._light_end, self._settled,
             self._state, self._frontier_stamp, self._member_stamp, next_queue, self._members, self._counters.device))

    def _result(self):
        n = self.graph.num_vertices
        parents = cupy.empty(n, dtype=np.int32)
        distances = cupy.empty(n, dtype=np.float32)
        split = _kernel("split_state")
        split((runtime.persistent_blocks(split, THREADS, n),), (THREADS,), (i64(n), self._state, parents, distances))
        return parents, distances
