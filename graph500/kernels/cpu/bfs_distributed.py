"""Kernel 2, ``distributed-direction-optimizing``: direction-optimizing BFS over the P ranks of a run.

Algorithm: Beamer, Asanović and Patterson, "Direction-Optimizing
Breadth-First Search" (SC 2012), on the 1D vertex partition of Buluç and
Madduri (SC 2011), with the replicated frontier bitmap of Yasui, Fujisawa
and Sato (Graph500 2013-2014). Rank r owns a block of vertices
(`graph500.partition.VertexBlocks`) and their rows, neighbours under global
labels (`graph500.kernels.graph.PartitionedGraph`). A level, by Beamer's
rules on global counts:

- top-down: each rank expands its own frontier vertices; an unvisited
  neighbour v becomes a request (v, parent) for v's owner, packed in one
  uint64 and exchanged by owner (alltoallv), and v's bit is set in the
  visited bitmap so it asks once; each owner claims its children (the first
  request wins; with threads a keep pass leaves exactly one). The visited
  bitmap is one shared-memory window a host: each rank sets its own words
  (its frontier, then a barrier), the requests' marks go anywhere (a mark
  lost to another rank's write costs a duplicate request, which the owner
  refuses). Across hosts each rank keeps a copy, the frontier reaching it as
  labels or bitmap words, whichever is smaller. (Found bitmaps instead of
  requests, from ``found_bitmap_edges`` x N frontier edges: off.)
- bottom-up: the frontier is a bitmap of all N vertices every rank reads
  (one shared-memory window a host, an allgather across hosts); each rank
  scans its unvisited vertices against it (`bfs_bottom_up.bottom_up_step`).

Degree ordering (``reorder``): each rank numbers its block by decreasing
degree (owners unchanged) and lists each row hubs first; parents are
written under the search's labels as found, mapped to their input labels
and gathered into input order at the end (`frontier.Parents`). Every
per-edge and per-vertex loop is a prange over one task per thread, without
atomics (a lost visited bit only costs a duplicate request).

Data structures per rank (n = N / P vertices): parents (n, kept across
searches), the visited bitmap and two frontier bitmaps (N / 8 bytes each,
shared on one host: a rank clears and copies only its own words a search),
request buffers (grown to the largest level), the bottom-up work split,
the rows under the new labels, the label tables (n each), the input labels
of the labels a search meets (a bitmap of N / 8 bytes, its words' ranks
and a label each: no table of all N) and of each row's first neighbour (n);
at set-up the rows' distinct neighbours' classes and new labels, from their
owners.

Tunables: ``alpha`` (ALPHA 40: a top-down edge costs more here than in one
process), ``beta`` (18), ``parallel_edges`` (2^15: smaller top-down levels
on one thread), ``reorder`` (True), ``busiest_rank`` (True: the first rule
counts the busiest rank's frontier edges times P), ``first_neighbors``
(True), ``found_bitmap_edges`` (FOUND_BITMAP_EDGES: inf, off). Every choice's
measurements: docs/kernels/cpu-bfs-distributed.md.
"""

import time

import numba
import numpy as np

from graph500.kernels import register
from graph500.kernels.cpu.bfs_bottom_up import FIRST_NEIGHBORS, BottomUpLayout, bottom_up_step
from graph500.kernels.cpu.bfs_direction_optimizing import BETA
from graph500.kernels.cpu.bfs_top_down import PARALLEL_EDGES, frontier_edge_prefix
from graph500.kernels.cpu.frontier import (
    ONE, WORD_SHIFT, balanced_bounds, bit_of, bitmap_to_queue, bitmap_to_queue_and_edges, bitmap_words,
    equal_share, Parents, first_at_least, has_bit, label_map, label_of, set_bit, set_bits, trace_entry,
)
from graph500.kernels.cpu.reorder import by_decreasing_degree, inverse_permutation, relabel
from graph500.kernels.graph import CSRGraph, PartitionedGraph, whole_graph_part
from graph500.partition import DistinctLabels, place, stored_label_dtype

ALPHA = 40  # see the module's notes: top-down costs more per edge here than in one process
HALF_BITS = np.uint64(32)  # a packed request: child offset << HALF_BITS | parent offset (blocks <= 2^32)
HALF_MASK = np.uint64((1 << 32) - 1)
FOUND_BITMAP_EDGES = float("inf")  # times N: top-down levels of this many frontier edges exchange found bitmaps


@numba.njit(parallel=True, cache=True)
def _request_children(offsets, neighbors, frontier, edge_prefix, visited, block, child, claimer, task_counts):
    """Top-down, the asking half: the requests (child, global; parent, local) of the local ``frontier``.

    Task t takes the t-th equal share of the frontier's edges and writes its
    requests from the share's first edge index on (a share never makes more
    requests than it has edges); ``task_counts[t, r]`` counts those for rank r.
    Each requested child's bit is set in ``visited``.
    """
    num_tasks = task_counts.shape[0]
    total_edges = edge_prefix[frontier.shape[0]]
    for task in numba.prange(num_tasks):
        task_counts[task, :] = 0
        begin, end = equal_share(task, num_tasks, total_edges)
        slot = begin
        i = first_at_least(edge_prefix, begin + 1) - 1  # the frontier vertex whose row holds edge ``begin``
        edge = begin
        while edge < end:
            u = frontier[i]
            stop = min(end, edge_prefix[i + 1])
            row_start = offsets[u] - edge_prefix[i]
            for k in range(np.uint64(row_start + edge), np.uint64(row_start + stop)):  # unsigned: no wraparound test
                v = neighbors[k]
                if not has_bit(visited, v):
                    set_bit(visited, v)
                    child[slot] = v
                    claimer[slot] = u
                    task_counts[task, v // block] += 1
                    slot += 1
            edge = stop
            i += 1


@numba.njit(parallel=True, cache=True)
def _group_requests_by_owner(child, claimer, total_edges, task_counts, block, send):
    """Pack the requests of `_request_children` into ``send`` grouped by owner rank (owner-major, then task):
    the child's offset in its owner's block in the high 32 bits, the parent's in this rank's block below."""
    num_tasks, num_ranks = task_counts.shape
    cursor = np.empty_like(task_counts)
    position = 0
    for rank in range(num_ranks):
        for task in range(num_tasks):
            cursor[task, rank] = position
            position += task_counts[task, rank]
    for task in numba.prange(num_tasks):
        begin, _ = equal_share(task, num_tasks, total_edges)
        for slot in range(begin, begin + task_counts[task].sum()):
            v = child[slot]
            rank = v // block
            send[cursor[task, rank]] = (np.uint64(v - rank * block) << HALF_BITS) | np.uint64(claimer[slot])
            cursor[task, rank] += 1


@numba.njit(parallel=True, cache=True)
def _claim_children(received, receive_counts, block, offsets, parent, parent_labels, next_frontier, num_tasks, child,
                    claimer):
    """Top-down, the owner's half: claim the received packed requests (grouped by source rank r, whose
    parents are offsets in r's block; children are offsets in this rank's).

    A child is claimed by the first request that finds ``parent == -1``, which
    writes the parent ``u`` as ``label_of(parent_labels, u)`` (`frontier.Parents.written`); those
    requests (candidates: their child, local, and parent, as written) are compacted
    into ``child`` and ``claimer`` (``received``'s length). When several tasks
    race, one write lands and a keep pass retains that candidate only (one
    task has no race and no keep pass). The kept children's bits are set in
    ``next_frontier`` (this rank's words, zeroed by the caller). Returns
    ``(children, their edges)``.
    """
    count = received.shape[0]
    source_end = np.cumsum(receive_counts)
    kept = np.zeros(num_tasks, dtype=np.int64)
    kept_edges = np.zeros(num_tasks, dtype=np.int64)
    for task in numba.prange(num_tasks):
        begin, end = equal_share(task, num_tasks, count)
        source = first_at_least(source_end, begin + 1)
        j = begin
        while j < end:
            stop = min(end, source_end[source])
            first_parent = source * block
            for k in range(np.uint64(j), np.uint64(stop)):
                v = received[k] >> HALF_BITS
                if parent[v] == -1:
                    u = label_of(parent_labels, first_parent + np.int64(received[k] & HALF_MASK))
                    parent[v] = u
                    child[begin + kept[task]] = v
                    claimer[begin + kept[task]] = u
                    kept[task] += 1
                    kept_edges[task] += offsets[v + ONE] - offsets[v]
            j = stop
            source += 1
    if num_tasks > 1:
        for task in numba.prange(num_tasks):
            begin, _ = equal_share(task, num_tasks, count)
            candidates, kept[task] = kept[task], 0
            for j in range(begin, begin + candidates):
                v = child[j]
                if parent[v] == claimer[j]:
                    child[begin + kept[task]] = v
                    kept[task] += 1
                else:
                    kept_edges[task] -= offsets[v + 1] - offsets[v]
    for task in range(num_tasks):  # serial: children of several tasks share words
        begin, _ = equal_share(task, num_tasks, count)
        for j in range(begin, begin + kept[task]):
            set_bit(next_frontier, child[j])
    return kept.sum(), kept_edges.sum()


class DegreeOrderedPart:
    """A rank's part renumbered by decreasing degree inside its own block (ownership unchanged).

    ``graph``: the new `PartitionedGraph`, rows listing neighbours under their
    new labels by decreasing degree class (``degree.bit_length()``, hubs
    first; the input's order within a class); ``order`` (int64, n): new local
    index -> input local index, ``new_local`` its inverse; ``original``: new
    global label -> input global label of every label a search of this rank
    meets (its block's and its rows' neighbours'), a `frontier.label_map`
    (a bitmap of those labels, its words' ranks, and their input labels
    asked of their owners): a search reads it for every parent it writes,
    and no rank holds a table of all N vertices (4 bytes a vertex: 16 GiB a
    rank at SCALE 32).
    """

    def __init__(self, graph):
        comm = graph.comm
        degrees = np.diff(graph.offsets)
        self.order = by_decreasing_degree(degrees)
        self.new_local = inverse_permutation(self.order)
        degree_class = _bit_lengths(degrees)
        num_classes = int(comm.allreduce(int(degree_class.max(initial=0)), "max")) + 1
        label_bits = max(1, (graph.num_vertices - 1).bit_length())
        packed_dtype = np.uint32 if label_bits + num_classes.bit_length() <= 32 else np.uint64
        # each distinct neighbour's degree class << label_bits | new label, from its owner: one read a row entry
        neighbours = DistinctLabels((graph.neighbors,), graph.num_vertices)
        class_and_label = neighbours.values_from_owners(
            comm, graph.blocks, (degree_class.astype(packed_dtype) << packed_dtype(label_bits))
            | (graph.first_vertex + self.new_local).astype(packed_dtype))
        del degree_class
        offsets = np.zeros_like(graph.offsets)
        np.cumsum(degrees[self.order], out=offsets[1:])
        # labels uint32 up to 2^32 vertices (the graph's are int64 past 2^31): 4 bytes a row entry at SCALE 32
        neighbors = np.empty(graph.neighbors.shape[0], dtype=stored_label_dtype(graph.num_vertices))
        _rows_by_degree_class(graph.offsets, graph.neighbors, self.new_local, neighbours.words, neighbours.word_ranks,
                              class_and_label, label_bits, num_classes,
                              balanced_bounds(graph.offsets, numba.get_num_threads()), offsets, neighbors)
        del class_and_label, neighbours
        self.graph = PartitionedGraph(graph.num_vertices, graph.first_vertex, offsets, neighbors, None, comm,
                                      graph.blocks)
        # the input label of each label a search can meet (the block's, its rows' neighbours'), from the owners
        met = labels_met(self.graph)
        input_labels = (graph.first_vertex + self.order).astype(stored_label_dtype(graph.num_vertices))
        self.original = label_map(met, met.values_from_owners(comm, graph.blocks, input_labels))


def labels_met(graph):
    """The `partition.DistinctLabels` of the labels a search of a rank's part meets: its block's and its rows'
    neighbours'."""
    block = np.arange(graph.first_vertex, graph.first_vertex + graph.num_local, dtype=graph.neighbors.dtype)
    return DistinctLabels((graph.neighbors, block), graph.num_vertices)


def _composed(order, labels):
    """``order[labels]`` of a table or of a `frontier.label_map`'s values."""
    if isinstance(labels, tuple):
        words, word_ranks, values = labels
        return words, word_ranks, order[values]
    return order[labels]


@numba.njit(cache=True)
def _bit_lengths(values):
    lengths = np.zeros(values.shape[0], dtype=np.uint8)
    for i in range(values.shape[0]):
        value = values[i]
        while value:
            lengths[i] += 1
            value >>= 1
    return lengths


@numba.njit(parallel=True, cache=True)
def _rows_by_degree_class(offsets, neighbors, new_local, words, word_ranks, class_and_label, label_bits, num_classes,
                          task_bounds, new_offsets, new_neighbors):
    """Input row r becomes new row ``new_local[r]`` under the new labels, by decreasing degree class (a
    counting sort per row, stable): ``words`` and ``word_ranks`` place the rows' neighbours among their distinct
    labels (`partition.DistinctLabels`), ``class_and_label`` at each one's place its class above ``label_bits``
    bits and its new label below (one table read an entry; two tables, labels and classes, took 1.06x as long:
    rank 0's rows of 2 at SCALE 20, one thread, 6 alternations in one process, 1.04-1.09x). Tasks take ranges of
    input rows (read in order, the costlier side), gathering a row's labels and classes into their buffers
    once."""
    for task in numba.prange(task_bounds.shape[0] - 1):
        first, end = task_bounds[task], task_bounds[task + 1]
        longest = 0
        for r in range(first, end):
            longest = max(longest, offsets[r + 1] - offsets[r])
        labels = np.empty(longest, dtype=new_neighbors.dtype)
        classes = np.empty(longest, dtype=np.int64)
        label_mask = (class_and_label.dtype.type(1) << label_bits) - class_and_label.dtype.type(1)
        next_slot = np.empty(num_classes + 1, dtype=np.int64)
        for r in range(first, end):
            begin, degree = offsets[r], offsets[r + 1] - offsets[r]
            next_slot[:] = 0
            for j in range(degree):
                packed = class_and_label[place(neighbors[begin + j], words, word_ranks, -1)]
                labels[j] = packed & label_mask
                classes[j] = num_classes - np.int64(packed >> label_bits)
                next_slot[classes[j]] += 1
            slot = new_offsets[new_local[r]]
            for c in range(num_classes + 1):
                count = next_slot[c]
                next_slot[c] = slot
                slot += count
            for j in range(degree):
                new_neighbors[next_slot[classes[j]]] = labels[j]
                next_slot[classes[j]] += 1


@register(distributed_default=True)
class DistributedBFS:
    """Direction-optimizing BFS on a 1D vertex partition: replicated frontier bitmap, top-down requests."""

    name = "distributed-direction-optimizing"
    kind = "bfs"
    backend = "cpu"
    distributed = True

    def __init__(self, graph, alpha=ALPHA, beta=BETA, parallel_edges=PARALLEL_EDGES, reorder=True, busiest_rank=True,
                 found_bitmap_edges=FOUND_BITMAP_EDGES, first_neighbors=FIRST_NEIGHBORS):
        if isinstance(graph, PartitionedGraph):
            self.labels = None
        else:
            self.labels = relabel(graph, reorder=False)  # kernel 1's renumbering, or the graph's own labels
            graph = whole_graph_part(self.labels)
        self.ordered = DegreeOrderedPart(graph) if reorder else None
        if reorder:
            graph = self.ordered.graph
        self.graph = graph
        rows = CSRGraph(graph.num_local, graph.offsets, graph.neighbors)  # local rows, neighbours global
        self.layout = BottomUpLayout(rows, first_neighbors=first_neighbors)
        self.parents = Parents(graph, *self._input_labels(), first_label=graph.first_vertex,
                               first_neighbors=self.layout.first_neighbors)
        self.alpha, self.beta, self.parallel_edges = alpha, beta, parallel_edges
        self.busiest_rank = busiest_rank
        # top-down levels of at least this many frontier edges (all ranks') exchange found bitmaps
        self.found_bitmap_edges = found_bitmap_edges * graph.num_vertices
        self.comm = graph.comm
        self.total_edges = int(self.comm.allreduce(graph.num_edges, "sum"))
        word_counts = [bitmap_words(graph.blocks.count(rank)) for rank in range(self.comm.size)]
        # the visited bitmap of all N vertices: this rank's words exact (``local_visited``), the others' as this
        # rank last saw them and with its requests marked; one shared window a host where MPI gives one
        self._visited = self.comm.gathered_array(word_counts, np.uint64)
        self.local_visited = self._visited.local
        # the frontier bitmap, now and next: this rank's words, and all N vertices' once published
        self.frontiers = [self.comm.gathered_array(word_counts, np.uint64) for _ in range(2)]
        self.word_counts = np.array(word_counts, dtype=np.int64)
        # found bitmaps' top-down (where that path is on): the vertices this rank found
        self.found = np.empty(bitmap_words(graph.num_vertices), dtype=np.uint64) \
            if self.found_bitmap_edges < float("inf") else None
        if graph.blocks.block > 1 << 32:
            raise ValueError("a packed top-down request holds offsets of blocks of at most 2^32 vertices")
        self.requests = np.empty((2, 0), dtype=graph.neighbors.dtype)  # child, claimer (as made)
        self.send = np.empty(0, dtype=np.uint64)  # packed, by owner
        self.trace = []

    @property
    def visited(self):
        """The visited bitmap of all N vertices, as this rank reads and marks it."""
        return self._visited.whole

    def release(self):
        """Give the visited and frontier bitmaps' memory back (collective: every rank, once its searches are over;
        a host's shared window lives until then)."""
        for bitmap in (self._visited, *self.frontiers):
            bitmap.free()
        self.frontiers = ()

    def _input_labels(self):
        """``(labels, new_label)`` of `frontier.Parents`: every searched label's input label (parents are
        written as these), and the rank's input local indices' searched local labels."""
        graph = self.graph
        if self.ordered is None:  # the graph's labels are the input's: each label met is its own
            met = labels_met(graph)
            labels = label_map(met, met.labels.astype(stored_label_dtype(graph.num_vertices)))
            new_label = np.arange(graph.num_local)
        else:
            labels, new_label = self.ordered.original, self.ordered.new_local
        if self.labels is not None:  # one rank: kernel 1's labels, then this kernel's, from the input's
            labels, new_label = _composed(self.labels.order, labels), new_label[self.labels.new_label]
        return labels, new_label

    def _grow_request_buffers(self, size):
        """Make the request arrays (child, claimer, packed send) at least ``size`` long (grown when a level needs
        more)."""
        if self.requests.shape[1] < size:
            self.requests = np.empty((2, size), dtype=self.requests.dtype)
            self.send = np.empty(size, dtype=np.uint64)

    def _mark_frontier_visited(self, frontier, queue, frontier_size, publish_frontier=False):
        """Set every rank's frontier vertices (this rank's: ``queue``) in the visited bitmap. On a host's shared
        bitmap each rank sets its own, then a barrier, before any rank marks its requests there (a mark lost
        to another rank's write at the same time costs a duplicate request; the owners' bits are all set
        before). Else this rank's copy takes every rank's: their labels allgathered when they are fewer bytes
        than the bitmap (``frontier_size``, the global count, says), else the frontier's words.
        ``publish_frontier``: the caller reads the frontier whole too; it is published once either way."""
        set_bits(self.local_visited, queue)  # a view of the whole on a shared bitmap, else this rank's own words
        if self._visited.shared:
            self._visited.publish()
            if publish_frontier:
                frontier.publish()
        elif not publish_frontier and frontier_size * self.graph.neighbors.itemsize < self.visited.nbytes:
            set_bits(self.visited, self.comm.allgather((self.graph.first_vertex + queue).astype(
                self.graph.neighbors.dtype)))
        else:
            frontier.publish()
            np.bitwise_or(self.visited, frontier.whole, out=self.visited)

    def _request_children(self, queue):
        """``(child, claimer, task_counts, edges)``: the requests of this rank's frontier ``queue`` made by
        `_request_children` (each task's from its share's first edge index on; ``task_counts[t, r]`` of task t
        for rank r), over the queue's ``edges`` edges; the children are marked in ``visited``, and ``send`` has
        room for the packed requests."""
        graph = self.graph
        edge_prefix = frontier_edge_prefix(graph.offsets, queue)
        edges = int(edge_prefix[-1])
        num_tasks = numba.get_num_threads() if edges >= self.parallel_edges else 1
        self._grow_request_buffers(edges)
        child, claimer = self.requests
        task_counts = np.empty((num_tasks, self.comm.size), dtype=np.int64)
        _request_children(graph.offsets, graph.neighbors, queue, edge_prefix, self.visited, graph.blocks.block,
                          child, claimer, task_counts)
        return child, claimer, task_counts, edges

    def _found_bitmap_step(self, frontier, frontier_size, next_frontier, parent):
        """One top-down level by found bitmaps: this rank marks the unvisited neighbours of its frontier in a
        bitmap of all N vertices, the ranks exchange its blocks (alltoallv, N / 8 bytes in all a rank), and
        each owner finds a parent in the (published) frontier for every vertex some rank found, by the
        bottom-up scan restricted to them. Returns (found, their edges, edges examined)."""
        graph, comm = self.graph, self.comm
        queue = bitmap_to_queue(frontier.local)
        # this rank's words as the level starts: every rank's requests mark the children visited (on a host's
        # shared bitmap, this rank's children too) from the barrier in _mark_frontier_visited on
        visited_before = self.local_visited | frontier.local
        self._mark_frontier_visited(frontier, queue, frontier_size, publish_frontier=True)  # the scan reads it whole
        child, _, task_counts, edges = self._request_children(queue)
        self.found[:] = 0
        for task in range(task_counts.shape[0]):  # each task's children from its share's first edge index on
            begin, _ = equal_share(task, task_counts.shape[0], edges)
            set_bits(self.found, child[begin:begin + task_counts[task].sum()])
        (parts,), _ = comm.alltoallv((self.found,), self.word_counts,
                                     np.full(comm.size, self.local_visited.shape[0], dtype=np.int64))
        found_here = np.bitwise_or.reduce(parts.reshape(comm.size, -1), axis=0)
        skip = visited_before | ~found_here  # the scan's "visited": all but the found ones
        next_frontier[:] = 0
        word_bounds, task_copy = self.layout.tasks()
        found, examined = bottom_up_step(graph.offsets, graph.neighbors, self.layout.first_neighbors, word_bounds,
                                         task_copy, frontier.whole.reshape(1, -1), next_frontier.reshape(1, -1), skip,
                                         parent, self.parents.written, self.parents.first_parents,
                                         self.parents.unmapped)
        np.bitwise_or(self.local_visited, next_frontier, out=self.local_visited)
        found_edges = bitmap_to_queue_and_edges(next_frontier, graph.offsets)[1] if found else 0
        return found, found_edges, edges + examined

    def _top_down_step(self, frontier, frontier_size, next_frontier, parent):
        """One top-down level from this rank's frontier (a gathered array; ``frontier_size`` vertices on all
        ranks) into ``next_frontier`` (this rank's words); returns (found, their edges, edges examined)."""
        graph = self.graph
        queue = bitmap_to_queue(frontier.local)
        self._mark_frontier_visited(frontier, queue, frontier_size)
        child, claimer, task_counts, edges = self._request_children(queue)
        send_counts = task_counts.sum(axis=0)
        requests = int(send_counts.sum())
        send = self.send
        _group_requests_by_owner(child, claimer, edges, task_counts, graph.blocks.block, send)
        (received,), receive_counts = self.comm.alltoallv((send[:requests],), send_counts)
        next_frontier[:] = 0
        count = received.shape[0]
        num_tasks = numba.get_num_threads() if count >= self.parallel_edges else 1
        found, found_edges = _claim_children(received, receive_counts, graph.blocks.block, graph.offsets, parent,
                                             self.parents.written, next_frontier, num_tasks,
                                             np.empty(count, dtype=np.int64), np.empty(count, dtype=np.int64))
        if self.parents.unmapped is not None:  # their parents are the claimers' search labels
            np.bitwise_or(self.parents.unmapped, next_frontier, out=self.parents.unmapped)
        return found, found_edges, edges

    def search(self, root):
        graph, comm = self.graph, self.comm
        if self.labels is not None:
            root = int(self.labels.new_label[root])
        local_root = root - graph.first_vertex
        owns_root = 0 <= local_root < graph.num_local
        if owns_root and self.ordered is not None:
            local_root = int(self.ordered.new_local[local_root])
        parent = self.parents.start(local_root if owns_root else None)
        frontier, next_frontier = self.frontiers
        frontier.local[:] = 0
        if owns_root:
            frontier.local[local_root >> WORD_SHIFT] = bit_of(local_root)
        self.local_visited[:] = self.layout.no_edge_bitmap  # on a shared bitmap each rank clears its own words
        if not self._visited.shared:
            self.visited[:] = 0  # this rank's copy of the others' words
        word_bounds, task_copy = self.layout.tasks()
        root_edges = graph.offsets[local_root + 1] - graph.offsets[local_root] if owns_root else 0
        frontier_size, frontier_edges = comm.allreduce(np.array([owns_root, root_edges], dtype=np.int64), "sum")
        top_down_work = self._top_down_work(root_edges, frontier_edges)
        unexplored_edges = self.total_edges
        bottom_up = left_bottom_up = False
        self.trace = []
        while frontier_size:
            start = time.perf_counter()
            if not bottom_up and not left_bottom_up and top_down_work > unexplored_edges / self.alpha:
                bottom_up = True
            left_bottom_up = False
            if bottom_up:
                frontier.publish()
                np.bitwise_or(self.local_visited, frontier.local, out=self.local_visited)  # what it claimed
                found, examined = bottom_up_step(graph.offsets, graph.neighbors, self.layout.first_neighbors,
                                                 word_bounds, task_copy, frontier.whole.reshape(1, -1),
                                                 next_frontier.local.reshape(1, -1), self.local_visited, parent,
                                                 self.parents.written, self.parents.first_parents,
                                                 self.parents.unmapped)
                found_edges = 0  # counted below if top-down follows
            else:
                unexplored_edges -= frontier_edges
                if frontier_edges >= self.found_bitmap_edges:
                    found, found_edges, examined = self._found_bitmap_step(frontier, frontier_size,
                                                                           next_frontier.local, parent)
                else:
                    found, found_edges, examined = self._top_down_step(frontier, frontier_size,
                                                                       next_frontier.local, parent)
            totals = comm.allreduce(np.array([found, found_edges, examined], dtype=np.int64), "sum")
            self.trace.append(trace_entry("bottom-up" if bottom_up else "top-down", frontier_size, totals[2],
                                          time.perf_counter() - start))
            if bottom_up and (totals[0] == 0 or (totals[0] < frontier_size and totals[0] <= graph.num_vertices
                                                 / self.beta)):
                bottom_up, left_bottom_up = False, True  # as Beamer et al.: at least one top-down level next
                if totals[0]:
                    self._visited.publish()  # the ranks' words, which bottom-up levels update alone
                    found_edges = bitmap_to_queue_and_edges(next_frontier.local, graph.offsets)[1]
                    totals[1] = comm.allreduce(found_edges, "sum")
            frontier_size, frontier_edges = int(totals[0]), int(totals[1])
            if not bottom_up:
                top_down_work = self._top_down_work(found_edges, frontier_edges)
            frontier, next_frontier = next_frontier, frontier
        return self.parents.finish()

    def _top_down_work(self, local_edges, total_edges):
        """What a top-down level of the next frontier costs, in edges, for the switching rule: the busiest
        rank's edges times P (the level lasts as long as the busiest rank), or the total."""
        if not self.busiest_rank or self.comm.size == 1:
            return total_edges
        return int(self.comm.allreduce(int(local_edges), "max")) * self.comm.size
