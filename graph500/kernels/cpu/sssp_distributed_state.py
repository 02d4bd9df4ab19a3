"""The state of a rank's distributed delta-stepping search (`sssp_distributed`): one StructRef that the
jitted functions share (the rows, per-vertex states and distance bits, the ghosts' smallest sent
distances, the ring of bins in blocks from a pool, the frontier and settled list, the improvement, request
and send buffers), and its bins and buffers: room, appends, taking a bin, settling.
"""

import numba
import numpy as np
from numba.core import types
from numba.experimental import structref

from graph500.kernels.cpu.frontier import equal_share
from graph500.kernels.cpu.sssp_distributed_rows import LOCAL_HEAVY, ROW_PARTS
from graph500.kernels.cpu.sssp_words import UNREACHED, _bucket

NO_BLOCK = -1
BLOCK = 1024  # bin entries per block
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
