"""Kernel 1 on the CPU: build the undirected CSR graph from the edge tuples.

Semantics: every tuple (u, v) with u != v gives the directed entries u->v and
v->u; self-loops are dropped; of duplicates one is kept, with the minimum
weight; every row is sorted by neighbour. The result is canonical: the GPU's
builder yields the same arrays. ``rename`` (a function of the entries per
row: `reorder`'s degree ordering) renumbers the graph on the way.

Algorithm: a bucket partition (a bucket: ``2^bucket_shift`` consecutive rows),
then a radix sort inside each bucket, parallel with Numba:
1. Count: each chunk of tuples counts its directed entries per bucket in its
   own row of a (chunk, bucket) histogram (no atomics).
2. Scatter: bucket-major prefix sums give each chunk a private cursor in each
   bucket; an entry is a 64-bit key ``neighbour << 32 | weight bits`` (float32
   bit patterns order like the values) and its row within the bucket.
3. Row counts per bucket (the new labels are made from them with ``rename``).
4. Sort each bucket: LSD radix passes over the neighbour's digits, then one
   by row keeping the smallest key of each (row, neighbour) run.
5. Gather: offsets by a prefix sum; each bucket's rows copied into place.

Data structures: ``counts[chunk, bucket]`` (int64); ``keys`` (uint64) and
``rows`` (uint16 or uint32) per directed entry, grouped by bucket;
``row_entries`` (int64 a row); ``new_label`` (the neighbour dtype); per task,
a scratch copy of its bucket. Labels come as int32 or int64 (a rank's
received tuples stay int32). Memory beyond the inputs: at most
``build_memory_bytes`` (48 bytes a tuple with 32-bit rows plus 24 a vertex;
typically 32 weighted). Weighted graphs need ``num_vertices <= 2^32``.

Tunables: ``BUCKET_ENTRIES`` (2^17 directed entries a bucket: fewer, larger
buckets speed step 2, smaller ones keep step 4 in cache; best at SCALE 20);
``MAX_BUCKETS`` (bounds the histogram and step 2's write streams);
``CHUNKS_PER_THREAD`` (steps 1 and 2); ``MAX_RADIX_BITS`` (2^11 bins stay in
L1). Memory per step, Numba notes: docs/kernels/cpu-build.md.
"""

import operator

import numba
import numpy as np

from graph500.compiled import prefetch
from graph500.kernels.cpu.frontier import ONE, equal_share
from graph500.kernels.graph import CSRGraph, neighbor_dtype

BUCKET_ENTRIES = 1 << 17
MAX_BUCKETS = 1 << 12
CHUNKS_PER_THREAD = 4
MAX_RADIX_BITS = 11

WEIGHTED_MAX_VERTICES = 2**32
_WEIGHT_KEY_SHIFT = np.uint64(32)
_NO_WEIGHT_KEY_SHIFT = np.uint64(0)
_WEIGHT_MASK = np.uint64(0xFFFFFFFF)
_INFINITY_BITS = np.uint64(0x7F800000)  # larger patterns: NaN or a sign bit (negative, -0.0)


def build_csr(src, dst, num_vertices, weights=None, rename=None):
    """Build the undirected CSR graph of the tuples ``(src[i], dst[i])`` with labels in ``[0, num_vertices)``.

    ``weights``: float32 per tuple, non-negative (+0.0 to +inf), or None.
    ``rename``: None, or a function of the tuple degrees (int64 per vertex:
    the tuples at it, self-loops left out, duplicates counted) that returns a
    permutation of the labels, ``new_label`` (int64): the graph is then built
    with vertex v renamed ``new_label[v]`` (its rows sorted by new label), at
    almost no extra cost.
    Raises ValueError for labels out of range, bad weights or mismatched lengths.
    """
    offsets, neighbors, row_weights = build_rows(src, dst, num_vertices, weights, rename=rename)
    return CSRGraph(num_vertices, offsets, neighbors, row_weights)


def build_rows(src, dst, num_vertices, weights=None, first_row=0, num_rows=None, rename=None):
    """``(offsets, neighbors, weights)`` of the rows ``[first_row, first_row + num_rows)`` of `build_csr`'s graph.

    The rows of a block of vertices (one rank's part of a partitioned graph):
    every tuple gives the entries of its endpoints that fall in the block,
    rows are numbered from ``first_row`` (``offsets`` has ``num_rows + 1``
    entries), neighbours keep their labels in ``[0, num_vertices)``. Tuples
    with neither endpoint in the block are skipped. The defaults build every
    row. ``rename`` renames every vertex as in `build_csr` (whole graphs only).
    """
    num_vertices, src, dst, weight_bits = _checked_inputs(src, dst, num_vertices, weights)
    num_rows = num_vertices - first_row if num_rows is None else int(num_rows)
    if not 0 <= first_row <= first_row + num_rows <= num_vertices:
        raise ValueError(f"rows [{first_row}, {first_row + num_rows}) are not within [0, {num_vertices})")
    if rename is not None and num_rows != num_vertices:
        raise ValueError("rename renames whole graphs only")
    weighted = weights is not None
    key_shift = _WEIGHT_KEY_SHIFT if weighted else _NO_WEIGHT_KEY_SHIFT
    bucket_shift = _bucket_shift(src.shape[0], num_rows)
    keys, rows, bucket_begin = _partition(src, dst, weight_bits, weighted, num_vertices, first_row, num_rows,
                                          bucket_shift, key_shift)
    del src, dst, weights, weight_bits  # freed here where the caller keeps no reference (a rank's received tuples)
    row_entries = np.empty(num_rows, dtype=np.int64)
    _count_rows(rows, bucket_begin, bucket_shift, row_entries)
    new_label = np.empty(0, dtype=neighbor_dtype(num_vertices))
    if rename is not None:
        renamed = np.asarray(rename(row_entries))
        if renamed.shape != (num_vertices,):
            raise ValueError(f"rename must give one label per vertex, got shape {renamed.shape}")
        new_label = renamed.astype(new_label.dtype)

    offsets = np.zeros(num_rows + 1, dtype=np.int64)
    digit_bits, num_digits = _neighbor_digits(num_vertices)
    _sort_buckets(keys, rows, bucket_begin, bucket_shift, key_shift, digit_bits, num_digits, row_entries, offsets,
                  new_label)
    del rows  # before the result is allocated (see the memory note)
    np.cumsum(offsets, out=offsets)

    neighbors = np.empty(offsets[-1], dtype=neighbor_dtype(num_vertices))
    result_weight_bits = np.empty(offsets[-1] if weighted else 0, dtype=np.uint32)
    _gather(keys, bucket_begin, row_entries, offsets, bucket_shift, key_shift, weighted, new_label, neighbors,
            result_weight_bits)
    return offsets, neighbors, result_weight_bits.view(np.float32) if weighted else None


def build_memory_bytes(num_tuples, num_vertices, weighted, bound=True, freed_inputs=0):
    """The most memory ``build_csr`` allocates (inputs not counted), in bytes: a guaranteed bound, or (``bound``
    False) what it takes when the buckets sorted at once are one a thread, as on the Kronecker graphs (the
    memory plan's figure: 33 bytes a tuple measured at SCALE 22 on 2 threads, 32 planned). ``freed_inputs``:
    bytes of inputs that `build_rows` frees once they are its keys (a rank's received tuples), counted while they
    are sorted only."""
    label_bytes = neighbor_dtype(num_vertices).itemsize
    entries = 2 * num_tuples
    per_vertex = (16 + label_bytes) * (num_vertices + 1)  # offsets, the row counts and the new labels
    scratch = entries if bound else min(entries, numba.config.NUMBA_NUM_THREADS * 2 * BUCKET_ENTRIES)
    sorting = (entries + scratch) * (8 + 4)  # keys and rows, and the scratch of the buckets being sorted
    gathering = entries * (8 + label_bytes + (4 if weighted else 0))  # keys, neighbors, weights
    return max(freed_inputs + sorting, gathering) + per_vertex


def _checked_inputs(src, dst, num_vertices, weights):
    """``(num_vertices, src, dst, weight_bits)`` as the kernels take them, or ValueError."""
    num_vertices = operator.index(num_vertices)
    if num_vertices < 0:
        raise ValueError(f"num_vertices must be >= 0, got {num_vertices}")
    # int32 or uint32 labels as they come (a rank's received tuples): the kernels read any type, and an int64 copy
    # of each would be 16 bytes more a tuple at the builder's peak
    src_dtype = np.asarray(src).dtype
    label_dtype = src_dtype if src_dtype == np.asarray(dst).dtype and src_dtype in (np.int32, np.uint32) else np.int64
    src = np.ascontiguousarray(src, dtype=label_dtype)
    dst = np.ascontiguousarray(dst, dtype=label_dtype)
    if src.ndim != 1 or src.shape != dst.shape:
        raise ValueError(f"src and dst must be 1-D of equal length, got shapes {src.shape} and {dst.shape}")
    if weights is None:
        return num_vertices, src, dst, np.empty(0, dtype=np.uint32)
    weights = np.ascontiguousarray(weights, dtype=np.float32)
    if weights.shape != src.shape:
        raise ValueError(f"weights must have one entry per tuple, got shape {weights.shape} for {src.shape[0]} tuples")
    if num_vertices > WEIGHTED_MAX_VERTICES:
        raise ValueError(f"weighted graphs are limited to 2^32 vertices, got {num_vertices}")
    return num_vertices, src, dst, weights.view(np.uint32)


def _partition(src, dst, weight_bits, weighted, num_vertices, first_row, num_rows, bucket_shift, key_shift):
    """Steps 1 and 2: ``(keys, rows, bucket_begin)``, every directed entry of the rows in its row's bucket region
    (rows numbered from ``first_row``)."""
    num_buckets = max(1, (num_rows + (1 << bucket_shift) - 1) >> bucket_shift)
    num_chunks = max(1, min(src.shape[0], CHUNKS_PER_THREAD * numba.get_num_threads()))
    counts = np.zeros((num_chunks, num_buckets), dtype=np.int64)
    out_of_range = np.zeros(num_chunks, dtype=np.int64)
    _count_entries(src, dst, num_vertices, first_row, num_rows, bucket_shift, counts, out_of_range)
    if out_of_range.any():
        raise ValueError(f"{out_of_range.sum()} tuples have a label outside [0, {num_vertices})")

    bucket_begin, cursors = write_positions(counts)
    keys = _scratch(bucket_begin[-1], np.dtype(np.uint64))
    rows = _scratch(bucket_begin[-1], _local_row_dtype(bucket_shift))
    bad_weights = np.zeros(num_chunks, dtype=np.int64)
    _scatter_entries(src, dst, weight_bits, weighted, first_row, num_rows, bucket_shift, key_shift, cursors, keys, rows,
                     bad_weights)
    if bad_weights.any():
        raise ValueError(f"{bad_weights.sum()} weights are negative, -0.0 or NaN")
    return keys, rows, bucket_begin


def _bucket_shift(num_tuples, num_rows):
    """log2 of the bucket width: about BUCKET_ENTRIES entries a bucket, at most MAX_BUCKETS buckets."""
    entries_per_row = max(1.0, 2 * num_tuples / max(1, num_rows))
    width = max(BUCKET_ENTRIES / entries_per_row, num_rows / MAX_BUCKETS, 1.0)
    return int(np.ceil(np.log2(width)))


def _local_row_dtype(bucket_shift):
    """The dtype of a row counted from its bucket's first row."""
    return np.dtype(np.uint16) if bucket_shift <= 16 else np.dtype(np.uint32)


def _neighbor_digits(num_vertices):
    """``(bits per digit, number of digits)`` of the radix passes over neighbour labels."""
    label_bits = max(1, (num_vertices - 1).bit_length())
    num_digits = -(-label_bits // MAX_RADIX_BITS)
    return -(-label_bits // num_digits), num_digits


def write_positions(counts):
    """Region starts (length regions + 1) and each chunk's first slot in each region, from
    ``counts[chunk, region]``: chunks write their items of a region one after the other, in chunk order (the
    buckets here; the destination ranks of `graph500.distributed.partition_graph`)."""
    totals = counts.sum(axis=0)
    bucket_begin = np.zeros(totals.shape[0] + 1, dtype=np.int64)
    np.cumsum(totals, out=bucket_begin[1:])
    cursors = bucket_begin[:-1] + np.cumsum(counts, axis=0) - counts
    return bucket_begin, cursors


@numba.njit(cache=True)
def _scratch(length, dtype):
    """An uninitialised array from Numba's allocator (malloc), for the entries of steps 2 to 4.

    NumPy asks the OS for transparent huge pages for every array of 4 MiB or
    more; the first touch of fresh huge pages took 0.25-0.37 s per 256 MiB on
    the development machine (a virtual machine), of 4 KiB pages 0.06-0.07 s.
    These arrays are read and written in streams and bucket by bucket, so
    small pages cost them nothing else; the result's arrays, read at random by
    the kernels, stay NumPy's (the kernels were 3-5% slower on small pages).
    """
    return np.empty(length, dtype)


@numba.njit(inline="always", cache=True)
def _renamed(vertex, new_label):
    """The label the graph is built with: ``new_label[vertex]``, or the vertex itself without renaming."""
    return new_label[vertex] if new_label.shape[0] > 0 else vertex


@numba.njit(inline="always", cache=True)
def _in_rows(vertex, first_row, num_rows):
    return first_row <= vertex < first_row + num_rows


@numba.njit(parallel=True, cache=True)
def _count_entries(src, dst, num_vertices, first_row, num_rows, bucket_shift, counts, out_of_range):
    """Step 1: ``counts[chunk, bucket]`` += directed entries of the chunk whose row is in the bucket."""
    num_chunks = counts.shape[0]
    for chunk in numba.prange(num_chunks):
        chunk_counts = counts[chunk]
        begin, end = equal_share(chunk, num_chunks, src.shape[0])
        for i in range(np.uint64(begin), np.uint64(end)):
            u = src[i]
            v = dst[i]
            if u < 0 or v < 0 or u >= num_vertices or v >= num_vertices:
                out_of_range[chunk] += 1
            elif u != v:
                if _in_rows(u, first_row, num_rows):
                    chunk_counts[np.uint64((u - first_row) >> bucket_shift)] += 1
                if _in_rows(v, first_row, num_rows):
                    chunk_counts[np.uint64((v - first_row) >> bucket_shift)] += 1


@numba.njit(inline="always", cache=True)
def _place(row, key, bucket_shift, cursor, keys, rows):
    """Write one entry (``row`` counted from the first row built) at its bucket's cursor and advance the cursor."""
    bucket = row >> bucket_shift
    slot = np.uint64(cursor[np.uint64(bucket)])
    cursor[np.uint64(bucket)] = slot + ONE
    keys[slot] = key
    rows[slot] = row - (bucket << bucket_shift)


@numba.njit(parallel=True, cache=True)
def _scatter_entries(src, dst, weight_bits, weighted, first_row, num_rows, bucket_shift, key_shift, cursors, keys, rows,
                     bad_weights):
    """Step 2: write every directed entry as (key, row) at its chunk's cursor in its row's bucket."""
    num_chunks = cursors.shape[0]
    for chunk in numba.prange(num_chunks):
        cursor = cursors[chunk]
        begin, end = equal_share(chunk, num_chunks, src.shape[0])
        for i in range(np.uint64(begin), np.uint64(end)):
            u = src[i]
            v = dst[i]
            if u == v:
                continue
            bits = np.uint64(weight_bits[i]) if weighted else np.uint64(0)
            if bits > _INFINITY_BITS:
                bad_weights[chunk] += 1
            if _in_rows(u, first_row, num_rows):
                _place(u - first_row, (np.uint64(v) << key_shift) | bits, bucket_shift, cursor, keys, rows)
            if _in_rows(v, first_row, num_rows):
                _place(v - first_row, (np.uint64(u) << key_shift) | bits, bucket_shift, cursor, keys, rows)


@numba.njit(parallel=True, cache=True)
def _count_rows(rows, bucket_begin, bucket_shift, row_entries):
    """Step 3: ``row_entries[row]``, the entries of every row, parallel over buckets."""
    num_rows = row_entries.shape[0]
    for bucket in numba.prange(bucket_begin.shape[0] - 1):
        first_row = bucket << bucket_shift
        row_entries[first_row:min(first_row + (1 << bucket_shift), num_rows)] = 0
        for j in range(np.uint64(bucket_begin[bucket]), np.uint64(bucket_begin[bucket + 1])):
            row_entries[np.uint64(first_row + rows[j])] += 1


@numba.njit(cache=True)
def _rename_neighbors(keys, key_shift, new_label):
    """Rename every key's neighbour, in place (a loop of its own: its random lookups overlap, each asked for 32
    keys ahead)."""
    low_bits = (ONE << key_shift) - ONE
    last = np.uint64(keys.shape[0]) - ONE
    for j in range(np.uint64(keys.shape[0])):
        prefetch(new_label, keys[min(j + np.uint64(32), last)] >> key_shift)
        key = keys[j]
        keys[j] = (np.uint64(new_label[key >> key_shift]) << key_shift) | (key & low_bits)


@numba.njit(cache=True)
def _digit_starts(keys, key_shift, digit_bits, num_digits):
    """``starts[digit, d]``: the first slot of the keys whose neighbour has value d in that digit, for every digit
    at once (one pass over the keys)."""
    digit_mask = np.uint64((1 << digit_bits) - 1)
    starts = np.zeros((num_digits, (1 << digit_bits) + 1), dtype=np.int64)
    for j in range(np.uint64(keys.shape[0])):
        neighbor = keys[j] >> key_shift
        for digit in range(num_digits):
            starts[np.uint64(digit), ((neighbor >> np.uint64(digit * digit_bits)) & digit_mask) + ONE] += 1
    for digit in range(num_digits):
        for d in range(starts.shape[1] - 1):
            starts[digit, d + 1] += starts[digit, d]
    return starts


@numba.njit(cache=True)
def _neighbor_pass(keys, rows, out_keys, out_rows, digit_shift, digit_mask, next_slot):
    """One stable counting-sort pass by one digit of the neighbour, keys and rows (``next_slot``: the bins'
    starts, advanced)."""
    for j in range(np.uint64(keys.shape[0])):
        key = keys[j]
        d = (key >> digit_shift) & digit_mask
        slot = np.uint64(next_slot[d])
        next_slot[d] = slot + ONE
        out_keys[slot] = key
        out_rows[slot] = rows[j]


@numba.njit(cache=True)
def _row_pass(keys, rows, out, row_ends, key_shift):
    """The last, stable counting-sort pass, by local row, keeping one key per (row, neighbour): the smallest (the
    minimum weight).

    Row r's entries end at ``row_ends[r]``; read backwards, they arrive by
    decreasing neighbour and fill the row from its end. Returns each row's
    first kept slot: row r keeps ``out[row_starts[r]:row_ends[r]]``.
    """
    row_starts = row_ends.copy()
    for j in range(np.uint64(keys.shape[0]), np.uint64(0), np.int64(-1)):
        key = keys[j - ONE]
        r = rows[j - ONE]
        slot = np.uint64(row_starts[r])
        if slot < row_ends[r] and (out[slot] >> key_shift) == (key >> key_shift):
            out[slot] = min(out[slot], key)
        else:
            row_starts[r] = slot - ONE
            out[slot - ONE] = key
    return row_starts


@numba.njit(cache=True)
def _sort_bucket(region, rows, row_entries, key_shift, digit_bits, num_digits, new_label):
    """Sort one bucket by (row, neighbour) and deduplicate it in place; returns ``(row_starts, row_ends)``: row r
    keeps ``region[row_starts[r]:row_ends[r]]``.

    LSD radix sort: a non-empty ``new_label`` renames the neighbours first;
    ``num_digits`` passes over the neighbour's digits, then the pass by row
    (``row_entries``: the bucket's rows' entries), alternating between the
    bucket's arrays and one scratch pair (with an even number of digits the
    pass by row writes the scratch, copied back whole).
    """
    if new_label.shape[0] > 0:
        _rename_neighbors(region, key_shift, new_label)
    next_slot = _digit_starts(region, key_shift, digit_bits, num_digits)
    digit_mask = np.uint64((1 << digit_bits) - 1)
    keys, other_keys = region, np.empty_like(region)
    rows, other_rows = rows, np.empty_like(rows)
    for digit in range(num_digits):
        _neighbor_pass(keys, rows, other_keys, other_rows, key_shift + np.uint64(digit * digit_bits), digit_mask,
                       next_slot[digit])
        keys, other_keys = other_keys, keys
        rows, other_rows = other_rows, rows
    row_ends = np.cumsum(row_entries)
    row_starts = _row_pass(keys, rows, other_keys, row_ends, key_shift)
    if num_digits % 2 == 0:  # the pass by row wrote the scratch
        region[:] = other_keys
    return row_starts, row_ends


@numba.njit(parallel=True, cache=True)
def _sort_buckets(keys, rows, bucket_begin, bucket_shift, key_shift, digit_bits, num_digits, row_entries, degrees,
                  new_label):
    """Step 4, parallel over buckets; ``degrees[v + 1]``: the kept entries of row v (new label)."""
    num_vertices = degrees.shape[0] - 1
    for bucket in numba.prange(bucket_begin.shape[0] - 1):
        first_vertex = bucket << bucket_shift
        end_vertex = min(first_vertex + (1 << bucket_shift), num_vertices)
        begin = bucket_begin[bucket]
        end = bucket_begin[bucket + 1]
        row_starts, row_ends = _sort_bucket(keys[begin:end], rows[begin:end], row_entries[first_vertex:end_vertex],
                                            key_shift, digit_bits, num_digits, new_label)
        for r in range(end_vertex - first_vertex):
            degrees[_renamed(first_vertex + r, new_label) + 1] = row_ends[r] - row_starts[r]


@numba.njit(parallel=True, cache=True)
def _gather(keys, bucket_begin, row_entries, offsets, bucket_shift, key_shift, weighted, new_label, neighbors,
            weight_bits):
    """Step 5: copy each row's kept keys, the last of its entries' slots, to its place in the result, split into
    neighbour and weight."""
    num_vertices = offsets.shape[0] - 1
    for bucket in numba.prange(bucket_begin.shape[0] - 1):
        first_vertex = bucket << bucket_shift
        row_end = bucket_begin[bucket]
        for vertex in range(first_vertex, min(first_vertex + (1 << bucket_shift), num_vertices)):
            row_end += row_entries[vertex]
            row = _renamed(vertex, new_label)
            target = offsets[row]
            kept = offsets[row + 1] - target
            source = np.uint64(row_end - kept)
            for j in range(np.uint64(kept)):
                key = keys[source + j]
                neighbors[np.uint64(target) + j] = key >> key_shift
                if weighted:
                    weight_bits[np.uint64(target) + j] = key & _WEIGHT_MASK
