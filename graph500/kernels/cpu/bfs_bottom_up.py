"""Kernel 2, ``bottom-up``: level-synchronous BFS where the unvisited vertices look for a parent.

Algorithm: the bottom-up step of Beamer, Asanovic and Patterson,
"Direction-Optimizing Breadth-First Search" (SC 2012), run at every level.
Each unvisited vertex ``v`` scans its neighbours and stops at the first one
that is in the frontier, which becomes its parent. The frontier is a bitmap;
the vertices found go into a separate next-frontier bitmap, so a level never
reads what it writes. Each thread owns a contiguous range of bitmap words
(64 vertices each), cut so that the ranges have equal edge counts: a thread
writes only its own vertices' parents and its own words, so no atomic
operation is needed.

Alone, bottom-up wastes work on the first levels, where almost every vertex
scans its whole adjacency list without finding a parent; it is the step the
direction-optimizing kernel uses for the large middle levels.

Data structures: CSR, relabelled by decreasing degree (`reorder`: hubs
first in every row, so the first neighbour checked is the likeliest parent);
``parent`` (int64, -1 unvisited), mapped back to the original labels at the
end; bitmaps (uint64 words) of the frontier, the next frontier and the
visited vertices. Built once per graph (kernel 1): the relabelled graph, the
visited bitmap's starting value, with the vertices that have no edge already
set (they are never scanned), and the edge count before each word (to cut
the threads' ranges).

Tunables: ``reorder`` (default True: degree ordering; False keeps the labels).
"""

import time

import numba
import numpy as np
from numba.cpython.unsafe.numbers import trailing_zeros

from graph500.kernels import register
from graph500.kernels.cpu.frontier import (
    ONE, WORD_SHIFT, ZERO, balanced_bounds, bitmap_words, count_bits, has_bit, new_parents, trace_entry,
)
from graph500.kernels.cpu.reorder import relabel


@numba.njit(cache=True)
def _no_edge_bitmap(offsets):
    """Bits set for vertices without edges and for the padding bits after the last vertex."""
    num_vertices = offsets.shape[0] - 1
    bitmap = np.zeros((num_vertices + 63) >> WORD_SHIFT, dtype=np.uint64)
    for v in range(num_vertices):
        if offsets[v + 1] == offsets[v]:
            bitmap[v >> WORD_SHIFT] |= ONE << np.uint64(v & 63)
    for v in range(num_vertices, bitmap.shape[0] << WORD_SHIFT):
        bitmap[v >> WORD_SHIFT] |= ONE << np.uint64(v & 63)
    return bitmap


class BottomUpLayout:
    """Per-graph precomputation of the bottom-up step (kernel 1)."""

    def __init__(self, graph):
        num_vertices = graph.num_vertices
        words = bitmap_words(num_vertices)
        word_starts = np.minimum(np.arange(words + 1, dtype=np.int64) << WORD_SHIFT, num_vertices)
        self.word_edge_prefix = graph.offsets[word_starts]
        self.no_edge_bitmap = _no_edge_bitmap(graph.offsets)

    def word_bounds(self):
        """Each thread's range of bitmap words, with equal edge counts."""
        return balanced_bounds(self.word_edge_prefix, numba.get_num_threads())

    def visited_bitmap(self, root):
        visited = self.no_edge_bitmap.copy()
        visited[root >> WORD_SHIFT] |= np.uint64(1) << np.uint64(root & 63)
        return visited


@numba.njit(inline="always", cache=True)
def _find_parent(offsets, neighbors, frontier_bitmap, v):
    """``(parent, edges examined)``: the first neighbour of ``v`` in the frontier, or -1."""
    begin = offsets[v]
    for k in range(begin, offsets[v + 1]):
        u = neighbors[k]
        if has_bit(frontier_bitmap, u):
            return u, k - begin + 1
    return -1, offsets[v + 1] - begin


@numba.njit(inline="always", cache=True)
def scan_words(offsets, neighbors, first_word, end_word, frontier_bitmap, next_bitmap, visited_bitmap, parent):
    """Bottom-up over the unvisited vertices of words ``first_word:end_word``: ``(found, edges examined)``."""
    awake = 0
    examined = 0
    for word in range(first_word, end_word):
        todo = ~visited_bitmap[word]
        found = ZERO
        while todo:
            bit = trailing_zeros(todo)
            v = (word << WORD_SHIFT) + np.int64(bit)
            u, scanned = _find_parent(offsets, neighbors, frontier_bitmap, v)
            examined += scanned
            if u >= 0:
                parent[v] = u
                found |= ONE << bit
            todo &= todo - ONE
        next_bitmap[word] = found
        visited_bitmap[word] |= found
        awake += count_bits(found)
    return awake, examined


@numba.njit(parallel=True, cache=True)
def bottom_up_step(offsets, neighbors, word_bounds, frontier_bitmap, next_bitmap, visited_bitmap, parent):
    """One bottom-up level; each task owns words ``word_bounds[t]:word_bounds[t + 1]``.

    Returns ``(vertices found, edges examined)``.
    """
    awake = 0
    examined = 0
    for task in numba.prange(word_bounds.shape[0] - 1):
        task_awake, task_examined = scan_words(offsets, neighbors, word_bounds[task], word_bounds[task + 1],
                                               frontier_bitmap, next_bitmap, visited_bitmap, parent)
        awake += task_awake
        examined += task_examined
    return awake, examined


@register()
class BottomUpBFS:
    """Bottom-up BFS at every level (for comparison; direction-optimizing uses it where it pays)."""

    name = "bottom-up"
    kind = "bfs"
    backend = "cpu"

    def __init__(self, graph, reorder=True):
        self.graph = relabel(graph, reorder)
        self.layout = BottomUpLayout(self.graph)
        self.trace = []

    def search(self, root):
        graph = self.graph
        root = int(graph.new_label[root])
        parent = new_parents(graph.num_vertices, root)
        word_bounds = self.layout.word_bounds()
        visited = self.layout.visited_bitmap(root)
        frontier = np.zeros_like(visited)
        frontier[root >> WORD_SHIFT] = np.uint64(1) << np.uint64(root & 63)
        next_frontier = np.empty_like(visited)
        awake = 1
        self.trace = []
        while awake:
            start = time.perf_counter()
            found, examined = bottom_up_step(graph.offsets, graph.neighbors, word_bounds,
                                             frontier, next_frontier, visited, parent)
            self.trace.append(trace_entry("bottom-up", awake, examined, time.perf_counter() - start))
            frontier, next_frontier = next_frontier, frontier
            awake = found
        return graph.parents_to_original(parent)
