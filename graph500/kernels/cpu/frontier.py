"""Helpers shared by the CPU kernels: bitmaps, queue <-> bitmap, work splits, trace entries.

A frontier is either a *queue* (an array of vertex labels without duplicates)
or a *bitmap* (uint64 words; bit ``v % 64`` of word ``v // 64`` is set when
``v`` is in it). Top-down steps read and write queues, bottom-up steps read
and write bitmaps; the direction-optimizing kernel converts at each switch.

Parallel loops run over *tasks*, one per Numba thread, each given an equal
share of the work by `balanced_bounds`, which cuts a prefix sum of work (edges)
into equal parts. A task owns what it writes: a range of a scratch buffer, or
a range of bitmap words (so no two tasks ever write the same word, and no
atomic operation is needed).

Numba notes: bit operations stay in uint64 throughout (``uint64 op int64`` is
float64 in Numba), hence the ``ONE`` and ``WORD_MASK`` constants. The hot
loops index with unsigned integers (`has_bit` too): Numba tests every
signed index for a negative value (Python's wraparound), an unsigned one
not. For the BFS (`has_bit`, the bottom-up scan and the top-down claims)
that was 1.075x and 1.137x at SCALE 20, 1.132x at SCALE 22, on 2 threads
(``benchmarks/cpu_revisions.py --helpers frontier,bfs_top_down,bfs_bottom_up``,
5 rounds of 16 keys each; the same code against itself 0.980x), and then
the parent writes, `label_of`, the keep pass and the output gather 1.078x
and 1.067x more; `set_bits`, the bitmap-to-queue count and the frontier's
edge prefix measured nothing (0.994x, 0.979x) and stay signed.
"""

import numba
import numpy as np
from numba.core import types
from numba.cpython.unsafe.numbers import trailing_zeros
from numba.extending import overload

from graph500.kernels.graph import neighbor_dtype
from graph500.partition import place, popcount, set_bits

WORD_BITS = 64
WORD_SHIFT = 6
WORD_MASK = np.uint64(WORD_BITS - 1)
UNSIGNED_WORD_SHIFT = np.uint64(WORD_SHIFT)
ONE = np.uint64(1)
ZERO = np.uint64(0)


@numba.njit(inline="always", cache=True)
def bitmap_words(num_vertices):
    """Words of a bitmap of ``num_vertices`` bits."""
    return (num_vertices + WORD_BITS - 1) >> WORD_SHIFT


@numba.njit(inline="always", cache=True)
def has_bit(bitmap, vertex):
    return (bitmap[np.uint64(vertex) >> UNSIGNED_WORD_SHIFT] >> (np.uint64(vertex) & WORD_MASK)) & ONE


@numba.njit(inline="always", cache=True)
def bit_of(vertex):
    """The word mask of ``vertex``'s bit."""
    return ONE << (np.uint64(vertex) & WORD_MASK)


@numba.njit(inline="always", cache=True)
def set_bit(bitmap, vertex):
    bitmap[np.uint64(vertex) >> UNSIGNED_WORD_SHIFT] |= bit_of(vertex)


@numba.njit(cache=True)
def first_at_least(sorted_values, value):
    """The first index i with ``sorted_values[i] >= value`` (len when none): a binary search."""
    low, high = 0, sorted_values.shape[0]
    while low < high:
        middle = (low + high) >> 1
        if sorted_values[middle] < value:
            low = middle + 1
        else:
            high = middle
    return low


@numba.njit(inline="always", cache=True)
def equal_share(task, num_tasks, length):
    """``(begin, end)`` of task ``task``'s share when ``length`` items are cut into ``num_tasks`` equal parts."""
    return task * length // num_tasks, (task + 1) * length // num_tasks


@numba.njit(cache=True)
def balanced_bounds(work_prefix, num_tasks):
    """Cut points ``bounds[0..num_tasks]`` into ``work_prefix`` (non-decreasing, work before each
    index) so that task ``t``'s items ``bounds[t]:bounds[t + 1]`` carry about equal work."""
    last = work_prefix.shape[0] - 1
    total = work_prefix[last]
    bounds = np.empty(num_tasks + 1, dtype=np.int64)
    bounds[0] = 0
    for task in range(1, num_tasks):
        bounds[task] = first_at_least(work_prefix, total * task // num_tasks)
    bounds[num_tasks] = last
    return bounds


def bitmap_to_queue(bitmap):
    """The vertices of ``bitmap`` in increasing order (int64)."""
    return bitmap_to_queue_and_edges(bitmap, None)[0]


def bitmap_to_queue_and_edges(bitmap, offsets):
    """``(queue, edges)``: the vertices of ``bitmap`` in increasing order (int64) and, with ``offsets``, the sum of
    their degrees (0 without). In parallel: each task counts its equal share of the words, then writes its
    vertices from its place in the queue."""
    num_tasks = numba.get_num_threads()
    counts = np.zeros(num_tasks, dtype=np.int64)
    edges = np.zeros(num_tasks, dtype=np.int64)
    _count_shares(bitmap, offsets, counts, edges)
    queue = np.empty(counts.sum(), dtype=np.int64)
    _bits_to_queue(bitmap, counts, queue)
    return queue, int(edges.sum())


@numba.njit(parallel=True, cache=True)
def _count_shares(bitmap, offsets, counts, edges):
    num_tasks = counts.shape[0]
    for task in numba.prange(num_tasks):
        first_word, end_word = equal_share(task, num_tasks, bitmap.shape[0])
        count = 0
        degrees = 0
        for word in range(first_word, end_word):
            bits = bitmap[word]
            if offsets is None:
                count += popcount(bits)
                continue
            while bits:
                v = (word << WORD_SHIFT) + np.int64(trailing_zeros(bits))
                degrees += offsets[v + 1] - offsets[v]
                count += 1
                bits &= bits - ONE
        counts[task] = count
        edges[task] = degrees


@numba.njit(parallel=True, cache=True)
def _bits_to_queue(bitmap, counts, queue):
    """Each task writes the vertices of its equal share of the words of ``bitmap`` (``counts[t]`` of them) from
    its place in ``queue``: the queue comes out in increasing order."""
    num_tasks = counts.shape[0]
    ends = np.cumsum(counts)
    for task in numba.prange(num_tasks):
        first_word, end_word = equal_share(task, num_tasks, bitmap.shape[0])
        slot = ends[task] - counts[task]
        for word in range(first_word, end_word):
            bits = bitmap[word]
            while bits:
                queue[slot] = (word << WORD_SHIFT) + np.int64(trailing_zeros(bits))
                slot += 1
                bits &= bits - ONE


@numba.njit(cache=True)
def queue_to_bitmap(queue, copies):
    """Make every copy (row) of the bitmap ``copies`` hold exactly the vertices of ``queue``.

    On one thread. In parallel, each task clearing and setting the words of its own cache lines (reading the
    whole queue), it measured 0.971x (0.945-1.016x), and with a parallel top-down level's visited bits and
    next frontier made the same way 0.957x (0.940-0.970x): 16 threads on the 16-core host, SCALE 22,
    `benchmarks/cpu_revisions.py`, 5 rounds of 16 keys.
    """
    copies[0, :] = ZERO
    set_bits(copies[0], queue)
    for copy in range(1, copies.shape[0]):
        for word in range(copies.shape[1]):
            copies[copy, word] = copies[0, word]


class Parents:
    """A BFS kernel's parent array, kept from search to search: indexed by the graph's labels, it holds each
    reached vertex's parent under the *original* labels (-1 unvisited).

    A search writes ``labels[u]`` (``labels``: the graph's label -> original,
    in the labels' dtype: int32 below 2^31 vertices) where it finds ``u`` as a
    parent (`label_of`): the table is read once per frontier vertex top-down
    and mostly at hubs bottom-up, whose entries stay in cache. `finish` then
    gathers the output in original order, ``original[w] =
    array[new_label[w]]``: sequential writes and one read a vertex, without
    a branch (the array's entries from ``filled`` on, the vertices without
    edges, last in degree order, hold -1: no search writes them but at the
    root, whose entry `finish` mends): a branch that skipped those vertices'
    reads mispredicted at random (about 40% of a rank's block) and cost five
    times the gather (`docs/measurements.md`). Mapping afterwards instead,
    ``original[order[v]] = order[array[v]]``, made two random accesses per
    vertex, one of them a write: at SCALE 22 on 2 threads the map took
    5.8 ms, the gather and the reset 1.4 ms, of a 30 ms search (the same
    parent arrays, in one process); on the 16-core host's 16 threads the
    work between a search's levels, mostly that map, was half of a 17 ms
    search (`benchmarks/cpu_levels.py`).

    A new array a search would cost a fill of N words on one thread (and a
    page fault per page of a fresh allocation). Instead `finish` returns the
    entries of ``[0, filled)`` to -1 in a parallel sequential pass, so the
    array is ready for the next search; one a search left behind (an
    exception before `finish`) is filled again.

    A rank of a distributed search (`bfs_distributed`) keeps the parents of
    its own block of vertices, ``first_label`` the block's first label (the
    same in the graph's labels and the original ones: a rank renumbers
    inside its block): ``labels`` maps every label a search can meet (a
    `label_map` of the block's and its rows' neighbours' labels: a parent
    may be any vertex, but only a neighbour), ``new_label`` the block's
    original local indices to the graph's local ones, and ``finish`` returns
    the block's parents in original order. There a search writes its own
    labels (``written`` is None) and ``finish`` maps them through the label
    map in one pass in label order before its gather: the map's three reads
    (word, its rank, the value) at every write, behind the scan's own
    reads, slowed the hub level's bottom-up step far more than the pass
    costs (`docs/measurements.md`, session 27).

    Given each row's first neighbour (``first_neighbors``, the bottom-up
    scan's), their original labels are mapped once (``first_parents``, n
    labels): the bottom-up scan writes that of a parent that is the row's
    first neighbour, 80-95% of the vertices a search reaches (rows list hubs
    first), read in order where a table of all N or the label map is read at
    random. With a label map it marks every other parent it writes in
    ``unmapped`` (a bit a vertex, as the top-down levels mark what they
    find), which alone ``finish`` maps. Whole runs, SCALE 21, 2-core
    machine: one process 1.17x, two ranks 1.11x (session 33).
    """

    def __init__(self, graph, labels=None, new_label=None, first_label=0, first_neighbors=None):
        dtype = neighbor_dtype(graph.num_vertices)  # signed: -1 marks the unreached (rows may hold uint32 labels)
        self.array = np.full(graph.offsets.shape[0] - 1, -1, dtype=dtype)  # the graph's (local) labels
        if labels is None:
            labels = graph.order
        # label -> original: a table, or a `label_map` of the labels a search meets
        self.labels = labels if isinstance(labels, tuple) else labels.astype(dtype, copy=False)
        # what a search writes for a parent u, label_of(written, u): the original label, or its own (a label map)
        self.written = None if isinstance(labels, tuple) else self.labels
        self._new_label = (graph.new_label if new_label is None else new_label).astype(dtype, copy=False)
        self._filled = _end_of_edges(graph.offsets)  # the labels past the last vertex with edges have none
        # each row's first neighbour's original label (None without first neighbours) and, with a label map, the
        # vertices whose parent is still a search label (None where parents are written as original labels)
        self.first_parents = self.unmapped = None
        if self.written is None and first_neighbors is not None:
            self.first_parents = first_neighbors[:self._filled].astype(dtype)
            _map_parents_in_place(self.first_parents, self._filled, *self.labels)
            self.unmapped = np.zeros(bitmap_words(self.array.shape[0]), dtype=np.uint64)
        elif first_neighbors is not None:
            self.first_parents = self.written[first_neighbors[:self._filled]]
        self._first = first_label
        self._root = None
        self._started = False

    def start(self, root):
        """The array, all -1 but ``root`` (a local label of the graph; None: a rank that does not own the
        search's root), its own parent."""
        if self._started:
            self.array.fill(-1)
            if self.unmapped is not None:
                self.unmapped.fill(0)
        self._started = True
        self._root = root
        if root is not None:
            self.array[root] = label_of(self.written, self._first + root)
        return self.array

    def finish(self):
        """The search's parents under the original labels, a new array."""
        original = np.empty(self.array.shape[0], dtype=self.array.dtype)
        if self.unmapped is not None:  # the parents written as search labels, mapped in place (and unmarked)
            _map_unmapped(self.array, self.unmapped, *self.labels)
        elif self.written is None:  # every parent written as a search label: mapped in place, in label order
            _map_parents_in_place(self.array, self._filled, *self.labels)
        _gather_parents(self._new_label, self.array, original)
        _reset(self.array, self._filled, numba.get_num_threads())
        root = self._root
        if root is not None:  # also a root without edges
            label = label_of(self.labels, self._first + root)
            original[label - self._first] = label
            self.array[root] = -1
        self._started = False
        return original


def label_of(labels, u):
    """The parent a search writes for a child of ``u``: ``labels[u]`` (`Parents.written`: a table of every
    label), or ``u`` where ``labels`` is None (parents under the graph's labels, mapped afterwards); from Python
    also ``values[place of u]`` where ``labels`` is a `label_map` ``(words, word_ranks, values)`` (the labels a
    rank's search can meet, a bitmap with its words' ranks and a value each: no table of all N; compiled
    searches do not read it, `Parents` maps their labels at the end). Compiled by `_label_of`."""
    if labels is None:
        return u
    if isinstance(labels, tuple):
        return labels[2][place(u, labels[0], labels[1], 0)]
    return labels[u]


@overload(label_of, inline="always")
def _label_of(labels, u):
    if isinstance(labels, types.NoneType):
        return lambda labels, u: u
    return lambda labels, u: labels[np.uint64(u)]


def label_map(distinct, values):
    """The `label_of` map ``(words, word_ranks, values)`` of a `partition.DistinctLabels` and a value for each of
    its labels (in label order)."""
    return distinct.words, distinct.word_ranks, values


@numba.njit(cache=True)
def _end_of_edges(offsets):
    """One past the last vertex with edges (0 for a graph without edges)."""
    vertex = offsets.shape[0] - 1
    while vertex > 0 and offsets[vertex] == offsets[vertex - 1]:
        vertex -= 1
    return vertex


@numba.njit(parallel=True, cache=True)
def _map_parents_in_place(parent, filled, words, word_ranks, values):
    """``parent[v]`` (v < ``filled``) through the `label_map` ``(words, word_ranks, values)``, -1 kept. In label
    order, one random read a parent, before the gather: mapped within the gather, behind its random read of
    ``parent``, the map's reads were slower, and the map's arrays taken from a tuple inside the loop slower still
    (`docs/measurements.md`, session 27)."""
    for v in numba.prange(filled):
        p = parent[v]
        if p >= 0:
            parent[v] = values[place(p, words, word_ranks, 0)]


@numba.njit(parallel=True, cache=True)
def _map_unmapped(parent, unmapped, words, word_ranks, values):
    """`_map_parents_in_place` of the vertices marked in the bitmap ``unmapped`` only, their marks cleared."""
    for word in numba.prange(unmapped.shape[0]):
        bits = unmapped[word]
        if bits:
            unmapped[word] = ZERO
            while bits:
                v = (np.int64(word) << WORD_SHIFT) + np.int64(trailing_zeros(bits))
                parent[v] = values[place(parent[v], words, word_ranks, 0)]
                bits &= bits - ONE


@numba.njit(parallel=True, cache=True)
def _gather_parents(new_label, parent, original):
    for w in numba.prange(original.shape[0]):
        original[w] = parent[np.uint64(new_label[w])]


@numba.njit(parallel=True, cache=True)
def _reset(array, end, num_tasks):
    """``array[:end] = -1``, each task a contiguous share."""
    for task in numba.prange(num_tasks):
        begin, stop = equal_share(task, num_tasks, end)
        array[begin:stop] = -1


def map_parents(vertex_order, parent_order, parent):
    """``original[vertex_order[v]] = parent_order[parent[v]]`` (``parent``'s dtype, -1 kept): parents under the
    original labels, the vertices' order and the parents' (the same table in one process; a rank's block and
    the whole graph in a distributed search) mapping new labels to original ones."""
    original = np.empty(parent.shape[0], dtype=parent.dtype)
    _map_parents(vertex_order, parent_order, parent, original)
    return original


@numba.njit(parallel=True, cache=True)
def _map_parents(vertex_order, parent_order, parent, original):
    for v in numba.prange(parent.shape[0]):
        p = parent[v]
        original[vertex_order[v]] = parent_order[p] if p >= 0 else -1


def trace_entry(direction, frontier_size, edges_examined, seconds):
    """One level of ``kernel.trace``."""
    return {"direction": direction, "frontier": int(frontier_size), "edges_examined": int(edges_examined),
            "seconds": seconds}
