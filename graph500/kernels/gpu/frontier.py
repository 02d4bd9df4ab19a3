"""Prefix sums over frontiers, for the edge-parallel expansions of the BFS and the SSSP.

An expansion numbers a frontier queue's edges in queue order; it needs the
inclusive prefix sums of the queued vertices' edge counts (``edge_end``). A
bitmap's conversion into a sorted queue needs the inclusive prefix sums of its
words' populations (each word's last rank).

Algorithm (``frontier.cu``): reduce-then-scan in three launches. Each block
scans a tile of ``SCAN_TILE`` counts (eight consecutive items a thread, then a
block-wide scan of the thread totals) and writes the tile's total; when there
is more than one tile, one block scans the tile totals and a last launch adds
each tile's predecessors' total. Small frontiers (one tile) take one launch:
the point of this module over ``cupy.cumsum`` is the host time per level,
which dominates the small levels of a search.

Data structures: ``sums`` (uint64, one per item) and ``tile_totals`` (uint64,
one per tile), allocated once for the largest size.
"""

import numpy as np

from graph500.kernels.gpu import runtime
from graph500.kernels.gpu.runtime import cupy, i32

SCAN_TILE = 256 * 8  # frontier.cu's SCAN_TILE
THREADS = 256


class PrefixSums:
    """Inclusive prefix sums of up to ``capacity`` counts, in device buffers reused by every call."""

    def __init__(self, capacity):
        self.sums = cupy.empty(max(1, capacity), dtype=np.uint64)
        self._tile_totals = cupy.empty(runtime.blocks_for(capacity, SCAN_TILE), dtype=np.uint64)

    def of_edge_counts(self, queue, size, row_begin, row_end):
        """``sums[i]``: the edges ``row_end[v] - row_begin[v]`` of ``queue[0..i]``."""
        return self._scan("scan_frontier_tiles", (queue, i32(size), row_begin, row_end), size)

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
