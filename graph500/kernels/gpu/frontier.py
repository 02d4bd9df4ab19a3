"""Prefix sums over frontiers, for the edge-parallel expansions of the BFS and the SSSP.

An expansion numbers a frontier queue's edges in queue order; it needs the
inclusive prefix sums of the queued vertices' edge counts (``edge_end``) and,
per tile of ``EXPAND_TILE`` edges, the queue index of the vertex holding the
tile's first edge (``tile_first``: each vertex marks the tile starts in its
edge range, so no block searches for its tile). A bitmap's conversion into a
sorted queue needs the inclusive prefix sums of its words' populations (each
word's last rank).

Algorithm (``frontier.cu``): reduce-then-scan in three launches. Each block
scans a tile of ``SCAN_TILE`` counts (eight consecutive items a thread, then a
block-wide scan of the thread totals) and writes the tile's total; when there
is more than one tile, one block scans the tile totals and a last launch adds
each tile's predecessors' total. Small frontiers (one tile) take one launch:
the point of this module over ``cupy.cumsum`` is the host time per level,
which dominates the small levels of a search.

Data structures: ``sums`` (uint64, one per item), ``tile_totals`` (uint64,
one per scan tile) and ``tile_first`` (int32, one per expansion tile),
allocated once for the largest sizes.
"""

import numpy as np

from graph500.kernels.gpu import runtime
from graph500.kernels.gpu.runtime import cupy, i32

SCAN_TILE = 256 * 8  # frontier.cu's SCAN_TILE
EXPAND_TILE = 256 * 4  # common.cuh's EXPAND_TILE
SMALL_FRONTIER = 256 * 8  # common.cuh's SMALL_FRONTIER: a frontier each block stages whole
THREADS = 256


class PrefixSums:
    """Prefix sums of up to ``capacity`` counts totalling up to ``max_edges``, in reused device buffers."""

    def __init__(self, capacity, max_edges):
        self.sums = cupy.empty(max(1, capacity), dtype=np.uint64)
        self._tile_totals = cupy.empty(runtime.blocks_for(capacity, SCAN_TILE), dtype=np.uint64)
        self._tile_first = cupy.zeros(runtime.blocks_for(max_edges, EXPAND_TILE) + 1, dtype=np.int32)

    def of_edge_counts(self, queue, size, row_begin, row_end, edges):
        """``(edge_end, tile_first)`` of the queue's ``edges`` edges ``row_end[v] - row_begin[v]``.

        The first tile always starts at the first vertex (``tile_first[0] == 0``), so a
        frontier of one tile needs no marking.
        """
        edge_end = self._scan("scan_frontier_tiles", (queue, i32(size), row_begin, row_end), size)
        if edges > EXPAND_TILE:
            runtime.kernel("frontier", "mark_tile_starts")((runtime.blocks_for(size, THREADS),), (THREADS,),
                                                           (edge_end, i32(size), self._tile_first))
        return edge_end, self._tile_first

    def of_populations(self, bitmap, num_words):
        """``sums[w]``: the set bits of ``bitmap[0..w]``."""
        return self._scan("scan_bitmap_tiles", (bitmap, i32(num_words)), num_words)

    def _scan(self, tile_kernel, inputs, size):
        tiles = runtime.blocks_for(size, SCAN_TILE)
        runtime.kernel("frontier", tile_kernel)((tiles,), (THREADS,), inputs + (self.sums, self._tile_totals))
        if tiles > 1:
            runtime.kernel("frontier", "scan_tile_totals")((1,), (THREADS,), (self._tile_totals, i32(tiles)))
            runtime.kernel("frontier", "add_tile_offsets")(
                (runtime.blocks_for(size - SCAN_TILE, THREADS),), (THREADS,),
                (self.sums, i32(size), self._tile_totals))
        return self.sums
