"""Kernel 3, ``dijkstra``: Dijkstra's algorithm with a binary heap (serial, exact).

Algorithm: Dijkstra (1959) with lazy deletion: a relaxation that improves
``dist[v]`` pushes ``(dist[v], v)`` on a binary min-heap; a popped entry whose
distance is stale is skipped. Distances are float32 and every candidate is
formed as ``float32(dist[u] + w)``, so each settled vertex satisfies the
validator's exact rule ``dist[v] == dist[parent[v]] + w``.

Data structures: CSR with float32 weights (degree-ordered when kernel 1
made it so: results are mapped back); ``dist`` (float32, +inf unreached),
``parent`` (int64, -1 unreached); the heap as parallel arrays of keys and
vertices, grown by doubling.

Tunables: none. This is the simple, correct baseline; delta-stepping is the
fast kernel.
"""

import numba
import numpy as np

from graph500.kernels import register
from graph500.kernels.cpu.reorder import relabel


@numba.njit(inline="always", cache=True)
def _sift_up(keys, items, position):
    while position > 0:
        up = (position - 1) >> 1
        if keys[up] <= keys[position]:
            break
        keys[up], keys[position] = keys[position], keys[up]
        items[up], items[position] = items[position], items[up]
        position = up


@numba.njit(inline="always", cache=True)
def _sift_down(keys, items, size):
    position = 0
    while True:
        child = 2 * position + 1
        if child >= size:
            break
        if child + 1 < size and keys[child + 1] < keys[child]:
            child += 1
        if keys[position] <= keys[child]:
            break
        keys[child], keys[position] = keys[position], keys[child]
        items[child], items[position] = items[position], items[child]
        position = child


@numba.njit(cache=True)
def dijkstra(offsets, neighbors, weights, root, parent, dist):
    keys = np.empty(1024, dtype=np.float32)
    items = np.empty(1024, dtype=np.int64)
    dist[root] = 0.0
    parent[root] = root
    keys[0], items[0] = 0.0, root
    size = 1
    while size:
        d, u = keys[0], items[0]
        size -= 1
        keys[0], items[0] = keys[size], items[size]
        _sift_down(keys, items, size)
        if d > dist[u]:
            continue
        for k in range(offsets[u], offsets[u + 1]):
            v = neighbors[k]
            candidate = np.float32(d + weights[k])
            if candidate < dist[v]:
                dist[v] = candidate
                parent[v] = u
                if size == keys.shape[0]:
                    keys = np.concatenate((keys, np.empty_like(keys)))
                    items = np.concatenate((items, np.empty_like(items)))
                keys[size], items[size] = candidate, v
                _sift_up(keys, items, size)
                size += 1


@register()
class DijkstraSSSP:
    """Serial Dijkstra with a binary heap (the baseline)."""

    name = "dijkstra"
    kind = "sssp"
    backend = "cpu"

    def __init__(self, graph):
        if graph.weights is None:
            raise ValueError("SSSP needs a weighted graph")
        self.graph = relabel(graph, reorder=False)

    def search(self, root):
        graph = self.graph
        parent = np.full(graph.num_vertices, -1, dtype=np.int64)
        dist = np.full(graph.num_vertices, np.inf, dtype=np.float32)
        dijkstra(graph.offsets, graph.neighbors, graph.weights, graph.new_label[root], parent, dist)
        return graph.parents_to_original(parent), graph.values_to_original(dist)
