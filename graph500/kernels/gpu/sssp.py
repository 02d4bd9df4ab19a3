"""Kernel 3 on the GPU: delta-stepping single-source shortest paths.

Algorithm: delta-stepping (Meyer and Sanders, J. Algorithms 2003), bucketed
as on GPUs by Davidson, Baxter, Garland, Owens (IPDPS 2014), with the
push-pull heavy phase and the Bellman-Ford tail of Chakaravarthy, Checconi,
Petrini, Sabharwal (IPDPS 2014). Buckets [k delta, (k + 1) delta), settled
in increasing order:

1. Collect (``collect_bucket``): the bucket's vertices become the light
   frontier and the members; the least distance past the bucket skips empty
   buckets in one step.
2. Light phase (``relax_edges``, edge-parallel): relax the light edges
   (weight <= delta) whose candidate lands in the bucket, until the frontier
   is empty.
3. Heavy phase: push (``relax_edges``) from the members, or pull
   (``pull_bucket``: every vertex past the bucket takes its best neighbour in
   it, each row read until its weights cannot beat the best so far), by the
   edges each would read.
4. Tail: once the settled vertices hold ``tail_edges`` of the edges, one
   bucket [low, inf) relaxed Bellman-Ford style, its first round a pull
   (every vertex at or past ``low`` reads its row until the weights cannot
   beat its distance; those lowered push on) where the pull reads less.

A vertex's distance and parent are one 64-bit word (float32 bits << 32 |
parent): a relaxation is one ``atomicMin``. Rows are sorted by weight at
construction (``sort_rows_by_weight``, in place). On several GPUs
(``sssp_distributed.py``) this engine runs on each rank's block: candidates
for other blocks go to their owners (`graph500.kernels.gpu.requests`), and a
heavy phase's pull reads its bucket's members' distances, sent to every
rank, or every rank's distances, gathered (the tail's pull too).

Data structures (N vertices): states (uint64), light ends (int64), three
queues and two stamps (int32), prefix sums (uint64).

Tunables: ``delta`` (default ``delta_for`` the largest degree:
``delta_scale`` / sqrt(max degree), DELTA_SCALE 12.75, the best width fell
as graphs grew), ``pull_ratio`` (PULL_RATIO 0.2: a pull reads far less than
its bound), ``tail_edges`` (TAIL_EDGES 0.5: the hub core behind the search),
``tail_pull`` (True: the tail's first round pulled, by the same rule),
``trace``; on several GPUs ``pull_members``, ``small_edges`` and
``graph_steps`` (``sssp_distributed.py``). ``self.summary`` holds the last
search's counts and, traced, its phases' seconds. Measurements behind each
choice: docs/kernels/gpu-sssp.md.
"""

import numpy as np

from graph500.kernels import register
from graph500.kernels.gpu import runtime
from graph500.kernels.gpu.build import SORT_ENTRIES, filled_vertices, sort_rows
from graph500.kernels.gpu.frontier import SMALL_FRONTIER, PrefixSums
from graph500.kernels.gpu.requests import BLIND_CAPACITY, OwnerRequests
from graph500.kernels.gpu.runtime import cupy, i32, i64, u64
from graph500.kernels.graph import PartitionedGraph, RootLabels

# The defaults' measurements: docs/kernels/gpu-sssp.md.
DELTA_SCALE = 12.75
PULL_RATIO = 0.2
TAIL_EDGES = 0.5
PULL_MEMBERS = 0.125
SMALL_STEP_EDGES = BLIND_CAPACITY  # a captured step's candidates always fit the requests' blind part
GRAPH_STEPS = 2

THREADS = 256  # common.cuh's BLOCK_THREADS
EXPAND_TILE = 256 * 4  # common.cuh's EXPAND_TILE
FRONTIER_SIZE, FRONTIER_EDGES, MEMBERS_SIZE, MEMBERS_EDGES, BEYOND = range(5)  # sssp.cu's counters
NUM_COUNTERS = 5
STEP_COUNT, STEP_GLOBAL_SIZE, STEP_GLOBAL_EDGES, STEP_RELAXED = 2, 4, 5, 9  # sssp.cu's small-step state
STEP_STATE = 10
INFINITY = np.float32(np.inf)
_ALL_ONES = 0xFFFFFFFF
UNSENT = 0xFFFFFFFFFFFFFFFF  # a staging word without a candidate: above every state word
_TRACE_COUNTS = ("buckets", "light_iterations", "tail_iterations", "relaxed_edges", "pulls", "member_pulls")


def _kernel(name):
    return runtime.kernel("sssp", name)


def sort_rows_by_weight(graph, entries_per_sort=SORT_ENTRIES):
    """Sort every row of the graph by weight, in place (`graph500.kernels.gpu.build.sort_rows`)."""
    sort_rows(graph.offsets, graph.neighbors, graph.weights, entries_per_sort=entries_per_sort)
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
                 tail_edges=TAIL_EDGES, tail_pull=True, pull_members=PULL_MEMBERS, small_edges=SMALL_STEP_EDGES,
                 graph_steps=GRAPH_STEPS, trace=False):
        if graph.weights is None:
            raise ValueError("delta-stepping needs a weighted graph")
        partitioned = isinstance(graph, PartitionedGraph)
        # several ranks: candidates for other blocks' vertices are reduced per vertex and sent to their owners
        self._comm = graph.comm if partitioned and graph.comm.size > 1 else None
        n = graph.num_local if partitioned else graph.num_vertices
        self._first_vertex = graph.first_vertex if partitioned else 0
        self._num_local = n
        self._root_labels = RootLabels(graph, self._comm)
        self._total_edges = self._global(graph.num_edges, "sum")
        if delta is None:
            delta = delta_for(self._global(int(cupy.diff(graph.offsets).max()) if n else 0, "max"), delta_scale)
        if not delta > 0:
            raise ValueError(f"delta must be positive, got {delta}")
        self.graph = graph
        self.delta = np.float32(delta)
        self.pull_ratio = pull_ratio
        self.tail_edges = tail_edges
        self.tail_pull = bool(tail_pull)
        self.pull_members = float(pull_members)
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
        self._step_first = NUM_COUNTERS + (OwnerRequests.num_counters(self._comm) if self._comm else 0)
        self._counters = runtime.DeviceCounters(self._step_first + (STEP_STATE if self._comm else 0))
        self._step = self._counters.device[self._step_first:]  # a captured small step's state (several ranks)
        self._requests = OwnerRequests(self._comm, graph.blocks, np.uint64, UNSENT, self._counters, NUM_COUNTERS) \
            if self._comm else None
        self._total_filled = self._global(self._filled_vertices, "sum")
        # several ranks: every vertex's distance, gathered for a pull (4 bytes a vertex), and each rank's members
        self._gathered_distances = self._comm.gathered_array(graph.blocks.counts(), np.float32) if self._comm \
            else None
        self._member_counts = cupy.zeros(self._comm.size, dtype=np.uint64) if self._comm else None
        self._gathered_current = False  # whether the gathered distances hold this search's or NaN only
        self._frontier_id = 0
        self._bucket_id = 0
        # several ranks: light steps of a small frontier as CUDA graphs, by (tail, parity of the step)
        self.small_edges = min(int(small_edges), self._requests.capacity) if self._comm else 0
        self.graph_steps = int(graph_steps)
        self._queues = (self._queue, self._next_queue)
        self._small_graphs = self._capture_small_steps() if self.small_edges > 0 and self.graph_steps > 0 else None
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
        self._gathered_current = False
        root = self._root_labels(root)  # under the graph's labels from here
        start = _kernel("start_search")
        start((runtime.persistent_blocks(start, THREADS, filled),), (THREADS,),
              (i32(root), i64(self._first_vertex), i64(self._num_local), i64(filled), self._state))
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
            counts = self._light_phase(low, high, self._total_edges - settled_edges)
            if high == INFINITY:
                break
            members_edges, member_counts = self._bucket_members(counts)
            settled_edges += members_edges
            self._heavy_phase(members_edges, member_counts, low, high, self._total_edges - settled_edges, timer)
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
        but the frontier's and the members' sizes and the least distance past the bucket: their largest over the
        ranks (whether any rank has a frontier or members; BEYOND holds the complement of the least's bits)."""
        filled = self._filled_vertices
        self._bucket_id += 1
        self._counters.reset()
        collect = _kernel("collect_bucket")
        collect((runtime.persistent_blocks(collect, THREADS, filled),), (THREADS,),
                (i64(filled), self._state, low, high, i32(self._bucket_id), self.graph.offsets,
                 self._frontier_end(high), self._queue, self._members, self._member_stamp, self._counters.device))
        counts = self._read()
        if self._comm:  # one allreduce
            indices = [FRONTIER_SIZE, MEMBERS_SIZE, BEYOND]
            largest = self._comm.allreduce(np.array([counts[k] for k in indices], dtype=np.uint64), "max")
            for k, value in zip(indices, largest):
                counts[k] = int(value)
        return counts

    def _read(self):
        return [int(c) for c in self._counters.read()]

    def _global(self, value, op):
        """``value`` (an int) summed or maximised over the ranks."""
        return int(self._comm.allreduce(value, op)) if self._comm else value

    def _bucket_members(self, counts):
        """``(edges, counts)``: the bucket's members' edges summed over the ranks and each rank's members (one
        allreduce; None on one rank)."""
        if not self._comm:
            return int(counts[MEMBERS_EDGES]), None
        local = np.zeros(1 + self._comm.size, dtype=np.int64)
        local[0], local[1 + self._comm.rank] = counts[MEMBERS_EDGES], counts[MEMBERS_SIZE]
        total = self._comm.allreduce(local, "sum")
        return int(total[0]), total[1:]

    def _light_phase(self, low, high, unsettled_edges):
        """Relax the frontier until it is empty on every rank: the bucket's distances are final. The tail's first
        round a pull where that reads less than the push (``tail_pull``; ``unsettled_edges``: every rank's). The
        rank's last counts."""
        tail = high == INFINITY
        iterations = "tail_iterations" if tail else "light_iterations"
        size, edges = self._local_frontier()
        total_size, total_edges = self._global_sums(size, edges)
        pull_first = tail and self.tail_pull
        while total_size:
            pulled = pull_first and self._pulled(total_edges, unsettled_edges)
            pull_first = False
            if not pulled and self._small_graphs and total_size <= SMALL_FRONTIER and total_edges <= self.small_edges:
                counts, totals = self._small_steps(total_size, total_edges, high, iterations)
            else:
                self._counts[iterations] += 1
                self._counters.reset(MEMBERS_SIZE)  # frontier counts only: the members' accumulate over the bucket
                if pulled:
                    self._pull(low, low, high, self._next_queue, self._timer)  # the neighbours' distances gathered
                    self._timer.start("tail_seconds")
                    counts = self._read()
                else:
                    self._counts["relaxed_edges"] += edges
                    counts = self._relax(self._queue, size, edges, self._frontier_end(high), high, self._next_queue,
                                         total_edges)
                totals = None
                self._queue, self._next_queue = self._next_queue, self._queue
            size, edges = counts[FRONTIER_SIZE], counts[FRONTIER_EDGES]
            total_size, total_edges = totals or self._global_sums(size, edges)
        return [int(c) for c in self._counters.host]

    def _small_steps(self, size, edges, high, iterations):
        """Light steps of a small frontier (``size`` vertices, ``edges`` frontier edges over every rank):
        ``graph_steps`` captured steps launched and the counters read once; a step runs while the frontier stays
        small and not empty. ``(counts, (size, edges))``: the rank's counts, the next frontier's size and edges over
        every rank."""
        _kernel("small_steps_begin")((1,), (1,), (self._step, u64(size), u64(edges), i32(self._frontier_id),
                                                  i32(self._bucket_id), np.float32(high)))
        first = 0 if self._queue is self._queues[0] else 1
        graphs = self._small_graphs[high == INFINITY]
        for k in range(self.graph_steps):
            graphs[(first + k) % 2].launch()
        counts = self._read()  # Python ints: the counts go into the summary
        state = counts[self._step_first:]
        steps = state[STEP_COUNT]
        if steps % 2:
            self._queue, self._next_queue = self._next_queue, self._queue
        self._frontier_id += steps
        self._counts[iterations] += steps
        self._counts["relaxed_edges"] += state[STEP_RELAXED]
        return counts, (state[STEP_GLOBAL_SIZE], state[STEP_GLOBAL_EDGES])

    def _capture_small_steps(self):
        """Four CUDA graphs of one small light step each (`_small_step`): of a bucket's light edges and of the tail's
        edges, from the first queue into the second and back."""
        for name in ("small_steps_begin", "small_step_decide", "small_relax", "small_offer_requests"):
            _kernel(name)  # loaded before the capture
        steps = {tail: [lambda queues=queues, tail=tail: self._small_step(*queues, self._row_end if tail
                                                                           else self._light_end)
                        for queues in (self._queues, self._queues[::-1])] for tail in (False, True)}
        return {tail: runtime.captured(steps[tail]) for tail in (False, True)}

    def _small_step(self, queue, next_queue, frontier_end):
        """One small light step, device-driven (sssp.cu's small_step_decide says whether it runs): relax ``queue``'s
        frontier edges (ending at ``frontier_end``), send the candidates for other blocks' vertices in the requests'
        blind part (no rank sends more than the frontier has edges), offer those received, sum the next frontier's
        size and edges over the ranks into the step's state."""
        graph, requests, counters, step = self.graph, self._requests, self._counters.device, self._step
        _kernel("small_step_decide")((1,), (1,), (step, counters, u64(self.small_edges)))
        in_step = (graph.offsets, frontier_end, self._state, self._frontier_stamp, self._member_stamp, next_queue,
                   self._members, counters)
        _kernel("small_relax")(
            (runtime.blocks_for(self.small_edges, THREADS * 8),), (THREADS,),
            (step, queue, graph.offsets, frontier_end, graph.neighbors, graph.weights, self.delta, *in_step[2:],
             i64(self._first_vertex), i64(self._num_local), requests.staging, requests.touched))
        requests.exchange(self.small_edges).launch(_kernel("small_offer_requests"), i64(self._first_vertex),
                                                   *in_step, leading=(step,))
        self._comm.allreduce(counters[FRONTIER_SIZE:FRONTIER_EDGES + 1], "sum",
                             out=step[STEP_GLOBAL_SIZE:STEP_GLOBAL_EDGES + 1])

    def _global_sums(self, size, edges):
        """The frontier's size and edges summed over the ranks (one allreduce)."""
        if not self._comm:
            return size, edges
        return (int(total) for total in self._comm.allreduce(np.array([size, edges], dtype=np.int64), "sum"))

    def _local_frontier(self):
        """The rank's frontier size and edges, from the counters read last."""
        return int(self._counters.host[FRONTIER_SIZE]), int(self._counters.host[FRONTIER_EDGES])

    def _heavy_phase(self, members_edges, member_counts, low, high, unsettled_edges, timer):
        """Relax the edges that land past the bucket: pushed from the members or pulled, whichever reads less
        (``members_edges``, ``unsettled_edges``: every rank's). A pull reads the neighbours' distances: on several
        ranks, first gathered from every rank (``member_counts``: each rank's members)."""
        if self._pulled(members_edges, unsettled_edges):
            self._pull(high, low, high, None, timer, member_counts)
        else:
            timer.start("push_seconds")
            local_edges = int(self._counters.host[MEMBERS_EDGES])
            self._counts["relaxed_edges"] += local_edges
            self._relax(self._members, int(self._counters.host[MEMBERS_SIZE]), local_edges, self._row_end, high,
                        None, members_edges)

    def _pulled(self, edges, unsettled_edges):
        """Whether a pull reads less than a push of ``edges`` (every rank's) would."""
        return edges > self.pull_ratio * (unsettled_edges + self._total_filled)

    def _pull(self, pulling_from, low, high, next_queue, timer, member_counts=None):
        """Every vertex at or past ``pulling_from`` takes its best candidate from its neighbours in [low, high)
        (sssp.cu's pull_bucket); with a ``next_queue``, those it lowers join it (the tail's pull). ``member_counts``:
        each rank's members of the bucket [low, high) where those are all the pull reads (a heavy phase)."""
        self._counts["pulls"] += 1
        distances, stride = self._neighbour_distances(timer, member_counts)
        timer.start("pull_seconds")
        graph = self.graph
        filled = self._filled_vertices
        pull = _kernel("pull_bucket")
        pull((runtime.persistent_blocks(pull, THREADS, filled),), (THREADS,),
             (i64(filled), np.float32(pulling_from), low, high, graph.offsets, graph.neighbors, graph.weights,
              self._state, distances, i32(stride), runtime.pointer_or_null(next_queue), self._counters.device))

    def _neighbour_distances(self, timer, member_counts=None):
        """``(distances, stride)``: the neighbours' distances a pull reads at ``distances[v * stride]``: the states'
        float32 high halves on one rank. On several, the ranks' distances gathered; or, where ``member_counts``
        (each rank's members of the pulled bucket) are at most ``pull_members`` N, only the members' (sssp.cu's
        pack_members and scatter_members): a pull takes neighbours in the bucket only, every other entry holds NaN,
        which it never takes, or a distance gathered earlier in the search, at least the vertex's (a vertex below
        the bucket has relaxed every edge at its own distance, so the candidate loses; one past it stays past)."""
        if self._gathered_distances is None:
            return self._state.view(np.float32)[1::2], 2
        timer.start("exchange_seconds")
        gathered = self._gathered_distances
        if member_counts is not None and int(member_counts.sum()) <= self.pull_members * gathered.whole.shape[0]:
            self._counts["member_pulls"] += 1
            if not self._gathered_current:  # the last search's distances: NaN (bytes 0xFF) instead
                stream = cupy.cuda.get_current_stream()
                cupy.cuda.runtime.memsetAsync(gathered.whole.data.ptr, 0xFF, gathered.whole.nbytes, stream.ptr)
            self._share_members(member_counts)
        else:
            local = gathered.local
            gather = _kernel("state_distances")
            gather((runtime.persistent_blocks(gather, THREADS, local.shape[0]),), (THREADS,),
                   (i64(local.shape[0]), self._state, local))
            gathered.publish()
        self._gathered_current = True
        return gathered.whole, 1

    def _share_members(self, member_counts):
        """Every rank's members of the bucket with their distances written into the gathered distances."""
        requests, rank = self._requests, self._comm.rank
        vertices, words, _ = requests.send_buffers
        own = requests.segment(rank)
        pack = _kernel("pack_members")
        pack((runtime.persistent_blocks(pack, THREADS, int(member_counts[rank])),), (THREADS,),
             (self._members, self._counters.device, self._state, i64(self._first_vertex), i32(rank), vertices[own:],
              words[own:], self._member_counts))
        requests.allgather_segments(member_counts, self._member_counts)
        scatter = _kernel("scatter_members")
        scatter((runtime.persistent_blocks(scatter, THREADS, int(member_counts.max())), self._comm.size), (THREADS,),
                (vertices, words, i64(requests.segment_items), self._member_counts, self._gathered_distances.whole))

    def _relax(self, queue, size, edges, row_end, high, next_queue, bound):
        """Relax the edges [offsets[v], row_end[v]) of the queue's vertices (``edges`` of them); on several ranks,
        then send the candidates for other blocks' vertices to their owners (``bound``: every rank's ``edges``),
        who offer them to their states. The counters, read after it (on one GPU, after a light phase only: a heavy
        phase's next step, the bucket's collection, reads them itself).

        With a ``next_queue``, the light phase (its frontier edges are the rows); without, the heavy phase.
        """
        graph = self.graph
        requests = self._requests
        light = next_queue is not None
        if not edges and requests is None:
            return self._read() if light else None
        self._frontier_id += 1
        common = (self.delta, high, i32(not light), i32(self._frontier_id), i32(self._bucket_id), graph.offsets,
                  self._frontier_end(high), self._state, self._frontier_stamp, self._member_stamp,
                  next_queue if light else self._queue, self._members, self._counters.device)
        if edges:
            edge_end, tile_first = self._prefix_sums.of_edge_counts(queue, size, graph.offsets, row_end, edges)
            _kernel("relax_edges")(
                (runtime.blocks_for(edges, EXPAND_TILE),), (THREADS,),
                (queue, edge_end, tile_first, i32(size), u64(edges), graph.offsets, graph.neighbors, graph.weights,
                 *common, i64(self._first_vertex), i64(self._num_local),
                 runtime.NULL if requests is None else requests.staging,
                 runtime.NULL if requests is None else requests.touched))
        if requests is None:
            return self._read() if light else None
        phase = self._timer.current
        self._timer.start("exchange_seconds")
        received = requests.exchange(bound, wide=True)  # no rank sends more candidates than the edges relaxed
        self._timer.start(phase)
        self._offer(received, common)
        counts = self._read()
        rest = requests.rest()
        if rest is None:
            return counts
        self._timer.start("exchange_seconds")  # candidates past the blind part: a second round trip
        self._offer(rest, common)
        counts = self._read()
        self._timer.start(phase)
        return counts

    def _offer(self, received, common):
        """The owner's offers of the candidates other ranks sent it (a `requests.Received`)."""
        received.launch(_kernel("offer_requests"), i64(self._first_vertex), *common[2:])

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
