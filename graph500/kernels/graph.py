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
