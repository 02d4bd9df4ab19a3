"""The validators' work on CuPy arrays in CUDA C++ (``tuple_passes.cu``): the fused tuple passes and labels' places.

`bfs_pass` and `sssp_pass` are `bfs.edge_pass` and `sssp.edge_pass` for CuPy
arrays (engine "cuda", the default there): one kernel a chunk of
`ValidationGraph.tuple_chunks`, a thread a tuple, each rule's first offender
an atomic minimum of tuple indices and the confirmations plain stores, so the
pass queues every chunk without waiting and reads its answers back once; the
chunks' copies over the bus (the tuples may live in mapped host memory) run
under the kernels. The array-generic pass (engine "generic") makes a dozen
kernels and two host reads a chunk of the same gathers; both report the same
tuples and vertices.

`LabelPlaces` gives each label its place among a set of distinct labels in
O(1) (a bitmap of all N labels and the set bits before each word, N / 8 bytes
each), as `graph500.partition.DistinctLabels` does on NumPy: the distributed
validator's endpoints and parents on GPU ranks. `descend_levels` is a round of
the distributed BFS validator's levels.
"""

import pathlib

import numpy

from ..compiled import cuda_kernel
from ..partition import bitmap_words
from .common import first_unconfirmed

try:
    import cupy
except ImportError:  # the package imports without CuPy; nothing here runs then
    cupy = None

SOURCES = (pathlib.Path(__file__).with_name("tuple_passes.cu"),)
THREADS = 256
NOT_FOUND = 2**64 - 1  # the kernels' first offender where none was found
_C_TYPES = {numpy.dtype(numpy.int32): "int", numpy.dtype(numpy.int64): "long long",
            numpy.dtype(numpy.uint32): "unsigned int"}
_INDEX_TYPES = ("int", "long long")  # indices and parents (`partition.index_dtype_for`)
_LEVEL_TYPES = ("int", "long long")  # the distributed levels' rounds
_LABEL_TYPES = ("int", "unsigned int", "long long")  # tuples' labels as stored, parents
# Every instance a validation may launch, compiled as one module: the passes by index type, the places' by label
# and place type, the bits' by label type, the distributed levels' rounds by index and level type (levels of int32
# or int64 there).
_INSTANCES = tuple([f"bfs_tuple_pass<{index}>" for index in _INDEX_TYPES]
                   + [f"descend_levels<{index}, {level}>" for index in _INDEX_TYPES for level in _LEVEL_TYPES]
                   + [f"sssp_tuple_pass<{index}>" for index in _INDEX_TYPES]
                   + [f"bit_places<{label}, {place}>" for label in _LABEL_TYPES for place in _INDEX_TYPES]
                   + [f"set_bits<{label}>" for label in _LABEL_TYPES])


def _launch(name, dtypes, count, *args):
    """Launch ``name<dtypes...>`` with a thread for each of ``count`` items (none where ``count`` is 0)."""
    if count:
        instance = f"{name}<{', '.join(_C_TYPES[numpy.dtype(dtype)] for dtype in dtypes)}>"
        cuda_kernel(SOURCES, instance, _INSTANCES)((-(-count // THREADS),), (THREADS,), args)


def _found(index):
    """A kernel's first offender as an int, or None."""
    return None if int(index) == NOT_FOUND else int(index)


def bfs_pass(vg, root, reached, levels, parents, confirmed=None):
    """`bfs.edge_pass` on CuPy arrays: ``(first reached-unreached tuple, first level jump, first unconfirmed
    vertex)``, each an index or None; ``parents`` -1 exactly where unreached."""
    if confirmed is None:
        confirmed = cupy.zeros(vg.num_vertices, dtype=cupy.bool_)
    index_dtype = vg.dst.dtype
    records = vertex_records(parents, levels, index_dtype)  # a level as an index: below N
    firsts = cupy.full(2, NOT_FOUND, dtype=cupy.uint64)
    for first, src, dst, _ in vg.tuple_chunks(weighted=False):
        _launch("bfs_tuple_pass", (index_dtype,), src.shape[0], src, dst, numpy.int64(src.shape[0]),
                numpy.int64(first), records, confirmed, firsts)
    reached_unreached, level_jump = (_found(index) for index in firsts.get())
    if reached_unreached is not None:  # the first rule: the rest is not read
        return reached_unreached, None, None
    return reached_unreached, level_jump, first_unconfirmed(cupy, reached, confirmed, root)


def sssp_pass(vg, root, reached, parents, distances, confirmed=None, tie_capacity=0):
    """`sssp.edge_pass` on CuPy arrays: ``(first reached-unreached tuple, first non-minimal one, first
    unconfirmed vertex, ties)``; ties: with a ``tie_capacity``, the vertices a tuple confirmed as near as their
    parents (int64, repeats possible), or None where there were more (and always without one)."""
    if confirmed is None:
        confirmed = cupy.zeros(vg.num_vertices, dtype=cupy.bool_)
    index_dtype = vg.dst.dtype
    records = vertex_records(parents, distances.astype(cupy.float32, copy=False), index_dtype)
    counters = cupy.array([NOT_FOUND, NOT_FOUND, 0], dtype=cupy.uint64)  # the two rules' firsts, the ties
    ties = cupy.empty(max(1, tie_capacity), dtype=cupy.int64)
    for first, src, dst, weights in vg.tuple_chunks():
        _launch("sssp_tuple_pass", (index_dtype,), src.shape[0], src, dst, weights, numpy.int64(src.shape[0]),
                numpy.int64(first), records, confirmed, counters, ties, counters[2:], numpy.int64(tie_capacity))
    first_reached_unreached, first_not_minimal, tie_count = counters.get()
    reached_unreached, not_minimal = _found(first_reached_unreached), _found(first_not_minimal)
    if reached_unreached is not None:
        return reached_unreached, None, None, None
    tied = ties[:int(tie_count)] if tie_capacity and tie_count <= tie_capacity else None
    return reached_unreached, not_minimal, first_unconfirmed(cupy, reached, confirmed, root), tied


def vertex_records(parents, values, index_dtype):
    """Each vertex's parent (as ``index_dtype``, int32 or int64) and value side by side, the layout of
    ``VertexRecord`` in `tuple_passes.cu`: a row of two ``index_dtype`` items, the value (a BFS level as
    ``index_dtype``, an SSSP distance as float32) at the start of the second. A pass reads both of an endpoint at
    random, one memory sector where two arrays take two."""
    records = cupy.empty((parents.shape[0], 2), dtype=index_dtype)
    records[:, 0] = parents
    value_dtype = index_dtype if values.dtype.kind == "i" else values.dtype
    column = numpy.dtype(index_dtype).itemsize // numpy.dtype(value_dtype).itemsize
    records.view(value_dtype).reshape(parents.shape[0], -1)[:, column] = values
    return records


def set_bits(words, labels):
    """Set the bit of each of ``labels`` (CuPy, each in [0, 64 len(words))) in the uint64 ``words``."""
    _launch("set_bits", (labels.dtype,), labels.shape[0], labels, numpy.int64(labels.shape[0]), words)


def descend_levels(parents, levels, level_words, level, next_words):
    """A round of the distributed BFS validator's levels on CuPy arrays (`distributed._levels_from_root`): ``level``
    on the block's vertices still without one whose parent's bit is set in ``level_words`` (all N), their bits into
    ``next_words`` (the block's, overwritten); how many took it (a read). A thread a vertex of the block."""
    next_words.fill(0)
    found = cupy.zeros(1, dtype=cupy.uint64)
    _launch("descend_levels", (parents.dtype, levels.dtype), parents.shape[0], parents,
            numpy.int64(parents.shape[0]), level_words, levels, numpy.int64(level), next_words, found)
    return int(found[0])


class LabelPlaces:
    """The distinct labels of CuPy integer ``arrays`` (each in [0, N)), as `partition.DistinctLabels` on NumPy:
    ``labels`` (sorted, int64), ``words`` (the bitmap, uint64) and ``word_ranks`` (the set bits before each word,
    int64); ``words``: their bitmap already set by the caller (`set_bits`), taken as it is."""

    def __init__(self, arrays, num_vertices, words=None):
        self.words = cupy.zeros(bitmap_words(num_vertices), dtype=cupy.uint64) if words is None else words
        for array in arrays:
            set_bits(self.words, array)
        num_words = numpy.int64(self.words.shape[0])
        counts = cupy.empty(self.words.shape[0], dtype=cupy.int64)
        cuda_kernel(SOURCES, "word_counts", _INSTANCES)((-(-num_words // THREADS),), (THREADS,),
                                                         (self.words, num_words, counts))
        self.word_ranks = cupy.cumsum(counts)
        self.count = int(self.word_ranks[-1])  # a read
        self.word_ranks -= counts
        self.labels = cupy.empty(self.count, dtype=cupy.int64)
        cuda_kernel(SOURCES, "bit_labels", _INSTANCES)((-(-num_words // THREADS),), (THREADS,),
                                                        (self.words, num_words, self.word_ranks, self.labels))

    def places(self, labels, out):
        """Each label's place among the distinct ones, into ``out`` (int32 or int64); -1 stays -1 and a label not
        among them becomes their count."""
        _launch("bit_places", (labels.dtype, out.dtype), labels.shape[0], labels, numpy.int64(labels.shape[0]),
                self.words, self.word_ranks, out.dtype.type(self.count), out)
        return out
