"""The graph type shared by every kernel: compressed sparse rows (CSR).

Row ``v`` lists the neighbours of vertex ``v`` in
``neighbors[offsets[v]:offsets[v + 1]]``. Graphs are undirected, so each edge
{u, v} appears twice: in row u and in row v. ``weights`` (or None) holds one
weight per entry of ``neighbors``.

The arrays are NumPy arrays on the CPU and CuPy arrays on the GPU; this module
never looks inside them, so the same type serves both.
"""

from dataclasses import dataclass
from typing import Any

import numpy as np

INT32_MAX_VERTICES = 2**31  # labels 0 .. 2^31 - 1 fit in int32


def neighbor_dtype(num_vertices):
    """The dtype of ``neighbors``: int32 while ``num_vertices <= 2^31``, else int64."""
    return np.dtype(np.int32) if num_vertices <= INT32_MAX_VERTICES else np.dtype(np.int64)


@dataclass
class CSRGraph:
    """An undirected graph in CSR form.

    ``offsets``: int64, length ``num_vertices + 1``. ``neighbors``: labels of
    dtype ``neighbor_dtype(num_vertices)``. ``weights``: float32 aligned with
    ``neighbors``, or None for an unweighted graph.
    """

    num_vertices: int
    offsets: Any
    neighbors: Any
    weights: Any = None

    @property
    def num_edges(self):
        """Directed entries: ``len(neighbors)``, twice the number of undirected edges."""
        return int(self.neighbors.shape[0])


def simple_csr(src, dst, num_vertices, weights=None):
    """Kernel 1's graph (see ``graph500.kernels.cpu.build``) made with a few whole-array NumPy operations.

    Same result as the fast builders: self-loops dropped, both directions of
    every tuple, one entry per (row, neighbour) with the minimum weight, rows
    sorted. Sorting every entry makes it slower than they are, but it
    compiles nothing: the warm-up uses it for its small graphs.
    """
    keep = src != dst
    rows = np.concatenate([src[keep], dst[keep]]).astype(np.int64)
    columns = np.concatenate([dst[keep], src[keep]]).astype(np.int64)
    sort_keys = (columns, rows) if weights is None else (np.concatenate([weights[keep]] * 2), columns, rows)
    order = np.lexsort(sort_keys)
    rows, columns = rows[order], columns[order]
    first = np.ones(rows.shape[0], dtype=bool)
    first[1:] = (rows[1:] != rows[:-1]) | (columns[1:] != columns[:-1])
    offsets = np.zeros(num_vertices + 1, dtype=np.int64)
    np.cumsum(np.bincount(rows[first], minlength=num_vertices), out=offsets[1:])
    row_weights = None if weights is None else sort_keys[0][order][first].astype(np.float32)
    return CSRGraph(num_vertices, offsets, columns[first].astype(neighbor_dtype(num_vertices)), row_weights)
