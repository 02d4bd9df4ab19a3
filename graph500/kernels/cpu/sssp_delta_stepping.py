"""Kernel 3, ``delta-stepping``: parallel delta-stepping SSSP with bucket fusion, without atomics.

Algorithm: Meyer and Sanders, "Delta-stepping: a parallelizable shortest
path algorithm" (J. Algorithms 49, 2003), with the bucket fusion of the GAP
Benchmark Suite (Beamer, Asanović, Patterson): vertices wait in buckets of
width ``delta``; settling a bucket relaxes the light edges (weight < delta)
of its vertices with light edges in phases until none re-enters it, then
every settled vertex's whole row once (heavy step). A phase with few edges
runs on the calling thread: no wake-up, no barrier.

No atomic operation. A vertex's state is one 64-bit word (float32 distance
bits above the parent), so distance and parent are written together. A
phase runs in rounds: each thread relaxes an equal share of the edges,
storing improvements and keeping (vertex, word) requests; then each rereads
its requests: the one equal to the current word is the state (next frontier
or its bucket's bin), one below it was a lost update, restored afterwards
on one thread. Frontier entries carry the word they were kept with, so a
parent always got its distance a round before its child (no cycles through
zero weights) and distances are exactly float32(d(parent) + w). Leaves are
never settled (their one edge leads back); bins and frontiers prefetch the
state and row of the entry PREFETCH_AHEAD places later.

Data structures (`Workspace`, one StructRef shared by the jitted functions):
the degree-ordered rows and the light edges in rows of their own, row
bounds, ``state`` (uint64 a vertex); per thread: segments of (vertex, word,
row start, edge prefix) entries (two frontiers and the settled list), a
request buffer, a ring of bins of BLOCK-entry blocks from a free pool.
Buffers start at N / threads entries and double when a round might not fit.
Limit: fewer than 2^32 vertices.

Tunables: ``delta`` (DELTA_PER_MAX_WEIGHT 0.005 x the largest weight: best
of the sweep on Graph500 graphs), ``fusion_edges`` (2^11: smaller phases and
bins run on one thread), ``round_edges`` (2^20 edges a thread between
verifications), PREFETCH_AHEAD (8), PREFETCH_EDGES (64), NEIGHBOR_AHEAD
(16), ``reorder`` (True: degree order for a graph built under its input
labels). The measurements behind each choice and what was tried and not
kept: docs/kernels/cpu-sssp-delta-stepping.md.
"""

import time

import numba
import numpy as np

from graph500.compiled import prefetch
from graph500.kernels import register
from graph500.kernels.cpu.frontier import ONE, first_at_least
from graph500.kernels.cpu.reorder import relabel
from graph500.kernels.cpu.sssp_delta_stepping_workspace import (BLOCK, _FIRST, _FILL, _LAST, _NO_ENTRY, _SETTLED,
                                                                _SIZE, _bin_append, _bin_has_room, _empty_bin,
                                                                _keep, _new_workspace, _settle)
from graph500.kernels.cpu.sssp_words import (MAX_VERTICES, UNREACHED, _PARENT_MASK, _SHIFT, _bucket, _distance,
                                             _pack)

DELTA_PER_MAX_WEIGHT = 0.005
FUSION_EDGES = 1 << 11
ROUND_EDGES = 1 << 20
RING_SLACK = 3
PREFETCH_AHEAD = 8  # entries between a prefetch and the entry's use
PREFETCH_EDGES = 64  # of a later entry's row, relaxing prefetches the lines holding its first edges up to this many
LINE_EDGES = 16  # neighbours (or weights) of 4 bytes in a cache line of 64
NEIGHBOR_AHEAD = 16  # edges between the prefetch of a neighbour's state and its relaxation
EXTRACT_ENTRY_EDGES = 8  # taking an entry from a bin costs about as much as relaxing this many edges

_RELAX, _CLASSIFY, _EXTRACT, _UNPACK = 0, 1, 2, 3  # what `_task_step` does


# ---------------------------------------------------------------- one task's part of a step

@numba.njit(cache=True)
def _relax_share(ws, task):
    """Relax the light edges (or whole rows) of the source entries ``cuts[task]:cuts[task + 1]``; returns
    the edges examined. Light edges are relaxed from the entry's word; rows only from an entry whose word is
    still the vertex's state."""
    state = ws.state
    heavy = ws.heavy
    neighbors = ws.neighbors if heavy else ws.light_neighbors
    weights = ws.weights if heavy else ws.light_weights
    source_vertex = ws.segment_vertex[ws.source_role]
    source_word = ws.segment_word[ws.source_role]
    source_row = ws.segment_row[ws.source_role]
    source_prefix = ws.segment_prefix[ws.source_role]
    first_leaf, inverse_delta, bucket, ring = ws.first_leaf, ws.inverse_delta, ws.bucket, ws.bin_meta.shape[1]
    count_before = ws.count_before
    last_edge = np.uint64(neighbors.shape[0] - 1)
    request_vertex, request_word = ws.request_vertex[task], ws.request_word[task]
    made = 0
    examined = 0
    s = 0
    for entry in range(ws.cuts[task], ws.cuts[task + 1]):
        while entry >= count_before[s + 1]:
            s += 1
        segment, i = np.uint64(s), np.uint64(entry - count_before[s])
        u = np.uint64(source_vertex[segment, i])
        word = source_word[segment, i]
        if entry + PREFETCH_AHEAD < count_before[s + 1]:  # a later entry of the same segment: its row
            ahead = i + np.uint64(PREFETCH_AHEAD)
            ahead_row = source_row[segment, ahead]
            ahead_edges = source_prefix[segment, ahead + ONE] - source_prefix[segment, ahead]
            for offset in range(0, max(1, min(ahead_edges, PREFETCH_EDGES)), LINE_EDGES):
                prefetch(neighbors, ahead_row + offset)
                prefetch(weights, ahead_row + offset)
            if heavy:
                prefetch(state, source_vertex[segment, ahead])
        if heavy and state[u] != word:
            continue
        begin = source_row[segment, i]
        end = begin + source_prefix[segment, i + ONE] - source_prefix[segment, i]
        distance = _distance(word)
        examined += end - begin
        for k in range(np.uint64(begin), np.uint64(end)):
            prefetch(state, neighbors[min(k + np.uint64(NEIGHBOR_AHEAD), last_edge)])  # maybe a later row's
            v = np.uint32(neighbors[k])
            candidate = _pack(np.float32(distance + weights[k]), u)
            if (candidate >> _SHIFT) < (state[v] >> _SHIFT):
                state[v] = candidate
                if heavy and v < first_leaf:  # straight to its bin if that is a later bucket's
                    target = _bucket(candidate, inverse_delta)
                    slot = target % ring
                    if target != bucket and _bin_has_room(ws, task, slot):
                        _bin_append(ws, task, slot, v, candidate)
                        continue
                request_vertex[made] = v
                request_word[made] = candidate
                made += 1
    ws.request_count[task] = made
    return examined


@numba.njit(cache=True)
def _classify(ws, task):
    """Keep each request that is its vertex's state; move the lost ones (below the state: overwritten by a
    larger word) to the front of the task's request buffer, which then holds them alone. Returns how many."""
    state = ws.state
    request_vertex, request_word = ws.request_vertex[task], ws.request_word[task]
    lost = 0
    for j in range(ws.request_count[task]):
        v = np.uint32(request_vertex[j])
        word = request_word[j]
        current = state[v]
        if (word >> _SHIFT) < (current >> _SHIFT):
            request_vertex[lost] = v
            request_word[lost] = word
            lost += 1
        elif word == current:
            _keep(ws, task, v, word)
    ws.request_count[task] = lost
    return lost


@numba.njit(cache=True)
def _extract_bin(ws, task):
    """Settle the vertices of the task's entries of bin ``slot`` that are their state, and free the bin's
    blocks. The lost ones (below the state: the heavy step stored them straight into the bin, and a larger
    word overwrote them) go to the task's request buffer, as `_classify` leaves them; returns how many (also
    those the buffer had no room for)."""
    meta, slot, state = ws.bin_meta, ws.slot, ws.state
    request_vertex, request_word = ws.request_vertex[task], ws.request_word[task]
    lost = 0
    block = meta[task, slot, _FIRST]
    while block != _NO_ENTRY:
        end = block * BLOCK + (meta[task, slot, _FILL] if block == meta[task, slot, _LAST] else BLOCK)
        for entry in range(block * BLOCK, end):
            if entry + PREFETCH_AHEAD < end:  # a later entry's state and row bounds
                ahead = ws.block_vertex[task, entry + PREFETCH_AHEAD]
                prefetch(state, ahead)
                prefetch(ws.row_bounds, ahead)
            v = np.uint32(ws.block_vertex[task, entry])
            word = ws.block_word[task, entry]
            current = state[v]
            if word == current:
                _settle(ws, task, v, word)
            elif (word >> _SHIFT) < (current >> _SHIFT):
                if lost < request_vertex.shape[0]:
                    request_vertex[lost] = v
                    request_word[lost] = word
                lost += 1
        ws.free_stack[task, ws.free_top[task]] = block
        ws.free_top[task] += 1
        block = ws.block_next[task, block]
    _empty_bin(meta, task, slot)
    ws.request_count[task] = lost
    return lost


@numba.njit(cache=True)
def _unpack_range(ws, task):
    """Parents and distances (original labels) of vertices ``cuts[task]:cuts[task + 1]``; reset their state."""
    state, order, parents, distances = ws.state, ws.order, ws.parents, ws.distances
    for v in range(np.uint64(ws.cuts[task]), np.uint64(ws.cuts[task + 1])):
        word = state[v]
        original = np.uint64(order[v])
        if word == UNREACHED:
            parents[original] = -1
            distances[original] = np.inf
        else:
            parents[original] = order[word & _PARENT_MASK]
            distances[original] = _distance(word)
        state[v] = UNREACHED
    return 0


# ---------------------------------------------------------------- every task's part, in parallel or on one thread

@numba.njit(cache=True)
def _task_step(ws, step, task):
    if step == _RELAX:
        return _relax_share(ws, task)
    if step == _CLASSIFY:
        return _classify(ws, task)
    if step == _EXTRACT:
        return _extract_bin(ws, task)
    return _unpack_range(ws, task)


@numba.njit(parallel=True, cache=True)
def _run_tasks_parallel(ws, step, results):
    for task in numba.prange(results.shape[0]):
        results[task] = _task_step(ws, step, np.int64(task))


@numba.njit(cache=True)
def _run_tasks(ws, parallel, step):
    """Run one step for every task, on all threads or (fused) on this one; returns the sum of the results."""
    results = np.zeros(ws.request_count.shape[0], dtype=np.int64)
    if parallel:
        _run_tasks_parallel(ws, step, results)
    else:
        for task in range(results.shape[0]):
            results[task] = _task_step(ws, step, task)
    return results.sum()


# ---------------------------------------------------------------- capacity

@numba.njit(cache=True)
def _has_room(ws, extra):
    """Whether every task's segments and block pool can take ``extra`` more entries."""
    blocks_needed = extra // BLOCK + min(extra, ws.bin_meta.shape[1]) + 1  # a new block per slot, plus full ones
    return (ws.segment_count.max() + extra < ws.segment_vertex.shape[2]
            and ws.free_top.min() >= blocks_needed)


# ---------------------------------------------------------------- rounds, phases and buckets

@numba.njit(cache=True)
def _clock():
    with numba.objmode(now="float64"):
        now = time.perf_counter()
    return now


@numba.njit(cache=True)
def _restore_lost(ws):
    """On this thread: each lost request that is still below its vertex's state becomes the state and is
    kept, in its task's frontier or bins (the larger word kept before is stale there: see the header)."""
    state = ws.state
    for task in range(ws.request_count.shape[0]):
        for j in range(ws.request_count[task]):
            v, word = ws.request_vertex[task, j], ws.request_word[task, j]
            if (word >> _SHIFT) < (state[v] >> _SHIFT):
                state[v] = word
                _keep(ws, task, v, word)


@numba.njit(cache=True)
def _classify_round(ws, parallel):
    """Classify the round's requests, then restore the lost ones on this thread."""
    if _run_tasks(ws, parallel, np.int64(_CLASSIFY)):
        _restore_lost(ws)


@numba.njit(cache=True)
def _extract(ws, frontier):
    """Settle the current bucket's bin entries into ``frontier`` and the settled list, then restore the lost
    ones on this thread. False, unfinished, when the request buffers could not hold them."""
    ws.slot = ws.bucket % ws.bin_meta.shape[1]
    ws.target_role = frontier
    waiting = ws.bin_meta[:, ws.slot, _SIZE].sum()
    if _run_tasks(ws, waiting * EXTRACT_ENTRY_EDGES >= ws.fusion_edges, np.int64(_EXTRACT)):
        if ws.request_count.max() > ws.request_vertex.shape[1]:
            return False
        _restore_lost(ws)
    return True


@numba.njit(cache=True)
def _cut_points(ws, source_count, count_before, edges_before, window_start, window_end):
    """Each task's first entry: equal shares of the window's edges, at entry granularity."""
    tasks = source_count.shape[0]
    prefix = ws.segment_prefix[ws.source_role]
    cuts = np.empty(tasks + 1, dtype=np.int64)
    for task in range(tasks + 1):
        position = window_start + (window_end - window_start) * task // tasks
        cuts[task] = count_before[tasks]
        for s in range(tasks):
            if position <= edges_before[s + 1]:
                cuts[task] = count_before[s] + first_at_least(prefix[s, :source_count[s] + 1],
                                                              position - edges_before[s])
                break
    return cuts


@numba.njit(cache=True)
def _relax_source(ws, counters):
    """Relax the light (or heavy) edges of the source segments' entries in rounds of at most
    ``round_edges`` edges per task, each verified and classified. ``counters`` += [rounds, parallel rounds,
    edges examined]. Returns False, unfinished, when a round's outputs might not fit."""
    tasks = ws.request_count.shape[0]
    source_count = ws.segment_count[ws.source_role].copy()  # the heavy step appends to its own source
    count_before = np.zeros(tasks + 1, dtype=np.int64)
    edges_before = np.zeros(tasks + 1, dtype=np.int64)
    for s in range(tasks):
        count_before[s + 1] = count_before[s] + source_count[s]
        edges_before[s + 1] = edges_before[s] + ws.segment_prefix[ws.source_role, s, source_count[s]]
    ws.count_before = count_before
    window_start = 0
    while window_start < edges_before[tasks]:
        window_end = min(edges_before[tasks], window_start + tasks * ws.round_edges)
        ws.cuts = _cut_points(ws, source_count, count_before, edges_before, window_start, window_end)
        if window_end == edges_before[tasks]:
            ws.cuts[tasks] = count_before[tasks]
        parallel = tasks > 1 and window_end - window_start >= ws.fusion_edges
        examined = _run_tasks(ws, parallel, np.int64(_RELAX))
        if not _has_room(ws, ws.request_count.max()):
            return False
        _classify_round(ws, parallel)
        counters[0] += 1
        counters[1] += parallel
        counters[2] += examined
        window_start = window_end
    return True


@numba.njit(cache=True)
def _drop_front(ws, dropped):
    """Remove the first ``dropped[task]`` entries of each task's settled segment."""
    vertex, word, prefix = ws.segment_vertex[_SETTLED], ws.segment_word[_SETTLED], ws.segment_prefix[_SETTLED]
    row = ws.segment_row[_SETTLED]
    for task in range(dropped.shape[0]):
        first = dropped[task]
        base = prefix[task, first]
        for i in range(ws.segment_count[_SETTLED, task] - first):
            vertex[task, i] = vertex[task, first + i]
            word[task, i] = word[task, first + i]
            row[task, i] = row[task, first + i]
            prefix[task, i + 1] = prefix[task, first + i + 1] - base
        ws.segment_count[_SETTLED, task] -= first


@numba.njit(cache=True)
def _next_bucket(ws):
    """The first bucket after the current one with an entry in some task's bin, or -1."""
    meta = ws.bin_meta
    ring = meta.shape[1]
    for later in range(ws.bucket + 1, ws.bucket + ring):
        for task in range(meta.shape[0]):
            if meta[task, later % ring, _SIZE]:
                return later
    return -1


@numba.njit(cache=True)
def _reset(ws, root, parents, distances):
    """Empty every segment and bin, put every block on its task's free stack; the root in bucket 0."""
    ws.parents = parents
    ws.distances = distances
    ws.segment_count[:, :] = 0
    for task in range(ws.bin_meta.shape[0]):
        for slot in range(ws.bin_meta.shape[1]):
            _empty_bin(ws.bin_meta, task, slot)
        for block in range(ws.free_stack.shape[1]):
            ws.free_stack[task, block] = block
        ws.free_top[task] = ws.free_stack.shape[1]
    ws.bucket = 0
    ws.target_role = 0
    ws.state[root] = _pack(np.float32(0.0), root)
    _settle(ws, 0, root, ws.state[root])


@numba.njit(cache=True)
def delta_stepping(ws, root, parents, distances):
    """SSSP from ``root`` (new label) into ``parents`` and ``distances`` (original labels).

    ``ws.state`` must be all UNREACHED and is left so. Returns ``(trace,
    finished)``: one trace row per bucket (bucket, rounds, parallel rounds,
    entries settled, edges examined, seconds), and False when the search
    stopped because the workspace was too small (``ws.state`` is then left
    dirty).
    """
    tasks = ws.request_count.shape[0]
    _reset(ws, root, parents, distances)
    frontier = 0
    trace = []
    while ws.bucket >= 0:
        start = _clock()
        if ws.bucket > 0 and not _extract(ws, frontier):
            return trace, False
        counters = np.zeros(3, dtype=np.int64)
        settled = 0
        while ws.segment_count[frontier].sum() or ws.segment_count[_SETTLED].sum():
            while ws.segment_count[frontier].sum():  # light phases: frontier -> the other frontier
                ws.source_role, ws.target_role, ws.heavy = frontier, 1 - frontier, False
                if not _relax_source(ws, counters):
                    return trace, False
                ws.segment_count[frontier, :] = 0
                frontier = 1 - frontier
            heavy_sources = ws.segment_count[_SETTLED].copy()
            settled += heavy_sources.sum()
            ws.source_role, ws.target_role, ws.heavy = _SETTLED, frontier, True
            if not _relax_source(ws, counters):  # a vertex a heavy edge puts back in this bucket: light phases again
                return trace, False
            _drop_front(ws, heavy_sources)
        if settled:
            trace.append((ws.bucket, counters[0], counters[1], settled, counters[2], _clock() - start))
        ws.bucket = _next_bucket(ws)
    ws.cuts = np.arange(tasks + 1) * ws.state.shape[0] // tasks
    _run_tasks(ws, tasks > 1, np.int64(_UNPACK))
    return trace, True


@numba.njit(parallel=True, cache=True)
def _row_bounds(offsets, light_offsets, row_bounds):
    """Fill ``row_bounds[v] = (offsets[v], light_offsets[v])``, in parallel; returns the largest degree and the
    first leaf: the label after the last row with more than one entry (0 if there is none)."""
    num_vertices = offsets.shape[0] - 1
    row_bounds[num_vertices, 0] = offsets[num_vertices]
    row_bounds[num_vertices, 1] = light_offsets[num_vertices]
    max_degree = 0
    last_branching = -1
    for v in numba.prange(num_vertices):
        row_bounds[v, 0] = offsets[v]
        row_bounds[v, 1] = light_offsets[v]
        degree = offsets[v + 1] - offsets[v]
        max_degree = max(max_degree, degree)
        last_branching = max(last_branching, v if degree > 1 else -1)
    return max_degree, last_branching + 1


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
        self.delta = float(delta)
        self.ring = int(np.ceil(max_weight / self.delta)) + RING_SLACK
        self.fusion_edges, self.round_edges = int(fusion_edges), max(1, int(round_edges))
        self.rows = rows = relabel(graph, reorder)
        light_offsets, self.light_neighbors, self.light_weights = rows.light_rows(self.delta)
        self.row_bounds = np.empty((graph.num_vertices + 1, 2), dtype=np.int64)
        max_degree, first_leaf = _row_bounds(rows.offsets, light_offsets, self.row_bounds)
        self.max_degree, self.first_leaf = int(max_degree), int(first_leaf)
        self.state = np.full(graph.num_vertices, UNREACHED, dtype=np.uint64)
        self.state_is_clean = True
        self.workspace_shape = None
        self.room = 1  # workspace size factor, doubled each time a search runs out of room
        self.trace = []

    def _workspace(self):
        """The workspace, made again when the Numba thread count or the size factor changes."""
        tasks = numba.get_num_threads()
        if (tasks, self.room) != self.workspace_shape:
            capacity = max(2, int(self.room * (self.rows.num_vertices // tasks + 1)))
            blocks = capacity // BLOCK + self.ring + 1
            requests = int(max(1, self.room) * (self.round_edges + self.max_degree))
            dtype = self.rows.neighbors.dtype
            self.buffers = {  # the per-thread arrays of the workspace (the jitted code and this share them)
                "segment_vertex": np.empty((3, tasks, capacity), dtype=dtype),
                "segment_word": np.empty((3, tasks, capacity), dtype=np.uint64),
                "segment_row": np.empty((3, tasks, capacity), dtype=np.int64),
                "segment_prefix": np.zeros((3, tasks, capacity + 1), dtype=np.int64),
                "segment_count": np.zeros((3, tasks), dtype=np.int64),
                "request_vertex": np.empty((tasks, requests), dtype=dtype),
                "request_word": np.empty((tasks, requests), dtype=np.uint64),
                "request_count": np.zeros(tasks, dtype=np.int64),
                "block_vertex": np.empty((tasks, blocks * BLOCK), dtype=dtype),
                "block_word": np.empty((tasks, blocks * BLOCK), dtype=np.uint64),
                "block_next": np.empty((tasks, blocks), dtype=np.int64),
                "free_stack": np.empty((tasks, blocks), dtype=np.int64),
                "free_top": np.zeros(tasks, dtype=np.int64),
                "bin_meta": np.empty((tasks, self.ring, 4), dtype=np.int64),
            }
            self.workspace = _new_workspace(
                row_bounds=self.row_bounds, neighbors=self.rows.neighbors, weights=self.rows.weights,
                light_neighbors=self.light_neighbors, light_weights=self.light_weights,
                order=self.rows.order, state=self.state, inverse_delta=1.0 / self.delta,
                fusion_edges=self.fusion_edges, round_edges=self.round_edges, max_degree=self.max_degree,
                first_leaf=self.first_leaf,
                **self.buffers)
            self.workspace_shape = (tasks, self.room)
        return self.workspace

    def search(self, root):
        num_vertices = self.rows.num_vertices
        parents = np.empty(num_vertices, dtype=np.int64)
        distances = np.empty(num_vertices, dtype=np.float32)
        finished = False
        while not finished:
            if not self.state_is_clean:  # an earlier search was interrupted or ran out of room
                self.state[:] = UNREACHED
            self.state_is_clean = False
            trace, finished = delta_stepping(self._workspace(), self.rows.new_label[root], parents, distances)
            self.state_is_clean = finished
            self.room *= 1 if finished else 2
        self.trace = [{"direction": "parallel" if parallel else "fused", "bucket": bucket, "rounds": rounds,
                       "frontier": settled, "edges_examined": examined, "seconds": seconds}
                      for bucket, rounds, parallel, settled, examined, seconds in trace]
        return parents, distances
