"""The run's steps on P ranks: a backend made of a one-process backend and a communicator.

`DistributedBackend` offers the harness the methods of a backend
(``graph500.kernels.cpu.backend``), each the same step done by every rank on
its share and combined through the communicator (`graph500.comm`):

- generate: rank r generates the tuples ``partition.tuple_range(M, r, P)``
  with the reference-exact generator (any range of the list is exact), so the
  P slices are the reference's list; the rank keeps them to validate.
- build (kernel 1): every tuple is sent to the owners of its endpoints (one
  Alltoallv; once when both are owned by one rank), and each rank builds the
  CSR rows of its block (`build.build_rows`) into a `PartitionedGraph`.
- incident_vertices (for the search keys): each rank marks the endpoints of
  its tuples, the ranks OR their marks (Allreduce), so every rank draws the
  same keys.
- timed: a barrier, the search, a barrier: the time until the slowest rank
  has its part of the output, the same on every rank.
- check_memory: each rank's need, summed per host, against the host's
  available memory; refused on every rank alike.

The partition (`graph500.partition`): vertices in 1D blocks of whole bitmap
words, tuples in generation ranges.
"""

import socket
import time

import numba
import numpy as np

from graph500.errors import Graph500Error
from graph500.kernels.cpu.backend import RUNTIME_BYTES, available_memory_bytes
from graph500.kernels.cpu.build import build_rows
from graph500.kernels.graph import PartitionedGraph, neighbor_dtype
from graph500.partition import VertexBlocks


def partition_graph(comm, blocks, src, dst, weights):
    """Kernel 1 on P ranks: this rank's `PartitionedGraph` from the tuples every rank holds (collective)."""
    label_dtype = neighbor_dtype(blocks.num_vertices)
    send_counts, order = _group_by_owner(np.ascontiguousarray(src, dtype=np.int64),
                                         np.ascontiguousarray(dst, dtype=np.int64), blocks.block, comm.size)
    arrays = (src[order].astype(label_dtype), dst[order].astype(label_dtype))
    if weights is not None:
        arrays += (weights[order],)
    received, _ = comm.alltoallv(arrays, send_counts)
    del arrays, order
    first_vertex = blocks.begin(comm.rank)
    offsets, neighbors, row_weights = build_rows(received[0], received[1], blocks.num_vertices,
                                                 received[2] if weights is not None else None,
                                                 first_vertex, blocks.count(comm.rank))
    return PartitionedGraph(blocks.num_vertices, first_vertex, offsets, neighbors, row_weights, comm, blocks)


@numba.njit(cache=True)
def _group_by_owner(src, dst, block, num_ranks):
    """``(counts, order)``: the tuples to send, as indices grouped by destination rank (a counting sort).

    A tuple goes to the owner of each endpoint, once when one rank owns both;
    self-loops go nowhere (no rule and no row reads them).
    """
    counts = np.zeros(num_ranks, dtype=np.int64)
    for i in range(src.shape[0]):
        if src[i] != dst[i]:
            counts[src[i] // block] += 1
            if dst[i] // block != src[i] // block:
                counts[dst[i] // block] += 1
    cursor = np.zeros(num_ranks, dtype=np.int64)
    for rank in range(1, num_ranks):
        cursor[rank] = cursor[rank - 1] + counts[rank - 1]
    order = np.empty(counts.sum(), dtype=np.int64)
    for i in range(src.shape[0]):
        if src[i] != dst[i]:
            first = src[i] // block
            order[cursor[first]] = i
            cursor[first] += 1
            second = dst[i] // block
            if second != first:
                order[cursor[second]] = i
                cursor[second] += 1
    return counts, order
