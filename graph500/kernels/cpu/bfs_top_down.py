"""Kernel 2, ``top-down``: level-synchronous parallel top-down BFS with per-thread queue buffers.

Algorithm: the top-down step of Beamer, Asanovic and Patterson, "Direction-
Optimizing Breadth-First Search" (SC 2012), run at every level. The edges of
the frontier (a queue), taken in order, are cut into one equal share per
thread, cutting through adjacency lists where needed (in a Kronecker graph
one hub can hold most of a small frontier's edges). Each thread scans its
share and claims every unvisited neighbour ``v`` of ``u`` by writing ``parent[v] = u`` and appending
the pair ``(v, u)`` to its own buffer: no atomic operation, no shared counter.
Two threads may race for one ``v``; both append it, and exactly one write
lands. A dedupe-by-owner pass then keeps ``(v, u)`` only where
``parent[v] == u`` (rows have no duplicates, so each new vertex is kept
exactly once), and the kept vertices of all buffers, concatenated, are the
next frontier.

Data structures: CSR (under kernel 1's labels, degree-ordered in a run);
``parent`` (`frontier.Parents`: indexed by the graph's labels, each
parent written under the original labels, -1 unvisited); a visited bitmap,
updated after each level and read before ``parent`` (it fits in cache, the
parent array does not); the frontier queue (int64); the per-thread buffers:
one pair of scratch arrays (vertex, claimer), thread t's range starting at
t * N (a thread claims a vertex at most once), allocated once per kernel and
thread count.

Tunables: ``parallel_edges`` (default 2^15): frontiers with fewer edges are
expanded by one thread, which then needs no dedupe pass and no thread
wake-up. This is also the top-down step of the direction-optimizing
kernel, and the baseline the other BFS kernels are measured against.
"""

import time

import numba
import numpy as np

from graph500.kernels import register
from graph500.kernels.cpu.frontier import (
    ONE, WORD_SHIFT, Parents, bit_of, bitmap_words, equal_share, first_at_least, has_bit, label_of, set_bits,
    trace_entry,
)
from graph500.kernels.cpu.reorder import relabel

PARALLEL_EDGES = 1 << 15


@numba.njit(inline="always", cache=True)
def _claim_edges(offsets, neighbors, frontier, edge_prefix, begin, end, visited, parent, parent_labels, found_vertex,
                 found_claimer, slot):
    """Claim the unvisited neighbours over the frontier's edges ``begin:end`` (in the order of ``frontier``,
    ``edge_prefix`` their prefix sum), appending (v, u) from ``slot``, ``u`` as ``label_of(parent_labels, u)``;
    returns the end slot."""
    i = first_at_least(edge_prefix, begin + 1) - 1  # the frontier vertex whose list holds edge ``begin``
    edge = begin
    while edge < end:
        u = frontier[i]
        claimer = label_of(parent_labels, u)
        stop = min(end, edge_prefix[i + 1])
        row_start = offsets[u] - edge_prefix[i]
        for k in range(np.uint64(row_start + edge), np.uint64(row_start + stop)):
            v = np.uint64(neighbors[k])
            if not has_bit(visited, v) and parent[v] == -1:
                parent[v] = claimer
                found_vertex[slot] = v
                found_claimer[slot] = claimer
                slot += 1
        edge = stop
        i += 1
    return slot


@numba.njit(cache=True)
def frontier_edge_prefix(offsets, frontier):
    """``prefix[i]``: edges of ``frontier[:i]``."""
    prefix = np.empty(frontier.shape[0] + 1, dtype=np.int64)
    prefix[0] = 0
    for i in range(frontier.shape[0]):
        u = frontier[i]
        prefix[i + 1] = prefix[i] + offsets[u + 1] - offsets[u]
    return prefix


@numba.njit(inline="always", cache=True)
def _keep_owned(offsets, parent, start, found_vertex, found_claimer, found_count):
    """Compact a buffer in place to the pairs whose claim landed; returns ``(kept, their edges)``."""
    kept = 0
    edges = 0
    for slot in range(np.uint64(start), np.uint64(start + found_count)):
        v = np.uint64(found_vertex[slot])
        if parent[v] == found_claimer[slot]:
            found_vertex[start + kept] = v
            kept += 1
            edges += offsets[v + ONE] - offsets[v]
    return kept, edges


@numba.njit(parallel=True, cache=True)
def _claim_or_keep(keep, offsets, neighbors, frontier, edge_prefix, visited, parent, parent_labels, found_vertex,
                   found_claimer, found_counts, kept_edges):
    """Task t's buffer is ``found_*[t * N:]``. Claim: each task claims over its equal share of the frontier's
    edges (a hub's list may be shared by several tasks); keep: each task keeps its buffer's pairs whose claim
    landed."""
    num_vertices = parent.shape[0]
    num_tasks = found_counts.shape[0]
    total_edges = edge_prefix[edge_prefix.shape[0] - 1]
    for task in numba.prange(num_tasks):
        start = task * num_vertices
        if keep:
            found_counts[task], kept_edges[task] = _keep_owned(offsets, parent, start, found_vertex, found_claimer,
                                                               found_counts[task])
        else:
            begin, end = equal_share(task, num_tasks, total_edges)
            found_counts[task] = _claim_edges(offsets, neighbors, frontier, edge_prefix, begin, end, visited, parent,
                                              parent_labels, found_vertex, found_claimer, start) - start


@numba.njit(cache=True)
def _serial_step(offsets, neighbors, frontier, visited, parent, parent_labels, found_vertex, found_claimer):
    """One thread, no race: every claim lands, the buffer is the next frontier."""
    edge_prefix = frontier_edge_prefix(offsets, frontier)
    count = _claim_edges(offsets, neighbors, frontier, edge_prefix, 0, edge_prefix[frontier.shape[0]], visited,
                         parent, parent_labels, found_vertex, found_claimer, 0)
    next_frontier = np.empty(count, dtype=np.int64)
    next_edges = 0
    for j in range(count):
        v = found_vertex[j]
        next_frontier[j] = v
        next_edges += offsets[v + 1] - offsets[v]
    return next_frontier, next_edges


@numba.njit(cache=True)
def _parallel_step(offsets, neighbors, frontier, visited, parent, parent_labels, found_vertex, found_claimer,
                   num_tasks):
    edge_prefix = frontier_edge_prefix(offsets, frontier)
    found_counts = np.zeros(num_tasks, dtype=np.int64)
    kept_edges = np.zeros(num_tasks, dtype=np.int64)
    for keep in (False, True):
        _claim_or_keep(keep, offsets, neighbors, frontier, edge_prefix, visited, parent, parent_labels, found_vertex,
                       found_claimer, found_counts, kept_edges)
    next_frontier = np.empty(found_counts.sum(), dtype=np.int64)
    slot = 0
    for task in range(num_tasks):
        start = task * parent.shape[0]
        for j in range(found_counts[task]):
            next_frontier[slot] = found_vertex[start + j]
            slot += 1
    return next_frontier, kept_edges.sum()


@numba.njit(cache=True)
def top_down_step(offsets, neighbors, frontier, frontier_edges, visited, parent, parent_labels, found_vertex,
                  found_claimer, num_tasks, parallel_edges):
    """Expand ``frontier`` (with ``frontier_edges`` edges) one level top-down; returns
    ``(next_frontier, next_frontier_edges)`` and marks the next frontier in ``visited``.

    ``visited`` is a bitmap of vertices known visited (a filter read before
    ``parent``); a parent ``u`` is written as ``label_of(parent_labels, u)``.
    Runs on one thread below ``parallel_edges``. The scratch arrays
    ``found_*`` must hold ``num_tasks * N`` entries.
    """
    if num_tasks == 1 or frontier_edges < parallel_edges:
        next_frontier, next_edges = _serial_step(offsets, neighbors, frontier, visited, parent, parent_labels,
                                                 found_vertex, found_claimer)
    else:
        next_frontier, next_edges = _parallel_step(offsets, neighbors, frontier, visited, parent, parent_labels,
                                                   found_vertex, found_claimer, num_tasks)
    set_bits(visited, next_frontier)
    return next_frontier, next_edges


class TopDownBuffers:
    """The per-thread buffers of `top_down_step`, sized for the current Numba thread count."""

    def __init__(self, num_vertices, dtype):
        self.num_vertices = num_vertices
        self.dtype = dtype
        self.num_tasks = 0

    def get(self):
        """``(found_vertex, found_claimer, num_tasks)`` for the current thread count."""
        num_tasks = numba.get_num_threads()
        if num_tasks != self.num_tasks:
            size = num_tasks * self.num_vertices
            self.found_vertex = np.empty(size, dtype=self.dtype)
            self.found_claimer = np.empty(size, dtype=self.dtype)
            self.num_tasks = num_tasks
        return self.found_vertex, self.found_claimer, self.num_tasks


@register()
class TopDownBFS:
    """Parallel level-synchronous top-down BFS with per-thread queue buffers (the baseline)."""

    name = "top-down"
    kind = "bfs"
    backend = "cpu"

    def __init__(self, graph, parallel_edges=PARALLEL_EDGES):
        self.graph = relabel(graph, reorder=False)
        self.parallel_edges = parallel_edges
        self.buffers = TopDownBuffers(graph.num_vertices, graph.neighbors.dtype)
        self.parents = Parents(self.graph)
        self.trace = []

    def search(self, root):
        graph = self.graph
        root = int(graph.new_label[root])
        parent = self.parents.start(root)
        frontier = np.array([root], dtype=np.int64)
        frontier_edges = graph.offsets[root + 1] - graph.offsets[root]
        visited = np.zeros(bitmap_words(graph.num_vertices), dtype=np.uint64)
        visited[root >> WORD_SHIFT] = bit_of(root)
        found_vertex, found_claimer, num_tasks = self.buffers.get()
        self.trace = []
        while frontier.shape[0]:
            start = time.perf_counter()
            next_frontier, next_edges = top_down_step(graph.offsets, graph.neighbors, frontier, frontier_edges, visited,
                                                      parent, self.parents.written, found_vertex, found_claimer,
                                                      num_tasks, self.parallel_edges)
            self.trace.append(trace_entry("top-down", frontier.shape[0], frontier_edges, time.perf_counter() - start))
            frontier, frontier_edges = next_frontier, next_edges
        return self.parents.finish()
