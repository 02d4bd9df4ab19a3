"""Kernel 3, ``delta-stepping``: parallel delta-stepping SSSP with bucket fusion, without atomics.

Algorithm: Meyer and Sanders, "Delta-stepping: a parallelizable shortest
path algorithm" (J. Algorithms 49, 2003). Vertices wait in buckets of width
``delta`` by tentative distance, and buckets are settled in increasing
order. Settling bucket b relaxes the *light* edges (weight < delta) of its
vertices in phases, until no vertex re-enters b, then the *heavy* edges of
every vertex settled in b, once. Bucket fusion, as in the GAP Benchmark
Suite (Beamer, Asanovic, Patterson): a phase with few edges runs on the
calling thread, so the many small phases of a bucket cost no thread wake-up
and no barrier.

No atomic operation. A vertex's state is one 64-bit word, float32 distance
bits above the parent's label, so a distance and its parent are always
written together (an aligned 64-bit store is indivisible, and non-negative
floats order like their bit patterns). A phase has two steps:

1. Relax. Each thread takes an equal share of the phase's edges; for every
   improvement ``float32(d(u) + w) < d(v)`` it stores v's new word and
   appends ``(v, word)`` to its own request buffer. Two threads may store to
   one v at once, and a smaller word may be overwritten by a larger one: a
   lost update.
2. Verify and classify. Each thread rereads the words of its requests. A
   request below the current word was lost: if any was, the step is rolled
   back and redone on one thread, exactly. A request equal to the current
   word is v's new state (only one request can be equal): it goes to the
   thread's next frontier if its bucket is b, else to the thread's bin for
   its bucket.

Frontier entries carry the word they were kept with, and light edges are
relaxed from that word, not from the shared array: every request of a phase
derives from states fixed before the phase, so a parent got its distance in
an earlier phase than its child, and zero-weight edges cannot close a parent
cycle. Distances are float32 sums ``float32(d(u) + w)``, so the result meets
the validator's exact rule ``d(v) == d(parent) + w``.

Data structures: the kernel's own copy of the CSR rows with each row's light
edges first, and ``row_bounds[v] = (row start, light end)`` (one cache line
holds both and the next row's start); ``state`` (uint64, one word per
vertex); per thread ("task"): a frontier *segment* of (vertex, word, edge
prefix) entries, the frontier being the concatenation of all segments, cut
by edges into equal shares for the relax step; a request buffer; a settled
segment (the bucket's (vertex, word) entries, for the heavy step, which
skips an entry whose word is no longer the vertex's state); bins: per task, a ring of
``ceil(max weight / delta) + 3`` bins (no relaxation reaches further), each a
linked list of blocks of ``BLOCK`` (vertex, word) entries from the task's
pool, whose free blocks wait on a stack.
Limit: fewer than 2^32 vertices (the parent takes 32 bits).

Tunables: ``delta`` (default 0.005 x the largest weight: the best of the
sweep in ``benchmarks/cpu_kernels.py --sweep`` on Graph500 graphs, whose
shortest paths are short: most distances are below 0.1), ``fusion_edges``
(phases with fewer edges run on one thread; default 2^14), ``round_edges``
(edges per thread between two verifications, the size of the request
buffers; default 2^20), ``reorder`` (default True: degree ordering, see
`reorder`).

Numba notes: all per-thread work goes through one parallel loop
(`_run_tasks`) to keep compilation short; constants passed to jitted calls
are wrapped (``np.int64(0)``) so that Numba compiles one version, not one per
literal value.
"""

import time

import numba
import numpy as np
from numba.cpython.unsafe.numbers import viewer

from graph500.kernels import register
from graph500.kernels.cpu.reorder import relabel

DELTA_PER_MAX_WEIGHT = 0.005
FUSION_EDGES = 1 << 14
ROUND_EDGES = 1 << 20
RING_SLACK = 3
MAX_VERTICES = 2**32 - 1

_SHIFT = np.uint64(32)
_PARENT_MASK = np.uint64(0xFFFFFFFF)
UNREACHED = np.uint64(0x7F800000FFFFFFFF)  # distance +inf, parent all ones
_NO_ENTRY = -1

# what `_task_step` does
_RELAX, _CLASSIFY, _EXTRACT, _UNPACK = 0, 1, 2, 3
# bins: entries per block, and the fields of a bin's metadata
BLOCK = 512
EXTRACT_ENTRY_EDGES = 8  # an entry taken from a bin costs about as much as relaxing this many edges
_FIRST, _LAST, _FILL, _SIZE = 0, 1, 2, 3


# ---------------------------------------------------------------- state words

@numba.njit(inline="always", cache=True)
def _pack(distance, parent):
    return (np.uint64(viewer(distance, np.uint32)) << _SHIFT) | np.uint64(parent)


@numba.njit(inline="always", cache=True)
def _distance(word):
    return viewer(np.uint32(word >> _SHIFT), np.float32)


@numba.njit(inline="always", cache=True)
def _bucket(word, inverse_delta):
    return np.int64(np.float64(_distance(word)) * inverse_delta)


# ---------------------------------------------------------------- segments

@numba.njit(inline="always", cache=True)
def _append(segments, task, vertex, word, edges):
    i = segments[3][task]
    segments[0][task, i] = vertex
    segments[1][task, i] = word
    segments[2][task, i + 1] = segments[2][task, i] + edges
    segments[3][task] = i + 1


@numba.njit(inline="always", cache=True)
def _settle(vertex, word, task, graph, frontier, settled):
    """Put a vertex of the current bucket in the task's frontier and settled segments."""
    row_bounds = graph[0]
    light_end = row_bounds[vertex, 1]
    _append(frontier, task, vertex, word, light_end - row_bounds[vertex, 0])
    _append(settled, task, vertex, word, row_bounds[vertex + 1, 0] - light_end)


@numba.njit(cache=True)
def _totals(prefix, count):
    """``(count_before, edges_before)``: entries and edges of the segments before each one."""
    num_segments = count.shape[0]
    count_before = np.zeros(num_segments + 1, dtype=np.int64)
    edges_before = np.zeros(num_segments + 1, dtype=np.int64)
    for s in range(num_segments):
        count_before[s + 1] = count_before[s] + count[s]
        edges_before[s + 1] = edges_before[s] + prefix[s, count[s]]
    return count_before, edges_before


@numba.njit(cache=True)
def _entry_at(position, prefix, count, count_before, edges_before):
    """The first entry (index into the concatenated segments) with at least ``position`` edges before it."""
    for s in range(count.shape[0]):
        if position <= edges_before[s + 1]:
            return count_before[s] + np.searchsorted(prefix[s, :count[s] + 1], position - edges_before[s])
    return count_before[count.shape[0]]


@numba.njit(cache=True)
def _drop_front(segments, counts):
    """Remove the first ``counts[task]`` entries of each task's segment."""
    vertex, word, prefix, count = segments
    for task in range(count.shape[0]):
        dropped = counts[task]
        base = prefix[task, dropped]
        for i in range(count[task] - dropped):
            vertex[task, i] = vertex[task, dropped + i]
            word[task, i] = word[task, dropped + i]
            prefix[task, i + 1] = prefix[task, dropped + i + 1] - base
        count[task] -= dropped


@numba.njit(cache=True)
def _grown(array, needed):
    """``array`` (tasks x capacity) itself, or a copy with at least ``needed`` columns."""
    if needed <= array.shape[1]:
        return array
    bigger = np.empty((array.shape[0], max(needed, 2 * array.shape[1])), dtype=array.dtype)
    for row in range(array.shape[0]):
        for column in range(array.shape[1]):
            bigger[row, column] = array[row, column]
    return bigger


@numba.njit(cache=True)
def _with_room(segments, extra):
    """The segments, grown if needed so that every task's segment can take ``extra`` more entries."""
    vertex, word, prefix, count = segments
    needed = count.max() + extra
    return _grown(vertex, needed), _grown(word, needed), _grown(prefix, needed + 1), count


@numba.njit(cache=True)
def _bins_with_room(bins, extra):
    """The bins, with the block pool grown if needed so that every task can append ``extra`` entries."""
    block_vertex, block_word, block_next, free_stack, free_top, meta = bins
    ring = meta.shape[1]
    needed = extra // BLOCK + min(extra, ring) + 1  # a new block per slot touched, plus the full ones
    if free_top.min() >= needed:
        return bins
    old_blocks = block_next.shape[1]
    blocks = max(2 * old_blocks, old_blocks + needed)
    free_stack = _grown(free_stack, blocks)
    for task in range(free_top.shape[0]):
        for block in range(old_blocks, blocks):
            free_stack[task, free_top[task]] = block
            free_top[task] += 1
    return (_grown(block_vertex, blocks * BLOCK), _grown(block_word, blocks * BLOCK), _grown(block_next, blocks),
            free_stack, free_top, meta)


# ---------------------------------------------------------------- one task's part of a step

@numba.njit(cache=True)
def _relax_share(task, first, last, count_before, source, heavy, graph, state, requests):
    """Relax the light (or heavy) edges of entries ``first:last``; returns the edges examined.

    Light edges are relaxed from the entry's word; heavy ones only from an
    entry whose word is still the vertex's state.
    """
    row_bounds, neighbors, weights = graph[0], graph[1], graph[2]
    segment_vertex, segment_word = source[0], source[1]
    request_vertex, request_word, request_count = requests
    made = 0
    examined = 0
    s = 0
    for entry in range(first, last):
        while entry >= count_before[s + 1]:
            s += 1
        u = segment_vertex[s, entry - count_before[s]]
        word = segment_word[s, entry - count_before[s]]
        if heavy:
            if state[u] != word:
                continue
            begin, end = row_bounds[u, 1], row_bounds[u + 1, 0]
        else:
            begin, end = row_bounds[u, 0], row_bounds[u, 1]
        distance = _distance(word)
        examined += end - begin
        for k in range(begin, end):
            v = neighbors[k]
            candidate = _pack(np.float32(distance + weights[k]), u)
            if (candidate >> _SHIFT) < (state[v] >> _SHIFT):
                state[v] = candidate
                request_vertex[task, made] = v
                request_word[task, made] = candidate
                made += 1
    request_count[task] = made
    return examined


@numba.njit(cache=True)
def _classify(task, requests, state, bucket, inverse_delta, graph, frontier, settled, bins):
    """Keep each request that is its vertex's state; returns how many requests were lost."""
    request_vertex, request_word, request_count = requests
    ring = bins[5].shape[1]
    lost = 0
    for j in range(request_count[task]):
        v = request_vertex[task, j]
        word = request_word[task, j]
        current = state[v]
        if (word >> _SHIFT) < (current >> _SHIFT):
            state[v] = word
            lost += 1
        elif word == current:
            target = _bucket(word, inverse_delta)
            if target == bucket:
                _settle(v, word, task, graph, frontier, settled)
            else:
                _bin_append(bins, task, target % ring, v, word)
    return lost


@numba.njit(inline="always", cache=True)
def _bin_append(bins, task, slot, vertex, word):
    """Append (vertex, word) to the task's bin ``slot``, taking a block from the task's free stack when needed."""
    block_vertex, block_word, block_next, free_stack, free_top, meta = bins
    last = meta[task, slot, _LAST]
    fill = meta[task, slot, _FILL]
    if last == _NO_ENTRY or fill == BLOCK:
        free_top[task] -= 1
        block = free_stack[task, free_top[task]]
        block_next[task, block] = _NO_ENTRY
        if last == _NO_ENTRY:
            meta[task, slot, _FIRST] = block
        else:
            block_next[task, last] = block
        meta[task, slot, _LAST] = block
        last = block
        fill = 0
    block_vertex[task, last * BLOCK + fill] = vertex
    block_word[task, last * BLOCK + fill] = word
    meta[task, slot, _FILL] = fill + 1
    meta[task, slot, _SIZE] += 1


@numba.njit(cache=True)
def _extract_bin(task, slot, state, graph, frontier, settled, bins):
    """Move the task's live entries of bin ``slot`` to its frontier segment and free the bin's blocks."""
    block_vertex, block_word, block_next, free_stack, free_top, meta = bins
    moved = 0
    block = meta[task, slot, _FIRST]
    while block != _NO_ENTRY:
        end = block * BLOCK + (meta[task, slot, _FILL] if block == meta[task, slot, _LAST] else BLOCK)
        for entry in range(block * BLOCK, end):
            v = block_vertex[task, entry]
            word = block_word[task, entry]
            if state[v] == word:
                _settle(v, word, task, graph, frontier, settled)
                moved += 1
        free_stack[task, free_top[task]] = block
        free_top[task] += 1
        block = block_next[task, block]
    _empty_bin(meta, task, slot)
    return moved


@numba.njit(inline="always", cache=True)
def _empty_bin(meta, task, slot):
    meta[task, slot, _FIRST] = _NO_ENTRY
    meta[task, slot, _LAST] = _NO_ENTRY
    meta[task, slot, _FILL] = 0
    meta[task, slot, _SIZE] = 0


@numba.njit(cache=True)
def _unpack_range(first, last, state, order, parents, distances):
    """Write parents and distances (original labels) of vertices ``first:last``; reset their state."""
    for v in range(first, last):
        word = state[v]
        original = order[v]
        if word == UNREACHED:
            parents[original] = -1
            distances[original] = np.inf
        else:
            parents[original] = order[np.int64(word & _PARENT_MASK)]
            distances[original] = _distance(word)
        state[v] = UNREACHED


# ---------------------------------------------------------------- every task's part, in parallel or on one thread

@numba.njit(cache=True)
def _task_step(step, task, cuts, count_before, source, heavy, graph, state, requests, bucket, inverse_delta,
               frontier, settled, bins, outputs):
    """Task ``task``'s part of ``step``. ``cuts``: the tasks' entry ranges (relax), vertex ranges (unpack),
    or the bin's slot (extract)."""
    if step == _RELAX:
        return _relax_share(task, cuts[task], cuts[task + 1], count_before, source, heavy, graph, state, requests)
    if step == _CLASSIFY:
        return _classify(task, requests, state, bucket, inverse_delta, graph, frontier, settled, bins)
    if step == _EXTRACT:
        return _extract_bin(task, cuts[0], state, graph, frontier, settled, bins)
    _unpack_range(cuts[task], cuts[task + 1], state, graph[3], outputs[0], outputs[1])
    return 0


@numba.njit(parallel=True, cache=True)
def _run_tasks_parallel(step, cuts, count_before, source, heavy, graph, state, requests, bucket, inverse_delta,
                        frontier, settled, bins, outputs, results):
    for task in numba.prange(results.shape[0]):
        results[task] = _task_step(step, np.int64(task), cuts, count_before, source, heavy, graph, state, requests,
                                   bucket, inverse_delta, frontier, settled, bins, outputs)


@numba.njit(cache=True)
def _run_tasks(parallel, step, cuts, count_before, source, heavy, graph, state, requests, bucket, inverse_delta,
               frontier, settled, bins, outputs):
    """Run one step for every task, on all threads or (fused) on this one; returns the sum of the results."""
    results = np.zeros(requests[2].shape[0], dtype=np.int64)
    if parallel:
        _run_tasks_parallel(step, cuts, count_before, source, heavy, graph, state, requests, bucket, inverse_delta,
                            frontier, settled, bins, outputs, results)
    else:
        for task in range(results.shape[0]):
            results[task] = _task_step(step, task, cuts, count_before, source, heavy, graph, state, requests, bucket,
                                       inverse_delta, frontier, settled, bins, outputs)
    return results.sum()


# ---------------------------------------------------------------- phases and buckets

@numba.njit(cache=True)
def _clock():
    with numba.objmode(now="float64"):
        now = time.perf_counter()
    return now


@numba.njit(cache=True)
def _roll_back(saved, frontier, settled, bins):
    """Undo a classification: truncate its outputs to their saved sizes."""
    frontier_count, settled_count, free_top, meta = saved
    block_next = bins[2]
    for task in range(settled_count.shape[0]):
        frontier[3][task] = frontier_count[task]
        settled[3][task] = settled_count[task]
        bins[4][task] = free_top[task]  # the blocks taken are still above the top of the free stack
        for slot in range(meta.shape[1]):
            for field in range(meta.shape[2]):
                bins[5][task, slot, field] = meta[task, slot, field]
            if meta[task, slot, _LAST] != _NO_ENTRY:
                block_next[task, meta[task, slot, _LAST]] = _NO_ENTRY


@numba.njit(cache=True)
def _relax_source(source, heavy, graph, state, bucket, inverse_delta, frontier, settled, bins, requests, outputs,
                  tunables, counters):
    """Relax the light (or heavy) edges of the source segments' vertices, in rounds of at most
    ``round_edges`` edges per task, each verified and classified.

    Returns the (possibly grown) ``frontier, settled, bins``. ``counters`` +=
    [rounds, parallel rounds, edges examined].
    """
    fusion_edges, round_edges = tunables[0], tunables[1]
    num_tasks = requests[2].shape[0]
    source_count = source[3].copy()  # a heavy step appends to its own source
    count_before, edges_before = _totals(source[2], source_count)
    total_edges = edges_before[num_tasks]
    cuts = np.empty(num_tasks + 1, dtype=np.int64)
    window_start = 0
    while window_start < total_edges:
        window_end = min(total_edges, window_start + num_tasks * round_edges)
        for task in range(num_tasks + 1):
            position = window_start + (window_end - window_start) * task // num_tasks
            cuts[task] = _entry_at(position, source[2], source_count, count_before, edges_before)
        if window_end == total_edges:
            cuts[num_tasks] = count_before[num_tasks]
        parallel = num_tasks > 1 and window_end - window_start >= fusion_edges
        examined = _run_tasks(parallel, np.int64(_RELAX), cuts, count_before, source, heavy, graph, state, requests,
                              bucket, inverse_delta, frontier, settled, bins, outputs)
        most = requests[2].max()
        frontier = _with_room(frontier, most)
        settled = _with_room(settled, most)
        bins = _bins_with_room(bins, most)
        saved = (frontier[3].copy(), settled[3].copy(), bins[4].copy(), bins[5].copy())
        lost = _run_tasks(parallel, np.int64(_CLASSIFY), cuts, count_before, source, heavy, graph, state, requests,
                          bucket, inverse_delta, frontier, settled, bins, outputs)
        if lost:  # redo exactly on this thread: restore every vertex's smallest request, then classify
            _roll_back(saved, frontier, settled, bins)
            for task in range(num_tasks):
                for j in range(requests[2][task]):
                    v = requests[0][task, j]
                    if (requests[1][task, j] >> _SHIFT) < (state[v] >> _SHIFT):
                        state[v] = requests[1][task, j]
            _run_tasks(np.bool_(False), np.int64(_CLASSIFY), cuts, count_before, source, heavy, graph, state,
                       requests, bucket, inverse_delta, frontier, settled, bins, outputs)
        counters[0] += 1
        counters[1] += parallel
        counters[2] += examined
        window_start = window_end
    return frontier, settled, bins


@numba.njit(cache=True)
def _next_bucket(bucket, meta):
    """The first bucket after ``bucket`` with an entry in some task's bin, or -1."""
    ring = meta.shape[1]
    for later in range(bucket + 1, bucket + ring):
        for task in range(meta.shape[0]):
            if meta[task, later % ring, _SIZE]:
                return later
    return -1


@numba.njit(cache=True)
def _reset_bins(bins):
    """Empty every bin and put every block on its task's free stack."""
    free_stack, free_top, meta = bins[3], bins[4], bins[5]
    for task in range(meta.shape[0]):
        for slot in range(meta.shape[1]):
            _empty_bin(meta, task, slot)
        for block in range(free_stack.shape[1]):
            free_stack[task, block] = block
        free_top[task] = free_stack.shape[1]


@numba.njit(cache=True)
def delta_stepping(graph, root, inverse_delta, state, frontier, next_frontier, settled, bins, requests, outputs,
                   tunables):
    """SSSP from ``root`` into ``outputs`` (parents, distances); ``state`` must be all UNREACHED and is left so.

    Returns ``(trace rows, bins)``: one row per bucket (bucket, rounds, parallel
    rounds, vertices settled, edges examined, seconds), and the (possibly
    grown) bins.
    """
    num_tasks = requests[2].shape[0]
    ring = bins[5].shape[1]
    for segments in (frontier, next_frontier, settled):
        segments[3][:] = 0
    _reset_bins(bins)
    light, heavy = np.bool_(False), np.bool_(True)
    state[root] = _pack(np.float32(0.0), root)
    _settle(root, state[root], 0, graph, frontier, settled)
    trace = []
    bucket = np.int64(0)
    while bucket >= 0:
        start = _clock()
        if bucket > 0:
            slot = np.full(1, bucket % ring, dtype=np.int64)
            waiting = 0
            for task in range(num_tasks):
                waiting += bins[5][task, slot[0], _SIZE]
            _run_tasks(waiting * EXTRACT_ENTRY_EDGES >= tunables[0], np.int64(_EXTRACT), slot, slot, frontier, light,
                       graph, state, requests, bucket, inverse_delta, frontier, settled, bins, outputs)
        counters = np.zeros(3, dtype=np.int64)
        vertices = 0
        while frontier[3].sum():
            while frontier[3].sum():  # light phases
                next_frontier, settled, bins = _relax_source(frontier, light, graph, state, bucket, inverse_delta,
                                                             next_frontier, settled, bins, requests, outputs,
                                                             tunables, counters)
                frontier[3][:] = 0
                frontier, next_frontier = next_frontier, frontier
            heavy_sources = settled[3].copy()
            vertices += heavy_sources.sum()
            frontier, settled, bins = _relax_source(settled, heavy, graph, state, bucket, inverse_delta, frontier,
                                                    settled, bins, requests, outputs, tunables, counters)
            _drop_front(settled, heavy_sources)
        if vertices:
            trace.append((bucket, counters[0], counters[1], vertices, counters[2], _clock() - start))
        bucket = _next_bucket(bucket, bins[5])
    num_vertices = state.shape[0]
    cuts = np.arange(num_tasks + 1) * num_vertices // num_tasks
    _run_tasks(np.bool_(num_tasks > 1), np.int64(_UNPACK), cuts, cuts, frontier, light, graph, state, requests,
               bucket, inverse_delta, frontier, settled, bins, outputs)
    return trace, bins


def _segments(num_tasks, capacity, vertex_dtype):
    return (np.empty((num_tasks, capacity), dtype=vertex_dtype), np.empty((num_tasks, capacity), dtype=np.uint64),
            np.zeros((num_tasks, capacity + 1), dtype=np.int64), np.zeros(num_tasks, dtype=np.int64))


@register(default=True)
class DeltaSteppingSSSP:
    """Parallel delta-stepping with light/heavy edges and bucket fusion, atomic-free."""

    name = "delta-stepping"
    kind = "sssp"
    backend = "cpu"

    def __init__(self, graph, delta=None, fusion_edges=FUSION_EDGES, round_edges=ROUND_EDGES, reorder=True):
        if graph.weights is None:
            raise ValueError("SSSP needs a weighted graph")
        if graph.num_vertices > MAX_VERTICES:
            raise ValueError(f"delta-stepping handles at most {MAX_VERTICES} vertices, got {graph.num_vertices}")
        max_weight = float(graph.weights.max()) if graph.num_edges else 0.0
        if delta is None:
            delta = DELTA_PER_MAX_WEIGHT * max_weight if max_weight > 0 else 1.0
        if not delta > 0:
            raise ValueError(f"delta must be positive, got {delta}")
        self.graph = graph
        self.delta = float(delta)
        self.ring = int(np.ceil(max_weight / self.delta)) + RING_SLACK
        self.tunables = np.array([fusion_edges, max(1, round_edges)], dtype=np.int64)
        rows = relabel(graph, reorder, weighted=True, split_below=self.delta)
        row_bounds = np.empty((graph.num_vertices + 1, 2), dtype=np.int64)
        row_bounds[:, 0] = rows.offsets
        row_bounds[:-1, 1] = rows.light_end
        row_bounds[-1, 1] = rows.offsets[-1]
        self.rows = (row_bounds, rows.neighbors, rows.weights, rows.order)
        self.new_label = rows.new_label
        max_degree = int(np.diff(graph.offsets).max()) if graph.num_vertices else 0
        self.request_capacity = max(1, round_edges) + max_degree
        self.state = np.full(graph.num_vertices, UNREACHED, dtype=np.uint64)
        self.state_is_clean = True
        self.num_tasks = 0
        self.trace = []

    def _workspace(self):
        """Per-thread buffers, made again when the Numba thread count changes."""
        num_tasks = numba.get_num_threads()
        if num_tasks != self.num_tasks:
            capacity = self.graph.num_vertices // num_tasks + 1
            dtype = self.graph.neighbors.dtype
            self.frontier = _segments(num_tasks, capacity, dtype)
            self.next_frontier = _segments(num_tasks, capacity, dtype)
            self.settled = _segments(num_tasks, capacity, dtype)
            blocks = capacity // BLOCK + self.ring + 1
            self.bins = (np.empty((num_tasks, blocks * BLOCK), dtype=dtype),
                         np.empty((num_tasks, blocks * BLOCK), dtype=np.uint64),
                         np.empty((num_tasks, blocks), dtype=np.int64), np.empty((num_tasks, blocks), dtype=np.int64),
                         np.empty(num_tasks, dtype=np.int64), np.empty((num_tasks, self.ring, 4), dtype=np.int64))
            self.requests = (np.empty((num_tasks, self.request_capacity), dtype=dtype),
                             np.empty((num_tasks, self.request_capacity), dtype=np.uint64),
                             np.zeros(num_tasks, dtype=np.int64))
            self.num_tasks = num_tasks

    def search(self, root):
        self._workspace()
        num_vertices = self.graph.num_vertices
        if not self.state_is_clean:  # an earlier search was interrupted
            self.state[:] = UNREACHED
        self.state_is_clean = False
        outputs = (np.empty(num_vertices, dtype=np.int64), np.empty(num_vertices, dtype=np.float32))
        trace, self.bins = delta_stepping(self.rows, self.new_label[root], 1.0 / self.delta, self.state, self.frontier,
                                          self.next_frontier, self.settled, self.bins, self.requests, outputs,
                                          self.tunables)
        self.state_is_clean = True
        self.trace = [{"direction": "parallel" if parallel else "fused", "bucket": bucket, "rounds": rounds,
                       "frontier": vertices, "edges_examined": examined, "seconds": seconds}
                      for bucket, rounds, parallel, vertices, examined, seconds in trace]
        return outputs
