"""Kernel 1 on the GPU: build the undirected CSR graph from the edge tuples, on the device.

Semantics and result are the CPU builder's (``graph500.kernels.cpu.build``),
array for array: entries u->v and v->u of every tuple with u != v, one of
duplicates with the minimum weight, rows sorted by neighbour.

Algorithm: a bucketed radix sort of 64-bit keys ``row << 32 | neighbour``
(``build.cu``; the sorts are CuPy's radix sort):
1. Count: the blocks of a persistent grid count their entries per bucket (a
   range of rows: equal ranges, or of about equal entries when degree
   ordered) in shared memory, one row of a (block, bucket) table each; bad
   labels and weights are counted.
2. Scatter: bucket-major prefix sums give each block a private cursor in
   each bucket's region, where it writes each entry's key.
3. Sort each bucket (at most about ``BUCKET_ENTRIES`` keys: bounded scratch,
   under 2^31 keys a sort; the largest first, so its scratch serves the rest).
4. Compact: per tile, the unique keys' neighbours at their ranks, and
   ``offsets`` at every row's first entry.
5. Weights: each tuple finds its two entries by binary search and lowers
   their weight bits with an atomic min.
Degree ordering (``degree_ordered``): the vertices sorted by decreasing tuple
count first (ties by label; self-loops out, duplicates in, as on the CPU),
every label then read through ``new_label``; the graph carries ``order`` and
``new_label`` (int32 each). A rank's block (``build_rows``) is ordered within
the block, numbered from its first label, so every vertex keeps its owner;
the ranks allgather their parts of both tables, and a rank keeps the whole
``order`` and its block's part of ``new_label``.

Memory beyond the inputs: the label tables (8 bytes a vertex), keys (16 a
tuple), one bucket's sort scratch, neighbours and offsets, then the weights:
at most ``build_memory_bytes`` (2% above the pool's measured high-water mark
at SCALE 24 and 26 on an H100). The inputs may be in mapped host memory,
read in place over the bus.

Tunables: ``BUCKET_ENTRIES`` (keys per sorted bucket), ``MAX_BUCKETS`` (bound
on the shared-memory histogram), ``degree_ordered``.
"""

import operator

import numpy as np

from graph500.kernels.graph import CSRGraph
from graph500.kernels.gpu import runtime
from graph500.kernels.gpu.runtime import cupy, i32, i64, u64

BUCKET_ENTRIES = 1 << 27
MAX_BUCKETS = 1024
MAX_VERTICES = 2**31  # int32 neighbours, 32-bit rows in the keys
LABEL_TABLE_BYTES = 4 + 4  # per vertex of a degree-ordered graph: order and new_label
SORT_ENTRIES = 1 << 26  # entries of a graph sorted at a time by sort_rows

THREADS = 256  # build.cu's THREADS
SCAN_TILE = 256 * 8  # build.cu's SCAN_TILE
_ALL_ONES = 0xFFFFFFFF
_LABEL_TYPES = {np.dtype(np.int32): "int", np.dtype(np.int64): "long long"}
_TEMPLATES = ("count_degrees", "count_buckets", "scatter_keys", "min_weights", "mark_incident")
_INSTANCES = tuple(f"{template}<{label}>" for template in _TEMPLATES for label in _LABEL_TYPES.values())


def build_csr(src, dst, num_vertices, weights=None, degree_ordered=False):
    """The CSR graph of tuples ``(src[i], dst[i])`` with labels in ``[0, num_vertices)``, on the device.

    ``src``, ``dst``: integer arrays (NumPy or CuPy); ``weights``: float32 per
    tuple, non-negative, or None. Returns a `CSRGraph` of CuPy arrays, under
    the input's labels or, ``degree_ordered``, by decreasing degree (with
    ``order`` and ``new_label``). Raises ValueError for labels out of range,
    bad weights or mismatched lengths.
    """
    num_vertices, src, dst, weight_bits = _checked_inputs(src, dst, num_vertices, weights)
    label = _LABEL_TYPES[src.dtype]
    num_tuples = src.shape[0]
    order = new_label = row_degrees = None
    if degree_ordered:
        order, new_label, row_degrees = _degree_order(src, dst, num_vertices, label)
    bucket_bounds = _bucket_bounds(2 * num_tuples, num_vertices, row_degrees)
    del row_degrees
    if degree_ordered:
        cupy.get_default_memory_pool().free_all_blocks()  # the ordering's scratch: the keys cannot reuse it
    offsets, neighbors, out_weights = _build(src, dst, num_vertices, weight_bits, new_label, bucket_bounds)
    return CSRGraph(num_vertices, offsets, neighbors, out_weights, order, new_label)


def build_rows(src, dst, num_vertices, weights, first, count, degree_ordered=False, comm=None):
    """``(offsets, neighbors, weights, order, new_label)``, on the device, of the rows of vertices ``[first, first +
    count)`` of the graph of tuples ``(src[i], dst[i])`` (a rank's block of a graph split over several GPUs, from
    the tuples with an endpoint there): ``offsets`` local (count + 1, from 0), rows as `build_csr` makes them. The
    other rows' entries are left out as they are counted, so the keys hold only these rows'.

    Without ``degree_ordered`` the labels are the input's and ``order`` and ``new_label`` None. With it, each
    block (of every rank of ``comm``, which calls this collectively) numbers its vertices by decreasing tuple
    count from its first label, so owners do not change: the rows and neighbours come out under those labels,
    ``order`` is the whole graph's table (new -> input label, int32, allgathered) and ``new_label`` the block's
    (input label ``first + i`` -> new label; the whole table, allgathered to rename the neighbours, is freed here).
    """
    num_vertices, src, dst, weight_bits = _checked_inputs(src, dst, num_vertices, weights)
    if not 0 <= first <= first + count <= num_vertices:
        raise ValueError(f"rows [{first}, {first + count}) are not within [0, {num_vertices})")
    order = block_label = new_label = row_degrees = None
    if degree_ordered:
        order, block_label, row_degrees = _degree_order(src, dst, num_vertices, _LABEL_TYPES[src.dtype], first, count)
        order, new_label = comm.allgather(order), comm.allgather(block_label)
    bucket_bounds = _bucket_bounds(2 * src.shape[0], count, row_degrees) + np.uint32(first)
    del row_degrees
    offsets, neighbors, out_weights = _build(src, dst, num_vertices, weight_bits, new_label, bucket_bounds)
    return offsets[first:first + count + 1].copy(), neighbors, out_weights, order, block_label


def _build(src, dst, num_vertices, weight_bits, new_label, bucket_bounds):
    """Steps 1-5 of the module docstring for the rows the buckets hold: ``(offsets, neighbors, weights or
    None)``, offsets of all ``num_vertices`` rows (those outside the buckets empty)."""
    label = _LABEL_TYPES[src.dtype]
    num_tuples = src.shape[0]
    renaming = runtime.pointer_or_null(new_label)
    num_buckets = bucket_bounds.shape[0] - 1
    count_kernel, scatter_kernel = _kernel("count_buckets", label), _kernel("scatter_keys", label)
    grid = min(runtime.persistent_blocks(count_kernel, THREADS, num_tuples),
               runtime.persistent_blocks(scatter_kernel, THREADS))
    shared_bytes = 4 * (2 * num_buckets + 1)

    block_counts = cupy.empty((grid, num_buckets), dtype=np.uint32)
    errors = cupy.zeros(2, dtype=np.uint64)
    count_kernel(
        (grid,), (THREADS,),
        (src, dst, runtime.pointer_or_null(weight_bits), renaming, i64(num_tuples), i64(num_vertices),
         bucket_bounds, i32(num_buckets), block_counts, errors),
        shared_mem=shared_bytes)
    bad_labels, bad_weights = (int(e) for e in errors.get())
    if bad_labels:
        raise ValueError(f"{bad_labels} tuples have a label outside [0, {num_vertices})")
    if bad_weights:
        raise ValueError(f"{bad_weights} weights are negative, -0.0 or NaN")

    bucket_begin, block_cursors = _write_positions(block_counts)
    num_keys = int(bucket_begin[-1])
    keys = cupy.empty(num_keys, dtype=np.uint64)
    scatter_kernel(
        (grid,), (THREADS,),
        (src, dst, renaming, i64(num_tuples), bucket_bounds, i32(num_buckets), block_cursors, keys),
        shared_mem=shared_bytes)
    del block_cursors
    for begin, end in sorted(zip(bucket_begin[:-1].tolist(), bucket_begin[1:].tolist()), key=_largest_first):
        if end - begin > 1:
            keys[begin:end].sort()

    offsets, neighbors = _compact(keys, num_vertices)
    del keys
    out_weights = None if weight_bits is None else _min_weights(src, dst, weight_bits, renaming, label, offsets,
                                                                neighbors)
    return offsets, neighbors, out_weights


def _degree_order(src, dst, num_vertices, label, first=0, count=None):
    """``(order, new_label, row_degrees)`` on the device of the vertices ``[first, first + count)`` (all by
    default): those vertices by decreasing tuple count, ties by label, numbered from ``first`` (int32 tables,
    ``count`` long, of labels; ``new_label[v - first]`` for vertex v), and the counts in that order (uint32)."""
    count = num_vertices if count is None else count
    degrees = cupy.zeros(num_vertices, dtype=np.uint32)
    if src.shape[0]:
        count_kernel = _kernel("count_degrees", label)
        count_kernel((runtime.persistent_blocks(count_kernel, THREADS, src.shape[0]),), (THREADS,),
                     (src, dst, i64(src.shape[0]), i64(num_vertices), degrees))
    sort_keys = cupy.invert(degrees[first:first + count]).astype(np.uint64) << 32
    del degrees
    sort_keys |= cupy.arange(count, dtype=np.uint64)
    sort_keys.sort()
    order = (sort_keys & _ALL_ONES).astype(np.int32)
    row_degrees = cupy.invert((sort_keys >> 32).astype(np.uint32))
    del sort_keys
    new_label = cupy.empty(count, dtype=np.int32)
    new_label[order] = cupy.arange(first, first + count, dtype=np.int32)
    order += np.int32(first)
    return order, new_label, row_degrees


def filled_vertices(graph):
    """The vertices (rows: a rank's block on several GPUs) a search reads, ``[0, filled)``: all of them, or for a
    degree-ordered graph those with edges.

    Degree ordering puts the vertices without edges last (a vertex's tuples other than self-loops decide its
    place, and a vertex with one has an edge), so ``filled`` is where they begin: one binary search over
    the offsets, which CuPy runs with the same compiled kernel at every size (counting with a whole-array
    reduction compiled a kernel of its own for large arrays, a CUB two-pass reduction, on a machine's first
    run, inside the timed construction: 4-5 s at SCALE 26 on an H100).
    """
    if graph.order is None:
        return graph.offsets.shape[0] - 1
    return int(cupy.searchsorted(graph.offsets, graph.offsets[-1:], side="left")[0])


def sort_rows(offsets, neighbors, weights=None, blocks=None, entries_per_sort=SORT_ENTRIES):
    """Sort every row of a CSR graph in place (ties in any order), the ``weights`` (if given) moving with the
    neighbours: by the neighbours' places in the interleaving of ``blocks`` where given (a
    `graph500.partition.VertexBlocks`: every block's k-th vertex before any block's (k + 1)-th), so that the rows
    of a graph degree-ordered within each block (several GPUs) list their neighbours in about decreasing degree,
    whoever owns them, as one GPU's rows do; else by weight.

    A radix sort of 64-bit keys ``row << 32 | rank`` (``row_sort_keys``; CuPy's argsort) over groups of whole
    rows of about ``entries_per_sort`` entries each, which bounds the scratch memory; the entries are gathered in
    that order (``gather_entries``: CuPy's indexing would compile a kernel of its own for these sizes on a
    machine's first run, inside the timed construction) and copied back.
    """
    if weights is None and blocks is None:
        raise ValueError("sort_rows sorts by the blocks' interleaving or by weight: give blocks or weights")
    num_rows, num_entries = offsets.shape[0] - 1, int(neighbors.shape[0])
    block, num_blocks = (blocks.block, blocks.num_ranks) if blocks is not None else (1 << 62, 1)
    group_marks = cupy.arange(0, num_entries, entries_per_sort, dtype=np.int64)
    first_rows = np.unique(np.append((cupy.searchsorted(offsets, group_marks, side="right") - 1).get(), num_rows))
    first_rows = first_rows.tolist()
    first_entries = offsets[cupy.asarray(first_rows)].get().tolist()
    keys_kernel, gather = _kernel("row_sort_keys"), _kernel("gather_entries")
    for first_row, end_row, first, end in zip(first_rows, first_rows[1:], first_entries, first_entries[1:]):
        if end - first < 2:
            continue
        keys = cupy.empty(end - first, dtype=np.uint64)
        rows = end_row - first_row
        keys_kernel((runtime.persistent_blocks(keys_kernel, THREADS, 32 * rows),), (THREADS,),
                    (i64(first_row), i64(rows), offsets, neighbors, runtime.pointer_or_null(weights),
                     i32(blocks is None), i64(block), i32(num_blocks), keys))
        order = cupy.argsort(keys)
        del keys
        sorted_neighbors = cupy.empty(end - first, dtype=neighbors.dtype)
        sorted_weights = cupy.empty(end - first if weights is not None else 0, dtype=np.float32)
        gather((runtime.persistent_blocks(gather, THREADS, end - first),), (THREADS,),
               (i64(end - first), order, i64(first), neighbors, runtime.pointer_or_null(weights), sorted_neighbors,
                sorted_weights))
        for array, sorted_array in ((neighbors, sorted_neighbors), (weights, sorted_weights)):
            if array is not None:
                array[first:end].data.copy_from_device_async(sorted_array.data, sorted_array.nbytes)


def build_memory_bytes(num_tuples, num_vertices, weighted, degree_ordered=False):
    """The most device memory ``build_csr`` holds at once (inputs not counted), in bytes: a bound.

    The keys, the largest bucket's sort scratch (the memory pool keeps it
    for the next sort, and it cannot serve the larger arrays that follow)
    and the neighbours and offsets compacted from the keys; then, the keys
    freed, the neighbours, offsets and weights; with degree ordering, the
    label tables throughout.
    """
    entries = 2 * num_tuples
    keys = 8 * entries
    sort_scratch = 8 * min(entries, BUCKET_ENTRIES)
    compacted = 4 * entries + 8 * (num_vertices + 1) + (LABEL_TABLE_BYTES * num_vertices if degree_ordered else 0)
    return max(keys + sort_scratch + compacted, compacted + (4 * entries if weighted else 0))


def _kernel(name, label=None):
    """A kernel of build.cu: a template instance for input labels of C type ``label``, or a plain kernel."""
    return runtime.kernel("build", name if label is None else f"{name}<{label}>", _INSTANCES)


def _checked_inputs(src, dst, num_vertices, weights):
    """``(num_vertices, src, dst, weight_bits)`` as the kernels take them, or ValueError."""
    num_vertices = operator.index(num_vertices)
    if not 0 <= num_vertices <= MAX_VERTICES:
        raise ValueError(f"num_vertices must be from 0 to {MAX_VERTICES}, got {num_vertices}")
    src = _labels(src)
    dst = _labels(dst)
    if src.ndim != 1 or src.shape != dst.shape:
        raise ValueError(f"src and dst must be 1-D of equal length, got shapes {src.shape} and {dst.shape}")
    if dst.dtype != src.dtype:
        src, dst = src.astype(np.int64), dst.astype(np.int64)
    if weights is None:
        return num_vertices, src, dst, None
    weights = cupy.ascontiguousarray(cupy.asarray(weights, dtype=np.float32))
    if weights.shape != src.shape:
        raise ValueError(f"weights must have one entry per tuple, got shape {weights.shape} for {src.shape[0]} tuples")
    return num_vertices, src, dst, weights.view(np.uint32)


def _labels(values):
    values = cupy.ascontiguousarray(cupy.asarray(values))
    return values if values.dtype in _LABEL_TYPES else values.astype(np.int64)


def _bucket_bounds(num_entries, num_rows, row_degrees=None):
    """The first row of each bucket and the row count (uint32, on the device): about BUCKET_ENTRIES of the
    ``num_entries`` keys a bucket, at most MAX_BUCKETS buckets. With each row's tuple count (``row_degrees``),
    the buckets share the keys equally (a degree-ordered graph's first rows hold most of them); without, the
    rows. The shared path runs even for one bucket, so that a small build (the warm-up's) compiles what a large
    one runs."""
    wanted = min(MAX_BUCKETS, max(1, -(-num_entries // BUCKET_ENTRIES)), max(1, num_rows))
    if row_degrees is None:
        return (cupy.arange(wanted + 1, dtype=np.uint64) * num_rows // wanted).astype(np.uint32)
    entries_through = cupy.cumsum(row_degrees, dtype=np.uint64)  # keys in the rows up to each row
    bounds = cupy.empty(wanted + 1, dtype=np.uint32)
    _kernel("bounds_by_share")((runtime.blocks_for(wanted + 1, THREADS),), (THREADS,),
                               (entries_through, i64(num_rows), i32(wanted), bounds))
    return bounds


def _largest_first(span):
    """Sort key of a bucket's ``(begin, end)``: the largest first, so that every later sort's scratch fits in
    the first one's, which the memory pool keeps and splits, rather than the pool growing by each new size."""
    begin, end = span
    return begin - end


def _write_positions(block_counts):
    """Bucket region starts (host int64, length buckets + 1) and each block's first slot per bucket (device)."""
    counts = block_counts.astype(np.uint64)
    totals = counts.sum(axis=0)
    bucket_begin = np.zeros(totals.shape[0] + 1, dtype=np.int64)
    np.cumsum(totals.get().astype(np.int64), out=bucket_begin[1:])
    cursors = cupy.asarray(bucket_begin[:-1], dtype=np.uint64)[None, :] + cupy.cumsum(counts, axis=0) - counts
    return bucket_begin, cupy.ascontiguousarray(cursors)


def _compact(keys, num_vertices):
    """``(offsets, neighbors)`` from sorted keys: unique entries only."""
    offsets = cupy.zeros(num_vertices + 1, dtype=np.int64)
    num_keys = keys.shape[0]
    if num_keys == 0:
        return offsets, cupy.empty(0, dtype=np.int32)
    tiles = runtime.blocks_for(num_keys, SCAN_TILE)
    tile_counts = cupy.empty(tiles, dtype=np.uint32)
    _kernel("count_unique")((tiles,), (THREADS,), (keys, u64(num_keys), tile_counts))
    tile_inclusive = cupy.cumsum(tile_counts, dtype=np.uint64)
    neighbors = cupy.empty(int(tile_inclusive[-1]), dtype=np.int32)
    _kernel("write_unique")(
        (tiles,), (THREADS,), (keys, u64(num_keys), tile_inclusive, i64(num_vertices), offsets, neighbors))
    return offsets, neighbors


def _min_weights(src, dst, weight_bits, renaming, label, offsets, neighbors):
    out_bits = cupy.full(neighbors.shape[0], _ALL_ONES, dtype=np.uint32)
    num_tuples = src.shape[0]
    if num_tuples:
        min_weights = _kernel("min_weights", label)
        min_weights(
            (runtime.persistent_blocks(min_weights, THREADS, num_tuples),), (THREADS,),
            (src, dst, weight_bits, renaming, i64(num_tuples), offsets, neighbors, out_bits))
    return out_bits.view(np.float32)


def incident_bitmap(src, dst, num_vertices):
    """Device bitmap (uint32 words, bit v of word v // 32): set for each vertex with an incident edge other than
    a self-loop."""
    src, dst = _labels(src), _labels(dst)
    if dst.dtype != src.dtype:
        src, dst = src.astype(np.int64), dst.astype(np.int64)
    incident = cupy.zeros(-(-num_vertices // 32), dtype=np.uint32)
    if src.shape[0]:
        mark = _kernel("mark_incident", _LABEL_TYPES[src.dtype])
        mark(
            (runtime.persistent_blocks(mark, THREADS, src.shape[0]),), (THREADS,),
            (src, dst, i64(src.shape[0]), incident))
    return incident


def incident_vertices(src, dst, num_vertices):
    """Host boolean array: True for each vertex with an incident edge other than a self-loop."""
    incident = incident_bitmap(src, dst, num_vertices)
    return cupy.unpackbits(incident.view(np.uint8), bitorder="little")[:num_vertices].get().view(np.bool_)
