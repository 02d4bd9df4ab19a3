"""Degree ordering, part of kernel 1: relabel vertices by decreasing degree; map results back.

Vertices are renumbered so that label 0 has the largest degree (ties keep
their original order), and each row is rebuilt with its neighbours sorted by
new label, hubs first. For SSSP each row is also split: neighbours over edges
lighter than a bound first, then the others, each part sorted.

Why it pays (Balaji and Lucia, "When is Graph Reordering an Optimization?",
IISWC 2018): in a Kronecker graph most edge endpoints are a few hubs. With
the hubs at small labels, the per-vertex arrays a kernel reads at random
(parents, bitmaps, distances) are mostly read in their first cache lines; a
bottom-up step more often finds a parent at the first neighbour it checks;
and the vertices without edges gather at the end, where bottom-up steps skip
whole bitmap words.

Algorithm: a transpose, O(edges), no sort. The graph is undirected, so row r
of the new graph lists the u whose rows list r. Scanning the new labels u in
increasing order and appending u to the rows of its neighbours therefore
fills every row in sorted order. Each thread scans a range of u with equal
edge counts and owns, in every row, the slots of its range's entries
(counted in a first pass): no atomics.

Data structures: ``order`` (new label -> original label), ``new_label``
(its inverse); per thread and row, entry counts turned into cursors.

Tunables: the order itself (``degree_order``, or the identity for no
reordering).
"""

import numba
import numpy as np

from graph500.kernels.cpu.frontier import balanced_bounds


def degree_order(offsets):
    """``order[new] = original``: vertices by decreasing degree, ties in original order."""
    return np.argsort(-np.diff(offsets), kind="stable")


def relabel(graph, reorder=True, weighted=False, split_below=np.inf):
    """The kernels' view of ``graph``: `Relabeled` by degree order, or by the identity when not ``reorder``."""
    order = degree_order(graph.offsets) if reorder else np.arange(graph.num_vertices)
    return Relabeled(graph.offsets, graph.neighbors, graph.weights if weighted else None, order, split_below)


@numba.njit(inline="always", cache=True)
def _is_heavy(weights, k, split_below):
    return weights.shape[0] > 0 and weights[k] >= split_below


@numba.njit(parallel=True, cache=True)
def _count_or_scatter(scatter, offsets, neighbors, weights, order, new_label, task_bounds, split_below, cursors,
                      new_neighbors, new_weights):
    """Count: ``cursors[t, r, heavy]`` += entries that task t's labels put in row r's light (heavy) part.
    Scatter: write them at the cursors (made starts by `_starts`), advancing them."""
    for task in numba.prange(task_bounds.shape[0] - 1):
        for u in range(task_bounds[task], task_bounds[task + 1]):
            original = order[u]
            for k in range(offsets[original], offsets[original + 1]):
                r = new_label[neighbors[k]]
                part = np.int64(_is_heavy(weights, k, split_below))
                slot = cursors[task, r, part]
                cursors[task, r, part] = slot + 1
                if scatter:
                    new_neighbors[slot] = u
                    if weights.shape[0] > 0:
                        new_weights[slot] = weights[k]


@numba.njit(cache=True)
def _starts(new_offsets, cursors, light_end):
    """Turn counts into each task's first slot in each row part; ``light_end[r]`` ends row r's light part."""
    num_tasks = cursors.shape[0]
    for r in range(new_offsets.shape[0] - 1):
        slot = new_offsets[r]
        for part in range(2):
            for task in range(num_tasks):
                count = cursors[task, r, part]
                cursors[task, r, part] = slot
                slot += count
            if part == 0:
                light_end[r] = slot


class Relabeled:
    """A CSR graph (``weights`` None or float32) under the labelling ``order`` (new -> original), rows split
    at ``split_below``.

    Attributes: ``num_vertices``, ``offsets``, ``light_end`` (end of each
    row's light part), ``neighbors``, ``weights`` (None when unweighted),
    ``order``, ``new_label``.
    """

    def __init__(self, offsets, neighbors, weights, order, split_below=np.inf):
        n = offsets.shape[0] - 1
        self.num_vertices = n
        self.order = np.ascontiguousarray(order, dtype=np.int64)
        self.new_label = np.empty(n, dtype=np.int64)
        self.new_label[self.order] = np.arange(n)
        self.offsets = np.zeros(n + 1, dtype=np.int64)
        np.cumsum(np.diff(offsets)[self.order], out=self.offsets[1:])
        weighted = weights is not None
        weights = weights if weighted else np.empty(0, dtype=np.float32)
        task_bounds = balanced_bounds(self.offsets, numba.get_num_threads())
        cursors = np.zeros((task_bounds.shape[0] - 1, n, 2), dtype=np.int64)
        split = np.float32(split_below)
        self.neighbors = np.empty_like(neighbors)
        new_weights = np.empty(neighbors.shape[0] if weighted else 0, dtype=np.float32)
        self.light_end = np.empty(n, dtype=np.int64)
        for scatter in (False, True):
            _count_or_scatter(scatter, offsets, neighbors, weights, self.order, self.new_label, task_bounds, split,
                              cursors, self.neighbors, new_weights)
            if not scatter:
                _starts(self.offsets, cursors, self.light_end)
        self.weights = new_weights if weighted else None

    def parents_to_original(self, parent):
        """Parents in original labels (int64, -1 unreached) from ``parent`` in new labels."""
        original = np.empty(parent.shape[0], dtype=np.int64)
        _map_parents(self.order, parent, original)
        return original


@numba.njit(parallel=True, cache=True)
def _map_parents(order, parent, original):
    for v in numba.prange(parent.shape[0]):
        p = parent[v]
        original[order[v]] = order[p] if p >= 0 else -1
