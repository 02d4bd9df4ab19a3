"""Kernel 3 on the GPU: delta-stepping single-source shortest paths.

Algorithm: delta-stepping (Meyer and Sanders, "Delta-stepping: a
parallelizable shortest path algorithm", J. Algorithms 2003), bucketed as on
GPUs by Davidson, Baxter, Garland, Owens ("Work-efficient parallel GPU
methods for single-source shortest paths", IPDPS 2014), with the push-pull
heavy phase and the Bellman-Ford tail of Chakaravarthy, Checconi, Petrini,
Sabharwal ("Scalable single source shortest path algorithms for massively
parallel systems", IPDPS 2014). Distances are cut into buckets
``[k * delta, (k + 1) * delta)``, settled in increasing order:

1. Collect (``collect_bucket``, one pass over the vertices): the bucket's
   vertices form the first light frontier (those with light edges) and the
   bucket's members (those with edges); the same pass counts the settled and
   the reached vertices and finds the least distance past the bucket, so
   that empty buckets are skipped in one step.
2. Light phase: relax the light edges (weight <= delta) of the frontier,
   edge-parallel with the BFS's load-balanced expansion
   (``for_each_frontier_edge``), but only those whose candidate lands inside
   the bucket (Chakaravarthy et al.'s inner short edges): the others wait for
   the heavy phase, where they are relaxed once, from the final distance,
   instead of each time a frontier vertex's distance drops again inside the
   bucket (about five times per vertex in the hub core at SCALE 22-24). A
   vertex whose distance drops joins the next
   frontier (once per iteration) and the members (once per bucket). Repeat
   until the frontier is empty: the bucket is settled.
3. Heavy phase: the heavy edges (w > delta) of the bucket and the light ones
   left by step 2 land past the bucket, so they never add to it. Push
   (``relax_edges``) relaxes them from the members; pull (``pull_bucket``)
   has every vertex past the bucket take its least candidate from its
   neighbours in the bucket (those below it have had their heavy phase).
   Rows sorted by weight let a pull stop early: a candidate through an edge
   of weight w is at least ``low + w``, so a vertex reads its row only up to
   the first edge with ``low + w`` at or above its best distance so far. Push
   reads every edge of the members; the first bucket, the hub core of a
   Kronecker graph, holds most edges of the graph, and its pull reads a few
   edges of each vertex past it (SCALE 26: 6.6 ms when a pull read whole
   rows, 2.3 ms with the early stop).
4. Tail: once the settled vertices (the members of the buckets done) hold
   at least ``tail_edges`` of the graph's edges, that is once the hub core
   is settled, everything after is one bucket ``[low, inf)`` relaxed
   Bellman-Ford style (every edge of the frontier; a vertex joins again
   whenever its distance drops): the long tail of buckets over the sparse
   periphery, each a collect, a few light iterations and a push, each with
   its host reads, becomes a few iterations. So does a bucket whose end
   rounds to its start in float32 (there a heavy edge could land inside the
   bucket). Counting edges, not vertices, keeps a search from a vertex far
   from the hubs out of the tail until the core is behind it.

On several GPUs (``sssp_distributed.py``) this engine runs on each rank's
block of a `PartitionedGraph`: a relaxation reaching another block's vertex
leaves its candidate to the exchange (`graph500.kernels.gpu.requests`), the
owner offers it to the vertex's state (``offer_requests``, as a local
relaxation), the bucket's counts are every rank's, and a pull reads every
rank's distances, gathered first.

A vertex's distance and parent are one 64-bit word, ``float32 bits << 32 |
parent``: a relaxation is one ``atomicMin`` on it, so distance and parent
always agree, and the stored distance is exactly ``dist[parent] + w`` in
float32, the validator's check. A relaxation is attempted only when it
lowers the distance (checked on a fresh L2 read first), so a parent is never
replaced by another at the same distance: parent pointers follow the order
in which distances were set and cannot form a cycle, also along edges whose
weight vanishes in float32 rounding. A pull writes a vertex past the bucket
from its own thread, reading only final distances.

The rows are sorted by weight once, at construction (charged to kernel 1):
``sort_rows_by_weight`` sorts every row of the graph *in place* (neighbours
with their weights), so the light edges (weight <= delta) come first and
``light_end`` records where the heavy ones begin. The graph stays the same
graph, but its rows are no longer sorted by neighbour (``rows_by_weight``
says so): no extra copy of the edges and weights. The BFS, whose bottom-up
scan finds a parent sooner in rows that list the hubs first, keeps its own
copy of the neighbours in label order where memory allows (``gpu/bfs.py``:
on the weight-sorted rows it was 1.058x slower at SCALE 26).

A degree-ordered graph (the backend's kernel 1, ``graph.order`` set) is
searched under its own labels: ``start_search`` translates the root, and
``split_state`` writes the outputs under the input's labels (each input
label gathers its state through ``new_label``, its parent through
``order``). The hub core's states then sit together: 56.3 to 49.4 ms a
search at SCALE 26 on an H100 (16 keys, medians). Its vertices without
edges come last and are never reached, so the passes over vertices (start,
collect, pull) stop at the last vertex with edges (``filled``); the outputs
give the others no parent and an infinite distance without reading a state.

Host work: one copy of five counters per collect and per light iteration
(frontier size and edges, members and their edges, the least distance past
the bucket); no Python loop over vertices or edges. Push or pull is decided
on the host from those counts: pull when the members' edges exceed
``pull_ratio`` times the edges not yet settled (all edges less those of this
and earlier buckets' members) plus one per vertex with edges. That sum is
what a pull would read without its early stop; with it, a pull reads far
less, hence a ratio well below 1.

Where a search's time goes (SCALE 26, H100, 8 keys, 23.7 ms a search; one
traced search): the hub core's bucket, 29 light iterations relaxing about
100 M light edges (each of its 25 M light edges about four times:
Bellman-Ford inside the bucket), 12 ms; two pulls (the hub core's bucket and
the next) 3.1 ms; the tail 6.8 ms (its first iteration every reached vertex
past the core, 186 M edges); collects 1.1 ms. Before the early stop, the
hub core's pull took 6.6 ms and the next bucket's push 3.1 ms (30-32 ms a
search). ``relax_edges`` waits on memory (Nsight Compute at SCALE 24: 35-56%
L2 hits, 37% of DRAM bandwidth, long-scoreboard stalls 57-76% of its cycles
at 85% occupancy; on the weight-sorted rows, one key, H100: 33 launches,
5.0 ms a search, 1105 GB/s; the pulls 0.66 ms at 66% of the copy rate).
Nsight Compute cannot profile a search at SCALE 26: its launches' grids
follow frontier sizes that vary with timing, so an application replay's
passes do not match, and replaying each of its launches does not fit a
10-minute call; the CUDA-event trace above stands for it.

Data structures (N vertices): the graph's rows sorted by weight, ``state``
(uint64), ``light_end`` (int64), three queues (frontier, next frontier,
members; int32), stamps of the last iteration and bucket each vertex joined
(int32; never cleared: ids grow over the kernel's life), prefix sums
(uint64).

Tunables: ``delta`` (default: ``delta_for`` the graph's largest degree,
``DELTA_SCALE / sqrt(max_degree)``; Graph500 weights are uniform in [0, 1)),
``delta_scale`` (DELTA_SCALE, that formula's numerator), ``pull_ratio``
(PULL_RATIO), ``tail_edges`` (TAIL_EDGES; 0: the tail from the second
bucket on, above 1: no tail),
``trace`` (time the phases of a search with CUDA events; off for timed
runs). ``self.summary`` holds the last search's buckets, light and tail
iterations, edges read by the light, tail and push phases, pulls and, when
timed, the seconds of the collect, light, push, pull and tail phases and, on several ranks, of the
exchanges.
"""

import numpy as np

from graph500.kernels import register
from graph500.kernels.gpu import runtime
from graph500.kernels.gpu.build import filled_vertices
from graph500.kernels.gpu.frontier import PrefixSums
from graph500.kernels.gpu.requests import OwnerRequests
from graph500.kernels.gpu.runtime import cupy, i32, i64, u64
from graph500.kernels.graph import PartitionedGraph

# delta = DELTA_SCALE / sqrt(largest degree). On an H100, degree-ordered graphs, 16 keys, 3 interleaved rounds
# (docs/gpu-measurements.md, item 10), the best delta fell as the graph grew: SCALE 24 0.035 (1.03x over 0.05,
# 0.025 0.99x), SCALE 26 0.025 (1.16x over 0.05; 0.02 and 0.015 1.06x and 1.04x over 0.035, 0.025 1.07x), SCALE
# 27 0.02 (1.08x over 0.035; 0.025 1.05x); the largest degree grows about 1.6x a SCALE (65 k at SCALE 20, 163 k at
# 22), so 25.5 / sqrt(degree) gives about 0.04, 0.025 and 0.02 there. Before degree ordering, at SCALE 24: delta
# 0.035-0.07 and pull ratios 0.5-2 within the noise. Then the tail started once the settled vertices were 70%
# of the reached ones, and a search ran some 15 buckets at SCALE 26, all but 2 or 3 of them after the hub core,
# each a collect, 2-4 light iterations and a push (benchmarks/gpu_sssp_trace.py). Starting the tail once the
# settled vertices hold half the edges, with half the bucket width (12.75), interleaved against that (H100, 32
# keys, 3 rounds; docs/gpu-measurements.md, item 15): 1.22x, 1.38x, 1.38x, 1.25x at SCALE 20, 22, 24, 26;
# tail_edges 0.3 and 0.7 within 0.03 of 0.5; delta scale 18 within 0.06 of 12.75.
# Pull ratio: once a pull stopped early in rows sorted by weight, pulling the bucket after the hub core's too
# (instead of pushing its 124 M edges at SCALE 26) paid: ratios 0.1 / 0.2 / 0.35 / 0.5 against 1 (H100, 32
# keys, 3 interleaved rounds; gpu_variants.py): SCALE 26 1.14 / 1.16 / 1.12 / 1.14, SCALE 24 1.07 / 1.07 /
# 1.04 / 1.06, SCALE 22 1.03 / 1.01 / 0.90 / 1.03, SCALE 20 0.94 / 1.04 / 1.03 / 1.03 (spreads up to 0.3 at
# SCALE 20 and 22).
DELTA_SCALE = 12.75
PULL_RATIO = 0.2
TAIL_EDGES = 0.5

THREADS = 256  # common.cuh's BLOCK_THREADS
EXPAND_TILE = 256 * 4  # common.cuh's EXPAND_TILE
FRONTIER_SIZE, FRONTIER_EDGES, MEMBERS_SIZE, MEMBERS_EDGES, BEYOND = range(5)  # sssp.cu's counters
NUM_COUNTERS = 5
INFINITY = np.float32(np.inf)
SORT_ENTRIES = 1 << 26  # entries of the graph sorted at a time by sort_rows_by_weight
_ALL_ONES = 0xFFFFFFFF
UNSENT = 0xFFFFFFFFFFFFFFFF  # a staging word without a candidate: above every state word
_TRACE_COUNTS = ("buckets", "light_iterations", "tail_iterations", "relaxed_edges", "pulls")


def _kernel(name):
    return runtime.kernel("sssp", name)


def sort_rows_by_weight(graph, entries_per_sort=SORT_ENTRIES):
    """Sort every row of the graph by weight, in place (neighbours with their weights; ties in any order).

    A radix sort of 64-bit keys ``row << 32 | weight bits`` (``row_weight_keys``; CuPy's argsort) over
    groups of whole rows of about ``entries_per_sort`` entries each, which bounds the scratch memory; the
    entries are gathered in that order (``gather_entries``: CuPy's indexing would compile a kernel of its own
    for these sizes on a machine's first run, inside the timed construction) and copied back.
    """
    offsets, num_rows = graph.offsets, graph.offsets.shape[0] - 1
    group_marks = cupy.arange(0, graph.num_edges, entries_per_sort, dtype=np.int64)
    first_rows = np.unique(np.append((cupy.searchsorted(offsets, group_marks, side="right") - 1).get(), num_rows))
    first_rows = first_rows.tolist()
    first_entries = offsets[cupy.asarray(first_rows)].get().tolist()
    keys_kernel, gather = _kernel("row_weight_keys"), _kernel("gather_entries")
    for first_row, end_row, first, end in zip(first_rows, first_rows[1:], first_entries, first_entries[1:]):
        if end - first < 2:
            continue
        keys = cupy.empty(end - first, dtype=np.uint64)
        rows = end_row - first_row
        keys_kernel((runtime.persistent_blocks(keys_kernel, THREADS, 32 * rows),), (THREADS,),
                    (i64(first_row), i64(rows), offsets, graph.weights, keys))
        order = cupy.argsort(keys)
        del keys
        sorted_entries = cupy.empty(end - first, dtype=graph.neighbors.dtype), cupy.empty(end - first, np.float32)
        gather((runtime.persistent_blocks(gather, THREADS, end - first),), (THREADS,),
               (i64(end - first), order, i64(first), graph.neighbors, graph.weights, *sorted_entries))
        for array, sorted_array in zip((graph.neighbors, graph.weights), sorted_entries):
            array[first:end].data.copy_from_device_async(sorted_array.data, sorted_array.nbytes)
    graph.rows_by_weight = True


def delta_for(max_degree, delta_scale=DELTA_SCALE):
    """The default bucket width for a graph whose largest degree is ``max_degree``: ``delta_scale`` /
    sqrt(max_degree), at most 1 (every Graph500 weight light)."""
    return min(1.0, delta_scale / max(1, max_degree) ** 0.5)


@register(default=True)
class DeltaSteppingSSSP:
    """Bucketed delta-stepping: edge-parallel light phases, push or pull heavy phases, Bellman-Ford tail."""

    name = "gpu-delta-stepping"
    kind = "sssp"
    backend = "gpu"

    def __init__(self, graph, *, delta=None, delta_scale=DELTA_SCALE, pull_ratio=PULL_RATIO,
                 tail_edges=TAIL_EDGES, trace=False):
        if graph.weights is None:
            raise ValueError("delta-stepping needs a weighted graph")
        partitioned = isinstance(graph, PartitionedGraph)
        # several ranks: candidates for other blocks' vertices are reduced per vertex and sent to their owners
        self._comm = graph.comm if partitioned and graph.comm.size > 1 else None
        n = graph.num_local if partitioned else graph.num_vertices
        self._first_vertex = graph.first_vertex if partitioned else 0
        self._num_local = n
        self._total_edges = self._global(graph.num_edges, "sum")
        if delta is None:
            delta = delta_for(self._global(int(cupy.diff(graph.offsets).max()) if n else 0, "max"), delta_scale)
        if not delta > 0:
            raise ValueError(f"delta must be positive, got {delta}")
        self.graph = graph
        self.delta = np.float32(delta)
        self.pull_ratio = pull_ratio
        self.tail_edges = tail_edges
        # the vertices a search reads, [0, filled): a degree-ordered graph puts those without edges last
        self._filled_vertices = filled_vertices(graph)
        sort_rows_by_weight(graph)
        self._light_end = cupy.empty(n, dtype=np.int64)
        light_ends = _kernel("find_light_ends")
        light_ends((runtime.persistent_blocks(light_ends, THREADS, n),), (THREADS,),
                   (i64(n), graph.offsets, graph.weights, self.delta, self._light_end))
        self._row_end = graph.offsets[1:]
        self._state = cupy.empty(n, dtype=np.uint64)
        self._queue = cupy.empty(max(n, 1), dtype=np.int32)
        self._next_queue = cupy.empty(max(n, 1), dtype=np.int32)
        self._members = cupy.empty(max(n, 1), dtype=np.int32)
        self._frontier_stamp = cupy.full(n, -1, dtype=np.int32)
        self._member_stamp = cupy.full(n, -1, dtype=np.int32)
        self._prefix_sums = PrefixSums(n, graph.num_edges)
        self._counters = runtime.DeviceCounters(NUM_COUNTERS)
        self._requests = OwnerRequests(self._comm, graph.blocks, np.uint64, UNSENT) if self._comm else None
        self._total_filled = self._global(self._filled_vertices, "sum")
        # several ranks: every vertex's distance, gathered for a pull (4 bytes a vertex)
        self._gathered_distances = self._comm.gathered_array(graph.blocks.counts(), np.float32) if self._comm \
            else None
        self._frontier_id = 0
        self._bucket_id = 0
        self.record_trace = trace
        self._timer = runtime.PhaseTimer(False)
        self.summary = {}  # not ``trace``: that name is the harness's per-level list, which this kernel has not
        self._counts = {}
        cupy.cuda.get_current_stream().synchronize()  # precomputation ends with the constructor

    def search(self, root):
        """``(parents, distances)``: int32 and float32 CuPy arrays, under the input's labels; -1 and inf where
        unreached."""
        filled = self._filled_vertices
        if self._requests is not None:
            self._requests.clear()  # no candidate sent yet
        start = _kernel("start_search")
        start((runtime.persistent_blocks(start, THREADS, filled),), (THREADS,),
              (i32(root), runtime.pointer_or_null(getattr(self.graph, "new_label", None)), i64(self._first_vertex),
               i64(self._num_local), i64(filled), self._state))
        self._counts = dict.fromkeys(_TRACE_COUNTS, 0)
        self._timer = timer = runtime.PhaseTimer(self.record_trace)
        low, tail, settled_edges = np.float32(0), False, 0
        while True:
            high = INFINITY if tail else self._bucket_end(low)
            timer.start("collect_seconds")
            counts = self._collect(low, high)
            if not counts[FRONTIER_SIZE] and not counts[MEMBERS_SIZE]:
                if not counts[BEYOND]:
                    break
                low = np.uint32(_ALL_ONES - counts[BEYOND]).view(np.float32)
                continue
            self._counts["buckets"] += 1
            tail = settled_edges >= self.tail_edges * self._total_edges  # from the next bucket on
            timer.start("tail_seconds" if high == INFINITY else "light_seconds")
            counts = self._light_phase(counts, high)
            if high == INFINITY:
                break
            members_edges = self._global(counts[MEMBERS_EDGES], "sum")
            settled_edges += members_edges
            self._heavy_phase(members_edges, low, high, self._total_edges - settled_edges, timer)
            low = high
        self.summary = {**self._counts, **timer.totals()}
        return self._result(root)

    def _bucket_end(self, low):
        """``low + delta``, or +inf (the tail) where that rounds to ``low``."""
        high = np.float32(low + self.delta)
        return high if high > low else INFINITY

    def _frontier_end(self, high):
        """Where the frontier edges of each row end: the light ones, or all of them in the tail."""
        return self._row_end if high == INFINITY else self._light_end

    def _collect(self, low, high):
        """Start the bucket [low, high): its vertices become the frontier and the members. The rank's counts,
        but for whether a frontier or members exist and the least distance past the bucket: every rank's."""
        filled = self._filled_vertices
        self._bucket_id += 1
        self._counters.reset()
        collect = _kernel("collect_bucket")
        collect((runtime.persistent_blocks(collect, THREADS, filled),), (THREADS,),
                (i64(filled), self._state, low, high, i32(self._bucket_id), self.graph.offsets,
                 self._frontier_end(high), self._queue, self._members, self._member_stamp, self._counters.device))
        counts = self._read()
        if self._comm:
            counts[FRONTIER_SIZE], counts[MEMBERS_SIZE] = self._global(counts[FRONTIER_SIZE], "sum"), \
                self._global(counts[MEMBERS_SIZE], "sum")
            counts[BEYOND] = self._global(counts[BEYOND], "max")
        return counts

    def _read(self):
        return [int(c) for c in self._counters.read()]

    def _global(self, value, op):
        """``value`` (an int) summed or maximised over the ranks."""
        return int(self._comm.allreduce(value, op)) if self._comm else value

    def _light_phase(self, counts, high):
        """Relax the frontier until it is empty on every rank: the bucket's distances are final. The rank's
        last counts."""
        iterations = "tail_iterations" if high == INFINITY else "light_iterations"
        size, edges = self._local_frontier()
        while self._global(size, "sum") if self._comm else size:
            self._counts["relaxed_edges"] += edges
            self._counts[iterations] += 1
            self._counters.reset(MEMBERS_SIZE)  # frontier counts only: the members' accumulate over the bucket
            self._relax(self._queue, size, edges, self._frontier_end(high), high, self._next_queue)
            self._queue, self._next_queue = self._next_queue, self._queue
            counts = self._read()
            size, edges = counts[FRONTIER_SIZE], counts[FRONTIER_EDGES]
        return [int(c) for c in self._counters.host]

    def _local_frontier(self):
        """The rank's frontier size and edges, from the counters read last."""
        return int(self._counters.host[FRONTIER_SIZE]), int(self._counters.host[FRONTIER_EDGES])

    def _heavy_phase(self, members_edges, low, high, unsettled_edges, timer):
        """Relax the edges that land past the bucket: pushed from the members or pulled, whichever reads less
        (``members_edges``, ``unsettled_edges``: every rank's). A pull reads the neighbours' distances: on several
        ranks, first gathered from every rank."""
        if members_edges > self.pull_ratio * (unsettled_edges + self._total_filled):
            self._counts["pulls"] += 1
            distances, stride = self._neighbour_distances(timer)
            timer.start("pull_seconds")
            graph = self.graph
            filled = self._filled_vertices
            pull = _kernel("pull_bucket")
            pull((runtime.persistent_blocks(pull, THREADS, filled),), (THREADS,),
                 (i64(filled), low, high, graph.offsets, graph.neighbors, graph.weights, self._state, distances,
                  i32(stride)))
        else:
            timer.start("push_seconds")
            local_edges = int(self._counters.host[MEMBERS_EDGES])
            self._counts["relaxed_edges"] += local_edges
            self._relax(self._members, int(self._counters.host[MEMBERS_SIZE]), local_edges, self._row_end, high,
                        None)

    def _neighbour_distances(self, timer):
        """``(distances, stride)``: every vertex's distance at ``distances[v * stride]``: the states' float32 high
        halves on one rank, the ranks' distances gathered on several."""
        if self._gathered_distances is None:
            return self._state.view(np.float32)[1::2], 2
        timer.start("exchange_seconds")
        local = self._gathered_distances.local
        gather = _kernel("state_distances")
        gather((runtime.persistent_blocks(gather, THREADS, local.shape[0]),), (THREADS,),
               (i64(local.shape[0]), self._state, local))
        self._gathered_distances.publish()
        return self._gathered_distances.whole, 1

    def _relax(self, queue, size, edges, row_end, high, next_queue):
        """Relax the edges [offsets[v], row_end[v]) of the queue's vertices (``edges`` of them); on several ranks,
        then send the candidates for other blocks' vertices to their owners, who offer them to their states.

        With a ``next_queue``, the light phase (its frontier edges are the rows); without, the heavy phase.
        """
        graph = self.graph
        requests = self._requests
        if not edges and requests is None:
            return
        self._frontier_id += 1
        heavy = next_queue is None
        common = (self.delta, high, i32(heavy), i32(self._frontier_id), i32(self._bucket_id), graph.offsets,
                  self._frontier_end(high), self._state, self._frontier_stamp, self._member_stamp,
                  self._queue if heavy else next_queue, self._members, self._counters.device)
        if edges:
            edge_end, tile_first = self._prefix_sums.of_edge_counts(queue, size, graph.offsets, row_end, edges)
            _kernel("relax_edges")(
                (runtime.blocks_for(edges, EXPAND_TILE),), (THREADS,),
                (queue, edge_end, tile_first, i32(size), u64(edges), graph.offsets, graph.neighbors, graph.weights,
                 *common, i64(self._first_vertex), i64(self._num_local),
                 runtime.NULL if requests is None else requests.staging,
                 runtime.NULL if requests is None else requests.touched))
        if requests is not None:
            phase = self._timer.current
            self._timer.start("exchange_seconds")
            vertices, words = requests.exchange()
            self._timer.start(phase)
            if vertices.shape[0]:
                offer = _kernel("offer_requests")
                offer((runtime.persistent_blocks(offer, THREADS, vertices.shape[0]),), (THREADS,),
                      (vertices, words, i32(vertices.shape[0]), i64(self._first_vertex), *common[2:]))

    def _result(self, root):
        n = self._num_local
        parents = cupy.empty(n, dtype=np.int32)
        distances = cupy.empty(n, dtype=np.float32)
        split = _kernel("split_state")
        graph = self.graph
        split((runtime.persistent_blocks(split, THREADS, n),), (THREADS,),
              (i64(n), i64(self._filled_vertices), i32(root), i64(self._first_vertex), self._state,
               *(runtime.pointer_or_null(getattr(graph, table, None)) for table in ("order", "new_label")), parents,
               distances))
        return parents, distances
