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
"""

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


def tuple_range(num_tuples, rank, num_ranks):
    """``(start, stop)``: the edge tuples rank ``rank`` generates and validates."""
    return rank * num_tuples // num_ranks, (rank + 1) * num_tuples // num_ranks
