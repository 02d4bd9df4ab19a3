"""What the BFS and SSSP validators share: the graph, the parent checks, tree levels, nedge.

The checks take NumPy or CuPy arrays (`array_module` picks the library; only
operations both have). The Numba helpers here (`group_by_key`, a parallel
stable counting sort; `chunk_start`, `chunk_count`, `earliest_per_rule`)
serve the fused passes of `bfs` and `sssp`, on NumPy arrays only; the tree
levels have a fused Numba pass of their own.

The fused passes read a value of each tuple's second endpoint at random, a
pointer-jumping round its ancestor's entries, and the grouping's counting
sorts a key's counter (and the slot it gives); they ask for the ones
PREFETCH_AHEAD tuples or vertices ahead (`graph500.compiled.prefetch`; the
sorts' slots half as far), so the reads overlap instead of waiting one by one
(the distance chosen by measurement: docs/measurements.md, session 28).

`ValidationGraph`, built once per graph: the tuples (int32 where the labels
fit) and their float32 weights, and every vertex's count of tuples (not
self-loops) having it as FIRST endpoint. On NumPy arrays the tuples are
copied without self-loops, grouped by first endpoint and (first endpoints
only, for the BFS pass) by second. On CuPy arrays they are kept as given (a
self-loop breaks no rule) and read in chunks of `TUPLE_CHUNK`: in place
where they are in device memory (where the backend finds room for them),
else each chunk brought to the device while the last is checked, so they
may live in mapped host memory: the validator's device memory is then per
vertex plus two chunks. nedge
(spec section 5) is the sum of the first-endpoint counts over the reached
vertices: once reached-unreached holds, a tuple has both endpoints reached
or neither.

Checks on the parent array, in order (the first broken one is raised):
``parents-length``; ``parent-out-of-range`` (each entry -1 or a vertex);
``root-not-self-parent``; ``cycle``: every reached vertex's parent chain
reaches the root, found by pointer jumping (``ancestor`` starts as the
parent, ``depth`` as 1, 0 at the root; each round adds the ancestor's depth
and jumps to the ancestor's ancestor, so after k rounds a vertex points 2^k
steps up or at the root). A valid tree is done within ceil(log2 N) rounds;
a reached vertex whose ancestor is not the root after one more lies on or
leads into a cycle or an unreached vertex. On NumPy arrays a round is one
parallel Numba pass (2.1-3.0x the array-generic rounds). A BFS tree's levels
with the Numba engine come from the root instead, a round a level
(`levels_from_root`: round k, the vertices whose parent is in the bitmap of
level k take k + 1; `bfs.tree_levels_from_root`), the distributed
validator's rounds on one process; past `LEVEL_ROUNDS` levels, the jumping.
Measurements and the longer text: docs/kernels/validator-common.md.
"""

import math

import numba
import numpy

try:
    import cupy
except ImportError:
    cupy = None

from ..compiled import prefetch
from ..errors import ValidationError
from ..partition import index_dtype_for, place

ENGINES = ("auto", "numba", "cuda", "generic")
TUPLE_CHUNK = 1 << 25  # tuples per chunk of the array-generic pass on CuPy arrays
GROUPING_TASKS = 8  # bounds the grouping's per-task counters to 64 bytes a vertex
PREFETCH_AHEAD = 64  # the tuples (vertices) ahead whose values a pass asks for


def array_module(*arrays):
    """The array library (CuPy or NumPy) of the given arrays."""
    if cupy is None:
        return numpy
    return cupy.get_array_module(*arrays)


def use_numba(engine, xp):
    """Whether to run the fused Numba pass: "auto" picks it for NumPy arrays."""
    if engine not in ENGINES:
        raise ValueError(f"engine must be one of {ENGINES}, not {engine!r}")
    if engine == "numba" and xp is not numpy:
        raise ValueError("engine 'numba' needs NumPy arrays")
    if engine == "cuda" and xp is numpy:
        raise ValueError("engine 'cuda' needs CuPy arrays")
    return engine == "numba" or (engine == "auto" and xp is numpy)


def use_cuda(engine, xp):
    """Whether to run the fused CUDA pass (`graph500.validators.device`): "auto" picks it for CuPy arrays."""
    return not use_numba(engine, xp) and engine in ("auto", "cuda")


def chunk_count():
    """How many chunks a fused Numba pass splits the vertices into."""
    return 16 * numba.get_num_threads()


@numba.njit(cache=True)
def chunk_start(src_offsets, chunk, num_chunks):
    """The first vertex of `chunk`, vertices being cut into chunks of about equal tuple counts."""
    if chunk == num_chunks:
        return src_offsets.shape[0] - 1
    return numpy.searchsorted(src_offsets, src_offsets[-1] * chunk // num_chunks)


def earliest_per_rule(chunk_firsts):
    """Reduce a fused pass's (chunks, rules) table of first offenders to one index or None per rule.

    Chunks cover the vertices, and so the tuples grouped by first endpoint, in
    order: the first chunk with an offender holds the earliest one, which is
    the one the array-generic pass reports.
    """
    found = chunk_firsts >= 0
    return [int(chunk_firsts[found[:, rule], rule][0]) if found[:, rule].any() else None
            for rule in range(chunk_firsts.shape[1])]


def offset(first, index):
    """``first + index``, or None when ``index`` is None: a chunk's index made the whole array's."""
    return None if index is None else first + index


def first_true(xp, mask):
    """The index of the first True in a 1-D boolean array, or None when there is none."""
    if mask.size == 0:
        return None
    index = int(xp.argmax(mask))
    return index if bool(mask[index]) else None


def check_edges(src, dst, num_vertices, weights=None):
    """Raise ValueError unless (src[i], dst[i]) are 1-D tuples of labels in [0, num_vertices) with aligned
    weights (or None); return ``num_vertices`` as an int."""
    num_vertices = int(num_vertices)
    if num_vertices < 1:
        raise ValueError(f"num_vertices must be positive, not {num_vertices}")
    if src.ndim != 1 or src.shape != dst.shape:
        raise ValueError(f"src and dst must be 1-D of one length, "
                         f"not {src.shape} and {dst.shape}")
    if weights is not None and weights.shape != src.shape:
        raise ValueError(f"weights must have length {src.shape[0]}, not {weights.shape}")
    if src.size and (int(src.min()) < 0 or int(dst.min()) < 0
                     or int(src.max()) >= num_vertices or int(dst.max()) >= num_vertices):
        raise ValueError(f"edge endpoints must lie in [0, {num_vertices})")
    return num_vertices


class ValidationGraph:
    """The input tuples of one graph, prepared once for validating every search on it.

    Attributes: `num_vertices`; `src`, `dst` (int32 when N <= 2^31, else
    int64: on NumPy, the tuples without self-loops ordered by first endpoint,
    `src` made from the offsets when asked and not held; on CuPy, the tuples
    as given); `weights` (float32, aligned with src and
    dst, or None); `first_endpoint_counts` (int64, length N: how many tuples
    other than self-loops have each vertex as first endpoint); on NumPy also
    `src_offsets` (length N + 1, int32 where the tuples number under 2^31,
    else int64: the tuples with first endpoint u are
    src_offsets[u] up to src_offsets[u + 1]) and `incoming()`, the same
    grouping by second endpoint (without weights), for the fused Numba BFS
    pass.
    """

    def __init__(self, src, dst, weights, num_vertices, src_offsets=None):
        """Take NumPy tuples without self-loops grouped by first endpoint, as ``src_offsets`` and ``dst`` (``src``
        None: the first endpoints are the offsets' groups), or CuPy tuples in any order (``src`` and ``dst``)."""
        self._src = src
        self.dst = dst
        self.weights = weights
        self.num_vertices = num_vertices
        xp = array_module(dst)
        if xp is numpy:
            self.src_offsets = src_offsets
            self._first_endpoint_counts = None  # the offsets' differences, made when asked
        else:
            self.src_offsets = None
            self._first_endpoint_counts = xp.zeros(num_vertices, dtype=numpy.int64)
            for _, src_chunk, dst_chunk, _ in self.tuple_chunks(weighted=False):  # atomic adds: no histograms
                xp.add.at(self._first_endpoint_counts, src_chunk[src_chunk != dst_chunk], 1)
        self._incoming = None

    @property
    def src(self):
        """The first endpoints, aligned with dst: on NumPy a new array from the offsets, not held beside them (the
        array-generic passes and the fault messages read it; the Numba passes read the offsets)."""
        if self._src is not None:
            return self._src
        src = numpy.empty(self.dst.shape[0], dtype=self.dst.dtype)
        fill_keys(self.src_offsets, src)
        return src

    @property
    def first_endpoint_counts(self):
        """int64, one per vertex: how many tuples other than self-loops have it as first endpoint (on NumPy a new
        array from the offsets: not held beside them)."""
        if self._first_endpoint_counts is None:
            return numpy.diff(self.src_offsets).astype(numpy.int64, copy=False)
        return self._first_endpoint_counts

    @classmethod
    def from_edges(cls, src, dst, num_vertices, weights=None):
        """Prepare the M input tuples (src[i], dst[i]) with optional float32 weights."""
        xp = array_module(src, dst)
        num_vertices = check_edges(src, dst, num_vertices, weights)
        if xp is numpy:
            return cls.from_host_edges(src, dst, num_vertices, weights)
        if weights is not None:
            weights = weights.astype(numpy.float32, copy=False)
        index_dtype = index_dtype_for(num_vertices)
        return cls(src.astype(index_dtype, copy=False), dst.astype(index_dtype, copy=False), weights, num_vertices)

    @classmethod
    def from_host_edges(cls, src, dst, num_vertices, weights=None, places=None):
        """`from_edges` for checked NumPy tuples: parallel counting sorts, and the grouping by second endpoint
        too (the fused Numba BFS pass needs it: built before any search). With ``places`` (a
        `graph500.partition.DistinctLabels` of the endpoints) the tuples are taken under their endpoints' places
        there, ``num_vertices`` of them, each placed as it is read (no relabelled copy of the tuples)."""
        index_dtype = index_dtype_for(num_vertices)
        weights = None if weights is None else weights.astype(numpy.float32, copy=False)
        src_offsets, dst_by_src, weights_by_src = group_by_key(src, dst, weights, num_vertices, index_dtype, places)
        graph = cls(None, dst_by_src, weights_by_src, num_vertices, src_offsets)
        graph.incoming()
        return graph

    def incoming(self):
        """(dst_offsets, src_by_dst): the tuples grouped by second endpoint (NumPy only).

        The tuples with second endpoint v have first endpoints
        src_by_dst[dst_offsets[v]:dst_offsets[v + 1]].
        """
        if array_module(self.dst) is not numpy:
            raise TypeError("the grouping by second endpoint serves the Numba BFS pass, on NumPy arrays only")
        if self._incoming is None:
            self._incoming = transposed(self.src_offsets, self.dst, self.num_vertices)
        return self._incoming

    def tuple_chunks(self, weighted=True):
        """``(first index, src, dst, weights or None)`` of consecutive chunks of the tuples, in order; weights
        None too where not ``weighted`` (a pass that reads none: on CuPy, none copied).

        On NumPy: one chunk, the arrays themselves. On CuPy: chunks of
        `TUPLE_CHUNK` tuples copied into device memory (`staged_chunks`), the
        next one copied while the caller checks the current one; a chunk's
        arrays are valid until the caller asks for the next but one.
        """
        weights = self.weights if weighted else None
        if array_module(self.dst) is numpy:
            yield 0, self.src, self.dst, weights
            return
        arrays = (self.src, self.dst) + (() if weights is None else (weights,))
        for first, chunk in staged_chunks(arrays, TUPLE_CHUNK):
            yield (first, *chunk, None) if weights is None else (first, *chunk)

    def edge(self, index):
        """The endpoints (u, v) of the tuple at `index` of src/dst, as Python ints."""
        if self._src is None:  # the group holding the tuple
            return int(numpy.searchsorted(self.src_offsets, index, side="right") - 1), int(self.dst[index])
        return int(self._src[index]), int(self.dst[index])

    def count_reached_tuples(self, reached):
        """nedge: tuples with both endpoints reached; valid once reached-unreached has passed."""
        if self._first_endpoint_counts is None:  # NumPy: summed from the offsets, no array of N made a search
            return int(_reached_tuples(self.src_offsets, reached))
        return int((self._first_endpoint_counts * reached).sum())


def staged_chunks(arrays, chunk_size):
    """``(first, [array[first:first + chunk_size] for array in arrays])`` in device memory, chunk by chunk.

    For CuPy arrays anywhere in the device's address space (device memory, or
    pinned host memory mapped into it): each chunk is copied into one of two
    sets of device buffers on a side stream, the next chunk's copy running
    while the current stream works on the chunk just handed out (the bus and
    the device's work overlap); a set is refilled only once the work queued
    on the current stream until the caller asked for the next chunk is done,
    and the first copies only once the work queued before the call is.
    Arrays all in device memory are handed out as they are, a chunk's views
    (nothing to copy: the device reads them at its own speed).
    """
    count = arrays[0].shape[0]
    if count == 0:
        return
    if all(in_device_memory(array) for array in arrays):
        for first in range(0, count, chunk_size):
            yield first, [array[first:first + chunk_size] for array in arrays]
        return
    size = min(chunk_size, count)
    buffers = [[cupy.empty(size, dtype=array.dtype) for array in arrays] for _ in range(2)]
    work = cupy.cuda.get_current_stream()
    copier = cupy.cuda.Stream(non_blocking=True)
    # The pool hands out memory freed on the current stream as soon as it is freed: work queued there may still
    # read it (an NCCL send of a temporary, say), so the copier starts after everything queued so far.
    copier.wait_event(work.record())
    released = [None, None]  # per buffer set: the event after which its last chunk's work is done

    def copy(first):
        slot = (first // chunk_size) % 2
        if released[slot] is not None:
            copier.wait_event(released[slot])
        length = min(chunk_size, count - first)
        for buffer, array in zip(buffers[slot], arrays):
            cupy.cuda.runtime.memcpyAsync(buffer.data.ptr, array[first:].data.ptr, length * array.itemsize,
                                          cupy.cuda.runtime.memcpyDefault, copier.ptr)
        return copier.record()

    copied = copy(0)
    try:
        for first in range(0, count, chunk_size):
            work.wait_event(copied)
            if first + chunk_size < count:
                copied = copy(first + chunk_size)
            length = min(chunk_size, count - first)
            slot = (first // chunk_size) % 2
            yield first, [buffer[:length] for buffer in buffers[slot]]
            released[slot] = work.record()
    finally:  # the caller may stop early: no copy may still write into buffers the pool hands out again
        work.wait_event(copied)


def in_device_memory(array):
    """Whether a CuPy array's memory is the device's: no host address reaches it (pinned host memory mapped into
    the device's address space has one)."""
    return array.size == 0 or cupy.cuda.runtime.pointerGetAttributes(array.data.ptr).hostPointer == 0


def group_by_key(keys, others, weights, num_vertices, index_dtype, places=None):
    """The tuples (keys[i], others[i]) with keys[i] != others[i], stably grouped by key (NumPy, in parallel);
    with ``places`` (a `graph500.partition.DistinctLabels` naming every label), under the labels' places.

    Returns (offsets, others grouped, weights grouped or None when `weights` is None); the offsets int32 where
    the tuples number under 2^31.
    """
    weighted = weights is not None
    weights = weights if weighted else numpy.empty(0, dtype=numpy.float32)
    words, word_ranks = (places.words, places.word_ranks) if places is not None else (_NO_WORDS, _NO_RANKS)
    num_tasks = min(numba.get_num_threads(), GROUPING_TASKS)
    per_task = numpy.zeros((num_tasks, num_vertices), dtype=numpy.int64)
    _count_keys(keys, others, words, word_ranks, per_task)
    offsets = numpy.zeros(num_vertices + 1, dtype=index_dtype_for(keys.shape[0] + 1))  # values up to the count
    numpy.cumsum(per_task.sum(axis=0), out=offsets[1:])
    grouped_others = numpy.empty(offsets[-1], dtype=index_dtype)
    grouped_weights = numpy.empty(offsets[-1] if weighted else 0, dtype=numpy.float32)
    _scatter_by_key(keys, others, words, word_ranks, weights, offsets, per_task, grouped_others, grouped_weights)
    return offsets, grouped_others, grouped_weights if weighted else None


_NO_WORDS, _NO_RANKS = numpy.empty(0, dtype=numpy.uint64), numpy.empty(0, dtype=numpy.int64)


@numba.njit(inline="always", cache=True)
def _placed(label, words, word_ranks):
    """``label`` itself, or its place among the set bits of ``words`` where a bitmap is given."""
    return label if words.shape[0] == 0 else place(label, words, word_ranks, -1)


@numba.njit(inline="always", cache=True)
def _task_range(task, num_tasks, length):
    return task * length // num_tasks, (task + 1) * length // num_tasks


@numba.njit(parallel=True, cache=True)
def _count_keys(keys, others, words, word_ranks, per_task):
    """per_task[t, v]: tuples of task t's range with key v (self-loops left out; keys placed by `_placed`)."""
    num_tasks = per_task.shape[0]
    for task in numba.prange(num_tasks):
        begin, end = _task_range(task, num_tasks, keys.shape[0])
        counts = per_task[task]
        for i in range(begin, end):
            prefetch(counts, _placed(keys[min(i + PREFETCH_AHEAD, end - 1)], words, word_ranks))
            if keys[i] != others[i]:
                counts[_placed(keys[i], words, word_ranks)] += 1


def transposed(src_offsets, dst, num_vertices):
    """(dst_offsets, src_by_dst): the tuples grouped by first endpoint (``src_offsets`` and ``dst``), grouped by
    second endpoint instead, stably (NumPy, in parallel; no array of the first endpoints is made)."""
    num_tasks = min(numba.get_num_threads(), GROUPING_TASKS)
    per_task = numpy.zeros((num_tasks, num_vertices), dtype=numpy.int64)
    _count_second_endpoints(dst, per_task)
    offsets = numpy.zeros(num_vertices + 1, dtype=index_dtype_for(dst.shape[0] + 1))
    numpy.cumsum(per_task.sum(axis=0), out=offsets[1:])
    src_by_dst = numpy.empty(offsets[-1], dtype=dst.dtype)
    _scatter_first_endpoints(src_offsets, dst, offsets, per_task, src_by_dst)
    return offsets, src_by_dst


@numba.njit(parallel=True, cache=True)
def _count_second_endpoints(dst, per_task):
    num_tasks = per_task.shape[0]
    for task in numba.prange(num_tasks):
        begin, end = _task_range(task, num_tasks, dst.shape[0])
        counts = per_task[task]
        for i in range(begin, end):
            prefetch(counts, dst[min(i + PREFETCH_AHEAD, end - 1)])
            counts[dst[i]] += 1


@numba.njit(parallel=True, cache=True)
def _scatter_first_endpoints(src_offsets, dst, offsets, per_task, src_by_dst):
    """Place every tuple by its second endpoint, its first one walked along the offsets (`_scatter_by_key`)."""
    _first_slots(offsets, per_task)
    num_tasks = per_task.shape[0]
    for task in numba.prange(num_tasks):
        begin, end = _task_range(task, num_tasks, dst.shape[0])
        u = numpy.searchsorted(src_offsets, begin, side="right") - 1
        slots = per_task[task]
        for i in range(begin, end):
            prefetch(slots, dst[min(i + PREFETCH_AHEAD, end - 1)])
            prefetch(src_by_dst, slots[dst[min(i + PREFETCH_AHEAD // 2, end - 1)]])
            while src_offsets[u + 1] <= i:
                u += 1
            slot = slots[dst[i]]
            slots[dst[i]] = slot + 1
            src_by_dst[slot] = u


@numba.njit(parallel=True, cache=True)
def _first_slots(offsets, per_task):
    """Turn ``per_task[task, key]`` counts into each task's first slot per key, tasks in order."""
    for vertex in numba.prange(per_task.shape[1]):
        slot = offsets[vertex]
        for task in range(per_task.shape[0]):
            count = per_task[task, vertex]
            per_task[task, vertex] = slot
            slot += count


@numba.njit(parallel=True, cache=True)
def _scatter_by_key(keys, others, words, word_ranks, weights, offsets, per_task, grouped_others, grouped_weights):
    """Turn the counts into each task's first slot per key, then place every tuple: a stable counting sort
    (labels placed by `_placed`)."""
    _first_slots(offsets, per_task)
    num_tasks = per_task.shape[0]
    for task in numba.prange(num_tasks):
        begin, end = _task_range(task, num_tasks, keys.shape[0])
        slots = per_task[task]
        for i in range(begin, end):
            prefetch(slots, _placed(keys[min(i + PREFETCH_AHEAD, end - 1)], words, word_ranks))
            later = slots[_placed(keys[min(i + PREFETCH_AHEAD // 2, end - 1)], words, word_ranks)]
            prefetch(grouped_others, later)
            if keys[i] != others[i]:
                key = _placed(keys[i], words, word_ranks)
                slot = slots[key]
                slots[key] = slot + 1
                grouped_others[slot] = _placed(others[i], words, word_ranks)
                if grouped_weights.shape[0] > 0:
                    grouped_weights[slot] = weights[i]


@numba.njit(parallel=True, cache=True)
def _reached_tuples(offsets, reached):
    """The tuples grouped under the reached keys: the sum of their groups' lengths."""
    total = 0
    for v in numba.prange(reached.shape[0]):
        if reached[v]:
            total += numpy.int64(offsets[v + 1] - offsets[v])
    return total


@numba.njit(parallel=True, cache=True)
def fill_keys(offsets, out):
    """out[offsets[v]:offsets[v + 1]] = v for every vertex v."""
    for vertex in numba.prange(offsets.shape[0] - 1):
        out[offsets[vertex]:offsets[vertex + 1]] = vertex


def check_parents(kernel, vg, root, parents):
    """Check parents-length, parent-out-of-range and root-not-self-parent; return `reached`."""
    n = vg.num_vertices
    check_root(n, root)
    if parents.ndim != 1 or parents.shape[0] != n:
        raise wrong_length(kernel, "parents-length", "parent", parents.shape, n)
    if parents.dtype.kind != "i":
        raise TypeError(f"parents must be a signed integer array, not {parents.dtype}")
    reached, vertex = reached_and_out_of_range(parents, n)
    if vertex is not None:
        raise_out_of_range(kernel, vertex, parents[vertex], n)
    raise_root_not_self_parent(kernel, root, parents[root])
    return reached


def reached_and_out_of_range(parents, num_vertices):
    """``(reached, the first vertex whose parent is neither -1 nor one of num_vertices vertices, or None)``: NumPy
    parents in one Numba pass on every thread (NumPy's operations took several passes on one), CuPy's by array
    operations (the bound N - 1 fits the labels' index type, so int32 parents compare with it as they are)."""
    if array_module(parents) is numpy:
        reached = numpy.empty(parents.shape[0], dtype=numpy.bool_)
        firsts = _reached_and_first_out_of_range(parents, num_vertices - 1, reached, chunk_count())
        return reached, earliest_per_rule(firsts)[0]
    return parents >= 0, first_true(cupy, (parents < -1) | (parents > num_vertices - 1))


@numba.njit(parallel=True, cache=True)
def _reached_and_first_out_of_range(parents, last_vertex, reached, num_chunks):
    """``reached[v] = parents[v] >= 0`` for every v; each chunk's first v whose parent is below -1 or above
    ``last_vertex`` (-1: none), a (chunks, 1) table. Each chunk's loops have no branch (they vectorise); one that
    finds an offender looks for its first."""
    count = parents.shape[0]
    firsts = numpy.full((num_chunks, 1), -1, dtype=numpy.int64)
    for chunk in numba.prange(num_chunks):
        begin, end = count * chunk // num_chunks, count * (chunk + 1) // num_chunks
        offends = False
        for v in range(begin, end):
            reached[v] = parents[v] >= 0
            offends |= (parents[v] < -1) | (parents[v] > last_vertex)
        if offends:
            for v in range(begin, end):
                if (parents[v] < -1) | (parents[v] > last_vertex):
                    firsts[chunk, 0] = v
                    break
    return firsts


def first_self_parent(parents, root, first=0):
    """The index in ``parents`` (of the vertices from ``first`` on) of the first vertex other than ``root`` that is
    its own parent, or None: NumPy parents in one Numba pass on every thread, CuPy's by array operations."""
    xp = array_module(parents)
    if xp is numpy:
        return earliest_per_rule(_first_self_parent(parents, root, first, chunk_count()))[0]
    end = first + parents.shape[0]
    labels = xp.arange(first, end, dtype=numpy.promote_types(parents.dtype, index_dtype_for(end)))
    return first_true(xp, (parents == labels) & (labels != root))


@numba.njit(parallel=True, cache=True)
def _first_self_parent(parents, root, first, num_chunks):
    """Each chunk's first index whose vertex (``first`` + index) is its own parent and not ``root`` (-1: none),
    a (chunks, 1) table; the loops as `_reached_and_first_out_of_range`'s."""
    count = parents.shape[0]
    firsts = numpy.full((num_chunks, 1), -1, dtype=numpy.int64)
    for chunk in numba.prange(num_chunks):
        begin, end = count * chunk // num_chunks, count * (chunk + 1) // num_chunks
        offends = False
        for index in range(begin, end):  # no branch: the loop vectorises
            offends |= (parents[index] == first + index) & (first + index != root)
        if offends:
            for index in range(begin, end):
                if (parents[index] == first + index) & (first + index != root):
                    firsts[chunk, 0] = index
                    break
    return firsts


def raise_out_of_range(kernel, vertex, parent, num_vertices):
    raise ValidationError(kernel, "parent-out-of-range",
                          f"parent[{vertex}] = {int(parent)} is outside [-1, {num_vertices})",
                          vertex=vertex)


def raise_root_not_self_parent(kernel, root, root_parent):
    """Raise `root-not-self-parent` unless ``root_parent`` is the root."""
    root_parent = int(root_parent)
    if root_parent != root:
        raise ValidationError(kernel, "root-not-self-parent",
                              f"parent[{root}] = {root_parent}, "
                              f"but the root must be its own parent",
                              vertex=root)


def check_root(num_vertices, root):
    """Raise ValueError (a caller's mistake, not a broken rule) when `root` is no vertex."""
    if not 0 <= root < num_vertices:
        raise ValueError(f"root {root} is not a vertex of a graph with {num_vertices} vertices")


def wrong_length(kernel, rule, name, shape, length, part=""):
    """The ValidationError of an array (`name`: "parent", "distance") of `shape` that should hold `length`
    entries; `part` prefixes the array's name (the distributed validator names the rank)."""
    return ValidationError(kernel, rule, f"{part}the {name} array has shape {shape}, expected ({length},)")


def levels_from_root(comm, word_counts, first, num_vertices, parents, root, descent):
    """A BFS tree's levels from the root, a round a level: the levels of this rank's block (``parents``, -1 where
    unreached, the block's first vertex ``first``; -1 where the parent chain does not reach the root), or None past
    `LEVEL_ROUNDS` rounds (collective over ``comm``; one process: a `graph500.comm.SelfCommunicator`). Round k:
    every rank has published the bits of its vertices at level k in a gathered bitmap of all N (``word_counts``:
    each rank's words; an allgather, or one shared window a host), and each of its vertices still without a level
    whose parent's bit is set takes level k + 1 and its bit in the next round's bitmap (``descent(parents,
    levels)``: a round's callable, `HostDescent` on NumPy); the rounds end when no rank leveled any (an allreduce
    of a count a round). No requests, no counts to exchange: the layout is fixed."""
    xp, count = array_module(parents), parents.shape[0]
    bitmaps = [comm.gathered_array(word_counts, numpy.uint64) for _ in range(2)]  # this level's, the next's
    levels = xp.full(count, -1, dtype=numpy.int32 if num_vertices <= 2**31 else numpy.int64)
    root_index = root - first
    if 0 <= root_index < count:
        levels[root_index] = 0
        bitmaps[0].local[root_index >> 6] = numpy.uint64(1) << numpy.uint64(root_index & 63)
    bitmaps[0].publish()
    descend = descent(parents, levels)
    for level in range(1, LEVEL_ROUNDS + 1):
        current, following = bitmaps[(level - 1) % 2], bitmaps[level % 2]
        if not comm.allreduce(descend(current.whole, level, following.local), "sum"):
            break
        following.publish()
    else:
        levels = None
    for bitmap in bitmaps:  # not on an error's way out: a host's shared window is given back by all its ranks
        bitmap.free()
    return levels


class HostDescent:
    """A round of `levels_from_root` on NumPy arrays: ``level`` on the block's vertices still without one whose
    parent's bit is set in ``level_words`` (all N), their bits into ``next_words`` (the block's, overwritten); how
    many took it. A round reads only the reached vertices still without a level (in label order, kept from round
    to round); at least `PARALLEL_PENDING` of them are split among the threads at word boundaries (each writes its
    own words), fewer stay on the calling thread (most rounds: no wake-up). Split, the list is compacted by Numba on
    every thread (NumPy's concatenate copied it on one)."""

    def __init__(self, parents, levels):
        self.parents, self.levels = parents, levels
        self.pending = numpy.flatnonzero((parents >= 0) & (levels < 0))

    def __call__(self, level_words, level, next_words):
        pending = self.pending
        next_words.fill(0)
        parts = min(numba.get_num_threads(), -(-pending.shape[0] // PARALLEL_PENDING))
        # a part a thread, each from the first vertex of a word: the parts' words do not overlap
        splits = pending[numpy.arange(1, parts) * pending.shape[0] // parts]
        bounds = numpy.concatenate(([0], numpy.searchsorted(pending, (splits | 63) + 1), [pending.shape[0]]))
        kept = numpy.empty(bounds.shape[0] - 1, dtype=numpy.int64)
        arguments = (self.parents, self.levels, level_words, level, next_words, pending, bounds, kept)
        if parts > 1:
            _descend_parts(*arguments)
            self.pending = _kept_parts(pending, bounds, kept)
        else:
            _descend_part(*arguments, 0)
            self.pending = pending[:kept[0]]  # kept at the front in place: no copy
        return pending.shape[0] - self.pending.shape[0]


@numba.njit(cache=True)
def _descend_part(parents, levels, level_words, level, next_words, pending, bounds, kept, part):
    """`HostDescent`'s round over part ``part`` of ``pending`` (``pending[bounds[part]:bounds[part + 1]]``):
    the vertices it keeps (no level yet) move to the part's front, ``kept[part]`` of them."""
    out = bounds[part]
    for i in range(bounds[part], bounds[part + 1]):
        v = pending[i]
        parent = parents[v]
        if (level_words[parent >> 6] >> numpy.uint64(parent & 63)) & numpy.uint64(1):
            levels[v] = level
            next_words[v >> 6] |= numpy.uint64(1) << numpy.uint64(v & 63)
        else:
            pending[out] = v
            out += 1
    kept[part] = out - bounds[part]


def _kept_parts(pending, bounds, kept):
    """The ``kept[part]`` vertices at the front of each part of ``pending`` (from ``bounds[part]``), in order, a
    part a task, into a NumPy allocation (its large arrays ask the kernel for huge pages: a Numba allocation of the
    same size took several times as long to fill, most of it in page faults)."""
    ends = numpy.cumsum(kept)
    out = numpy.empty(int(ends[-1]), dtype=pending.dtype)
    _copy_parts(pending, bounds, ends - kept, kept, out)
    return out


@numba.njit(parallel=True, cache=True)
def _copy_parts(source, source_starts, starts, counts, out):
    for part in numba.prange(counts.shape[0]):
        out[starts[part]:starts[part] + counts[part]] = source[source_starts[part]:source_starts[part] + counts[part]]


@numba.njit(parallel=True, cache=True)
def _descend_parts(parents, levels, level_words, level, next_words, pending, bounds, kept):
    """`_descend_part` over every part, a thread each."""
    for part in numba.prange(bounds.shape[0] - 1):
        _descend_part(parents, levels, level_words, level, next_words, pending, bounds, kept, part)


def tree_levels(kernel, parents, root, reached, engine="auto"):
    """Levels (hops from the root) of the tree, -1 where unreached; raise `cycle`.

    `parents` must have passed `check_parents`.  See the module docstring for
    the pointer jumping; `engine` as in `use_numba`.
    """
    xp = array_module(parents)
    n = parents.shape[0]
    index_dtype = index_dtype_for(n)
    # Depths at most double each round: 2^(rounds) <= 4N must fit.
    depth_dtype = numpy.int32 if n <= 2**29 else numpy.int64
    rounds = math.ceil(math.log2(n)) + 1
    if use_numba(engine, xp):
        ancestor, depth = _numba_jumps(parents, root, reached, rounds, index_dtype, depth_dtype)
    else:
        ancestor, depth = _generic_jumps(xp, parents, root, reached, rounds, index_dtype, depth_dtype)
    raise_cycle(kernel, first_true(xp, reached & (ancestor != root)), root)
    return depth - ~reached


# Rounds of `levels_from_root`, a level each, before the pointer jumping takes over: a BFS tree of the reference
# graphs is a few levels deep; a chain longer than this is a faulty tree's, where the jumping's log2 rounds win
LEVEL_ROUNDS = 64
# The vertices still without a level a thread takes in a round of `levels_from_root` on NumPy: fewer stay on the
# calling thread (waking the others costs more than a round of a few thousand)
PARALLEL_PENDING = 1 << 16
# tie edges (a vertex as near as its parent) a chunk of the Numba SSSP tuple pass keeps, and the CUDA pass in all (one
# GPU, or a rank, which sends them to every rank); more: the pointer jumping decides whether the chains end at the root
TIES_PER_CHUNK = 32
TIES_ON_DEVICE = 4096


def ties_end(children, parents):
    """Whether every chain of tie edges (``children[i]`` -> ``parents[i]``, both as near) leaves the tied
    children: no cycle among them (each child walked once)."""
    parent_of = dict(zip(children.tolist(), parents.tolist()))
    leaves = set()  # children whose chain leaves the tied ones
    for start in parent_of:
        path, vertex = set(), start
        while vertex in parent_of and vertex not in leaves:
            if vertex in path:
                return False
            path.add(vertex)
            vertex = parent_of[vertex]
        leaves |= path
    return True


def raise_cycle(kernel, vertex, root):
    """Raise `cycle` for ``vertex`` (nothing when None), whose parent chain does not reach the root."""
    if vertex is not None:
        raise ValidationError(kernel, "cycle",
                              f"the parent chain of vertex {vertex} does not reach the root {root}",
                              vertex=vertex)


def _generic_jumps(xp, parents, root, reached, rounds, index_dtype, depth_dtype):
    """``(ancestor, depth)`` after the pointer jumping, array by array (NumPy or CuPy)."""
    unreached = ~reached
    # An unreached vertex (parent -1) is its own ancestor, -1 + (v + 1), of depth 0.
    ancestor = parents.astype(index_dtype) + unreached * (xp.arange(parents.shape[0], dtype=index_dtype) + 1)
    depth = reached.astype(depth_dtype)
    depth[root] = 0
    pending = reached & (ancestor != root)
    for _ in range(rounds):
        if not bool(pending.any()):
            break
        depth += xp.take(depth, ancestor)
        ancestor = xp.take(ancestor, ancestor)
        pending = reached & (ancestor != root)
    return ancestor, depth


def _numba_jumps(parents, root, reached, rounds, index_dtype, depth_dtype):
    """``(ancestor, depth)`` after the pointer jumping, a fused parallel pass a round (NumPy arrays; the parents
    in the index dtype, so that one compiled pass serves every kernel's output)."""
    current = numpy.empty(parents.shape[0], dtype=index_dtype), numpy.empty(parents.shape[0], dtype=depth_dtype)
    spare = numpy.empty_like(current[0]), numpy.empty_like(current[1])
    pending = _first_jumps(parents.astype(index_dtype, copy=False), root, reached, *current)
    for _ in range(rounds):
        if not pending:
            break
        pending = _jump(*current, *spare, reached, root, PREFETCH_AHEAD)
        current, spare = spare, current
    return current


@numba.njit(parallel=True, cache=True)
def _first_jumps(parents, root, reached, ancestor, depth):
    """The start: a reached vertex's ancestor is its parent, at depth 1 (the root 0), an unreached one is its
    own, at depth 0. Returns how many reached vertices have an ancestor other than the root."""
    pending = 0
    for v in numba.prange(parents.shape[0]):
        if reached[v]:
            ancestor[v] = parents[v]
            depth[v] = v != root
            pending += parents[v] != root
        else:
            ancestor[v] = v
            depth[v] = 0
    return pending


@numba.njit(parallel=True, cache=True)
def _jump(ancestor, depth, next_ancestor, next_depth, reached, root, ahead):
    """One round, into the next arrays: add the ancestor's depth, take the ancestor's ancestor (the entries of
    the one ``ahead`` vertices on asked for). Returns how many reached vertices have an ancestor other than the
    root."""
    pending = 0
    last = ancestor.shape[0] - 1
    for v in numba.prange(ancestor.shape[0]):
        later = ancestor[min(v + ahead, last)]
        prefetch(ancestor, later)
        prefetch(depth, later)
        up = ancestor[v]
        next_depth[v] = depth[v] + depth[up]
        next_ancestor[v] = ancestor[up]
        pending += reached[v] and ancestor[up] != root
    return pending


def raise_reached_unreached(kernel, vg, reached, index):
    """Raise `reached-unreached-edge` for the tuple at `index` of vg.src/vg.dst."""
    u, v = vg.edge(index)
    inside, outside = (u, v) if bool(reached[u]) else (v, u)
    raise ValidationError(kernel, "reached-unreached-edge",
                          f"input edge ({u}, {v}) joins reached vertex {inside} "
                          f"to unreached vertex {outside}",
                          vertex=outside, edge=(u, v))


def first_unconfirmed(xp, reached, confirmed, root):
    """The first reached vertex other than the root that is not confirmed, or None."""
    unconfirmed = reached & ~confirmed
    unconfirmed[root] = False
    return first_true(xp, unconfirmed)
