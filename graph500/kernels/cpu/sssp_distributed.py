"""Kernel 3, ``distributed-delta-stepping``: delta-stepping SSSP over the ranks of a run, bulk-synchronous.

Algorithm: Meyer and Sanders' delta-stepping (J. Algorithms 49, 2003) in
the distributed form of Chakaravarthy, Checconi, Petrini and Sabharwal
(IPDPS 2014). Each rank owns a block of vertices (1D partition) and their
rows; every rank settles the same bucket b of width ``delta``:

1. Light rounds: the rank relaxes the light edges (weight < delta) of its
   vertices in b to a local fixpoint (an owned vertex that improves into b
   is relaxed again in the same round); an edge to another rank's vertex
   becomes a request (target, float32 distance, parent). One Allreduce(min)
   agrees on the next bucket and whether heavy edges wait; the requests are
   exchanged (Alltoall of counts, Alltoallv of uint32 triples) only when
   some rank has any, and each owner applies those that improve.
2. One heavy round: the heavy edges of every vertex settled in b, once.
3. The next bucket is the agreed smallest; the search ends when none is left.

A sender remembers, per remote vertex (ghost), the smallest distance it has
sent there and sends only less. State as in `sssp_delta_stepping`: one word
a vertex (float32 distance bits above the parent), improved only by a
strictly smaller distance, so parents never form a cycle; ``distance_bits``
keeps the distances alone for the relaxation's compares. Leaves are never
binned; relaxation prefetches PREFETCH_AHEAD sources ahead.

Data structures (built in ``__init__``): the rank's vertices by decreasing
degree; rows in four parts (local light, remote light, local heavy, remote
heavy), remote entries as ghost indices (per owner, the owner's local index
asked once); a ring of bins of BLOCK-entry blocks from a pool; the settled
list; improvement, request and send buffers, grown by doubling and kept.
Within a rank, relaxations of at least ``parallel_edges`` edges and bins of
at least ``parallel_entries`` entries are shared by its threads without
atomics: the races can only lose a write, repaired when the chunk settles
(`_settle_task_chunks`). Limit: fewer than 2^32 vertices.

Tunables: ``delta`` (DELTA_PER_MAX_WEIGHT 0.02 x the largest weight: four
times the one-process kernel's, since every bucket costs a round of
collectives), CHUNK_EDGES (2^15: the improvement buffer stays in cache),
``parallel_edges`` (PARALLEL_EDGES 2^15), ``parallel_entries``
(PARALLEL_ENTRIES 2^12), ``trace`` (one entry a round). Every choice's
measurements and the Numba notes: docs/kernels/cpu-sssp-distributed.md.
"""

import time

import numba
import numpy as np
from numba.cpython.unsafe.numbers import viewer

from graph500.compiled import prefetch
from graph500.kernels import register
from graph500.kernels.cpu.frontier import balanced_bounds
from graph500.kernels.cpu.reorder import Relabeled, by_decreasing_degree, inverse_permutation
from graph500.kernels.cpu.sssp_delta_stepping import PREFETCH_AHEAD, RING_SLACK
from graph500.kernels.cpu.sssp_distributed_rows import (LOCAL_HEAVY, LOCAL_LIGHT, ROW_PARTS, _columns_and_ghosts,
                                                        _split_rows)
from graph500.kernels.cpu.sssp_distributed_state import (INFINITY_BITS, NO_BUCKET, REQUEST_FIELDS, _bin_improved,
                                                         _new_rank_state, _reserve_requests, _settle_by_tasks,
                                                         _smallest_bucket, _take_bin)
from graph500.kernels.cpu.sssp_words import MAX_VERTICES, UNREACHED, _PARENT_MASK, _SHIFT, _bucket, _distance, _pack
from graph500.kernels.graph import PartitionedGraph, whole_graph_part

DELTA_PER_MAX_WEIGHT = 0.02
CHUNK_EDGES = 1 << 15  # edges relaxed between two binnings of their improvements (the buffer stays in cache)
PARALLEL_EDGES = 1 << 15  # a relaxation of at least this many edges is shared by the rank's threads
PARALLEL_ENTRIES = 1 << 12  # so is taking a bin of at least this many entries, and settling its vertices


# ---------------------------------------------------------------- relaxation

@numba.njit(cache=True)
def _relax_rows(sources, begin, end, part, rows, vertices, improved_out, requests, request_count):
    """Relax, from each source's state, its local and remote entries of the light (part 0) or heavy (part 2)
    half of its row, for the sources from ``begin`` until ``improved_vertex`` could overflow (at least one).
    A local improvement is stored and appended to ``improved``; a remote one is appended as a request when
    below what was sent to the ghost before. Tuples of plain arrays (`_hot_arrays`), not the rank's state:
    this is the hot loop.

    Returns (next source, improvements, requests, edges examined)."""
    bounds, columns, weights, first_vertex, order = rows
    state, distance_bits, ghost_sent = vertices
    improved_vertex, improved_word = improved_out
    request_ghost, request_word = requests
    limit = improved_vertex.shape[0]
    improved = 0
    examined = 0
    i = begin
    while i < end:
        if i + PREFETCH_AHEAD < end:  # a later source: its row's bounds, its state, its label, its row's start
            ahead = sources[i + PREFETCH_AHEAD]
            prefetch(bounds, ahead * ROW_PARTS + part)
            prefetch(state, ahead)
            prefetch(order, ahead)
        if i + PREFETCH_AHEAD // 2 < end:
            ahead_begin = bounds[sources[i + PREFETCH_AHEAD // 2] * ROW_PARTS + part]
            prefetch(columns, ahead_begin)
            prefetch(weights, ahead_begin)
        u = sources[i]
        row = u * ROW_PARTS + part
        local_begin, remote_begin, remote_end = bounds[row], bounds[row + 1], bounds[row + 2]
        if examined + remote_end - local_begin > limit and i > begin:
            break
        examined += remote_end - local_begin
        distance = _distance(state[u])
        parent = np.uint64(first_vertex + order[u])
        for k in range(np.uint64(local_begin), np.uint64(remote_begin)):  # unsigned: no wraparound test
            v = np.uint64(columns[k])
            candidate = np.float32(distance + weights[k])
            bits = viewer(candidate, np.uint32)
            if bits < distance_bits[v]:
                distance_bits[v] = bits
                word = _pack(candidate, parent)
                state[v] = word
                improved_vertex[improved] = v
                improved_word[improved] = word
                improved += 1
        for k in range(np.uint64(remote_begin), np.uint64(remote_end)):
            ghost = np.uint64(columns[k])
            candidate = np.float32(distance + weights[k])
            bits = viewer(candidate, np.uint32)
            if bits < ghost_sent[ghost]:
                ghost_sent[ghost] = bits
                request_ghost[request_count] = ghost
                request_word[request_count] = _pack(candidate, parent)
                request_count += 1
        i += 1
    return i, improved, request_count, examined


@numba.njit(cache=True)
def _hot_arrays(rs):
    """``(rows, vertices, requests)``: the rank's arrays that `_relax_rows` reads and writes, as its tuples."""
    return ((rs.bounds, rs.columns, rs.weights, rs.first_vertex, rs.order), (rs.state, rs.distance_bits, rs.ghost_sent),
            (rs.request_ghost, rs.request_word))


@numba.njit(cache=True)
def _relax(rs, sources, count, part):
    """Relax the light or heavy half of the rows of ``sources[:count]`` in chunks, each chunk's improvements
    binned after it (shared by the threads from ``parallel_edges`` edges on); returns the edges examined."""
    if rs.task_vertex.shape[0] > 1 and count > 1:
        edge_prefix = _part_edge_prefix(rs.bounds, sources, count, part)
        if edge_prefix[count] >= rs.parallel_edges:
            return _relax_by_tasks(rs, sources, count, part, edge_prefix)
    examined = 0
    i = 0
    while i < count:
        _reserve_requests(rs, rs.improved_vertex.shape[0])
        rows, vertices, requests = _hot_arrays(rs)  # after the reservation, which may grow the requests
        i, improved, rs.request_count, edges = _relax_rows(sources, i, count, part, rows, vertices,
                                                           (rs.improved_vertex, rs.improved_word), requests,
                                                           rs.request_count)
        _bin_improved(rs, rs.improved_vertex, rs.improved_word, improved, rs.first_leaf)
        examined += edges
    return examined


@numba.njit(cache=True)
def _part_edge_prefix(bounds, sources, count, part):
    """Edges of the part ``part`` (light or heavy, local and remote) of the rows of ``sources[:count]``, summed:
    ``prefix[i]`` before source i."""
    prefix = np.empty(count + 1, dtype=np.int64)
    prefix[0] = 0
    for i in range(count):
        row = sources[i] * ROW_PARTS + part
        prefix[i + 1] = prefix[i] + bounds[row + 2] - bounds[row]
    return prefix


@numba.njit(parallel=True, cache=True)
def _relax_task_chunks(sources, task_next, task_end, part, bounds, columns, weights, first_vertex, order, state,
                       distance_bits, ghost_sent, task_vertex, task_word, task_improved, request_ghost, request_word,
                       request_base, task_requests, task_examined):
    """One chunk of each task's sources (``task_next[t]`` to ``task_end[t]``), relaxed by `_relax_rows` in
    parallel: task t's improvements in its row of ``task_vertex``/``task_word`` (``task_improved[t]``), its
    requests from ``request_base + t * chunk`` to ``task_requests[t]``. The threads race on the states, the
    distance bits and the ghosts' smallest sent distances: `_settle_task_chunks` repairs them. Plain arrays: a
    parallel loop handed tuples of arrays crashed."""
    chunk = task_vertex.shape[1]
    for task in numba.prange(task_next.shape[0]):
        first_request = request_base + task * chunk
        task_improved[task], task_requests[task], task_examined[task] = 0, first_request, 0
        if task_next[task] < task_end[task]:
            task_next[task], task_improved[task], task_requests[task], task_examined[task] = _relax_rows(
                sources, task_next[task], task_end[task], part, (bounds, columns, weights, first_vertex, order),
                (state, distance_bits, ghost_sent), (task_vertex[task], task_word[task]), (request_ghost, request_word),
                first_request)


@numba.njit(cache=True)
def _settle_task_chunks(rs, task_improved, request_base, task_requests):
    """After `_relax_task_chunks`: every improved vertex's state the smallest word any task wrote (a word that
    another thread overwrote is written again) and its distance bits its state's; every ghost's smallest sent
    distance the smallest requested; the requests made contiguous; the improvements binned."""
    state, distance_bits, ghost_sent = rs.state, rs.distance_bits, rs.ghost_sent
    task_vertex, task_word = rs.task_vertex, rs.task_word
    request_ghost, request_word = rs.request_ghost, rs.request_word
    chunk = task_vertex.shape[1]
    for task in range(task_improved.shape[0]):
        for j in range(task_improved[task]):
            v = task_vertex[task, j]
            if task_word[task, j] < state[v]:
                state[v] = task_word[task, j]
            distance_bits[v] = np.uint32(state[v] >> _SHIFT)  # the last visit of v sees its final state
    count = request_base
    for task in range(task_requests.shape[0]):
        for i in range(request_base + task * chunk, task_requests[task]):
            ghost = request_ghost[i]
            ghost_sent[ghost] = min(ghost_sent[ghost], np.uint32(request_word[i] >> _SHIFT))
            request_ghost[count] = ghost
            request_word[count] = request_word[i]
            count += 1
    rs.request_count = count
    for task in range(task_improved.shape[0]):
        _bin_improved(rs, task_vertex[task], task_word[task], task_improved[task], rs.first_leaf)


@numba.njit(cache=True)
def _relax_by_tasks(rs, sources, count, part, edge_prefix):
    """`_relax` shared by the threads: each task takes the sources of an equal share of the edges and relaxes
    them a chunk at a time, all tasks' chunks at once, each round of chunks then settled and binned
    (`_settle_task_chunks`); returns the edges examined."""
    tasks = rs.task_vertex.shape[0]
    bounds = balanced_bounds(edge_prefix, tasks)
    task_next, task_end = bounds[:tasks].copy(), bounds[1:]
    task_improved = np.empty(tasks, dtype=np.int64)
    task_requests = np.empty(tasks, dtype=np.int64)
    task_examined = np.zeros(tasks, dtype=np.int64)
    examined = 0
    while (task_next < task_end).any():
        _reserve_requests(rs, tasks * rs.task_vertex.shape[1])
        request_base = rs.request_count
        _relax_task_chunks(sources, task_next, task_end, part, rs.bounds, rs.columns, rs.weights, rs.first_vertex,
                           rs.order, rs.state, rs.distance_bits, rs.ghost_sent, rs.task_vertex, rs.task_word,
                           task_improved, rs.request_ghost, rs.request_word, request_base, task_requests,
                           task_examined)
        _settle_task_chunks(rs, task_improved, request_base, task_requests)
        examined += task_examined.sum()
    return examined


@numba.njit(cache=True)
def _clear_settled(rs):
    for i in range(rs.settled_count):
        rs.is_settled[rs.settled[i]] = False
    rs.settled_count = 0
    rs.heavy_waiting = 0


@numba.njit(cache=True)
def _light_round(rs, bucket):
    """Relax the light edges of the rank's vertices in ``bucket`` until none is left there; returns
    (vertices relaxed, edges examined)."""
    if bucket != rs.bucket:
        _clear_settled(rs)
        rs.bucket = bucket
    slot = bucket & (rs.bin_size.shape[0] - 1)
    relaxed = 0
    examined = 0
    while rs.bin_size[slot]:
        count = _take_bin(rs, slot)
        if rs.task_vertex.shape[0] > 1 and count >= rs.parallel_entries:
            new, heavy = _settle_by_tasks(rs.frontier_vertex, count, rs.is_settled, rs.bounds, rs.settled,
                                          rs.settled_count, rs.task_vertex.shape[0])
            rs.settled_count += new
            rs.heavy_waiting += heavy
        else:
            for i in range(count):
                if i + PREFETCH_AHEAD < count:  # a later vertex's flag and row bounds, read at random
                    ahead = rs.frontier_vertex[i + PREFETCH_AHEAD]
                    prefetch(rs.is_settled, ahead)
                    prefetch(rs.bounds, ahead * ROW_PARTS)
                u = rs.frontier_vertex[i]
                if not rs.is_settled[u]:
                    rs.is_settled[u] = True
                    rs.settled[rs.settled_count] = u
                    rs.settled_count += 1
                    row = u * ROW_PARTS
                    rs.heavy_waiting += rs.bounds[row + ROW_PARTS] - rs.bounds[row + LOCAL_HEAVY]
        examined += _relax(rs, rs.frontier_vertex, count, LOCAL_LIGHT)
        relaxed += count
    return relaxed, examined


@numba.njit(cache=True)
def _heavy_round(rs):
    """Relax the heavy edges of the vertices settled in the current bucket, once; returns (vertices, edges)."""
    examined = _relax(rs, rs.settled, rs.settled_count, LOCAL_HEAVY)
    relaxed = rs.settled_count
    _clear_settled(rs)
    return relaxed, examined


# ---------------------------------------------------------------- exchange

@numba.njit(cache=True)
def _requests_to_send(rs):
    """``(send, counts, status)``: the round's requests as uint32 triples grouped by owner, the uint32s for
    each rank, and the rank's part of the round's Allreduce(min): a lower bound of the next bucket (its own
    bins and the requests' buckets), minus the heavy edges waiting, minus the requests sent.

    Of several requests to one ghost only the last, the smallest, is sent
    (its distance is the ghost's ``ghost_sent``)."""
    request_ghost, request_word, ghost_sent, ghost_owner = rs.request_ghost, rs.request_word, rs.ghost_sent, \
        rs.ghost_owner
    counts = np.zeros(rs.num_ranks, dtype=np.int64)
    status = np.empty(3, dtype=np.int64)
    status[0] = _smallest_bucket(rs)
    for i in range(rs.request_count):
        ghost = request_ghost[i]
        if (request_word[i] >> _SHIFT) == ghost_sent[ghost]:
            counts[ghost_owner[ghost]] += REQUEST_FIELDS
            status[0] = min(status[0], _bucket(request_word[i], rs.inverse_delta))
    total = counts.sum()
    if total > rs.send.shape[0]:
        rs.send = np.empty(2 * total, dtype=np.uint32)
    cursor = np.zeros(rs.num_ranks, dtype=np.int64)
    for rank in range(1, rs.num_ranks):
        cursor[rank] = cursor[rank - 1] + counts[rank - 1]
    send, ghost_target = rs.send, rs.ghost_target
    for i in range(rs.request_count):
        ghost = request_ghost[i]
        word = request_word[i]
        if (word >> _SHIFT) == ghost_sent[ghost]:
            at = cursor[ghost_owner[ghost]]
            send[at] = ghost_target[ghost]
            send[at + 1] = np.uint32(word >> _SHIFT)
            send[at + 2] = np.uint32(word & _PARENT_MASK)
            cursor[ghost_owner[ghost]] = at + REQUEST_FIELDS
    rs.request_count = 0
    status[1] = -rs.heavy_waiting
    status[2] = -total
    return send[:total], counts, status


@numba.njit(cache=True)
def _apply_requests(rs, received):
    """Keep each received request that improves its vertex, in chunks of the improvement buffer's size."""
    state, distance_bits, improved_vertex, improved_word = rs.state, rs.distance_bits, rs.improved_vertex, \
        rs.improved_word
    for first in range(0, received.shape[0], REQUEST_FIELDS * improved_vertex.shape[0]):
        improved = 0
        for at in range(first, min(received.shape[0], first + REQUEST_FIELDS * improved_vertex.shape[0]),
                        REQUEST_FIELDS):
            v = received[at]
            word = (np.uint64(received[at + 1]) << _SHIFT) | np.uint64(received[at + 2])
            if received[at + 1] < distance_bits[v]:
                distance_bits[v] = received[at + 1]
                state[v] = word
                improved_vertex[improved] = v
                improved_word[improved] = word
                improved += 1
        _bin_improved(rs, improved_vertex, improved_word, improved, rs.first_leaf)


# ---------------------------------------------------------------- start and end of a search

@numba.njit(cache=True)
def _start(rs, root_local):
    """Put the root (local index, or -1 when another rank owns it) in bucket 0."""
    _clear_settled(rs)
    rs.bucket = 0
    if root_local >= 0:
        rs.state[root_local] = _pack(np.float32(0.0), rs.first_vertex + rs.order[root_local])
        rs.distance_bits[root_local] = 0
        rs.improved_vertex[0] = root_local
        rs.improved_word[0] = rs.state[root_local]
        _bin_improved(rs, rs.improved_vertex, rs.improved_word, 1, rs.state.shape[0])  # a leaf root relaxes too


@numba.njit(parallel=True, cache=True)
def _finish(rs, parents, distances):
    """Parents and distances of the owned vertices in their original order; reset the per-search state."""
    state, order = rs.state, rs.order
    for v in numba.prange(state.shape[0]):
        word = state[v]
        if word == UNREACHED:
            parents[order[v]] = -1
            distances[order[v]] = np.inf
        else:
            parents[order[v]] = np.int64(word & _PARENT_MASK)
            distances[order[v]] = _distance(word)
            state[v] = UNREACHED
            rs.distance_bits[v] = INFINITY_BITS
    for ghost in numba.prange(rs.ghost_sent.shape[0]):
        rs.ghost_sent[ghost] = INFINITY_BITS


# ---------------------------------------------------------------- the kernel

@register(distributed_default=True)
class DistributedDeltaStepping:
    """Delta-stepping over the ranks of a run: requests by Alltoallv, buckets agreed by Allreduce."""

    name = "distributed-delta-stepping"
    kind = "sssp"
    backend = "cpu"
    distributed = True

    def __init__(self, graph, delta=None, trace=False, parallel_edges=PARALLEL_EDGES,
                 parallel_entries=PARALLEL_ENTRIES):
        self.relabeled = graph if isinstance(graph, Relabeled) and graph.renumbered else None
        if not isinstance(graph, PartitionedGraph):
            graph = whole_graph_part(graph)
        if graph.weights is None:
            raise ValueError("SSSP needs a weighted graph")
        if graph.num_vertices > MAX_VERTICES:
            raise ValueError(f"{self.name} handles at most {MAX_VERTICES} vertices, got {graph.num_vertices}")
        comm = graph.comm
        max_weight = comm.allreduce(float(graph.weights.max()) if graph.num_edges else 0.0, "max")
        if delta is None:
            delta = DELTA_PER_MAX_WEIGHT * max_weight if max_weight > 0 else 1.0
        if not delta > 0:
            raise ValueError(f"delta must be positive, got {delta}")
        self.delta = float(delta)
        self.comm, self.first_vertex, self.num_local = comm, graph.first_vertex, graph.num_local
        degrees = np.diff(graph.offsets)
        self.order = by_decreasing_degree(degrees)
        self.new_label = inverse_permutation(self.order)
        neighbours, column_at, ghost_owner, ghost_target = _columns_and_ghosts(graph, self.new_label)
        bounds, columns, weights = _split_rows(graph, self.new_label, neighbours, column_at, np.float32(self.delta))
        del neighbours, column_at
        ring = 1 << int(np.ceil(max_weight / self.delta) + RING_SLACK - 1).bit_length()  # a power of two
        self.rank_state = _new_rank_state(bounds, columns, weights, self.order, np.int64(self.first_vertex),
                                          ghost_owner, ghost_target, np.int64(comm.size), np.int64(ring),
                                          np.int64(max(CHUNK_EDGES, int(degrees.max(initial=0)))),
                                          np.int64(max(1024, ghost_owner.shape[0] // 4)), 1.0 / self.delta,
                                          np.int64(np.count_nonzero(degrees > 1)), np.int64(numba.get_num_threads()),
                                          np.int64(parallel_edges), np.int64(parallel_entries))
        self.keep_trace = trace
        self.trace = [] if trace else None
        _apply_requests(self.rank_state, np.empty(0, dtype=np.uint32))  # compiled here: one rank receives none

    def search(self, root):
        comm, rs = self.comm, self.rank_state
        if self.relabeled is not None:
            root = int(self.relabeled.new_label[root])
        local = root - self.first_vertex
        _start(rs, self.new_label[local] if 0 <= local < self.num_local else -1)
        rounds = []
        bucket, heavy = 0, False
        while True:
            started = time.perf_counter()
            relaxed, examined = _heavy_round(rs) if heavy else _light_round(rs, bucket)
            send, send_counts, status = _requests_to_send(rs)
            next_bucket, minus_heavy_waiting, minus_requests = comm.allreduce(status, "min")
            if minus_requests < 0:
                (received,), _ = comm.alltoallv((send,), send_counts)
                _apply_requests(rs, received)
            if self.keep_trace:
                rounds.append(("heavy" if heavy else "light", bucket, relaxed, examined,
                               time.perf_counter() - started))
            if next_bucket == bucket:
                heavy = False
            elif minus_heavy_waiting < 0:
                heavy = True
            elif next_bucket == NO_BUCKET:
                break
            else:
                bucket, heavy = int(next_bucket), False
        parents = np.empty(self.num_local, dtype=np.int64)
        distances = np.empty(self.num_local, dtype=np.float32)
        _finish(rs, parents, distances)
        if self.keep_trace:
            self.trace = [{"direction": direction, "bucket": bucket, "frontier": relaxed, "edges_examined": examined,
                           "seconds": seconds} for direction, bucket, relaxed, examined, seconds in rounds]
        if self.relabeled is not None:
            return self.relabeled.parents_to_original(parents), self.relabeled.values_to_original(distances)
        return parents, distances
