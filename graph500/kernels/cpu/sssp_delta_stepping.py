"""Kernel 3, ``delta-stepping``: parallel delta-stepping SSSP with bucket fusion, without atomics.

Algorithm: Meyer and Sanders, "Delta-stepping: a parallelizable shortest
path algorithm" (J. Algorithms 49, 2003). Vertices wait in buckets of width
``delta`` by tentative distance, and buckets are settled in increasing
order. Settling bucket b relaxes the *light* edges (weight < delta) of its
vertices in phases, until no vertex re-enters b, then the *heavy* edges of
every vertex settled in b, once. The heavy step runs over a vertex's whole
row: its light edges were relaxed from the same state in a light phase, so
they cannot improve anything again, and the rows need no reordering. Only
a vertex with light edges enters the light phases' frontier (on Graph500
graphs, where 0.5% of the edges are light, most vertices go to the heavy
step alone): 1.102x faster than entering every settled vertex, whose
entries the light phases then skipped one by one (1.065-1.133x;
``benchmarks/cpu_revisions.py``, SCALE 20, 2 threads, 5 interleaved rounds
of 16 keys). Bucket fusion, as in the GAP Benchmark
Suite (Beamer, Asanovic, Patterson): a phase with few edges runs on the
calling thread, so the many small phases of a bucket cost no thread wake-up
and no barrier.

No atomic operation. A vertex's state is one 64-bit word, float32 distance
bits above the parent's label, so a distance and its parent are always
written together (an aligned 64-bit store is indivisible, and non-negative
floats order like their bit patterns). A phase runs in rounds of two steps:

1. Relax. Each thread takes an equal share of the round's edges; for every
   improvement ``float32(d(u) + w) < d(v)`` it stores v's new word and
   appends ``(v, word)`` to its own request buffer. Two threads may store to
   one v at once, and a smaller word may be overwritten by a larger one: a
   lost update.
2. Verify and classify. Each thread rereads the words of its requests. A
   request equal to the current word is v's state (only one request can be
   equal): it goes to the thread's next frontier if its bucket is b, else to
   the thread's bin for its bucket. A request below the current word was
   lost; after the step, one thread takes the lost requests alone (a few a
   round: about 5 a search at SCALE 20 on 2 threads) and makes each that is
   still below its vertex's word the state, kept as above. The larger word
   kept before it is then stale where it went, as the entries that later
   improvements leave behind are: a bin's stale entries are dropped when the
   bin is emptied, a settled entry whose word is no longer the state is not
   relaxed heavy, and a stale frontier entry relaxes light edges from a
   larger distance than its vertex's, which can only make requests that the
   vertex's own entry improves on. Redoing the whole classification on one
   thread after a lost update instead serialised the rounds that held 22% of
   the requests at SCALE 20 on 2 threads (3 or 4 rounds a search; with more
   threads, more rounds lose an update). On 2 threads the two ways measured
   alike (``benchmarks/cpu_revisions.py``, 3 and 5 interleaved rounds of 16
   keys: 1.006x, 0.996-1.012x, and 1.001x, 0.994-1.039x); on many threads,
   where nearly every parallel round would be redone on one thread, not yet
   measured.

The heavy step skips the request buffer for most of its improvements: one
whose vertex is not a leaf and whose bucket is a later one goes straight to
the thread's bin (while the thread has a free block), and is verified when
the bin is emptied, as a request would be: the entry equal to its vertex's
word is settled, one below it was lost and is restored on one thread after
the extraction, as above (the request buffers hold the lost entries; a
search whose lost entries do not fit stops and is run again with larger
buffers). At SCALE 20 on 2 threads, 84% of the requests then go to no
request buffer and are not reread: 1.033x and 1.072x faster (1.003-1.057x,
1.012-1.083x; ``benchmarks/cpu_revisions.py``, 2 runs of 5 interleaved
rounds of 16 keys).

Leaves (vertices with at most one neighbour) are never settled: a leaf's
only edge leads back to the vertex that set its distance, so relaxing it
cannot improve anything, and a leaf's state is final once that neighbour's
is. A kept word of a leaf stays in ``state`` and goes to no frontier and no
bin. The labels from ``first_leaf`` on are leaves (all the leaves when the
graph is degree-ordered), so the test is one comparison. On Graph500 graphs about
a fifth of the reached vertices are leaves, spread over the whole range of
distances: at SCALE 20 (2 threads) a search then ends after about 210
buckets instead of 355, and took 1/1.115 as long (5 rounds of 16 keys
alternating per key in one process: median 1.115x faster, 1.08-1.18x).

Prefetching: most of the time of the many small buckets goes into waiting
for memory (a vertex's state and row bounds when it leaves a bin, its row
when it is relaxed), one vertex after the other. Taking entries from a bin
prefetches the state and row bounds of the entry ``PREFETCH_AHEAD`` places
later; relaxing prefetches the start of that later entry's row (neighbours
and weights: the lines of its first ``PREFETCH_EDGES`` edges) and, in the
heavy step, its state. Same measurement: 1.25x
faster (1.18-1.31x). A segment entry carries its row's start, read when the
vertex leaves a bin, so relaxing reads no row bounds (16 MiB at SCALE 20,
out of cache: the prefetch of a later row had to wait for them): 1.056x
faster (1.044-1.088x; ``benchmarks/cpu_revisions.py``, SCALE 20, 2
threads, 5 interleaved rounds of 16 keys). Prefetching the lines of a
row's first 64 edges instead of its first line: 1.068x (1.031-1.092x);
against 64, 128 edges measured 0.939x (0.929-0.953x) and 32 0.966x
(0.948-0.973x).

Frontier entries carry the word they were kept with, and light edges are
relaxed from that word, not from the shared array: every request of a round
derives from states fixed before the round, so a parent got its distance in
an earlier round than its child, and zero-weight edges cannot close a parent
cycle. Distances are float32 sums ``float32(d(u) + w)``, so the result meets
the validator's exact rule ``d(v) == d(parent) + w``.

Data structures, all fields of one `Workspace`: the CSR rows relabelled by
decreasing degree (see `reorder`; kernel 1's graph, shared with the BFS
kernel), the light edges again in rows of their own (`Relabeled.light_rows`:
0.5% of the entries on Graph500 graphs), ``row_bounds[v] = (row start, light
row start)``; ``state``
(uint64, one word per vertex); per thread ("task"): *segments* of (vertex,
word, row start, edge prefix) entries in three roles, two frontiers (the one being
relaxed and the next) and the settled list (the bucket's entries, for the
heavy step, which skips an entry whose word is no longer the vertex's
state); a frontier is the concatenation of all tasks' segments, cut by edges
into equal shares for the relax step; a request buffer; bins: a ring of
``ceil(max weight / delta) + 3`` bins (no relaxation reaches further), each a
linked list of blocks of ``BLOCK`` (vertex, word) entries from the task's
pool, whose free blocks wait on a stack. The per-thread buffers start at N /
threads entries; a search whose round might not fit stops and is run again
with buffers twice as large (kept for later searches). Limit: fewer than
2^32 vertices (the parent takes 32 bits).

Tunables: ``delta`` (default 0.005 x the largest weight: the best of the
sweep in ``benchmarks/cpu_kernels.py --sweep`` on Graph500 graphs, whose
shortest paths are short: most distances are below 0.1), ``fusion_edges``
(rounds with fewer edges, and bins with fewer entries times
``EXTRACT_ENTRY_EDGES``, run on one thread; default 2^11: at SCALE 20 on 2
threads, in two runs of 5 rounds of 16 keys alternating kernels per key in
one process, 2^14 took 1.03-1.35x as long as 2^11 in every round (medians
1.04x and 1.06x); 2^10 and 2^9 were faster in one run and not in the other;
most of a search's buckets are small, their time bound by memory latency,
so the second thread pays for its wake-ups there), ``round_edges`` (edges
per thread between two verifications, the size of the request buffers;
default 2^20: 2^16, 2^22 and 2^24 measured alike), ``PREFETCH_AHEAD``
(default 8: 16 measured 0.98x (0.91-1.02x), 4 0.95x (0.89-1.00x); also
prefetching the state of the neighbour 8 edges ahead in the relax loop was
slower, 0.95x (0.92-0.98x), and prefetching in the verification step changed
nothing, 0.99x), ``NEIGHBOR_AHEAD`` (default 16: since the rows' starts come
with their entries and their first lines are prefetched, prefetching the
state of the neighbour 16 edges ahead measured 1.045x (1.034-1.056x) against
none, and against 16, 8 measured 0.977x (0.959-0.998x) and 32 0.980x
(0.959-0.998x); ``benchmarks/cpu_revisions.py``, SCALE 20, 2 threads, 5
interleaved rounds of 16 keys), ``reorder`` (default True: degree ordering of a graph built
with its original labels; kernel 1's graph is degree-ordered already). With
leaves and prefetching (same measurement), ``fusion_edges`` 2^13 and 2^9
measured 0.98x and 1.00x, ``delta`` 0.0035 and 0.0075 x the largest weight
0.93x and 1.00x; verifying rounds of few requests on one thread was 0.97x,
and leaving leaves out of the request buffers 0.96x. Also measured so and
not kept: a float32 distance array read by the relax loop beside the packed
state word, 1.01-1.06x in four runs (spreads 0.92-1.11x: the state fits
the L3 either way); a pull step for the large buckets, slower per edge than
push (about 10 against 2.9 ns at SCALE 20), since a bucket's unsettled
vertices hold three quarters of the edges it pushes; again with each row's
entries lighter than 0.1 x the largest weight sorted by weight, where a
vertex stops at the first entry whose weight cannot beat its best (the
GPU kernel's pull, `benchmarks/cpu_sssp_pull_estimate.py`), for heavy steps
over a tenth of the entries: 0.80x (0.75-0.85x; ``benchmarks/cpu_variants.py``,
SCALE 20, 2 threads, 5 rounds of 16 keys). With the states of a later
vertex's first entries prefetched 8 vertices ahead, the first hub bucket of
a key read 3.2 M edges instead of pushing 12.1 M, and took 50 ms against
33 (every row sorted: 1.7 M edges, 43 ms): the pass over every unsettled
vertex (a state, a row start and a random read at its first entries each)
costs more than the pushes it saves. Nor a bitmap of the final vertices
(set for each entry relaxed heavy), read before a target's state: at
SCALE 20, 39% of the pushes go to vertices final before their bucket, yet
set in the relax loop (both threads writing the hubs' words) it measured
0.67x (``benchmarks/cpu_revisions.py``, 2 threads, two runs of 5 rounds of
16 keys), and set on one thread after each bucket a key's second bucket
took 30.5 ms against 19.2: the relax loop's time is its instructions and
its branches (the states are prefetched), and a skip that is taken 39% of
the time is a branch mispredicted often. And a Bellman-Ford
tail as the GPU kernel's (once the settled vertices hold half the edges,
every later improvement relaxes its vertex's whole row until none is left):
SCALE 20, 16 keys, 5 interleaved rounds (``benchmarks/cpu_variants.py``),
0.99x (0.85-1.10x) on 2 threads and 0.87x on 1, shares of 0.3 and 0.7 no
better: here the small buckets are cheap (fused on one thread, no device
round trip), and the tail's repeated relaxations cost more than they save.
Writing the outputs by a gather in original order (random reads of the
states, then a separate reset) instead of the scatter from new labels:
0.997x (0.982-1.002x; ``benchmarks/cpu_revisions.py``, 5 rounds of 16
keys, 2 threads): the unpacking is not where the time goes.

Numba notes: the jitted functions share the workspace as one reference (a
StructRef) and all per-thread work goes through one parallel loop
(`_run_tasks`): passing dozens of arrays by value to every call made
compilation take many seconds. The hot loops index with unsigned integers
(an edge ``k`` as uint64, a vertex as uint32): Numba tests every signed
index for a negative value (Python's wraparound), an unsigned one not.
``benchmarks/cpu_revisions.py``, SCALE 20, 2 threads, 5 rounds of 16 keys
a run, each step against the one before: the relax loop's edges, then
the classify and extract loops, 1.12x, 1.14x and 1.15x (1.11-1.20x); the
unpacking 1.009x and 1.018x; the bin append 1.008x and 1.022x; the relax
loop's per-source reads 1.047x and 1.047x (1.025-1.065x). Constants passed to jitted calls are wrapped
(``np.int64(_RELAX)``) so that Numba compiles one version, not one per value.
"""

import time

import numba
import numpy as np
from llvmlite import ir
from numba.core import cgutils, types
from numba.cpython.unsafe.numbers import viewer
from numba.experimental import structref
from numba.extending import intrinsic

from graph500.kernels import register
from graph500.kernels.cpu.frontier import ONE, first_at_least
from graph500.kernels.cpu.reorder import relabel

DELTA_PER_MAX_WEIGHT = 0.005
FUSION_EDGES = 1 << 11
ROUND_EDGES = 1 << 20
RING_SLACK = 3
MAX_VERTICES = 2**32 - 1
BLOCK = 512  # bin entries per block
PREFETCH_AHEAD = 8  # entries between a prefetch and the entry's use
PREFETCH_EDGES = 64  # of a later entry's row, relaxing prefetches the lines holding its first edges up to this many
LINE_EDGES = 16  # neighbours (or weights) of 4 bytes in a cache line of 64
NEIGHBOR_AHEAD = 16  # edges between the prefetch of a neighbour's state and its relaxation
EXTRACT_ENTRY_EDGES = 8  # taking an entry from a bin costs about as much as relaxing this many edges

_SHIFT = np.uint64(32)
_PARENT_MASK = np.uint64(0xFFFFFFFF)
UNREACHED = np.uint64(0x7F800000FFFFFFFF)  # distance +inf, parent all ones
_NO_ENTRY = -1
_SETTLED = 2  # segment roles: 0 and 1 are the two frontiers
_RELAX, _CLASSIFY, _EXTRACT, _UNPACK = 0, 1, 2, 3  # what `_task_step` does
_FIRST, _LAST, _FILL, _SIZE = 0, 1, 2, 3  # a bin's metadata


# ---------------------------------------------------------------- the workspace

@structref.register
class WorkspaceType(types.StructRef):
    def preprocess_fields(self, fields):
        return tuple((name, types.unliteral(typ)) for name, typ in fields)


class Workspace(structref.StructRefProxy):
    """Everything a search reads and writes, shared by the jitted functions as one reference."""


WORKSPACE_FIELDS = (
    "row_bounds", "neighbors", "weights", "light_neighbors", "light_weights", "order",  # the relabelled graph
    "state", "parents", "distances",  # per vertex; the outputs in original labels
    "segment_vertex", "segment_word", "segment_row", "segment_prefix", "segment_count",  # [role, task, entry]
    "request_vertex", "request_word", "request_count",  # [task, request]
    "block_vertex", "block_word", "block_next", "free_stack", "free_top", "bin_meta",  # bins, per task
    "inverse_delta", "fusion_edges", "round_edges", "max_degree", "first_leaf",
    "bucket", "source_role", "target_role", "heavy", "slot", "cuts", "count_before",  # the step being run
)
structref.define_proxy(Workspace, WorkspaceType, WORKSPACE_FIELDS)


@numba.njit(cache=True)
def _new_workspace(row_bounds, neighbors, weights, light_neighbors, light_weights, order, state, segment_vertex, segment_word,
                   segment_row, segment_prefix, segment_count, request_vertex, request_word, request_count, block_vertex, block_word, block_next,
                   free_stack, free_top, bin_meta, inverse_delta, fusion_edges, round_edges, max_degree,
                   first_leaf):
    nothing = np.empty(0, dtype=np.int64)  # parents, cuts and count_before are set per search and per step
    return Workspace(row_bounds, neighbors, weights, light_neighbors, light_weights, order, state, nothing, np.empty(0, dtype=np.float32),
                     segment_vertex, segment_word, segment_row, segment_prefix, segment_count,
                     request_vertex, request_word, request_count,
                     block_vertex, block_word, block_next, free_stack, free_top, bin_meta,
                     inverse_delta, fusion_edges, round_edges, max_degree, first_leaf,
                     np.int64(0), np.int64(0), np.int64(1), False, np.int64(0), nothing, nothing)


# ---------------------------------------------------------------- prefetching

@intrinsic
def _prefetch(typingctx, array, index):
    """Ask for the cache line of ``array[index]`` (along the first axis) without waiting for it: LLVM's
    prefetch, for reading, high temporal locality. A prefetch never faults, so ``index`` is not checked."""
    def codegen(context, builder, signature, args):
        array_type, index_type = signature.args
        view = context.make_array(array_type)(context, builder, args[0])
        position = context.cast(builder, args[1], index_type, types.intp)
        pointer = cgutils.get_item_pointer(context, builder, array_type, view, [position])
        byte_pointer, int32 = ir.IntType(8).as_pointer(), ir.IntType(32)
        prefetch = cgutils.get_or_insert_function(
            builder.module, ir.FunctionType(ir.VoidType(), [byte_pointer, int32, int32, int32]), "llvm.prefetch.p0i8")
        builder.call(prefetch, [builder.bitcast(pointer, byte_pointer), int32(0), int32(3), int32(1)])
        return context.get_dummy_value()
    return types.void(array, index), codegen


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


# ---------------------------------------------------------------- segments and bins

@numba.njit(inline="always", cache=True)
def _append(ws, role, task, vertex, word, row_start, edges):
    i = ws.segment_count[role, task]
    ws.segment_vertex[role, task, i] = vertex
    ws.segment_word[role, task, i] = word
    ws.segment_row[role, task, i] = row_start
    ws.segment_prefix[role, task, i + 1] = ws.segment_prefix[role, task, i] + edges
    ws.segment_count[role, task] = i + 1


@numba.njit(inline="always", cache=True)
def _settle(ws, task, vertex, word):
    """A vertex of the current bucket: into the target frontier if it has light edges, and into the settled
    list (its row)."""
    bounds = ws.row_bounds
    light_edges = bounds[vertex + 1, 1] - bounds[vertex, 1]
    if light_edges:
        _append(ws, ws.target_role, task, vertex, word, bounds[vertex, 1], light_edges)
    _append(ws, _SETTLED, task, vertex, word, bounds[vertex, 0], bounds[vertex + 1, 0] - bounds[vertex, 0])


@numba.njit(inline="always", cache=True)
def _bin_append(ws, task, slot, vertex, word):
    """Append (vertex, word) to the task's bin ``slot``, taking a block from the task's free stack when needed."""
    meta = ws.bin_meta[np.uint64(task), np.uint64(slot)]  # this bin's (first, last, fill, size)
    last = meta[_LAST]
    fill = meta[_FILL]
    if last == _NO_ENTRY or fill == BLOCK:
        ws.free_top[task] -= 1
        block = ws.free_stack[task, ws.free_top[task]]
        ws.block_next[task, block] = _NO_ENTRY
        if last == _NO_ENTRY:
            meta[_FIRST] = block
        else:
            ws.block_next[task, last] = block
        meta[_LAST] = block
        last = block
        fill = 0
    entry = np.uint64(last * BLOCK + fill)
    ws.block_vertex[np.uint64(task), entry] = vertex
    ws.block_word[np.uint64(task), entry] = word
    meta[_FILL] = fill + 1
    meta[_SIZE] += 1


@numba.njit(inline="always", cache=True)
def _bin_has_room(ws, task, slot):
    """Whether bin ``slot`` of the task can take an entry without a block, or the task has a free block."""
    return ws.free_top[task] > 0 or (ws.bin_meta[task, slot, _LAST] != _NO_ENTRY
                                     and ws.bin_meta[task, slot, _FILL] < BLOCK)


@numba.njit(inline="always", cache=True)
def _keep(ws, task, vertex, word):
    """A vertex's new state goes to the target frontier (its bucket is the current one) or to a bin; a leaf's
    stays in ``state`` only."""
    if vertex >= ws.first_leaf:
        return
    target = _bucket(word, ws.inverse_delta)
    if target == ws.bucket:
        _settle(ws, task, vertex, word)
    else:
        _bin_append(ws, task, target % ws.bin_meta.shape[1], vertex, word)


@numba.njit(inline="always", cache=True)
def _empty_bin(meta, task, slot):
    meta[task, slot, _FIRST] = _NO_ENTRY
    meta[task, slot, _LAST] = _NO_ENTRY
    meta[task, slot, _FILL] = 0
    meta[task, slot, _SIZE] = 0


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
                _prefetch(neighbors, ahead_row + offset)
                _prefetch(weights, ahead_row + offset)
            if heavy:
                _prefetch(state, source_vertex[segment, ahead])
        if heavy and state[u] != word:
            continue
        begin = source_row[segment, i]
        end = begin + source_prefix[segment, i + ONE] - source_prefix[segment, i]
        distance = _distance(word)
        examined += end - begin
        for k in range(np.uint64(begin), np.uint64(end)):
            _prefetch(state, neighbors[min(k + np.uint64(NEIGHBOR_AHEAD), last_edge)])  # maybe a later row's
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
                _prefetch(state, ahead)
                _prefetch(ws.row_bounds, ahead)
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
