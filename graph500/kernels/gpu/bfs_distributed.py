"""Kernel 2, ``gpu-distributed-direction-optimizing``: direction-optimizing BFS over the GPUs of P ranks.

Algorithm: Beamer, Asanovic and Patterson's direction-optimizing BFS (SC
2012) on the 1D vertex partition of Buluç and Madduri (SC 2011), as the CPU
ranks run it (`graph500.kernels.cpu.bfs_distributed`), with the replicated
frontier bitmap of Yasui, Fujisawa and Sato (Graph500 2013-2014). Rank r
owns a block of vertices (`graph500.partition.VertexBlocks`, whole 64-bit
words) and the CSR rows of its vertices, neighbours under their global
labels, in its GPU's memory (`graph500.kernels.graph.PartitionedGraph`). Every
GPU holds the visited and frontier bitmaps of all N vertices; a level is:

- bottom-up: each rank scans its own unvisited vertices against the
  replicated frontier, each stopping at its first neighbour in it (the
  single-GPU ``bottom_up_scan`` and ``bottom_up_long`` of ``bfs.cu``, given
  the block's words: their vertex indices are then local, the neighbours
  they test global), and writes the words of its block of the next frontier.
- top-down: each rank expands its own frontier vertices edge-parallel
  (``mark_found`` in ``bfs_distributed.cu``, the load-balanced expansion of
  ``common.cuh``) and, instead of sending a (child, parent) request per edge,
  marks the unvisited neighbours it reaches in a "found" bitmap of all N
  vertices. The ranks exchange the found bitmaps' blocks (one alltoallv of
  N/8 bytes in all a rank, whatever the number of edges examined; the counts
  are known, so not exchanged), and each
  owner gives the vertices any rank found a parent by the same bottom-up
  scan, restricted to them (``skip_unfound``: the scan skips the others), so
  it finds a frontier neighbour in its own row.

Either way the level ends alike: the ranks allgather their blocks of the next
frontier (the communicator's gathered array: NCCL on the device), every rank
ORs it into its visited bitmap, and one allreduce of two counts (frontier
vertices and their edges) decides the next level's direction by the
single-GPU rule (`bfs.beamer_direction`, alpha, beta and gamma on global
counts). This is the design of docs/multi-gpu.md; at P = 1 (a whole graph
with a one-rank communicator) every exchange is a copy.

Parents are global labels, written only by the owner of the child: a
rank's output is the int32 parents of its block, -1 where unreached.

The scan tests each vertex's strongest neighbour first (of largest degree,
found at construction from every vertex's degree, allgathered: 4 bytes a
vertex), as the single-GPU kernel does: a vertex found by a frontier of
hubs mostly has its parent there. Not yet here: degree ordering (the rows
are sorted by neighbour label).

Data structures per GPU (N vertices, W = N / 32 words, n owned vertices, m
row entries): the rows (8 bytes per entry and per owned vertex), each owned
vertex's strongest neighbour (int32); bitmaps
visited, found and never-searched (W uint32 each), the two frontier
bitmaps (gathered arrays: W words each), the block's skip words; the
frontier and long queues (int32, n each); prefix sums (uint64, n); the
parents (int32, n, the output).

Tunables: ``alpha``, ``beta``, ``gamma``, ``short_scan`` (as the
single-GPU kernel's), ``trace`` (per level: its direction, frontier,
seconds, and the seconds of its compute and of its exchanges, from CUDA
events on the stream; off for timed runs).
"""

import numpy as np

from graph500.errors import Graph500Error
from graph500.kernels import register
from graph500.kernels.gpu import runtime
from graph500.kernels.gpu.bfs import (ALPHA, BETA, FRONTIER_EDGES, FRONTIER_SIZE, GAMMA, HUB_DEGREE, NUM_COUNTERS,
                                      SCANNED_EDGES, SHORT_SCAN, THREADS, TOP_DOWN, beamer_direction, bitmap,
                                      bitmap_to_queue, strongest_neighbours)
from graph500.kernels.gpu.frontier import EXPAND_TILE, PrefixSums
from graph500.kernels.gpu.runtime import cupy, i32, u32, u64
from graph500.kernels.graph import PartitionedGraph, whole_graph_part


def device_part(graph, kernel_name):
    """The `PartitionedGraph` a distributed GPU kernel searches: ``graph`` itself, or a whole `CSRGraph` on the
    device as the one part of a one-rank graph (which must be under its input labels)."""
    if isinstance(graph, PartitionedGraph):
        return graph
    if graph.order is not None:
        raise Graph500Error(f"{kernel_name} searches graphs under their input labels, not the one-GPU backend's "
                            f"degree-ordered graph: run it on several ranks (mpiexec -n P ... --backend gpu)")
    return whole_graph_part(graph, xp=cupy)


@register(distributed_default=True)
class DistributedDirectionOptimizingBFS:
    """Direction-optimizing BFS over the ranks of ``graph.comm``, one GPU each."""

    name = "gpu-distributed-direction-optimizing"
    kind = "bfs"
    backend = "gpu"
    distributed = True

    def __init__(self, graph, *, alpha=ALPHA, beta=BETA, gamma=GAMMA, short_scan=SHORT_SCAN, trace=False):
        self.graph = graph = device_part(graph, self.name)
        self.comm = comm = graph.comm
        self.alpha, self.beta = float(alpha), float(beta)
        self._min_bottom_up_frontier = graph.num_vertices / gamma if gamma else 0
        self.short_scan = int(short_scan)
        self.record_trace = trace
        self.trace = []
        n = graph.num_local
        self._first_word = graph.first_vertex // 32  # blocks are whole 64-bit words
        self._block_words = (n + 31) // 32
        self._word_counts = np.array([(graph.blocks.count(rank) + 31) // 32 for rank in range(comm.size)],
                                     dtype=np.int64)
        num_words = int(self._word_counts.sum())
        self._found_counts = np.full(comm.size, self._block_words, dtype=np.int64)  # found words each rank sends us
        degrees = cupy.diff(graph.offsets).astype(np.uint32)
        self._never_searched = comm.allgather(bitmap(degrees == 0, self._block_words))
        # each vertex's neighbour of largest degree, by every vertex's degree (an allgather of 4 bytes a vertex)
        self._strongest = strongest_neighbours(graph.offsets, graph.neighbors, comm.allgather(degrees))
        del degrees
        self._num_edges = int(comm.allreduce(graph.num_edges, "sum"))
        self._visited = cupy.empty(num_words, dtype=np.uint32)
        self._found = cupy.empty(num_words, dtype=np.uint32)
        self._start_frontier = cupy.zeros(num_words, dtype=np.uint32)
        self._next_frontiers = [comm.gathered_array(self._word_counts, np.uint32) for _ in range(2)]
        self._skip = cupy.empty(max(self._block_words, 1), dtype=np.uint32)
        self._queue = cupy.empty(max(n, 1), dtype=np.int32)
        self._long_queue = cupy.empty(max(n, 1), dtype=np.int32)
        self._prefix_sums = PrefixSums(max(n, self._block_words), graph.num_edges)
        self._row_end = graph.offsets[1:]
        self._counters = runtime.DeviceCounters(NUM_COUNTERS)
        self._scan_grid = runtime.persistent_blocks(runtime.kernel("bfs", "bottom_up_scan"), THREADS, n)
        self._long_grid = runtime.persistent_blocks(runtime.kernel("bfs", "bottom_up_long"), THREADS)
        cupy.cuda.get_current_stream().synchronize()  # precomputation ends with the constructor

    def search(self, root):
        """The parents of this rank's vertices (int32 CuPy array, global labels, -1 unreached) of a BFS from
        ``root`` (collective: every rank passes the same root)."""
        graph = self.graph
        root = int(root)
        parent = cupy.full(graph.num_local, -1, dtype=np.int32)
        local_root = root - graph.first_vertex
        owner = 0 <= local_root < graph.num_local
        if owner:
            parent[local_root] = root
        root_word, root_bit = root >> 5, np.uint32(1 << (root & 31))
        cupy.copyto(self._visited, self._never_searched)
        self._visited[root_word] |= root_bit
        frontier = self._start_frontier
        frontier.fill(0)
        frontier[root_word] = root_bit
        local_size, local_edges = (1, int(graph.offsets[local_root + 1] - graph.offsets[local_root])) if owner \
            else (0, 0)
        size, edges = self._global_counts(local_size, local_edges)
        unexplored = self._num_edges - edges
        direction, previous_size, level = TOP_DOWN, 0, 0
        self.trace = []
        while size:
            direction = beamer_direction(direction, size, edges, unexplored, previous_size, graph.num_vertices,
                                         self.alpha, self.beta, self._min_bottom_up_frontier)
            timer = runtime.PhaseTimer(self.record_trace)
            timer.start("compute_seconds")
            next_frontier = self._next_frontiers[level % 2]
            if direction == TOP_DOWN:
                skip = self._top_down_skip(frontier, local_size, local_edges, timer)
            else:
                skip = self._skip
                cupy.copyto(skip[:self._block_words], self._visited[self._block_slice()])
            self._scan(frontier, skip, next_frontier.local, parent)
            counts = self._counters.read()
            local_size, local_edges = int(counts[FRONTIER_SIZE]), int(counts[FRONTIER_EDGES])
            timer.start("exchange_seconds")
            next_frontier.publish()
            frontier = next_frontier.whole
            cupy.bitwise_or(self._visited, frontier, out=self._visited)
            previous_size = size
            size, edges, scanned_edges = self._global_counts(local_size, local_edges, int(counts[SCANNED_EDGES]))
            unexplored -= edges
            if self.record_trace:
                phases = timer.totals()
                self.trace.append({"direction": direction, "frontier": previous_size, "discovered": size,
                                   "scanned_edges": scanned_edges, "seconds": sum(phases.values()), **phases})
            level += 1
        return parent

    def _global_counts(self, *local_counts):
        """The sums over all ranks of ``local_counts`` (Python ints)."""
        return [int(total) for total in self.comm.allreduce(np.array(local_counts, dtype=np.int64), "sum")]

    def _block_slice(self):
        return slice(self._first_word, self._first_word + self._block_words)

    def _top_down_skip(self, frontier, local_size, local_edges, timer):
        """The bottom-up scan's skip words of a top-down level: set but for the block's vertices that some
        rank's frontier reaches and that are not visited."""
        graph = self.graph
        found = self._found
        stream = cupy.cuda.get_current_stream()
        cupy.cuda.runtime.memsetAsync(found.data.ptr, 0, found.nbytes, stream.ptr)
        if local_edges:
            block_frontier = frontier[self._block_slice()]
            word_end = self._prefix_sums.of_populations(block_frontier, self._block_words)
            bitmap_to_queue(block_frontier, self._block_words, word_end, self._queue)
            edge_end, tile_first = self._prefix_sums.of_edge_counts(self._queue, local_size, graph.offsets,
                                                                    self._row_end, local_edges)
            runtime.kernel("bfs_distributed", "mark_found")(
                (runtime.blocks_for(local_edges, EXPAND_TILE),), (THREADS,),
                (self._queue, edge_end, tile_first, i32(local_size), u64(local_edges), graph.offsets,
                 graph.neighbors, self._visited, found))
        timer.start("exchange_seconds")
        (found_parts,), _ = self.comm.alltoallv((found,), self._word_counts, self._found_counts)
        timer.start("compute_seconds")
        runtime.kernel("bfs_distributed", "skip_unfound")(
            (runtime.blocks_for(self._block_words, THREADS),), (THREADS,),
            (found_parts, i32(self.comm.size), i32(self._block_words), self._visited[self._block_slice()],
             self._skip))
        return self._skip

    def _scan(self, frontier, skip, next_block, parent):
        """Search a parent in ``frontier`` for every vertex of the block not set in ``skip``; the found ones
        are written to ``next_block`` (every word) and counted."""
        graph = self.graph
        self._counters.reset()
        runtime.kernel("bfs", "bottom_up_scan")(
            (self._scan_grid,), (THREADS,),
            (i32(self._block_words), graph.offsets, graph.neighbors, self._strongest, frontier, u32(self.short_scan),
             u32(HUB_DEGREE), skip, next_block, parent, self._long_queue, self._counters.device))
        runtime.kernel("bfs", "bottom_up_long")(
            (self._long_grid,), (THREADS,),
            (self._long_queue, graph.offsets, graph.neighbors, frontier, u32(self.short_scan), u32(HUB_DEGREE),
             skip, next_block, parent, self._counters.device))
