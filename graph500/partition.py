"""Who owns what in a run of P ranks: vertices in 1D blocks, edge tuples in generation ranges.

Vertices: rank r owns the labels ``[r * block, min((r + 1) * block, N))``,
``block`` being ``ceil(N / P)`` rounded up to a multiple of 64, so that every
rank's range starts at a bitmap word boundary (a rank's part of a frontier
bitmap is whole uint64 words) and ``owner(v) = v // block``. The last ranks
may own fewer vertices; a partition where some rank would own none (P larger
than N / 64 for N a power of two) is refused.

Edge tuples: rank r generates tuples ``[r * M // P, (r + 1) * M // P)`` of
the reference's list of M tuples (the generator makes any range exactly), and
is the rank that checks them in validation.

With P = 1 the single rank owns every vertex and every tuple.

`DistinctLabels`: the distinct labels a rank's arrays name (its tuples'
endpoints, its rows' neighbours), as a bitmap of all N labels with each
64-bit word's count of the set bits before it (N / 8 bytes each): a label's
place among them in O(1), and their values asked of their owners, instead
of a table of all N vertices on every rank.
"""

import numba
import numpy as np

from graph500.errors import Graph500Error

WORD_BITS = 64


class VertexBlocks:
    """The 1D block partition of ``num_vertices`` labels over ``num_ranks`` ranks."""

    def __init__(self, num_vertices, num_ranks):
        num_vertices, num_ranks = int(num_vertices), int(num_ranks)
        if num_ranks < 1:
            raise Graph500Error(f"the number of ranks must be at least 1, got {num_ranks}")
        words = -(-num_vertices // WORD_BITS)
        self.num_vertices = num_vertices
        self.num_ranks = num_ranks
        self.block = -(-words // num_ranks) * WORD_BITS
        if num_ranks > 1 and (num_ranks - 1) * self.block >= num_vertices:
            raise Graph500Error(
                f"{num_ranks} ranks cannot share {num_vertices} vertices in blocks of whole 64-vertex words "
                f"without leaving a rank empty: use a number of ranks that divides {words} (a power of two "
                f"up to {words}), or a larger SCALE")

    def begin(self, rank):
        return min(rank * self.block, self.num_vertices)

    def end(self, rank):
        return min((rank + 1) * self.block, self.num_vertices)

    def count(self, rank):
        return self.end(rank) - self.begin(rank)

    def owner(self, vertices):
        """The owning rank of each label (NumPy array or int)."""
        return vertices // self.block

    def counts(self):
        """Vertices owned by each rank, int64 array of length P."""
        return np.array([self.count(rank) for rank in range(self.num_ranks)], dtype=np.int64)

    def counts_of(self, labels, xp=np):
        """How many of ``labels`` (sorted, or grouped by owner in rank order; an array of module ``xp``, NumPy or
        CuPy) each rank owns: NumPy int64, length P."""
        # the blocks' inner bounds in the labels' dtype (another would copy the labels to compare them)
        bounds = xp.asarray([self.begin(rank) for rank in range(1, self.num_ranks)], dtype=labels.dtype)
        positions = xp.searchsorted(labels, bounds)
        positions = positions if xp is np else positions.get()
        return np.diff(np.concatenate(([0], positions, [labels.shape[0]]))).astype(np.int64)


def tuple_range(num_tuples, rank, num_ranks):
    """``(start, stop)``: the edge tuples rank ``rank`` generates and validates."""
    return rank * num_tuples // num_ranks, (rank + 1) * num_tuples // num_ranks


def index_dtype_for(count):
    """The dtype of labels or indices below ``count`` that may be -1 or differenced (a graph's neighbours, parents,
    offsets): int32 while ``count <= 2^31``, else int64."""
    return np.dtype(np.int32) if count <= 1 << 31 else np.dtype(np.int64)


def stored_label_dtype(num_vertices):
    """The dtype of labels held but never negative nor subtracted (a rank's slice of the tuples, input labels a
    map returns, distinct labels): uint32 while ``num_vertices <= 2^32`` (SCALE 32 included), else int64."""
    return np.dtype(np.uint32) if num_vertices <= 1 << 32 else np.dtype(np.int64)


class DistinctLabels:
    """The distinct labels of NumPy integer ``arrays`` (each in [0, N)): ``labels`` (sorted), ``words`` (the
    bitmap, uint64) and ``word_ranks`` (the set bits before each word); labels and ranks uint32 up to 2^32
    vertices (`stored_label_dtype`), else int64. ``words``: their bitmap already set by the caller (`bitmap_words`
    long, taken as it is), for labels it picks without an array of them."""

    def __init__(self, arrays, num_vertices, words=None):
        self.words = np.zeros(bitmap_words(num_vertices), dtype=np.uint64) if words is None else words
        for array in arrays:
            set_bits(self.words, array)
        label_dtype = stored_label_dtype(num_vertices)
        self.word_ranks = _word_ranks(self.words, np.empty(self.words.shape[0], dtype=label_dtype))
        count = int(self.word_ranks[-1]) + int(popcount(self.words[-1]))
        self.labels = _labels_of(self.words, self.word_ranks, np.empty(count, dtype=label_dtype))

    def places(self, labels, out):
        """Each label's place among the distinct ones, into ``out``; -1 stays -1 and a label not among them
        becomes ``len(self.labels)``."""
        _places(labels, self.words, self.word_ranks, out)
        return out

    def values_from_owners(self, comm, blocks, owned_values):
        """The owners' ``owned_values`` (each rank's block's, one per vertex) of the distinct labels, in label
        order (collective: two alltoallv)."""
        counts = blocks.counts_of(self.labels)
        (asked,), asked_counts = comm.alltoallv((self.labels,), counts)
        (values,), _ = comm.alltoallv((owned_values[asked - blocks.begin(comm.rank)],), asked_counts, counts)
        return values


def bitmap_words(num_vertices):
    """The uint64 words of a bitmap of ``num_vertices`` labels (at least one)."""
    return max(1, -(-int(num_vertices) // WORD_BITS))


@numba.njit(cache=True)
def set_bits(words, labels):
    """Set the bit of each label in the uint64 ``words`` (serial: neighbouring labels share words; the kernels'
    bitmaps set theirs with it too)."""
    for label in labels:
        words[label >> 6] |= np.uint64(1) << np.uint64(label & 63)


@numba.njit(inline="always", cache=True)
def popcount(word):
    """Set bits of a uint64 (the SWAR count; the kernels' bitmaps count with it too)."""
    word = word - ((word >> np.uint64(1)) & np.uint64(0x5555555555555555))
    word = (word & np.uint64(0x3333333333333333)) + ((word >> np.uint64(2)) & np.uint64(0x3333333333333333))
    word = (word + (word >> np.uint64(4))) & np.uint64(0x0F0F0F0F0F0F0F0F)
    return np.int64((word * np.uint64(0x0101010101010101)) >> np.uint64(56))


@numba.njit(cache=True)
def _word_ranks(words, ranks):
    total = 0
    for w in range(words.shape[0]):
        ranks[w] = total
        total += popcount(words[w])
    return ranks


@numba.njit(cache=True)
def _labels_of(words, word_ranks, labels):
    """The set bits' labels, written into ``labels`` (as many as there are set bits)."""
    for w in range(words.shape[0]):
        word, at = words[w], word_ranks[w]
        while word:
            low = word & (~word + np.uint64(1))
            labels[at] = 64 * w + popcount(low - np.uint64(1))
            word ^= low
            at += 1
    return labels


@numba.njit(inline="always", cache=True)
def place(label, words, word_ranks, elsewhere):
    """``label``'s place among the set bits of ``words`` (``elsewhere`` where its bit is clear or past them)."""
    word = label >> 6
    if word >= words.shape[0] or not (words[word] >> np.uint64(label & 63)) & np.uint64(1):
        return elsewhere
    return word_ranks[word] + popcount(words[word] & ((np.uint64(1) << np.uint64(label & 63)) - np.uint64(1)))


@numba.njit(parallel=True, cache=True)
def _places(labels, words, word_ranks, out):
    elsewhere = word_ranks[-1] + popcount(words[-1])
    for i in numba.prange(labels.shape[0]):
        out[i] = -1 if labels[i] < 0 else place(labels[i], words, word_ranks, elsewhere)
