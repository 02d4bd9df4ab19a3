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
from numba.core import types
from numba.cpython.unsafe.numbers import viewer
from numba.experimental import structref

from graph500.kernels import register
from graph500.kernels.cpu.frontier import balanced_bounds, equal_share
from graph500.kernels.cpu.reorder import Relabeled, by_decreasing_degree, inverse_permutation
from graph500.kernels.cpu.sssp_delta_stepping import (MAX_VERTICES, PREFETCH_AHEAD, RING_SLACK, UNREACHED,
                                                      _PARENT_MASK, _SHIFT, _bucket, _distance, _pack, _prefetch)
from graph500.kernels.graph import PartitionedGraph, neighbor_dtype, whole_graph_part

DELTA_PER_MAX_WEIGHT = 0.02
LOCAL_LIGHT, REMOTE_LIGHT, LOCAL_HEAVY, REMOTE_HEAVY = 0, 1, 2, 3  # the parts of a row, in order
ROW_PARTS = 4
NO_BLOCK = -1
BLOCK = 1024  # bin entries per block
CHUNK_EDGES = 1 << 15  # edges relaxed between two binnings of their improvements (the buffer stays in cache)
PARALLEL_EDGES = 1 << 15  # a relaxation of at least this many edges is shared by the rank's threads
PARALLEL_ENTRIES = 1 << 12  # so is taking a bin of at least this many entries, and settling its vertices
NO_BUCKET = np.iinfo(np.int64).max
REQUEST_FIELDS = 3  # uint32s per request on the wire: target's local index, distance bits, parent label
INFINITY_BITS = np.uint32(0x7F800000)


# ---------------------------------------------------------------- the rank's state

@structref.register
class RankStateType(types.StructRef):
    def preprocess_fields(self, fields):
        return tuple((name, types.unliteral(typ)) for name, typ in fields)


class RankState(structref.StructRefProxy):
    """Everything a rank's search reads and writes, shared by the jitted functions as one reference."""


RANK_STATE_FIELDS = (
    "bounds", "columns", "weights", "order", "first_vertex",  # the rank's rows, renumbered and split
    "ghost_owner", "ghost_target", "ghost_sent",  # per remote neighbour
    "state", "distance_bits", "is_settled",  # per owned vertex
    "block_vertex", "block_word", "block_next", "free_stack", "free_top",  # bin entries, in blocks
    "bin_first", "bin_last", "bin_fill", "bin_size",  # per bin of the ring
    "frontier_vertex", "settled", "settled_count", "heavy_waiting", "bucket",
    "improved_vertex", "improved_word",  # a chunk's improvements of owned vertices, before they are binned
    "task_vertex", "task_word", "parallel_edges",  # the same per thread (rows), when the threads share a relaxation
    "parallel_entries",
    "request_ghost", "request_word", "request_count", "send", "num_ranks", "inverse_delta",
    "first_leaf",  # the local indices from here on are leaves (at most one neighbour): never binned
)
structref.define_proxy(RankState, RankStateType, RANK_STATE_FIELDS)


@numba.njit(cache=True)
def _new_rank_state(bounds, columns, weights, order, first_vertex, ghost_owner, ghost_target, num_ranks, ring,
                    chunk, request_capacity, inverse_delta, first_leaf, tasks, parallel_edges, parallel_entries):
    num_local = order.shape[0]
    blocks = num_local // BLOCK + ring + 1
    return RankState(bounds, columns, weights, order, first_vertex,
                     ghost_owner, ghost_target, np.full(ghost_owner.shape[0], INFINITY_BITS, dtype=np.uint32),
                     np.full(num_local, UNREACHED, dtype=np.uint64), np.full(num_local, INFINITY_BITS, dtype=np.uint32),
                     np.zeros(num_local, dtype=np.bool_),
                     np.empty(blocks * BLOCK, dtype=np.int32), np.empty(blocks * BLOCK, dtype=np.uint64),
                     np.empty(blocks, dtype=np.int64), np.arange(blocks), np.int64(blocks),
                     np.full(ring, NO_BLOCK, dtype=np.int64), np.full(ring, NO_BLOCK, dtype=np.int64),
                     np.zeros(ring, dtype=np.int64), np.zeros(ring, dtype=np.int64),
                     np.empty(num_local, dtype=np.int32), np.empty(num_local, dtype=np.int32), np.int64(0),
                     np.int64(0), np.int64(0),
                     np.empty(chunk, dtype=np.int32), np.empty(chunk, dtype=np.uint64),
                     np.empty((tasks, chunk), dtype=np.int32), np.empty((tasks, chunk), dtype=np.uint64),
                     np.int64(parallel_edges), np.int64(parallel_entries),
                     np.empty(request_capacity, dtype=np.int64), np.empty(request_capacity, dtype=np.uint64),
                     np.int64(0), np.empty(REQUEST_FIELDS * request_capacity, dtype=np.uint32),
                     np.int64(num_ranks), inverse_delta, first_leaf)


# ---------------------------------------------------------------- bins and requests: room, appends

@numba.njit(cache=True)
def _grow_blocks(rs):
    """Twice as many blocks; the new ones go on the free stack."""
    blocks = rs.block_next.shape[0]
    vertex = np.empty(2 * blocks * BLOCK, dtype=np.int32)
    word = np.empty(2 * blocks * BLOCK, dtype=np.uint64)
    vertex[:blocks * BLOCK] = rs.block_vertex
    word[:blocks * BLOCK] = rs.block_word
    block_next = np.empty(2 * blocks, dtype=np.int64)
    block_next[:blocks] = rs.block_next
    free_stack = np.empty(2 * blocks, dtype=np.int64)
    free_stack[:rs.free_top] = rs.free_stack[:rs.free_top]
    free_stack[rs.free_top:rs.free_top + blocks] = np.arange(blocks, 2 * blocks)
    rs.block_vertex, rs.block_word, rs.block_next, rs.free_stack = vertex, word, block_next, free_stack
    rs.free_top += blocks


@numba.njit(cache=True)
def _reserve_requests(rs, entries):
    """Room for ``entries`` more requests, so that the loops that append need not check."""
    if rs.request_count + entries > rs.request_ghost.shape[0]:
        capacity = 2 * (rs.request_count + entries)
        ghost = np.empty(capacity, dtype=np.int64)
        word = np.empty(capacity, dtype=np.uint64)
        ghost[:rs.request_count] = rs.request_ghost[:rs.request_count]
        word[:rs.request_count] = rs.request_word[:rs.request_count]
        rs.request_ghost, rs.request_word = ghost, word


@numba.njit(cache=True)
def _bin_improved(rs, improved_vertex, improved_word, count, leaves_from):
    """Append each of the ``count`` improvements (``improved_vertex``, ``improved_word``) that is still its
    vertex's state to the bin of its bucket, but those of the leaves, the local indices from ``leaves_from`` on
    (their one edge leads back to the vertex that gave them their distance: relaxing it cannot improve
    anything)."""
    while rs.free_top < count // BLOCK + rs.bin_size.shape[0] + 1:  # a new block per bin, plus full ones
        _grow_blocks(rs)
    state = rs.state
    bin_first, bin_last, bin_fill, bin_size = rs.bin_first, rs.bin_last, rs.bin_fill, rs.bin_size
    block_vertex, block_word, block_next, free_stack = rs.block_vertex, rs.block_word, rs.block_next, rs.free_stack
    free_top, mask, inverse_delta = rs.free_top, bin_size.shape[0] - 1, rs.inverse_delta
    for j in range(count):
        v = improved_vertex[j]
        word = improved_word[j]
        if state[v] != word or v >= leaves_from:
            continue  # improved again since (its later word is binned), or a leaf
        slot = _bucket(word, inverse_delta) & mask
        last, fill = bin_last[slot], bin_fill[slot]
        if last == NO_BLOCK or fill == BLOCK:
            free_top -= 1
            block = free_stack[free_top]
            block_next[block] = NO_BLOCK
            if last == NO_BLOCK:
                bin_first[slot] = block
            else:
                block_next[last] = block
            bin_last[slot] = block
            last, fill = block, 0
        block_vertex[last * BLOCK + fill] = v
        block_word[last * BLOCK + fill] = word
        bin_fill[slot] = fill + 1
        bin_size[slot] += 1
    rs.free_top = free_top


@numba.njit(cache=True)
def _take_bin(rs, slot):
    """Move the bin's live entries (word still the vertex's state) to the frontier; free its blocks. The
    rank's threads share a bin of at least ``parallel_entries`` entries, a block a task. Returns the frontier's
    size."""
    state, block_vertex, block_word = rs.state, rs.block_vertex, rs.block_word
    frontier_vertex = rs.frontier_vertex
    blocks = np.empty(rs.bin_size[slot] // BLOCK + 1, dtype=np.int64)  # a bin's blocks are full but its last
    ends = np.empty_like(blocks)
    num_blocks = 0
    block = rs.bin_first[slot]
    while block != NO_BLOCK:
        blocks[num_blocks] = block
        ends[num_blocks] = block * BLOCK + (rs.bin_fill[slot] if block == rs.bin_last[slot] else BLOCK)
        num_blocks += 1
        block = rs.block_next[block]
    blocks, ends = blocks[:num_blocks], ends[:num_blocks]
    if rs.task_vertex.shape[0] > 1 and rs.bin_size[slot] >= rs.parallel_entries:
        count = _live_entries_by_blocks(blocks, ends, block_vertex, block_word, state, frontier_vertex)
    else:
        count = 0
        for i in range(num_blocks):
            for entry in range(blocks[i] * BLOCK, ends[i]):
                v = block_vertex[entry]
                if state[v] == block_word[entry]:
                    frontier_vertex[count] = v
                    count += 1
    rs.free_stack[rs.free_top:rs.free_top + num_blocks] = blocks
    rs.free_top += num_blocks
    rs.bin_first[slot] = NO_BLOCK
    rs.bin_last[slot] = NO_BLOCK
    rs.bin_fill[slot] = 0
    rs.bin_size[slot] = 0
    return count


@numba.njit(parallel=True, cache=True)
def _live_entries_by_blocks(blocks, ends, block_vertex, block_word, state, frontier_vertex):
    """`_take_bin` by the threads: the live entries of the blocks (``blocks[i]``'s entries end at ``ends[i]``)
    into ``frontier_vertex`` in block order; each block's first compacted in place (it is freed after).
    Returns their count."""
    live_before = np.zeros(blocks.shape[0] + 1, dtype=np.int64)
    for i in numba.prange(blocks.shape[0]):
        live = blocks[i] * BLOCK
        for entry in range(blocks[i] * BLOCK, ends[i]):
            v = block_vertex[entry]
            if state[v] == block_word[entry]:
                block_vertex[live] = v
                live += 1
        live_before[i + 1] = live - blocks[i] * BLOCK
    for i in range(blocks.shape[0]):
        live_before[i + 1] += live_before[i]
    for i in numba.prange(blocks.shape[0]):
        first = blocks[i] * BLOCK
        frontier_vertex[live_before[i]:live_before[i + 1]] = block_vertex[first:first + live_before[i + 1]
                                                                          - live_before[i]]
    return live_before[blocks.shape[0]]


@numba.njit(parallel=True, cache=True)
def _settle_by_tasks(frontier_vertex, count, is_settled, bounds, settled, settled_count, tasks):
    """The light round's marking of its frontier's vertices as settled, by the threads (the frontier holds each
    vertex once): each new one appended to ``settled`` from ``settled_count`` on, in frontier order. Returns
    (vertices appended, their heavy edges)."""
    is_new = np.empty(count, dtype=np.bool_)
    new_before = np.zeros(tasks + 1, dtype=np.int64)
    heavy = np.zeros(tasks, dtype=np.int64)
    for task in numba.prange(tasks):
        begin, end = equal_share(task, tasks, count)
        for i in range(begin, end):
            u = frontier_vertex[i]
            is_new[i] = not is_settled[u]
            if is_new[i]:
                is_settled[u] = True
                new_before[task + 1] += 1
                row = u * ROW_PARTS
                heavy[task] += bounds[row + ROW_PARTS] - bounds[row + LOCAL_HEAVY]
    for task in range(tasks):
        new_before[task + 1] += new_before[task]
    for task in numba.prange(tasks):
        begin, end = equal_share(task, tasks, count)
        at = settled_count + new_before[task]
        for i in range(begin, end):
            if is_new[i]:
                settled[at] = frontier_vertex[i]
                at += 1
    return new_before[tasks], heavy.sum()


@numba.njit(cache=True)
def _smallest_bucket(rs):
    """The first bucket from the current one whose bin has entries (maybe only stale ones), or NO_BUCKET."""
    ring = rs.bin_size.shape[0]
    for later in range(rs.bucket, rs.bucket + ring):
        if rs.bin_size[later & (ring - 1)]:
            return later
    return NO_BUCKET


# ---------------------------------------------------------------- relaxation

@numba.njit(cache=True)
def _relax_rows(sources, begin, end, part, bounds, columns, weights, first_vertex, order, state, distance_bits,
                ghost_sent,
                improved_vertex, improved_word, request_ghost, request_word, request_count):
    """Relax, from each source's state, its local and remote entries of the light (part 0) or heavy (part 2)
    half of its row, for the sources from ``begin`` until ``improved_vertex`` could overflow (at least one).
    A local improvement is stored and appended to ``improved``; a remote one is appended as a request when
    below what was sent to the ghost before. Plain arrays, not the rank's state: this is the hot loop.

    Returns (next source, improvements, requests, edges examined)."""
    limit = improved_vertex.shape[0]
    improved = 0
    examined = 0
    i = begin
    while i < end:
        if i + PREFETCH_AHEAD < end:  # a later source: its row's bounds, its state, its label, its row's start
            ahead = sources[i + PREFETCH_AHEAD]
            _prefetch(bounds, ahead * ROW_PARTS + part)
            _prefetch(state, ahead)
            _prefetch(order, ahead)
        if i + PREFETCH_AHEAD // 2 < end:
            ahead_begin = bounds[sources[i + PREFETCH_AHEAD // 2] * ROW_PARTS + part]
            _prefetch(columns, ahead_begin)
            _prefetch(weights, ahead_begin)
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
        i, improved, rs.request_count, edges = _relax_rows(
            sources, i, count, part, rs.bounds, rs.columns, rs.weights, rs.first_vertex, rs.order, rs.state,
            rs.distance_bits,
            rs.ghost_sent, rs.improved_vertex, rs.improved_word, rs.request_ghost, rs.request_word,
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
    distance bits and the ghosts' smallest sent distances: `_settle_task_chunks` repairs them."""
    chunk = task_vertex.shape[1]
    for task in numba.prange(task_next.shape[0]):
        first_request = request_base + task * chunk
        task_improved[task], task_requests[task], task_examined[task] = 0, first_request, 0
        if task_next[task] < task_end[task]:
            task_next[task], task_improved[task], task_requests[task], task_examined[task] = _relax_rows(
                sources, task_next[task], task_end[task], part, bounds, columns, weights, first_vertex, order, state,
                distance_bits, ghost_sent, task_vertex[task], task_word[task], request_ghost, request_word,
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


# ---------------------------------------------------------------- construction

@numba.njit(parallel=True, cache=True)
def _mark_remote(neighbors, first, stop, marks):
    for k in numba.prange(neighbors.shape[0]):
        v = neighbors[k]
        if v < first or v >= stop:
            marks[v] = True


@numba.njit(inline="always", cache=True)
def _part(neighbor, weight, first, stop, split_below):
    remote = neighbor < first or neighbor >= stop
    return (REMOTE_LIGHT if remote else LOCAL_LIGHT) + (LOCAL_HEAVY if weight >= split_below else 0)


@numba.njit(parallel=True, cache=True)
def _count_parts(offsets, neighbors, weights, new_label, task_bounds, first, stop, split_below, sizes):
    """``sizes[new, part]``: entries of each part of each renumbered row.

    Like `_fill_parts`, the rows are read in their own order, each task an
    equal share of the entries (`balanced_bounds`): in the new order the hubs
    come first, and a task per equal share of rows had all of them. The
    split, against rows taken in the new order (SCALE 21, 5 alternations in
    one process): 3.2x on one rank of 2 threads, 1.45x on 2 ranks of one
    (the entries read in their order, the rows' parts written in runs)."""
    for task in numba.prange(task_bounds.shape[0] - 1):
        for old in range(task_bounds[task], task_bounds[task + 1]):
            new = new_label[old]
            for k in range(offsets[old], offsets[old + 1]):
                sizes[new, _part(neighbors[k], weights[k], first, stop, split_below)] += 1


@numba.njit(parallel=True, cache=True)
def _fill_parts(offsets, neighbors, weights, new_label, task_bounds, column_of, first, stop, split_below, bounds,
                columns, row_weights):
    """Write each renumbered row's entries into its parts: ``column_of[neighbour]`` (its local index or its ghost
    index, one table for both: reading the one of two tables that the part names took 1.25x as long, one rank's
    rows of 2 at SCALE 20), and the weight. Tasks as in `_count_parts`."""
    for task in numba.prange(task_bounds.shape[0] - 1):
        for old in range(task_bounds[task], task_bounds[task + 1]):
            row = new_label[old] * ROW_PARTS
            local_light, remote_light, local_heavy, remote_heavy = bounds[row], bounds[row + 1], bounds[row + 2], \
                bounds[row + 3]
            for k in range(offsets[old], offsets[old + 1]):
                neighbor = neighbors[k]
                part = _part(neighbor, weights[k], first, stop, split_below)
                if part == LOCAL_LIGHT:
                    at, local_light = local_light, local_light + 1
                elif part == REMOTE_LIGHT:
                    at, remote_light = remote_light, remote_light + 1
                elif part == LOCAL_HEAVY:
                    at, local_heavy = local_heavy, local_heavy + 1
                else:
                    at, remote_heavy = remote_heavy, remote_heavy + 1
                columns[at] = column_of[neighbor]
                row_weights[at] = weights[k]


def _split_rows(graph, new_label, column_of, split_below):
    """``(bounds, columns, weights)``: the rows renumbered and split in their four parts."""
    num_local = new_label.shape[0]
    task_bounds = balanced_bounds(graph.offsets, numba.get_num_threads())
    first, stop = graph.first_vertex, graph.first_vertex + num_local
    sizes = np.zeros((num_local, ROW_PARTS), dtype=np.int64)
    _count_parts(graph.offsets, graph.neighbors, graph.weights, new_label, task_bounds, first, stop, split_below,
                 sizes)
    bounds = np.empty((num_local + 1) * ROW_PARTS, dtype=np.int64)
    bounds[0] = 0
    np.cumsum(sizes.ravel(), out=bounds[1:num_local * ROW_PARTS + 1])
    bounds[num_local * ROW_PARTS + 1:] = bounds[num_local * ROW_PARTS]
    columns = np.empty(graph.num_edges, dtype=neighbor_dtype(graph.num_vertices))
    weights = np.empty(graph.num_edges, dtype=np.float32)
    _fill_parts(graph.offsets, graph.neighbors, graph.weights, new_label, task_bounds, column_of, first, stop,
                split_below, bounds, columns, weights)
    return bounds, columns, weights


def _columns_and_ghosts(graph, new_label):
    """``(column_of, owner, target)``: per label of the whole graph, what a row entry holds for it (an owned
    vertex's local index ``new_label``, a remote neighbour's ghost index; other labels: unused), and per ghost
    its owner and its local index there (asked of the owners: collective)."""
    comm, blocks = graph.comm, graph.blocks
    marks = np.zeros(graph.num_vertices, dtype=np.bool_)
    _mark_remote(graph.neighbors, graph.first_vertex, graph.first_vertex + graph.num_local, marks)
    labels = np.flatnonzero(marks)  # increasing, so grouped by owner in rank order
    del marks
    owner = blocks.owner(labels)
    (asked,), asked_counts = comm.alltoallv((labels - owner * blocks.block,), np.bincount(owner, minlength=comm.size))
    (target,), _ = comm.alltoallv((new_label[asked].astype(np.uint32),), asked_counts)
    # The ghosts numbered per owner, its hubs first (their ghosts are the most read): in the order of
    # owner * block + target, distinct labels below N, so marked in a table of N flags and read back in order
    # (6 million ghosts of 2^24 labels: 0.15-0.25 s, where a lexsort by (owner, target) took 1.4-1.6 s; this
    # function on 2 ranks at SCALE 22, a million ghosts a rank: 1.40x, 5 alternations in one process).
    ordered_label = owner * blocks.block + target
    marked = np.zeros(graph.num_vertices, dtype=np.bool_)
    marked[ordered_label] = True
    ghost_labels = np.flatnonzero(marked)
    del marked
    label_dtype = neighbor_dtype(graph.num_vertices)
    ghost_of = np.empty(graph.num_vertices, dtype=label_dtype)
    ghost_of[ghost_labels] = np.arange(ghost_labels.shape[0], dtype=label_dtype)
    column_of = np.empty(graph.num_vertices, dtype=label_dtype)
    column_of[labels] = ghost_of[ordered_label]
    del ghost_of
    column_of[graph.first_vertex:graph.first_vertex + graph.num_local] = new_label
    ghost_owner = ghost_labels // blocks.block
    return column_of, ghost_owner.astype(np.int32), (ghost_labels - ghost_owner * blocks.block).astype(np.uint32)


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
        column_of, ghost_owner, ghost_target = _columns_and_ghosts(graph, self.new_label)
        bounds, columns, weights = _split_rows(graph, self.new_label, column_of, np.float32(self.delta))
        del column_of
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
