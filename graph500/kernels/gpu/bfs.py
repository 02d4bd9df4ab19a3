"""Kernel 2 on the GPU: level-synchronous BFS, top-down, bottom-up and direction-optimizing.

One engine (`LevelSynchronousBFS`), three registered kernels that differ only
in how each level's direction is chosen:

- ``gpu-top-down``: every level top-down.
- ``gpu-bottom-up``: every level bottom-up.
- ``gpu-direction-optimizing`` (default): top-down while the frontier is
  small, bottom-up through the explosive middle levels, top-down again at the
  tail (Beamer, Asanović, Patterson, "Direction-Optimizing Breadth-First
  Search", SC 2012).

Top-down level (edge-parallel, ``top_down_expand`` in ``bfs.cu``): the
frontier is a queue of vertices; an inclusive prefix sum of their degrees
(``frontier.py``) numbers the frontier's edges, and the grid is cut into
tiles of edges, not of vertices, so a hub's edges spread over many blocks
(the load-balanced search of Merrill, Garland, Grimshaw, "Scalable GPU Graph
Traversal", PPoPP 2012; ``for_each_frontier_edge`` in ``common.cuh``). A
vertex is claimed by the ``atomicOr`` that sets its bit in the visited
bitmap, so the next queue has no duplicates; a block appends its claims with
one atomic add.

Bottom-up level (``bottom_up_scan``, ``bottom_up_long``): visited and frontier
are bitmaps (N/8 bytes each, in L2 at SCALE 26). A warp takes a 32-vertex
word of the visited bitmap; each unvisited vertex's lane first tests its
strongest neighbour (of largest degree, found once at construction:
``strongest_first``), then reads its neighbours, a few at a time, and stops
at the first in the frontier (early exit). At the level where the frontier
holds the hubs, most vertices are found by that one test; the others read
their row, which lists the hubs first (rows in neighbour order, see below).
The warp owns the word, so visited and the next frontier's word are written
without atomics.
A vertex with more than ``short_scan`` neighbours left unread goes to a
queue that a second kernel works through one warp per vertex, 32 neighbours
at a time. Vertices without edges are marked visited once and for all at
construction, so they cost one bit per search.

Degree-ordered graphs (the backend's kernel 1, ``graph.order`` set): the
vertices are numbered by decreasing degree, so a warp's 32 lanes scan rows
of alike length, the vertices without edges fill whole words at the end of
the bitmaps (skipped), and the hubs' frontier bits share a few cache lines:
the bottom-up levels run twice as fast at SCALE 26 on an H100 (1.14 and
0.66 ms to 0.57 and 0.34 ms). The search runs under the graph's labels
(``start_search`` translates the root) and ends with one gather,
``parents_to_input_labels``: parent of input label ``v`` =
``order[parent[new_label[v]]]``, inside the timed search (scattering through
``order`` instead cost 1.8 ms at SCALE 26: 4-byte writes at random). The
gather's cost is its random reads of ``parent``: a vertex without edges
(label ``>= filled``, the first label past the last vertex with edges) or
whose visited bit is clear takes -1 without that read, so the search writes
no -1 into ``parent`` at all; each thread maps 4 consecutive vertices (their
loads in flight together). At SCALE 24 the gather moves 2.4 TB/s (81% of the
copy rate, Nsight Compute); the search got 1.12x faster at SCALE 26 with it
(3 pairs of processes, benchmarks/gpu_trees.py).

Rows in neighbour order (``row_copy``): the SSSP's construction sorts the
graph's rows by weight, in place (``gpu/sssp.py``); the BFS keeps its own
copy of the neighbours as kernel 1 left them, sorted by label, which on a
degree-ordered graph lists each row's hubs first: a bottom-up scan meets a
frontier hub sooner, and a top-down expansion's neighbouring threads claim
nearby bits and parents. 4 bytes per directed entry (8.6 GB at SCALE 26);
the run's memory plan makes it only where it fits (``Backend.check_memory``;
not at SCALE 28 on a 141 GB H200). Measured at SCALE 26 (64 keys, one
process, the SSSP constructed): searches on the copy 1.058x faster than on
the weight-sorted rows, the slowest keys' hub level 1.5-1.7 -> 1.1-1.3 ms.
A graph whose rows the SSSP has sorted already is searched as it is.

Direction changes: top-down to bottom-up sets the queue's bits in a cleared
bitmap; bottom-up to top-down compacts the frontier bitmap into a queue
through a prefix sum of word populations, so the queue comes out sorted and
without atomics (as Enterprise does at its switch level: Liu and Huang,
"Enterprise: Breadth-First Graph Traversal on GPUs", SC 2015).

Switching rules (``switch_rule``):

- ``"beamer"`` (default): go bottom-up when the frontier's edges ``m_f``
  exceed ``m_u / alpha`` (``m_u``: edges of unvisited vertices) and the
  frontier holds at least ``N / gamma`` vertices; go back top-down when the
  frontier has shrunk and holds fewer than ``N / beta`` vertices. The
  frontier-size guard is this project's: with degree order a bottom-up level
  is cheap enough that alpha 30 pays (a search whose second level held ~16K
  vertices spent 2 ms top-down on it at SCALE 26, against 0.5 ms for a
  bottom-up level), but not at a level-1 frontier of ~100 vertices, where
  most unvisited vertices would scan their whole row in vain. Interleaved
  (gpu_variants.py, 3 rounds of 64 keys, H100), alpha 30 and gamma 16384
  against alpha 14 alone: 1.055x at SCALE 26, 1.053x at 24, 1.027x at 22;
  alpha 30 alone 1.024x, 0.991x, 1.014x.
- ``"hub-share"``: go bottom-up once the frontier holds more than
  ``hub_share`` of the graph's hubs (vertices of degree >= ``hub_degree``),
  after Enterprise's observation that hubs entering the frontier mark the
  explosive level; go back top-down by Beamer's beta rule.

Host work per level: one reset of the counters, the level's kernels, and one
copy of eight 64-bit counters to pinned host memory (frontier size, its
edges, its hubs, long-queue size, vertices and edges scanned bottom-up,
levels done and edges unexplored by the one-block levels below), which is
the level's only synchronisation. No Python loop touches vertices or edges.
At SCALE 26 these round trips cost some 30 us each (CUDA events around every
step, 64 keys): 0.25 ms of a 2.4 ms search, next to 0.35 ms for the gather.
Where a search's time goes now (Nsight Compute, ``benchmarks/gpu_profile.py
--replay application``, SCALE 26, one key, H200, 1.58 ms a search): the
bottom-up scan 56% (3 levels, 1455 GB/s, 34% of the copy rate), the parents'
gather 19% (2697 GB/s, 64%), the top-down expansions 2%, time between
kernels 17.5% (launches and the levels' round trips); the rest, prefix sums
and the direction switches, under 1% each.

Small frontiers (``top_down_small_levels``): the first levels from the root
and the last ones of the tail hold a few vertices, and a grid-wide level
(prefix sums, tile marks, expansion) costs some 40-50 us of launches and a
host round trip for a few microseconds of work. A top-down frontier of at
most SMALL_FRONTIER vertices and ``small_edges`` edges is expanded instead
by one block that stages it and its degrees' prefix sums in shared memory
and goes on, level after level, while the frontier stays that small: one
launch and one round trip for the lot. Interleaved against every level on
the grid (gpu_variants.py, 3 rounds of 32 keys, H100): 1.11x, 1.17x, 1.10x,
1.01x at SCALE 20, 22, 24, 26 (small_edges 1024 and 16384 within 0.05 of
4096). The kernel also runs unasked right after ``start_search`` and after
every grid-wide top-down level, before the host has read the counters: it
takes the frontier only if the host would have (small enough, and the
switching rule, evaluated on the device as the host does, keeps it
top-down), else leaves it as it is; so the round trip between the root's
level or the tail's last grid level and the small levels is gone
(gpu_variants.py, 5 rounds of 32 keys, H100, against ``small_follow=0``:
1.045x, 1.060x, 1.037x, 1.043x at SCALE 20, 22, 24, 26).

Several GPUs (``bfs_distributed.py``) run these kernels on a rank's block:
``start_search`` and ``top_down_expand`` take the block's first vertex and
size (here 0 and N), and the expansion hands a claim of another block's
vertex to the exchange instead of queueing it.

Data structures (N vertices, W = ceil(N / 32) words): ``parent`` int32 (the
output, -1 unreached); bitmaps ``visited``, ``frontier``, ``next_frontier``
and ``never_searched`` (W uint32 each); two queues of vertices (int32, N
each; a bottom-up level borrows the idle one as its long queue); prefix sums
(uint64, N); each vertex's strongest neighbour (int32, N); for a
degree-ordered graph, the search's parents under its labels (int32, N; only
reached vertices' written); with ``row_copy``, the neighbours (int32, one
per directed entry).

Tunables (constructor arguments): ``alpha`` (ALPHA), ``beta`` (BETA),
``gamma`` (GAMMA; 0: no frontier-size guard), ``switch_rule``, ``hub_share`` (HUB_SHARE), ``hub_degree`` (HUB_DEGREE),
``short_scan`` (SHORT_SCAN: neighbours a bottom-up thread reads before its
vertex goes to the warp-per-vertex pass), ``small_edges`` (SMALL_EDGES: the
most edges of a frontier the one-block levels take; 0: none), ``small_follow`` (launch the one-block
levels unasked after ``start_search`` and each grid top-down level), ``strongest_first`` (test the
strongest neighbour first; its array is 4 bytes a vertex), ``row_copy`` (search a copy of the rows in
neighbour order when the graph's are so at construction), ``trace`` (time
each level with CUDA events and keep ``self.trace``; off for timed runs; the
one-block levels then go one level a launch).
"""

import numpy as np

from graph500.kernels import register
from graph500.kernels.gpu import runtime
from graph500.kernels.gpu.build import filled_vertices
from graph500.kernels.gpu.frontier import PrefixSums
from graph500.kernels.gpu.runtime import cupy, i32, i64, u32, u64

ALPHA = 30.0
BETA = 24.0
GAMMA = 16384.0
HUB_SHARE = 0.3
HUB_DEGREE = 256
SHORT_SCAN = 32
SMALL_EDGES = 4096
SMALL_MAX_LEVELS = 2**31 - 1  # no bound: a search has fewer levels than vertices
SWITCH_RULES = ("beamer", "hub-share")

TOP_DOWN, BOTTOM_UP = "top-down", "bottom-up"
THREADS = 256  # common.cuh's BLOCK_THREADS
REMAP_VERTICES = 4  # bfs.cu's REMAP_VERTICES
EXPAND_TILE = 256 * 4  # common.cuh's EXPAND_TILE
# bfs.cu's counters
(FRONTIER_SIZE, FRONTIER_EDGES, FRONTIER_HUBS, LONG_QUEUE_SIZE, SCANNED_VERTICES, SCANNED_EDGES, LEVELS_DONE,
 UNEXPLORED_EDGES) = range(8)
NUM_COUNTERS = 8
SMALL_FRONTIER = 256 * 8  # bfs.cu's SMALL_FRONTIER
NO_HUB_BOUND = 2**64 - 1


def _kernel(name):
    return runtime.kernel("bfs", name)


class LevelSynchronousBFS:
    """The GPU BFS engine; subclasses fix ``directions`` to TOP_DOWN, BOTTOM_UP or None (switching)."""

    kind = "bfs"
    backend = "gpu"
    directions = None

    def __init__(self, graph, *, alpha=ALPHA, beta=BETA, gamma=GAMMA, switch_rule="beamer", hub_share=HUB_SHARE,
                 hub_degree=HUB_DEGREE, short_scan=SHORT_SCAN, small_edges=SMALL_EDGES, strongest_first=True,
                 row_copy=True, small_follow=True, trace=False):
        if switch_rule not in SWITCH_RULES:
            raise ValueError(f"switch_rule must be one of {SWITCH_RULES}, not {switch_rule!r}")
        self.graph = graph
        self.alpha, self.beta = float(alpha), float(beta)
        # the fewest frontier vertices a switch to bottom-up needs: N / gamma (none when gamma is 0)
        self._min_bottom_up_frontier = graph.num_vertices / gamma if gamma else 0
        self.switch_rule, self.hub_share, self.hub_degree = switch_rule, float(hub_share), int(hub_degree)
        self.short_scan = int(short_scan)
        self.small_edges = int(small_edges)
        self.record_trace = trace
        self.trace = []
        n = graph.num_vertices
        self._num_words = (n + 31) // 32
        degrees = cupy.diff(graph.offsets)
        self._never_searched = bitmap(degrees == 0, self._num_words)
        # parents a search writes -1 into, [0, filled): past the last vertex with edges, when the search maps
        # its parents back to the input's labels (degree-ordered graphs put the vertices without edges last)
        self._filled_vertices = filled_vertices(graph)
        self._filled_words = (self._filled_vertices + 31) // 32  # the bitmaps' words that hold vertices with edges
        # hubs, for the hub-share rule only (a whole-array count compiles a kernel of its own at large sizes)
        self._num_hubs = int(cupy.count_nonzero(degrees >= self.hub_degree)) if switch_rule == "hub-share" else 0
        del degrees
        # the rows searched: a copy of the graph's in neighbour order, or the graph's as they are
        self._neighbors = graph.neighbors.copy() if row_copy and not graph.rows_by_weight else graph.neighbors
        self._visited = cupy.empty(self._num_words, dtype=np.uint32)
        self._frontier = cupy.empty(self._num_words, dtype=np.uint32)
        self._next_frontier = cupy.empty(self._num_words, dtype=np.uint32)
        self._queue = cupy.empty(max(n, 1), dtype=np.int32)
        self._next_queue = cupy.empty(max(n, 1), dtype=np.int32)
        self._prefix_sums = PrefixSums(max(n, self._num_words), graph.num_edges)
        self._row_end = graph.offsets[1:]
        self._counters = runtime.DeviceCounters(NUM_COUNTERS)
        self._parent = None if graph.order is None else cupy.empty(n, dtype=np.int32)  # under the graph's labels
        self._strongest = strongest_neighbours(graph.offsets, self._neighbors) if strongest_first else runtime.NULL
        self._scan_grid = runtime.persistent_blocks(_kernel("bottom_up_scan"), THREADS, self._filled_words * 32)
        self._small_rule = self._small_levels_rule()
        # the one-block levels follow start_search and each grid-wide top-down level unasked (they take the
        # frontier only where the host would have given it to them), saving that level's host round trip
        self._small_levels_follow = small_follow and self.small_edges > 0 and self.directions != BOTTOM_UP and not trace
        self._long_grid = runtime.persistent_blocks(_kernel("bottom_up_long"), THREADS)
        cupy.cuda.get_current_stream().synchronize()  # precomputation ends with the constructor

    def search(self, root):
        """The parent array (int32 CuPy array, -1 for unreached) of a BFS from ``root``, under the input's
        labels."""
        graph = self.graph
        renumbered = graph.order is not None
        parent = self._parent if renumbered else cupy.empty(graph.num_vertices, dtype=np.int32)
        self._start_search(root, parent)
        unexplored = graph.num_edges  # edges of the vertices never in a frontier, before the counters' frontier
        small = self._small_levels_follow
        if small:
            self._small_top_down_levels(parent, unexplored, chosen=False)
        direction = self.directions or TOP_DOWN
        previous_size, size, edges, hubs, unexplored = self._level_counts(0, small, unexplored)
        if direction == BOTTOM_UP:
            self._queue_to_bitmap(size)
        self.trace = []
        while size:
            wanted = self._choose_direction(direction, size, edges, hubs, unexplored, previous_size)
            if wanted != direction:
                if wanted == BOTTOM_UP:
                    self._queue_to_bitmap(size)
                else:
                    self._bitmap_to_queue()
                direction = wanted
            events = _level_events() if self.record_trace else None
            small = direction == TOP_DOWN and size <= SMALL_FRONTIER and edges <= self.small_edges
            if small:
                self._small_top_down_levels(parent, unexplored + edges, chosen=True)
            else:
                self._counters.reset()
                if direction == TOP_DOWN:
                    self._top_down_level(parent, size, edges)
                    small = self._small_levels_follow
                    if small:
                        self._small_top_down_levels(parent, unexplored, chosen=False)
                else:
                    self._bottom_up_level(parent)
            if events:
                events[1].record()
            previous_size, size, edges, hubs, unexplored = self._level_counts(size, small, unexplored)
            if events:
                self.trace.append(_trace_entry(direction, previous_size, self._counters.host, events))
        return self._to_input_labels(parent, root) if renumbered else parent

    def _start_search(self, root, parent):
        """The root's level: parents cleared (unless the graph is renumbered), visited, the queue and counters."""
        graph = self.graph
        start = _kernel("start_search")
        start((runtime.persistent_blocks(start, THREADS, self._filled_vertices),), (THREADS,),
              (i32(root), runtime.pointer_or_null(graph.new_label), i64(0), i64(graph.num_vertices),
               i64(0 if graph.order is not None else graph.num_vertices), i32(self._num_words),
               self._never_searched, graph.offsets, u32(self.hub_degree), parent, self._visited, self._queue,
               self._counters.device))

    def _level_counts(self, size, small, unexplored):
        """After a level (or start_search): ``(size, next size, its edges, its hubs, unexplored edges)`` from
        the counters, read once; ``small``: the one-block levels ran last (an odd number of them leaves the
        frontier in the other queue)."""
        counts = self._counters.read()
        if small and counts[LEVELS_DONE] % 2:
            self._queue, self._next_queue = self._next_queue, self._queue
        next_size, edges, hubs = (int(counts[k]) for k in (FRONTIER_SIZE, FRONTIER_EDGES, FRONTIER_HUBS))
        return size, next_size, edges, hubs, int(counts[UNEXPLORED_EDGES]) if small else unexplored - edges

    def _to_input_labels(self, parent, input_root):
        """The parents of a degree-ordered graph's search under the input's labels (a new array)."""
        graph = self.graph
        n = graph.num_vertices
        original = cupy.empty(n, dtype=np.int32)
        _kernel("parents_to_input_labels")(
            (runtime.blocks_for(n, THREADS * REMAP_VERTICES),), (THREADS,),
            (i64(n), i64(self._filled_vertices), i32(input_root), i64(0), graph.order, graph.new_label, self._visited,
             parent, original))
        return original

    def _choose_direction(self, direction, size, edges, hubs, unexplored, previous_size):
        """The direction of the next level: the subclass's, or by the switching rule."""
        if self.directions:
            return self.directions
        if direction == TOP_DOWN and self.switch_rule == "hub-share":
            return BOTTOM_UP if hubs > self.hub_share * self._num_hubs else TOP_DOWN
        return beamer_direction(direction, size, edges, unexplored, previous_size, self.graph.num_vertices,
                                self.alpha, self.beta, self._min_bottom_up_frontier)

    def _top_down_level(self, parent, size, edges):
        graph = self.graph
        if edges:
            edge_end, tile_first = self._prefix_sums.of_edge_counts(self._queue, size, graph.offsets,
                                                                    self._row_end, edges)
            _kernel("top_down_expand")(
                (runtime.blocks_for(edges, EXPAND_TILE),), (THREADS,),
                (self._queue, edge_end, tile_first, i32(size), u64(edges), graph.offsets, self._neighbors,
                 u32(self.hub_degree), self._visited, parent, self._next_queue, self._counters.device, i64(0),
                 i64(graph.num_vertices), runtime.NULL, runtime.NULL))
        self._queue, self._next_queue = self._next_queue, self._queue

    def _small_top_down_levels(self, parent, unexplored, chosen):
        """Top-down levels in one block while the frontier is small and the switching rule keeps it top-down
        (one level when tracing); ``unexplored``: edges of the vertices never in a frontier, the counters'
        frontier included; ``chosen``: the host chose the first level's direction (at a switch from
        bottom-up, by Beamer's other rule), else the kernel asks the rule from the first level on. The
        counters then hold the last frontier's counts, the levels done and the unexplored edges."""
        graph = self.graph
        alpha, min_bottom_up_size, max_hubs = self._small_rule
        _kernel("top_down_small_levels")(
            (1,), (THREADS,),
            (self._queue, self._next_queue, graph.offsets, self._neighbors, u32(self.hub_degree),
             u64(self.small_edges), i32(1 if self.record_trace else SMALL_MAX_LEVELS), u64(unexplored),
             i32(1 if chosen else 0), np.float64(alpha), np.float64(min_bottom_up_size), u64(max_hubs),
             self._visited, parent, self._counters.device))

    def _small_levels_rule(self):
        """``(alpha, min_bottom_up_size, max_hubs)``: `_choose_direction`'s top-down case for bfs.cu's
        bottom_up_wanted (alpha 0: never by Beamer's rule)."""
        if self.directions == TOP_DOWN:
            return 0.0, 0.0, NO_HUB_BOUND
        if self.switch_rule == "hub-share":
            return 0.0, 0.0, int(self.hub_share * self._num_hubs)
        return self.alpha, self._min_bottom_up_frontier, NO_HUB_BOUND

    def _bottom_up_level(self, parent):
        graph = self.graph
        long_queue = self._next_queue  # idle while bottom-up
        _kernel("bottom_up_scan")(
            (self._scan_grid,), (THREADS,),
            (i32(self._filled_words), graph.offsets, self._neighbors, self._strongest, self._frontier,
             u32(self.short_scan), u32(self.hub_degree), self._visited, self._next_frontier, parent, long_queue,
             self._counters.device))
        _kernel("bottom_up_long")(
            (self._long_grid,), (THREADS,),
            (long_queue, graph.offsets, self._neighbors, self._frontier, u32(self.short_scan), u32(self.hub_degree),
             self._visited, self._next_frontier, parent, self._counters.device))
        self._frontier, self._next_frontier = self._next_frontier, self._frontier

    def _queue_to_bitmap(self, size):
        """Top-down to bottom-up: the frontier queue becomes the frontier bitmap."""
        stream = cupy.cuda.get_current_stream()
        cupy.cuda.runtime.memsetAsync(self._frontier.data.ptr, 0, self._frontier.nbytes, stream.ptr)
        _kernel("queue_to_bitmap")((runtime.blocks_for(size, THREADS),), (THREADS,),
                                   (self._queue, i32(size), self._frontier))

    def _bitmap_to_queue(self):
        """Bottom-up to top-down: the frontier bitmap becomes a sorted queue."""
        word_end = self._prefix_sums.of_populations(self._frontier, self._filled_words)
        bitmap_to_queue(self._frontier, self._filled_words, word_end, self._queue)


def bitmap_to_queue(bitmap_words, num_words, word_end, queue):
    """The set bits of ``bitmap_words`` as a sorted queue of vertices (bit b of word w: 32 w + b), each word's
    written from its rank (``word_end``: inclusive prefix sums of the words' populations)."""
    _kernel("bitmap_to_queue")((runtime.blocks_for(num_words, THREADS),), (THREADS,),
                               (bitmap_words, i32(num_words), word_end, queue))


def strongest_neighbours(offsets, neighbors, degrees=None):
    """Each row's neighbour of largest degree (int32; -1 for an empty row): ``degrees`` of every vertex (uint32),
    or None when the rows are the whole graph's (their lengths)."""
    num_rows = offsets.shape[0] - 1
    strongest = cupy.empty(num_rows, dtype=np.int32)
    kernel = _kernel("strongest_neighbours")
    kernel((runtime.persistent_blocks(kernel, THREADS),), (THREADS,),
           (i64(num_rows), offsets, neighbors, runtime.pointer_or_null(degrees), strongest))
    return strongest


def beamer_direction(direction, size, edges, unexplored, previous_size, num_vertices, alpha, beta,
                     min_bottom_up_frontier):
    """The next level's direction by Beamer's rule with the frontier-size guard (see the module docstring):
    ``size`` and ``edges`` of the frontier, ``unexplored`` edges, the previous frontier's size."""
    if direction == TOP_DOWN:
        return BOTTOM_UP if edges > unexplored / alpha and size >= min_bottom_up_frontier else TOP_DOWN
    return TOP_DOWN if size < previous_size and size < num_vertices / beta else BOTTOM_UP


def bitmap(flags, num_words):
    """Pack booleans into uint32 words, bit v & 31 of word v >> 5; bits past the end are set."""
    padded = cupy.ones(num_words * 32, dtype=np.bool_)
    padded[:flags.shape[0]] = flags
    return cupy.packbits(padded, bitorder="little").view(np.uint32)


def _level_events():
    events = (cupy.cuda.Event(), cupy.cuda.Event())
    events[0].record()
    return events


def _trace_entry(direction, size, counts, events):
    return {
        "direction": direction,
        "frontier": size,
        "discovered": int(counts[FRONTIER_SIZE]),
        "discovered_edges": int(counts[FRONTIER_EDGES]),
        "scanned_vertices": int(counts[SCANNED_VERTICES]),
        "scanned_edges": int(counts[SCANNED_EDGES]),
        "seconds": cupy.cuda.get_elapsed_time(*events) / 1e3,
    }


@register()
class TopDownBFS(LevelSynchronousBFS):
    """Every level top-down, edge-parallel."""

    name = "gpu-top-down"
    directions = TOP_DOWN


@register()
class BottomUpBFS(LevelSynchronousBFS):
    """Every level bottom-up, on bitmaps."""

    name = "gpu-bottom-up"
    directions = BOTTOM_UP


@register(default=True)
class DirectionOptimizingBFS(LevelSynchronousBFS):
    """Top-down or bottom-up per level, by the switching rule."""

    name = "gpu-direction-optimizing"
