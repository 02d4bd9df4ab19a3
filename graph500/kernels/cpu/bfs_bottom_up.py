"""Kernel 2, ``bottom-up``: level-synchronous BFS where the unvisited vertices look for a parent.

Algorithm: the bottom-up step of Beamer, Asanovic and Patterson,
"Direction-Optimizing Breadth-First Search" (SC 2012), run at every level:
each unvisited vertex scans its neighbours and takes the first one in the
frontier as its parent. Frontier and next frontier are separate bitmaps, so
a level never reads what it writes; each thread owns a contiguous range of
bitmap words, so no atomic is needed. Alone it wastes the first levels
(almost every vertex scans its whole row); the direction-optimizing kernel
uses it for the large middle levels.

Data structures: CSR relabelled by decreasing degree (`reorder`: hubs first
in every row); ``parent`` (`frontier.Parents`, written under the original
labels, -1 unvisited); uint64-word bitmaps of the frontier, the next
frontier and the visited vertices (those without edges set from the start);
each row's first neighbour in an array of its own (4 bytes a vertex, read in
vertex order: the row is read only when it is not in the frontier); the
expected work before each word, which cuts the threads' ranges, a vertex's
work taken as 1 + min(degree, SCAN_EDGES_PER_VERTEX) (cutting by edges would
give one thread the hubs, found at once, and another all the rest).

Tunables: ``SCAN_EDGES_PER_VERTEX`` (4: 1 to 4 measured alike, 16 as bad as
cutting by edges; this kernel alone cuts by edges, ``FULL_SCAN``, since it
spends its time in the first levels); ``first_neighbors``
(``FIRST_NEIGHBORS``, True: 1.15x with 16 ranks of one thread, neutral in
one process); ``reorder`` (True renumbers a graph built with its original
labels by degree; the CPU backend's kernel 1 gives a degree-ordered graph,
taken as it is). Measurements: docs/kernels/cpu-bfs-bottom-up.md.
"""

import time

import numba
import numpy as np
from numba.cpython.unsafe.numbers import trailing_zeros

from graph500.kernels import register
from graph500.kernels.cpu.frontier import (
    ONE, WORD_SHIFT, ZERO, Parents, balanced_bounds, bit_of, bitmap_words, first_at_least, has_bit,
    label_of, set_bit, trace_entry,
)
from graph500.kernels.cpu.reorder import relabel
from graph500.partition import popcount

SCAN_EDGES_PER_VERTEX = 4
FIRST_NEIGHBORS = True  # each row's first neighbour also in an array of its own (see the module's notes)
FULL_SCAN = 2**62  # as if every vertex scanned its whole list: the work of levels with small frontiers


@numba.njit(cache=True)
def _word_work_prefix(offsets, words, scan_edges_per_vertex):
    """Expected bottom-up work before each bitmap word: per vertex with edges, 1 + min(degree, scan_edges)."""
    prefix = np.zeros(words + 1, dtype=np.int64)
    for word in range(words):
        work = 0
        for v in range(word << WORD_SHIFT, min((word + 1) << WORD_SHIFT, offsets.shape[0] - 1)):
            degree = offsets[v + 1] - offsets[v]
            if degree > 0:
                work += 1 + min(degree, scan_edges_per_vertex)
        prefix[word + 1] = prefix[word] + work
    return prefix


@numba.njit(cache=True)
def _no_edge_bitmap(offsets):
    """Bits set for vertices without edges and for the padding bits after the last vertex."""
    num_vertices = offsets.shape[0] - 1
    bitmap = np.zeros(bitmap_words(num_vertices), dtype=np.uint64)
    for v in range(num_vertices):
        if offsets[v + 1] == offsets[v]:
            set_bit(bitmap, v)
    for v in range(num_vertices, bitmap.shape[0] << WORD_SHIFT):
        set_bit(bitmap, v)
    return bitmap


class BottomUpLayout:
    """Per-graph precomputation of the bottom-up step (kernel 1), and its per-search arrays.

    ``copies``: frontier bitmap copies, one per NUMA domain (1: no replication).
    ``scan_edges``: the neighbours a vertex is expected to check (see the module's notes).
    ``first_neighbors``: keep each row's first neighbour in an array of its own (``self.first_neighbors``;
    else None), see the module's notes.
    """

    def __init__(self, graph, copies=1, scan_edges=SCAN_EDGES_PER_VERTEX, first_neighbors=FIRST_NEIGHBORS):
        num_vertices = graph.num_vertices
        self.first_neighbors = _first_neighbors(graph.offsets, graph.neighbors) if first_neighbors else None
        self.words = bitmap_words(num_vertices)
        self.word_work_prefix = _word_work_prefix(graph.offsets, self.words, scan_edges)
        self.no_edge_bitmap = _no_edge_bitmap(graph.offsets)
        self.copies = copies
        self.bitmaps = {}

    def tasks(self):
        """``(word_bounds, task_copy)``: each thread's range of bitmap words (equal edge counts) and the
        frontier copy it reads: consecutive threads form the domains, each owning a contiguous range."""
        num_tasks = numba.get_num_threads()
        copies = min(self.copies, num_tasks)
        task_copy = np.arange(num_tasks) * copies // num_tasks
        return balanced_bounds(self.word_work_prefix, num_tasks), task_copy

    def frontier_bitmaps(self, task_copy):
        """``(frontier, next_frontier)``: a bitmap per domain each, first written by that domain's threads
        (made once per thread grouping; their contents are left from the last search)."""
        key = tuple(task_copy)
        if key not in self.bitmaps:
            pair = np.empty((2, int(task_copy.max()) + 1, self.words), dtype=np.uint64)
            _first_touch(pair, task_copy)
            self.bitmaps = {key: (pair[0], pair[1])}
        return self.bitmaps[key]

    def visited_bitmap(self, root):
        visited = self.no_edge_bitmap.copy()
        visited[root >> WORD_SHIFT] |= bit_of(root)
        return visited


@numba.njit(parallel=True, cache=True)
def _first_touch(bitmaps, task_copy):
    """Zero each domain's copies (``bitmaps[:, copy]``) with that domain's threads: the OS places a page
    where it is first written."""
    num_tasks = task_copy.shape[0]
    words = bitmaps.shape[2]
    for task in numba.prange(num_tasks):
        copy = task_copy[task]
        first_task = first_at_least(task_copy, copy)
        domain_tasks = first_at_least(task_copy, copy + 1) - first_task
        share = (words + domain_tasks - 1) // domain_tasks
        begin = (task - first_task) * share
        for bitmap in range(bitmaps.shape[0]):
            for word in range(begin, min(begin + share, words)):
                bitmaps[bitmap, copy, word] = ZERO


@numba.njit(parallel=True, cache=True)
def _first_neighbors(offsets, neighbors):
    """Each row's first neighbour (0 for an empty row, never read: such vertices start visited)."""
    first = np.empty(offsets.shape[0] - 1, dtype=neighbors.dtype)
    for v in numba.prange(first.shape[0]):
        first[v] = neighbors[offsets[v]] if offsets[v + 1] > offsets[v] else 0
    return first


@numba.njit(inline="always", cache=True)
def _find_parent(offsets, neighbors, first_neighbors, frontier_bitmap, v):
    """``(parent, edges examined)``: the first neighbour of ``v`` in the frontier, or -1. The row's first
    entry is read from ``first_neighbors`` where it is not None (the row itself only when it is not there)."""
    row = np.uint64(v)
    begin, end = offsets[row], offsets[row + ONE]
    scan_from = begin
    if first_neighbors is not None:
        u = first_neighbors[row]
        if has_bit(frontier_bitmap, u):
            return u, 1
        scan_from += 1
    for k in range(np.uint64(scan_from), np.uint64(end)):
        u = neighbors[k]
        if has_bit(frontier_bitmap, u):
            return u, np.int64(k) - begin + 1
    return -1, end - begin


@numba.njit(inline="always", cache=True)
def _scan_words(offsets, neighbors, first_neighbors, first_word, end_word, frontier_bitmap, next_copies,
                visited_bitmap, parent, parent_labels, first_parents, unmapped):
    """Bottom-up over the unvisited vertices of words ``first_word:end_word``: ``(found, edges examined)``.

    The next frontier's words go to every copy in ``next_copies``; a parent ``u`` is written as
    ``label_of(parent_labels, u)``, or, given ``first_parents`` (`frontier.Parents`), as ``first_parents[v]``
    where ``u`` is the row's first neighbour; given ``unmapped``, every other one is marked there.
    """
    awake = 0
    examined = 0
    for word in range(first_word, end_word):
        todo = ~visited_bitmap[word]
        found = ZERO
        marked = ZERO
        while todo:
            bit = trailing_zeros(todo)
            v = (word << WORD_SHIFT) + np.int64(bit)
            u, scanned = _find_parent(offsets, neighbors, first_neighbors, frontier_bitmap, v)
            examined += scanned
            if u >= 0:
                if first_parents is not None and scanned == 1:  # the row's first neighbour (first_neighbors given)
                    parent[np.uint64(v)] = first_parents[np.uint64(v)]
                else:
                    parent[np.uint64(v)] = label_of(parent_labels, u)
                    marked |= ONE << bit
                found |= ONE << bit
            todo &= todo - ONE
        for copy in range(next_copies.shape[0]):
            next_copies[copy, word] = found
        visited_bitmap[word] |= found
        if unmapped is not None and marked:
            unmapped[word] |= marked
        awake += popcount(found)
    return awake, examined


@numba.njit(parallel=True, cache=True)
def bottom_up_step(offsets, neighbors, first_neighbors, word_bounds, task_copy, frontier_copies, next_copies,
                   visited_bitmap, parent, parent_labels=None, first_parents=None, unmapped=None):
    """One bottom-up level; each task owns words ``word_bounds[t]:word_bounds[t + 1]``.

    ``first_neighbors``: `BottomUpLayout.first_neighbors` (each row's first entry, or None).
    The frontier and next-frontier bitmaps have one copy (row) per NUMA domain:
    task t reads copy ``task_copy[t]`` and writes its words to every copy.
    ``parent_labels``: what a parent is written as (`frontier.label_of`); ``first_parents`` and ``unmapped``
    (`frontier.Parents`'s, with ``first_neighbors``): a first neighbour's original label; the parents written as
    search labels, marked.
    Returns ``(vertices found, edges examined)``.
    """
    awake = 0
    examined = 0
    for task in numba.prange(word_bounds.shape[0] - 1):
        task_awake, task_examined = _scan_words(offsets, neighbors, first_neighbors, word_bounds[task],
                                                word_bounds[task + 1], frontier_copies[task_copy[task]], next_copies,
                                                visited_bitmap, parent, parent_labels, first_parents, unmapped)
        awake += task_awake
        examined += task_examined
    return awake, examined


def bottom_up_levels(graph, first_neighbors, word_bounds, task_copy, frontier, next_frontier, awake, visited, parents,
                     trace, stop_at):
    """Bottom-up levels from the bitmap ``frontier`` (``awake`` vertices, all copies filled) into ``parents``
    (a started `Parents`) until the frontier is empty, or shrinks to at most ``stop_at`` vertices; each level
    appended to ``trace``.

    Returns the last frontier (bitmap copies).
    """
    while True:
        start = time.perf_counter()
        found, examined = bottom_up_step(graph.offsets, graph.neighbors, first_neighbors, word_bounds, task_copy,
                                         frontier, next_frontier, visited, parents.array, parents.written,
                                         parents.first_parents, parents.unmapped)
        trace.append(trace_entry("bottom-up", awake, examined, time.perf_counter() - start))
        frontier, next_frontier = next_frontier, frontier
        if found == 0 or (found < awake and found <= stop_at):
            return frontier
        awake = found


@register()
class BottomUpBFS:
    """Bottom-up BFS at every level (for comparison; direction-optimizing uses it where it pays)."""

    name = "bottom-up"
    kind = "bfs"
    backend = "cpu"

    def __init__(self, graph, reorder=True):
        self.graph = relabel(graph, reorder)
        self.layout = BottomUpLayout(self.graph, scan_edges=FULL_SCAN)
        self.parents = Parents(self.graph, first_neighbors=self.layout.first_neighbors)
        self.trace = []

    def search(self, root):
        graph = self.graph
        root = int(graph.new_label[root])
        self.parents.start(root)
        word_bounds, task_copy = self.layout.tasks()
        visited = self.layout.visited_bitmap(root)
        frontier, next_frontier = self.layout.frontier_bitmaps(task_copy)
        frontier[:, :] = 0
        frontier[:, root >> WORD_SHIFT] = bit_of(root)
        self.trace = []
        bottom_up_levels(graph, self.layout.first_neighbors, word_bounds, task_copy, frontier, next_frontier, 1,
                         visited, self.parents, self.trace, stop_at=0)
        return self.parents.finish()
