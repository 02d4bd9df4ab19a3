"""Kernel 2 on the GPU: level-synchronous BFS, top-down, bottom-up and direction-optimizing.

Algorithm: Beamer, Asanović, Patterson, "Direction-Optimizing Breadth-First
Search" (SC 2012): top-down while the frontier is small, bottom-up through
the explosive middle levels, top-down at the tail. One engine
(`LevelSynchronousBFS`), three kernels: ``gpu-direction-optimizing``
(default), ``gpu-top-down``, ``gpu-bottom-up``.

- Top-down (``top_down_expand``): edge-parallel over the frontier queue, the
  load-balanced expansion of Merrill, Garland, Grimshaw (PPoPP 2012) in
  ``common.cuh``; a vertex is claimed by the ``atomicOr`` of its visited bit.
  A frontier of at most SMALL_FRONTIER vertices and ``small_edges`` edges
  runs its levels in one block with no host round trip
  (``top_down_small_levels``).
- Bottom-up (``bottom_up_scan``, ``bottom_up_long``): a warp reads 32
  visited words at once and gives their unvisited vertices to its lanes,
  a word's 32 at a time where most are unvisited, else listed in shared
  memory first so that no lane idles; each tests its strongest neighbour
  (largest degree) first, then reads its row to the first frontier
  neighbour; rows longer than ``short_scan`` go to a warp-per-vertex pass.
- Switch (``beamer_direction``): bottom-up when the frontier's edges exceed
  1/alpha of the unexplored ones and it holds at least N/gamma vertices;
  back when it shrinks below N/beta. Or Enterprise's hub share (Liu and
  Huang, SC 2015).
- Degree-ordered graphs (the backend's kernel 1): the search runs under the
  graph's labels and maps its parents back with one gather
  (``parents_to_input_labels``). Several GPUs (``bfs_distributed.py``) run
  these kernels on a rank's block.

Data structures (N vertices, W = N/32 words): parents (int32), bitmaps
visited, frontier, next frontier, never-searched (W words each), two queues
(int32, N), prefix sums (uint64, N), strongest neighbours (int32, N), with
``row_copy`` the neighbours in label order (int32 per entry).

Tunables: ``alpha`` (ALPHA 30) and ``gamma`` (GAMMA 16384), the switch to
bottom-up, tuned on degree-ordered graphs; ``beta`` (BETA 24), the switch
back; ``switch_rule`` ("beamer" or "hub-share", with ``hub_share`` 0.3 and
``hub_degree`` 256); ``short_scan`` (32 neighbours a thread reads before
the warp pass); ``small_edges`` (4096) and ``small_follow``, the one-block
levels; ``strongest_first``; ``row_copy`` (True: a graph whose rows an
SSSP built after it sorts by weight leaves the BFS's in label order; a run
passes False, its SSSP built once the BFS pass is over); ``trace`` (CUDA
events per level). Why each default, and what each cost or saved:
docs/kernels/gpu-bfs.md.
"""

import numpy as np

from graph500.kernels import register
from graph500.kernels.gpu import runtime
from graph500.kernels.gpu.build import filled_vertices
from graph500.kernels.gpu.frontier import SMALL_FRONTIER, PrefixSums
from graph500.kernels.gpu.runtime import cupy, i32, i64, u32, u64
from graph500.kernels.graph import RootLabels

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
        self._min_bottom_up_frontier = min_bottom_up_frontier(graph.num_vertices, gamma)
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
        self._root_labels = RootLabels(graph)
        self._strongest = strongest_neighbours(graph.offsets, self._neighbors) if strongest_first else runtime.NULL
        self._scan_grid = scan_grid(self._filled_words)
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
        root = self._root_labels(root)  # under the graph's labels from here
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
        """The root's level (``root`` under the graph's labels): parents cleared (unless the graph is renumbered),
        visited, the queue and counters."""
        graph = self.graph
        start = _kernel("start_search")
        start((runtime.persistent_blocks(start, THREADS, self._filled_vertices),), (THREADS,),
              (i32(root), i64(0), i64(graph.num_vertices),
               i64(0 if graph.order is not None else graph.num_vertices), i32(self._num_words),
               self._never_searched, graph.offsets, u32(self.hub_degree), parent, self._visited, self._queue,
               self._counters.device, runtime.NULL))

    def _level_counts(self, size, small, unexplored):
        """After a level (or start_search): ``(size, next size, its edges, its hubs, unexplored edges)`` from
        the counters, read once; ``small``: the one-block levels ran last (an odd number of them leaves the
        frontier in the other queue)."""
        counts = self._counters.read()
        if small and counts[LEVELS_DONE] % 2:
            self._queue, self._next_queue = self._next_queue, self._queue
        next_size, edges, hubs = (int(counts[k]) for k in (FRONTIER_SIZE, FRONTIER_EDGES, FRONTIER_HUBS))
        return size, next_size, edges, hubs, int(counts[UNEXPLORED_EDGES]) if small else unexplored - edges

    def _to_input_labels(self, parent, root):
        """The parents of a degree-ordered graph's search (from ``root``, under its labels) under the input's
        labels (a new array)."""
        graph = self.graph
        return parents_to_input_labels(graph.order, graph.new_label, self._visited, parent, graph.num_vertices,
                                       self._filled_vertices, root)

    def _choose_direction(self, direction, size, edges, hubs, unexplored, previous_size):
        """The direction of the next level: the subclass's, or by the switching rule."""
        if self.directions:
            return self.directions
        if direction == TOP_DOWN and self.switch_rule == "hub-share":
            return BOTTOM_UP if hubs > self.hub_share * self._num_hubs else TOP_DOWN
        return beamer_direction(direction, size, edges, unexplored, previous_size, self.graph.num_vertices,
                                self.alpha, self.beta, self._min_bottom_up_frontier)

    def _top_down_level(self, parent, size, edges):
        top_down_expand(self._prefix_sums, self._queue, size, edges, self.graph.offsets, self._row_end,
                        self._neighbors, self.hub_degree, self._visited, parent, self._next_queue,
                        self._counters.device)
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
        bottom_up_level((self._scan_grid, self._long_grid), self._filled_words, self.graph.offsets, self._neighbors,
                        self._strongest, self._frontier, self.short_scan, self.hub_degree, self._visited,
                        self._next_frontier, parent, self._next_queue, self._counters.device)  # next queue: idle
        self._frontier, self._next_frontier = self._next_frontier, self._frontier

    def _queue_to_bitmap(self, size):
        """Top-down to bottom-up: the frontier queue becomes the frontier bitmap."""
        queue_to_bitmap(self._queue, size, self._frontier)

    def _bitmap_to_queue(self):
        """Bottom-up to top-down: the frontier bitmap becomes a sorted queue."""
        sorted_queue(self._prefix_sums, self._frontier, self._filled_words, self._queue)


# The level launchers, shared with the multi-GPU BFS (bfs_distributed.py): the rows, queues, parents and
# ``visited`` words passed are a whole graph's or a rank's block's (vertex indices then local to the block).

def top_down_expand(prefix_sums, queue, size, edges, offsets, row_end, neighbors, hub_degree, visited, parent,
                    next_queue, counters, first_vertex=0, remote_parent=None, remote_claims=None):
    """A top-down level: the queue's ``size`` vertices (``edges`` edges) expanded edge-parallel into
    ``next_queue``; rows and parents are those of [first_vertex, first_vertex + rows), and a claim of a vertex
    outside them goes to ``remote_parent`` and ``remote_claims`` (several GPUs: `requests.OwnerRequests`)."""
    if not edges:
        return
    edge_end, tile_first = prefix_sums.of_edge_counts(queue, size, offsets, row_end, edges)
    _kernel("top_down_expand")(
        (runtime.blocks_for(edges, EXPAND_TILE),), (THREADS,),
        (queue, edge_end, tile_first, i32(size), u64(edges), offsets, neighbors, u32(hub_degree), visited, parent,
         next_queue, counters, i64(first_vertex), i64(offsets.shape[0] - 1), runtime.pointer_or_null(remote_parent),
         runtime.pointer_or_null(remote_claims)))


def scan_grid(num_words):
    """``bottom_up_scan``'s grid for ``num_words`` words of visited: a warp each 32 words, the block scheduler
    sharing out the chunks as warps finish (a rank's block has few chunks a warp: none waits on a last round)."""
    return runtime.blocks_for(num_words, 32 * (THREADS // 32))  # 32 words a warp


def bottom_up_level(grids, num_words, offsets, neighbors, strongest, frontier, short_scan, hub_degree, visited,
                    next_frontier, parent, long_queue, counters):
    """A bottom-up level over ``num_words`` words of ``visited``: the scan (``grids``: its grid, `scan_grid`, and
    the long pass's), then the warp-per-vertex pass over ``long_queue``, writing ``next_frontier``'s words."""
    scan_blocks, long_blocks = grids
    _kernel("bottom_up_scan")(
        (scan_blocks,), (THREADS,),
        (i32(num_words), offsets, neighbors, strongest, frontier, u32(short_scan), u32(hub_degree), visited,
         next_frontier, parent, long_queue, counters))
    _kernel("bottom_up_long")(
        (long_blocks,), (THREADS,),
        (long_queue, offsets, neighbors, frontier, u32(short_scan), u32(hub_degree), visited, next_frontier, parent,
         counters))


def queue_to_bitmap(queue, size, bitmap, size_counter=None, grid=None):
    """The queue's ``size`` vertices as the set bits of ``bitmap``, cleared first; or as many as the device counter
    ``size_counter`` (a one-item uint64 view) holds, by ``grid`` blocks (a launch that a CUDA graph can capture)."""
    stream = cupy.cuda.get_current_stream()
    cupy.cuda.runtime.memsetAsync(bitmap.data.ptr, 0, bitmap.nbytes, stream.ptr)
    if size_counter is not None:
        _kernel("queue_to_bitmap")((grid,), (THREADS,), (queue, i32(0), size_counter, bitmap))
    elif size:
        _kernel("queue_to_bitmap")((runtime.blocks_for(size, THREADS),), (THREADS,),
                                   (queue, i32(size), runtime.NULL, bitmap))


def sorted_queue(prefix_sums, bitmap_words, num_words, queue):
    """The set bits of ``num_words`` words of ``bitmap_words`` as a sorted queue (``prefix_sums``: scratch)."""
    bitmap_to_queue(bitmap_words, num_words, prefix_sums.of_populations(bitmap_words, num_words), queue)


def parents_to_input_labels(order, block_label, visited, parent, num_vertices, filled_vertices, root,
                            first_vertex=0):
    """The parents of ``num_vertices`` vertices from ``first_vertex`` under the input's labels (a new array), from
    a search from ``root`` under a degree-ordered graph's labels (``parent`` and ``visited``: of those vertices,
    written for the visited ones only; ``block_label``: their new labels, the graph's ``new_label``)."""
    original = cupy.empty(num_vertices, dtype=np.int32)
    _kernel("parents_to_input_labels")(
        (runtime.blocks_for(num_vertices, THREADS * REMAP_VERTICES),), (THREADS,),
        (i64(num_vertices), i64(filled_vertices), i32(root), i64(first_vertex), order, block_label, visited,
         parent, original))
    return original


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


def min_bottom_up_frontier(num_vertices, gamma, num_ranks=1):
    """The fewest frontier vertices a switch to bottom-up needs: N / gamma, over a rank's block on ``num_ranks``
    ranks, N / (gamma P) (none where ``gamma`` is 0)."""
    return num_vertices / (gamma * num_ranks) if gamma else 0


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
