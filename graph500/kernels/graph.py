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

from graph500.partition import index_dtype_for


def neighbor_dtype(num_vertices):
    """The dtype of ``neighbors``: `partition.index_dtype_for` the vertices (int32 while ``num_vertices <=
    2^31``)."""
    return index_dtype_for(num_vertices)


@dataclass
class CSRGraph:
    """An undirected graph in CSR form.

    ``offsets``: int64, length ``num_vertices + 1``. ``neighbors``: labels of
    dtype ``neighbor_dtype(num_vertices)``. ``weights``: float32 aligned with
    ``neighbors``, or None for an unweighted graph. ``order`` and
    ``new_label`` (or None: the input's labels): a graph built under other
    labels than its tuples' (the GPU's degree-ordered kernel 1) maps each of
    its labels to the input's (``order``) and back (``new_label``); kernels
    take roots and give outputs under the input's labels. Kernel 1 sorts each
    row by neighbour; ``rows_by_weight`` says a kernel's set-up has since
    sorted them by weight, in place (the GPU SSSP's).
    """

    num_vertices: int
    offsets: Any
    neighbors: Any
    weights: Any = None
    order: Any = None
    new_label: Any = None
    rows_by_weight: bool = False

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


@dataclass
class PartitionedGraph:
    """One rank's part of a graph whose vertices are split in blocks over the ranks of ``comm``.

    The rank holds the CSR rows of the vertices it owns,
    ``[first_vertex, first_vertex + num_local)`` (``blocks``, a
    `graph500.partition.VertexBlocks`, says who owns the others): row ``i``
    (vertex ``first_vertex + i``) lists its neighbours, under their global
    labels, in ``neighbors[offsets[i]:offsets[i + 1]]``, with ``weights``
    aligned (or None). Rows are as `CSRGraph`'s: self-loops dropped, one entry
    per neighbour with the minimum weight, sorted (by weight, in place, once
    ``rows_by_weight`` says a kernel's set-up has sorted them so). ``comm`` is
    the run's communicator (`graph500.comm`); with one rank the part is the
    whole graph. ``order`` and ``new_label`` (or None: the input's labels):
    label tables as `CSRGraph`'s of a graph whose blocks are each numbered by
    decreasing degree (the multi-GPU kernel 1: a label stays in its block, so
    its owner is the same under either labelling): ``order`` the whole
    graph's (a search's parents are any vertices), ``new_label`` the block's
    only (input label ``first_vertex + i`` is ``new_label[i]``; `RootLabels`
    renames a search's key).
    """

    num_vertices: int
    first_vertex: int
    offsets: Any
    neighbors: Any
    weights: Any
    comm: Any
    blocks: Any
    rows_by_weight: bool = False
    order: Any = None
    new_label: Any = None

    @property
    def num_local(self):
        """Vertices (rows) this rank owns."""
        return int(self.offsets.shape[0]) - 1

    @property
    def num_edges(self):
        """Directed entries of this rank's rows."""
        return int(self.neighbors.shape[0])


def whole_graph_part(graph, xp=np):
    """A `CSRGraph` as the one part of a one-rank `PartitionedGraph` (no copy); ``xp``: the array module of its
    arrays (NumPy, or CuPy on a GPU)."""
    from graph500.comm import SelfCommunicator
    from graph500.partition import VertexBlocks

    return PartitionedGraph(graph.num_vertices, 0, graph.offsets, graph.neighbors, graph.weights,
                            SelfCommunicator(xp=xp), VertexBlocks(graph.num_vertices, 1),
                            getattr(graph, "rows_by_weight", False), getattr(graph, "order", None),
                            getattr(graph, "new_label", None))


class RootLabels:
    """A search key under a degree-ordered graph's labels, found on the host: the rank that owns the key (the one
    GPU, or the rank whose block holds it: a label stays in its block) reads it in a host copy of its block's
    ``new_label``, made once, and on several ranks an allreduce of one integer tells the others. No device read
    a search, and no rank holds the table of all N vertices. A graph under the input's labels keeps the key."""

    def __init__(self, graph, comm=None):
        self._table = _host_new_label(graph)
        self._first_vertex = getattr(graph, "first_vertex", 0)
        self._comm = comm if comm is not None and comm.size > 1 else None

    def __call__(self, root):
        if self._table is None:
            return int(root)
        label = self.local(root)
        if self._comm is None:
            return label
        return int(self._comm.allreduce(np.array([label], dtype=np.int64), "max")[0])

    def local(self, root):
        """The key's label where this rank owns it, else -1 (no collective; a degree-ordered graph's)."""
        local = int(root) - self._first_vertex
        return int(self._table[local]) if 0 <= local < self._table.shape[0] else -1


def _host_new_label(graph):
    """The graph's ``new_label`` on the host (None without one): a device table copied once a graph, kept on it
    for the next kernel's `RootLabels` (the BFS's and the SSSP's set-up share one copy)."""
    table = getattr(graph, "new_label", None)
    if table is None or not hasattr(table, "get"):
        return table
    cached = getattr(graph, "_host_new_label", None)
    if cached is None or cached[0] is not table:
        cached = (table, table.get())
        graph._host_new_label = cached  # beside the dataclass's fields: not part of the graph's value
    return cached[1]
