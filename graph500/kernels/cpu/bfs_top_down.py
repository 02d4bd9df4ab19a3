"""Kernel 2, ``top-down``: level-synchronous parallel top-down BFS.

Algorithm: the classic frontier expansion. Level d's frontier is an array of
vertices; every frontier vertex u (in parallel) looks at its neighbours and
claims each unvisited v by writing ``parent[v] = u``. Several frontier vertices
may race for one v; every writer is at level d, so whichever write lands is a
valid parent. A second pass over the frontier then collects, for each u, the
neighbours whose parent ended up being u: each newly visited vertex has exactly
one such owner, so the next frontier has no duplicates without any atomic
operation, and each frontier vertex writes its discoveries into its own slot
range (a prefix sum over per-vertex discovery counts).

Data structures: CSR (offsets, neighbours), ``parent`` (int64, -1 unvisited),
the frontier as a dense vertex array.

Tunables: none. This is the simple, correct baseline the faster CPU kernels
are measured against.
"""

import numba
import numpy as np

from graph500.kernels import register


@numba.njit(parallel=True, cache=True)
def _claim(offsets, neighbors, frontier, parent):
    for i in numba.prange(frontier.shape[0]):
        u = frontier[i]
        for k in range(offsets[u], offsets[u + 1]):
            v = neighbors[k]
            if parent[v] == -1:
                parent[v] = u


@numba.njit(parallel=True, cache=True)
def _count_owned(offsets, neighbors, frontier, parent, owned):
    for i in numba.prange(frontier.shape[0]):
        u = frontier[i]
        count = 0
        for k in range(offsets[u], offsets[u + 1]):
            v = neighbors[k]
            if parent[v] == u and v != u:
                count += 1
        owned[i] = count


@numba.njit(parallel=True, cache=True)
def _collect_owned(offsets, neighbors, frontier, parent, slots, next_frontier):
    for i in numba.prange(frontier.shape[0]):
        u = frontier[i]
        slot = slots[i]
        for k in range(offsets[u], offsets[u + 1]):
            v = neighbors[k]
            if parent[v] == u and v != u:
                next_frontier[slot] = v
                slot += 1


def top_down_level(offsets, neighbors, frontier, parent):
    """Expand one level top-down; returns the next frontier (no duplicates)."""
    _claim(offsets, neighbors, frontier, parent)
    owned = np.empty(frontier.shape[0], dtype=np.int64)
    _count_owned(offsets, neighbors, frontier, parent, owned)
    slots = np.zeros(frontier.shape[0], dtype=np.int64)
    np.cumsum(owned[:-1], out=slots[1:])
    next_frontier = np.empty(int(owned.sum()), dtype=frontier.dtype)
    _collect_owned(offsets, neighbors, frontier, parent, slots, next_frontier)
    return next_frontier


@register(default=True)
class TopDownBFS:
    """Parallel level-synchronous top-down BFS (the baseline)."""

    name = "top-down"
    kind = "bfs"
    backend = "cpu"

    def __init__(self, graph):
        self.graph = graph

    def search(self, root):
        graph = self.graph
        parent = np.full(graph.num_vertices, -1, dtype=np.int64)
        parent[root] = root
        frontier = np.array([root], dtype=np.int64)
        while frontier.shape[0]:
            frontier = top_down_level(graph.offsets, graph.neighbors, frontier, parent)
        return parent
