"""Kernel 2, ``gpu-distributed-direction-optimizing``: direction-optimizing BFS over the GPUs of P ranks.

Algorithm: Beamer, Asanovic, Patterson's direction-optimizing BFS (SC 2012)
on the 1D partition of Buluc and Madduri (SC 2011) with a replicated
frontier bitmap (Yasui, Fujisawa, Sato, Graph500 2013-2014): the one-GPU
BFS (`graph500.kernels.gpu.bfs`, the same ``bfs.cu`` kernels) on a rank's
block of vertices and rows plus an exchange. Top-down, a claim of another
block's vertex goes to its owner (`requests.OwnerRequests`: no round trip of
its own), who claims it; bottom-up, each rank scans its block against the
whole frontier, then the ranks allgather their blocks of the next one. The
direction: the one-GPU rule on global counts, the frontier's edges taken as
P times the most one rank holds where that is more (a top-down level lasts
as long as its busiest rank), back to top-down only for a small frontier;
one counter read a level, and one MPI allreduce a top-down level. A
bottom-up level runs as a captured CUDA graph
(scan, allgather, its counts summed by NCCL on the device); small top-down
levels too, decided on the device, several a read; the start and the
root's small levels are one graph (the key's label staged by its owner and
summed on the device, the root's counts too: no MPI step, one read); the direction
switches too (launched step by step, a switch cost several GPUs far more
host time than one GPU). Parents are global
labels written by the child's owner; P = 1 is the one-GPU search without
its degree ordering.
`docs/multi-gpu.md` has the details and the costs.

Data structures per GPU (N vertices, W = N / 32 words, n owned): the rows
(and their copy with ``row_copy``, interleaved by block), strongest
neighbours (int32, n); bitmaps visited, never-searched and two frontiers (W words
each); two queues (int32, n), prefix sums (uint64, n), parents (int32, n);
the requests' touched bitmap, staging (N words) and buffers; fourteen CUDA graphs (the starts, small levels and
bottom-up levels two each, the switches one per direction, queue and frontier).

Tunables: ``alpha`` (SEVERAL_ALPHA 300: bottom-up sooner than one GPU's 30,
the fastest of 30, 300, 1000 on two GPUs);
``beta`` (the one-GPU kernel's BETA 24; infinite: once bottom-up, bottom-up
to the end, ``graph_levels`` levels launched a read, one past the last
finding nothing; docs/measurements.md has what each measured);
``small_switch_back`` (True: on several GPUs, back to top-down only for a
frontier a captured small level takes: a larger top-down level costs
several host round trips and exchanges there, a bottom-up level near the
end one captured graph: 1.14x / 1.07x on two GPUs at SCALE 26 / 27 and
1.07x on four at 26, where infinite beta, the small levels' tail bottom-up
too, was 1.24x / 0.95x on two);
``gamma`` (the one-GPU kernel's GAMMA, over a rank's block: bottom-up
only for a frontier of at least N / (gamma P) vertices, as a bottom-up
level's work a rank is its block's where a top-down level's busiest rank
does not shrink with P: at SCALE 28 on four GPUs a second level of 12
thousand vertices spent 3.3 ms top-down, a bottom-up one of 18 thousand 1.8);
``short_scan``, ``row_copy`` (the one-GPU kernel's); ``interleaved_rows``
(True: the rows searched, the copy or the graph's own with their weights,
sorted by `build.sort_rows` over the interleaved blocks,
every rank's hubs first in a row as one GPU's rows list them, where sorted
by label a row lists all of one block's neighbours before the next's: 1.04x
on two GPUs at SCALE 27, a noisy median); ``small_edges``
(SMALL_LEVEL_EDGES 2^16, the requests' blind capacity: a captured level's
claims always fit it); ``graph_levels`` (GRAPH_LEVELS 2: captured levels
launched per read, small top-down ones (and bottom-up ones to the end); one
that does not run still costs its empty exchange: 2 was 1.04x 4 on two GPUs
at SCALE 27); ``blind_capacity`` (the claims sent each rank blind in a
top-down level; default BLIND_REQUESTS 2^21 over the ranks, a power of
two, at least SMALL_LEVEL_EDGES: a top-down level that holds a hub, half
the searches, sent past 2^16 a rank and paid a second exchange and read,
while 2^21 requests are 16 MB of receive buffers a rank however many ranks);
``trace`` (per level: direction, frontier, its edges and the most one rank
holds, the edges scanned and the most one rank scanned, seconds of compute
and exchange from CUDA events; off when timed).
"""

import math

import numpy as np

from graph500.kernels import register
from graph500.kernels.gpu import requests, runtime
from graph500.kernels.gpu.bfs import (BETA, BOTTOM_UP, FRONTIER_EDGES, FRONTIER_SIZE, GAMMA, HUB_DEGREE,
                                      NUM_COUNTERS, SCANNED_EDGES, SHORT_SCAN, SMALL_FRONTIER, THREADS, TOP_DOWN,
                                      beamer_direction, bitmap, bottom_up_level, min_bottom_up_frontier,
                                      parents_to_input_labels, queue_to_bitmap, scan_grid, sorted_queue,
                                      strongest_neighbours, top_down_expand)
from graph500.kernels.gpu.build import filled_vertices, sort_rows
from graph500.kernels.gpu.frontier import PrefixSums
from graph500.kernels.gpu.requests import OwnerRequests
from graph500.kernels.gpu.runtime import cupy, i32, i64, u32, u64
from graph500.kernels.graph import PartitionedGraph, RootLabels, whole_graph_part


SEVERAL_ALPHA = 300.0  # the switch to bottom-up on several GPUs (the one-GPU kernel's ALPHA is 30)
SMALL_LEVEL_EDGES = requests.BLIND_CAPACITY
BLIND_REQUESTS = 1 << 21  # the claims a rank receives blind in a level, over every rank (`blind_capacity`)
GRAPH_LEVELS = 2
# bfs.cu's small-level state
SMALL_STOPPED, SMALL_LEVELS, SMALL_UNEXPLORED, SMALL_GLOBAL_SIZE, SMALL_GLOBAL_EDGES = 1, 2, 3, 5, 6
SMALL_STATE = 8
SUMMED_COUNTERS = SCANNED_EDGES + 1  # a bottom-up level's counters summed over the ranks on the device


def blind_part(num_ranks, capacity=None):
    """The claims a rank sends each rank blind in a top-down level: ``capacity``, or BLIND_REQUESTS shared out
    over the ranks (a power of two, as the exchange's widths are), never fewer than a captured small level sends."""
    if capacity is not None:
        return int(capacity)
    return max(SMALL_LEVEL_EDGES, 1 << (BLIND_REQUESTS // num_ranks).bit_length() - 1)


def device_part(graph, kernel_name):
    """The `PartitionedGraph` a distributed GPU kernel searches: ``graph`` itself, or a whole `CSRGraph` on the
    device as the one part of a one-rank graph. The exchange's kernels are compiled here, also for one rank (the
    warm-up's)."""
    requests.load_kernels()
    return graph if isinstance(graph, PartitionedGraph) else whole_graph_part(graph, xp=cupy)


@register(distributed_default=True)
class DistributedDirectionOptimizingBFS:
    """Direction-optimizing BFS over the ranks of ``graph.comm``, one GPU each."""

    name = "gpu-distributed-direction-optimizing"
    kind = "bfs"
    backend = "gpu"
    distributed = True

    def __init__(self, graph, *, alpha=SEVERAL_ALPHA, beta=BETA, small_switch_back=True, gamma=GAMMA,
                 short_scan=SHORT_SCAN, row_copy=True, interleaved_rows=True, small_edges=SMALL_LEVEL_EDGES,
                 graph_levels=GRAPH_LEVELS, blind_capacity=None, trace=False):
        self.graph = graph = device_part(graph, self.name)
        self.comm = comm = graph.comm
        self.alpha, self.beta = float(alpha), float(beta)
        self._bottom_up_to_the_end = math.isinf(self.beta)
        self._min_bottom_up_frontier = min_bottom_up_frontier(graph.num_vertices, gamma, comm.size)
        self.short_scan = int(short_scan)
        self.record_trace = trace
        self.trace = []
        n = graph.num_local
        self._first_word = graph.first_vertex // 32  # blocks are whole 64-bit words
        self._block_words = (n + 31) // 32
        # the block's vertices a search reads, [0, filled): a degree-ordered block puts those without edges last
        self._filled_vertices = filled_vertices(graph)
        self._parent = None if graph.order is None else cupy.empty(n, dtype=np.int32)  # under the graph's labels
        self._root_labels = RootLabels(graph, comm)
        word_counts = np.array([(graph.blocks.count(rank) + 31) // 32 for rank in range(comm.size)], dtype=np.int64)
        num_words = int(word_counts.sum())
        self._neighbors = graph.neighbors.copy() if row_copy and not graph.rows_by_weight else graph.neighbors
        if interleaved_rows and comm.size > 1 and graph.order is not None and not graph.rows_by_weight:
            # the blocks' hubs first in every row: of the copy, or of the graph's rows, their weights moved along
            sort_rows(graph.offsets, self._neighbors, graph.weights if self._neighbors is graph.neighbors else None,
                      blocks=graph.blocks)
        degrees = cupy.diff(graph.offsets).astype(np.uint32)
        self._never_searched = comm.allgather(bitmap(degrees == 0, self._block_words))
        # each vertex's neighbour of largest degree, by every vertex's degree (an allgather of 4 bytes a vertex)
        self._strongest = strongest_neighbours(graph.offsets, self._neighbors, comm.allgather(degrees))
        del degrees
        self._num_edges = int(comm.allreduce(graph.num_edges, "sum"))
        self._visited = cupy.empty(num_words, dtype=np.uint32)
        self._frontiers = [comm.gathered_array(word_counts, np.uint32) for _ in range(2)]
        self._queue = cupy.empty(max(n, 1), dtype=np.int32)
        self._next_queue = cupy.empty(max(n, 1), dtype=np.int32)
        self._prefix_sums = PrefixSums(max(n, self._block_words), graph.num_edges)
        self._row_end = graph.offsets[1:]
        several = comm.size > 1
        self._state_first = NUM_COUNTERS + (OwnerRequests.num_counters(comm) if several else 0)
        self._sums_first = self._state_first + SMALL_STATE
        self._root_slot = self._sums_first + SUMMED_COUNTERS  # a captured start's root, plus one
        self._counters = runtime.DeviceCounters(self._root_slot + 1)
        self._root_counter = self._counters.device[self._root_slot:]  # its one word, a view made once
        self._root_pinned = cupy.cuda.alloc_pinned_memory(8)  # the key's label a rank stages for the start
        self._root_staging = np.frombuffer(self._root_pinned, dtype=np.uint64, count=1)
        self._small_state = self._counters.device[self._state_first:self._sums_first]
        # claims of other blocks' vertices: parents staged per vertex (int32 bits), sent to their owners
        self._requests = OwnerRequests(comm, graph.blocks, np.uint32, 0, self._counters, NUM_COUNTERS,
                                       blind_part(comm.size, blind_capacity)) if several else None
        self._queues = (self._queue, self._next_queue)
        # small top-down levels as CUDA graphs: several ranks, the parents in one array for every search
        self.small_edges = min(int(small_edges), self._requests.capacity) if several else 0
        self.graph_levels = int(graph_levels)
        self._small_graphs = self._capture_small_levels() \
            if self.small_edges > 0 and self.graph_levels > 0 and self._parent is not None else None
        self.small_switch_back = bool(small_switch_back) and self._small_graphs is not None
        self._start_graphs = self._capture_starts() if self._small_graphs is not None else None
        self._scan_grid = scan_grid((self._filled_vertices + 31) // 32)
        self._long_grid = runtime.persistent_blocks(runtime.kernel("bfs", "bottom_up_long"), THREADS)
        self._queue_grid = runtime.persistent_blocks(runtime.kernel("bfs", "queue_to_bitmap"), THREADS, n)
        # bottom-up levels and the direction switches as CUDA graphs (several ranks, one parents array)
        self._bottom_up_graphs = self._capture_bottom_up_levels() if several and self._parent is not None else None
        self._switch_graphs = self._capture_switches() if several and self._parent is not None else None
        cupy.cuda.get_current_stream().synchronize()  # precomputation ends with the constructor

    def search(self, root):
        """The parents of this rank's vertices (int32 CuPy array, global labels, -1 unreached) of a BFS from
        ``root`` (collective: every rank passes the same root)."""
        graph = self.graph
        renumbered = graph.order is not None
        parent = self._parent if renumbered else cupy.empty(graph.num_local, dtype=np.int32)
        if self._start_graphs and not self.record_trace:  # the start and the root's small levels: one graph
            root, level, size, edges, unexplored = self._captured_start(root)
            previous_size, busiest = min(level, 1), 0  # the root's frontier, where small levels took it
        else:
            root = self._root_labels(root)  # under the graph's labels from here
            self._start_steps(self._queue_index(), root, parent)
            size, edges, busiest = self._global_counts(self._counters.read())[:3]
            unexplored = self._num_edges - edges
            previous_size, level = 0, 0
        direction = TOP_DOWN
        frontier_index = None  # of the frontier bitmap the last bottom-up level wrote
        self.trace = []
        while size:
            # a top-down level takes as long as its busiest rank: the rule weighs the frontier's edges so
            wanted = beamer_direction(direction, size, max(edges, self.comm.size * busiest), unexplored,
                                      previous_size, graph.num_vertices, self.alpha, self.beta,
                                      self._min_bottom_up_frontier)
            if wanted == TOP_DOWN and direction == BOTTOM_UP and self.small_switch_back and \
                    not self._small_level_takes(size, edges):
                wanted = BOTTOM_UP
            timer = runtime.PhaseTimer(self.record_trace)
            timer.start("compute_seconds")
            expanded = {"frontier": size, "frontier_edges": edges, "busiest_edges": busiest}  # for the trace
            if wanted != direction:
                frontier_index = (level + 1) % 2 if wanted == BOTTOM_UP else frontier_index  # the level's input
                self._switch(wanted == BOTTOM_UP, frontier_index, timer)
            direction = wanted
            if direction == TOP_DOWN and self._small_graphs and self._small_level_takes(size, edges):
                previous_size = size
                levels, size, edges, unexplored = self._small_levels(size, edges, unexplored)
                busiest = 0  # not summed on the device: the rule weighs the frontier's edges as they are
                if self.record_trace:
                    self.trace.append({"direction": direction, **expanded, "discovered": size, "scanned_edges": 0,
                                       **self._phase_seconds(timer)})
                level += levels
                continue
            previous_size = size
            if direction == TOP_DOWN:
                local_size, local_edges = (int(self._counters.host[k]) for k in (FRONTIER_SIZE, FRONTIER_EDGES))
                self._counters.reset()
                counts = self._top_down_level(parent, local_size, local_edges, edges, timer)
                size, edges, busiest, scanned_edges = self._global_counts(counts)
            else:
                # bottom-up to the end (infinite beta): several levels a read, one past the last changes nothing
                levels = max(self.graph_levels, 1) if self._bottom_up_to_the_end and not self.record_trace else 1
                for k in range(levels):
                    self._bottom_up_level(level + k, parent, timer)
                level += levels - 1
                frontier_index = level % 2
                counts = self._counters.read()  # the last level's
                sums = counts[self._sums_first:]
                size, edges, scanned_edges = (int(sums[k]) for k in (FRONTIER_SIZE, FRONTIER_EDGES, SCANNED_EDGES))
                busiest = 0  # not summed: the rule weighs the frontier's edges only for a top-down level
            unexplored -= edges
            if self.record_trace:
                self.trace.append({"direction": direction, **expanded, "discovered": size,
                                   "scanned_edges": scanned_edges,
                                   "busiest_scanned_edges": self.comm.allreduce(int(counts[SCANNED_EDGES]), "max"),
                                   **self._phase_seconds(timer)})
            level += 1
        return self._to_input_labels(parent, root) if renumbered else parent

    def _queue_index(self):
        """Which of ``_queues`` holds the frontier now (the captured graphs are made for each)."""
        return 0 if self._queue is self._queues[0] else 1

    def _small_level_takes(self, size, edges):
        """Whether a captured small top-down level takes a frontier of ``size`` vertices and ``edges`` edges."""
        return size <= SMALL_FRONTIER and edges <= self.small_edges

    @staticmethod
    def _phase_seconds(timer):
        phases = timer.totals()
        return {"seconds": sum(phases.values()), **phases}

    def _start_steps(self, queue_index, root=None, parent=None):
        """The root's level into queue ``queue_index`` (``root`` under the graph's labels); or, without ``root``,
        a captured start's (`_captured_start`): the root's label (plus one) the ranks staged in its counter,
        summed on the device, then the root's small levels (`graph_levels` of them), its counts summed into their
        state on the device as well."""
        graph, counters = self.graph, self._counters.device
        captured = root is None
        if captured:
            self.comm.allreduce(self._root_counter, "sum", out=self._root_counter)  # one rank staged it, others 0
            parent = self._parent
        start = runtime.kernel("bfs", "start_search")
        start((runtime.persistent_blocks(start, THREADS, graph.num_local),), (THREADS,),
              (i32(-1 if captured else root), i64(graph.first_vertex), i64(graph.num_local),
               i64(0 if graph.order is not None else graph.num_local), i32(self._visited.shape[0]),
               self._never_searched, graph.offsets, u32(HUB_DEGREE), parent, self._visited,
               self._queues[queue_index], counters, self._root_counter if captured else runtime.NULL))
        if captured:
            self._begin_small_levels(0, 0, self._num_edges, counts_on_device=True)
            for k in range(self.graph_levels):
                self._small_level(*self._queues[::1 if (queue_index + k) % 2 == 0 else -1])

    def _capture_starts(self):
        """CUDA graphs of a captured start (`_start_steps`), one per queue the search starts in."""
        for name in ("start_search", "small_levels_begin"):
            runtime.kernel("bfs", name)  # loaded before the capture
        return runtime.captured([lambda queue_index=queue_index: self._start_steps(queue_index)
                                 for queue_index in (0, 1)])

    def _captured_start(self, root):
        """Start a search from input key ``root`` and run its small levels as one CUDA graph: the rank that owns
        the key stages its label (no MPI step), the graph sums it over the ranks on the device. ``(root under
        the graph's labels, levels run, size, edges, unexplored)`` after one read."""
        stream = cupy.cuda.get_current_stream()
        self._root_staging[0] = self._root_labels.local(root) + 1  # zero where another rank owns the key
        cupy.cuda.runtime.memcpyAsync(self._root_counter.data.ptr,
                                      self._root_staging.ctypes.data, 8, cupy.cuda.runtime.memcpyHostToDevice,
                                      stream.ptr)
        self._start_graphs[self._queue_index()].launch()
        levels, size, edges, unexplored = self._small_levels_read()
        return int(self._counters.host[self._root_slot]) - 1, levels, size, edges, unexplored

    def _begin_small_levels(self, size, edges, unexplored, counts_on_device=False):
        """The small levels' state (`_small_levels`). ``counts_on_device``: the frontier's size and edges are the
        ranks' counters (the root's, which no host has read), summed into the state by an allreduce on the device,
        and the first level asks the switching rule too."""
        runtime.kernel("bfs", "small_levels_begin")(
            (1,), (1,), (self._small_state, u64(size), u64(edges), u64(unexplored + edges),
                         i32(0 if counts_on_device else 1)))
        if counts_on_device:
            self.comm.allreduce(self._counters.device[FRONTIER_SIZE:FRONTIER_EDGES + 1], "sum",
                                out=self._small_state[SMALL_GLOBAL_SIZE:SMALL_GLOBAL_EDGES + 1])

    def _small_levels(self, size, edges, unexplored):
        """Top-down levels of a small frontier (``size`` vertices, ``edges`` edges over every rank, ``unexplored``
        edges besides), ``graph_levels`` captured levels (one when tracing) launched and the counters read once;
        a level runs while the frontier stays small and top-down. ``(levels run, size, edges, unexplored)``."""
        self._begin_small_levels(size, edges, unexplored)
        first = self._queue_index()
        for k in range(1 if self.record_trace else self.graph_levels):
            self._small_graphs[(first + k) % 2].launch()
        return self._small_levels_read()

    def _small_levels_read(self):
        """After small levels: the counters read, the queues in their order, ``(levels run, size, edges,
        unexplored)``."""
        state = self._counters.read()[self._state_first:]
        levels = int(state[SMALL_LEVELS])
        if levels % 2:
            self._queue, self._next_queue = self._next_queue, self._queue
        size, edges = int(state[SMALL_GLOBAL_SIZE]), int(state[SMALL_GLOBAL_EDGES])
        return levels, size, edges, int(state[SMALL_UNEXPLORED]) - edges

    def _capture_small_levels(self):
        """Two CUDA graphs of one small top-down level each, from the first queue into the second and back
        (`_small_level`)."""
        for name in ("small_levels_begin", "small_level_decide", "small_level_expand", "claim_requests"):
            runtime.kernel("bfs", name)  # loaded before the capture
        return runtime.captured([lambda: self._small_level(*self._queues),
                                 lambda: self._small_level(*self._queues[::-1])])

    def _capture_bottom_up_levels(self):
        """Two CUDA graphs of one bottom-up level each (`_bottom_up_steps`), for the even and the odd levels."""
        frontiers, timer = self._frontiers, runtime.PhaseTimer(False)
        cupy.bitwise_or(self._visited, frontiers[0].whole, out=self._visited)  # CuPy's kernel compiled before it
        return runtime.captured([lambda parity=parity: self._bottom_up_steps(frontiers[1 - parity].whole,
                                                                             frontiers[parity], self._parent, timer)
                                 for parity in (0, 1)])

    def _capture_switches(self):
        """CUDA graphs of the direction switches (`_switch_steps`), one per direction, queue and frontier bitmap."""
        keys = [(to_bottom_up, queue_index, frontier_index)
                for to_bottom_up in (True, False) for queue_index in (0, 1) for frontier_index in (0, 1)]
        for module, name in (("bfs", "queue_to_bitmap"), ("bfs", "bitmap_to_queue"), ("frontier", "scan_bitmap_tiles"),
                             ("frontier", "scan_tile_totals"), ("frontier", "add_tile_offsets")):
            runtime.kernel(module, name)  # loaded before the capture
        timer = runtime.PhaseTimer(False)
        return dict(zip(keys, runtime.captured([lambda key=key: self._switch_steps(*key, timer) for key in keys])))

    def _small_level(self, queue, next_queue):
        """One small top-down level, device-driven (bfs.cu's small_level_decide says whether it runs): expand
        ``queue``, send the claims of other blocks' vertices in the requests' blind part (no rank claims more
        vertices than the frontier has edges), claim those received, sum the next frontier's size and edges over
        the ranks into the state."""
        graph, requests = self.graph, self._requests
        counters, state = self._counters.device, self._small_state
        vertices, parents, sizes = requests.send_buffers
        runtime.kernel("bfs", "small_level_decide")(
            (1,), (1,), (state, counters, sizes, i32(self.comm.size), u64(self.small_edges), np.float64(self.alpha),
                         np.float64(self._min_bottom_up_frontier)))
        runtime.kernel("bfs", "small_level_expand")(
            (runtime.blocks_for(self.small_edges, THREADS * 8),), (THREADS,),
            (state, queue, graph.offsets, self._neighbors, u32(HUB_DEGREE), i64(graph.first_vertex),
             i64(graph.num_local), i64(graph.blocks.block), self._visited, self._parent, next_queue, counters,
             vertices, parents, sizes))
        self._claim(requests.transfer(self.small_edges), self._parent, next_queue)
        self.comm.allreduce(counters[FRONTIER_SIZE:FRONTIER_EDGES + 1], "sum",
                            out=state[SMALL_GLOBAL_SIZE:SMALL_GLOBAL_EDGES + 1])

    def _to_input_labels(self, parent, root):
        """The parents of the rank's block under the input's labels (a new array; ``root`` under the graph's)."""
        graph = self.graph
        return parents_to_input_labels(graph.order, graph.new_label, self._visited[self._block_slice()], parent,
                                       graph.num_local, self._filled_vertices, root, graph.first_vertex)

    def _global_counts(self, counts):
        """``(size, edges, busiest, scanned)``: the next frontier's size and edges summed over the ranks, the most
        of its edges one rank holds, and the edges scanned (Python ints; one allreduce)."""
        comm = self.comm
        local = np.zeros(3 + comm.size, dtype=np.int64)
        local[:3] = counts[FRONTIER_SIZE], counts[FRONTIER_EDGES], counts[SCANNED_EDGES]
        local[3 + comm.rank] = counts[FRONTIER_EDGES]  # every rank's edges, each in its own place
        total = comm.allreduce(local, "sum")
        return int(total[0]), int(total[1]), int(total[3:].max()), int(total[2])

    def _block_slice(self):
        return slice(self._first_word, self._first_word + self._block_words)

    def _top_down_level(self, parent, size, edges, frontier_edges, timer):
        """Expand the rank's queue (``size`` vertices, ``edges`` edges; ``frontier_edges``: every rank's);
        claims of other blocks' vertices go to their owners, who claim them in turn. The counters, read."""
        graph = self.graph
        requests = self._requests
        top_down_expand(self._prefix_sums, self._queue, size, edges, graph.offsets, self._row_end, self._neighbors,
                        HUB_DEGREE, self._visited, parent, self._next_queue, self._counters.device, graph.first_vertex,
                        *((requests.staging, requests.touched) if requests else ()))
        if requests is not None:
            timer.start("exchange_seconds")
            received = requests.exchange(frontier_edges)  # no rank claims more vertices than the frontier has edges
            timer.start("compute_seconds")
            self._claim(received, parent, self._next_queue)
        counts = self._counters.read()
        rest = requests.rest() if requests is not None else None
        if rest is not None:  # claims past the blind part: the level's second round trip
            timer.start("exchange_seconds")
            self._claim(rest, parent, self._next_queue)
            counts = self._counters.read()
            timer.start("compute_seconds")
        self._queue, self._next_queue = self._next_queue, self._queue
        return counts

    def _claim(self, received, parent, next_queue):
        """The owner's claims of the vertices other ranks claimed for it (a `requests.Received`), queued in
        ``next_queue``."""
        received.launch(runtime.kernel("bfs", "claim_requests"), i64(self.graph.first_vertex), self.graph.offsets,
                        u32(HUB_DEGREE), self._visited, parent, next_queue, self._counters.device)

    def _bottom_up_level(self, level, parent, timer):
        """A bottom-up level (a captured graph unless tracing): the frontier, gathered in ``_frontiers[(level + 1)
        % 2]``, becomes the next in ``_frontiers[level % 2]``; its counts summed over the ranks from
        ``_sums_first`` on in the counters."""
        frontier, next_frontier = self._frontiers[(level + 1) % 2], self._frontiers[level % 2]
        if self._bottom_up_graphs and not self.record_trace:
            self._bottom_up_graphs[level % 2].launch()
        else:
            self._bottom_up_steps(frontier.whole, next_frontier, parent, timer)

    def _bottom_up_steps(self, frontier, next_frontier, parent, timer):
        """Scan the block's unvisited vertices against ``frontier`` (whole) into ``next_frontier``'s block, then
        allgather it and sum the level's counts over the ranks (NCCL: no host step between levels)."""
        self._counters.reset(NUM_COUNTERS)
        bottom_up_level((self._scan_grid, self._long_grid), (self._filled_vertices + 31) // 32, self.graph.offsets,
                        self._neighbors, self._strongest, frontier, self.short_scan, HUB_DEGREE,
                        self._visited[self._block_slice()], next_frontier.local, parent, self._next_queue,
                        self._counters.device)  # the next queue: idle while bottom-up
        self._publish(next_frontier, timer)
        sums = self._counters.device[self._sums_first:self._root_slot]
        self.comm.allreduce(self._counters.device[:SUMMED_COUNTERS], "sum", out=sums)

    def _publish(self, next_frontier, timer):
        """Allgather the blocks of the next frontier and OR them into visited."""
        timer.start("exchange_seconds")
        next_frontier.publish()
        timer.start("compute_seconds")
        cupy.bitwise_or(self._visited, next_frontier.whole, out=self._visited)

    def _switch(self, to_bottom_up, frontier_index, timer):
        """Change direction between the rank's queue and ``_frontiers[frontier_index]`` (a captured graph unless
        tracing: docs/multi-gpu.md has the host time a switch launched step by step cost)."""
        key = (to_bottom_up, self._queue_index(), frontier_index)
        if self._switch_graphs and not self.record_trace:
            self._switch_graphs[key].launch()
        else:
            self._switch_steps(*key, timer)

    def _switch_steps(self, to_bottom_up, queue_index, frontier_index, timer):
        """Top-down to bottom-up: queue ``queue_index`` (the rank's frontier, as many vertices as its counter says)
        becomes the rank's block of ``_frontiers[frontier_index]``, allgathered and ORed into visited. Bottom-up
        to top-down: the block's words of that frontier become the queue, sorted."""
        queue, frontier = self._queues[queue_index], self._frontiers[frontier_index]
        if to_bottom_up:
            queue_to_bitmap(queue, 0, frontier.local, self._counters.device[FRONTIER_SIZE:FRONTIER_SIZE + 1],
                            self._queue_grid)
            self._publish(frontier, timer)
        else:
            sorted_queue(self._prefix_sums, frontier.whole[self._block_slice()], self._block_words, queue)

