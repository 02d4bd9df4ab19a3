"""Degree ordering, part of kernel 1: vertices renumbered by decreasing degree; results mapped back.

Vertices are renumbered so that label 0 has the largest degree (ties keep
their original order), and each row lists its neighbours sorted by new label,
hubs first. For SSSP the edges lighter than a bound are also listed apart, in
rows of their own (`Relabeled.light_rows`).

Why it pays (Balaji and Lucia, "When is Graph Reordering an Optimization?",
IISWC 2018): in a Kronecker graph most edge endpoints are a few hubs. With
the hubs at small labels, the per-vertex arrays a kernel reads at random
(parents, bitmaps, distances) are mostly read in their first cache lines; a
bottom-up step more often finds a parent at the first neighbour it checks;
and the vertices without edges gather at the end, where bottom-up steps skip
whole bitmap words.

Two ways to the renumbered graph, both O(edges) and sort-free:

* `degree_ordered_graph`, the CPU backend's kernel 1: `build_csr` counts
  each vertex's tuples (self-loops left out, duplicates counted) from the
  entries it has partitioned, and builds the graph directly under the new
  labels. The kernels take this graph as it is, so BFS and SSSP share it.
* `relabel` of a graph built with its original labels (kernels used on their
  own, as in the tests and benchmarks): a transpose by the degrees of the
  built graph. The graph is undirected, so row r of the new graph lists the u
  whose rows list r; scanning the new labels u in increasing order and
  appending u to the rows of its neighbours fills every row in sorted order.
  Each thread scans a range of u with equal edge counts and owns, in every
  row, the slots of its range's entries (counted in a first pass): no atomics.

The light rows for SSSP (`Relabeled.light_rows`) take two passes over the
weights, in parallel over ranges of rows with equal edge counts (the rows are
ordered by degree, so equal row counts would give the first thread almost
every edge): count each row's light entries, then copy them. Delta-stepping's
light edges are a small share of the graph (0.5% on Graph500 graphs), so
they cost a small array, not a second copy of the graph.

Data structures: ``order`` (new label -> original label), ``new_label`` (its
inverse); the transpose keeps per thread and row entry counts, turned into
cursors.

Tunables: whether a kernel renumbers a graph built with its original labels
(its ``reorder`` option).
"""

import numba
import numpy as np

from graph500.kernels.cpu.build import build_csr
from graph500.kernels.cpu.frontier import balanced_bounds, map_parents


def degree_ordered_graph(src, dst, num_vertices, weights=None):
    """Kernel 1, renumbered: the `Relabeled` CSR graph of the tuples, vertices by decreasing tuple degree.

    Raises ValueError as `build_csr` does.
    """
    renaming = {}

    def by_degree(degrees):
        renaming["order"] = by_decreasing_degree(degrees)
        renaming["new_label"] = inverse_permutation(renaming["order"])
        return renaming["new_label"]

    graph = build_csr(src, dst, num_vertices, weights, rename=by_degree)
    return Relabeled(graph.offsets, graph.neighbors, graph.weights, renaming["order"], renaming["new_label"])


def relabel(graph, reorder=True):
    """The kernels' view of ``graph`` as a `Relabeled` graph.

    A graph that kernel 1 renumbered already is taken as it is. Another is
    renumbered by degree when ``reorder``, else viewed under its own labels
    (no copy).
    """
    if isinstance(graph, Relabeled):
        return graph
    if reorder:
        return _transpose(graph, by_decreasing_degree(np.diff(graph.offsets)))
    return Relabeled(graph.offsets, graph.neighbors, graph.weights, None, None)


class Relabeled:
    """A CSR graph under the labelling ``order`` (new -> original; None: the original labels).

    Attributes: ``num_vertices``, ``offsets``, ``neighbors``, ``weights``
    (float32 or None), ``order`` and ``new_label`` (int64 permutations;
    ``arange`` when not renumbered), ``renumbered``.
    """

    def __init__(self, offsets, neighbors, weights, order, new_label):
        self.num_vertices = offsets.shape[0] - 1
        self.offsets, self.neighbors, self.weights = offsets, neighbors, weights
        self.renumbered = order is not None
        self.order = order if self.renumbered else np.arange(self.num_vertices)
        self.new_label = new_label if self.renumbered else self.order

    @property
    def num_edges(self):
        return int(self.neighbors.shape[0])

    def light_rows(self, split_below):
        """``(offsets, neighbors, weights)``: each row's entries lighter than ``split_below``, in row order."""
        task_bounds = balanced_bounds(self.offsets, numba.get_num_threads())
        light_offsets = np.zeros(self.num_vertices + 1, dtype=np.int64)
        _count_light(self.offsets, self.weights, np.float32(split_below), task_bounds, light_offsets[1:])
        np.cumsum(light_offsets, out=light_offsets)
        neighbors = np.empty(light_offsets[-1], dtype=self.neighbors.dtype)
        weights = np.empty(light_offsets[-1], dtype=np.float32)
        _copy_light(self.offsets, self.neighbors, self.weights, np.float32(split_below), task_bounds, light_offsets,
                    neighbors, weights)
        return light_offsets, neighbors, weights

    def values_to_original(self, values):
        """Per-vertex ``values`` indexed by original label."""
        if not self.renumbered:
            return values
        original = np.empty_like(values)
        original[self.order] = values
        return original

    def parents_to_original(self, parent):
        """Parents in original labels (``parent``'s dtype, -1 unreached) from ``parent`` in new labels."""
        if not self.renumbered:
            return parent
        return map_parents(self.order, self.order, parent)


def by_decreasing_degree(degrees):
    """``order[new] = original``: vertices by decreasing degree, ties in original order (a counting sort)."""
    return _counting_sort_decreasing(np.ascontiguousarray(degrees, dtype=np.int64))


def inverse_permutation(order):
    inverse = np.empty_like(order)
    inverse[order] = np.arange(order.shape[0])
    return inverse


@numba.njit(cache=True)
def _counting_sort_decreasing(degrees):
    max_degree = degrees.max() if degrees.shape[0] else 0
    next_slot = np.zeros(max_degree + 2, dtype=np.int64)
    for degree in degrees:
        next_slot[max_degree - degree + 1] += 1
    for bin_index in range(max_degree + 1):
        next_slot[bin_index + 1] += next_slot[bin_index]
    order = np.empty(degrees.shape[0], dtype=np.int64)
    for vertex in range(degrees.shape[0]):
        slot = next_slot[max_degree - degrees[vertex]]
        next_slot[max_degree - degrees[vertex]] = slot + 1
        order[slot] = vertex
    return order


def _transpose(graph, order):
    """`Relabeled` under ``order`` of a CSR graph built with its original labels."""
    n = graph.num_vertices
    new_label = inverse_permutation(order)
    offsets = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(np.diff(graph.offsets)[order], out=offsets[1:])
    weights = graph.weights if graph.weights is not None else np.empty(0, dtype=np.float32)
    task_bounds = balanced_bounds(offsets, numba.get_num_threads())
    cursors = np.zeros((task_bounds.shape[0] - 1, n), dtype=np.int64)
    neighbors = np.empty_like(graph.neighbors)
    new_weights = np.empty_like(weights)
    for scatter in (False, True):
        _count_or_scatter(scatter, graph.offsets, graph.neighbors, weights, order, new_label, task_bounds, cursors,
                          neighbors, new_weights)
        if not scatter:
            _starts(offsets, cursors)
    return Relabeled(offsets, neighbors, new_weights if graph.weights is not None else None, order, new_label)


@numba.njit(parallel=True, cache=True)
def _count_or_scatter(scatter, offsets, neighbors, weights, order, new_label, task_bounds, cursors, new_neighbors,
                      new_weights):
    """Count: ``cursors[t, r]`` += entries that task t's labels put in row r.
    Scatter: write them at the cursors (made starts by `_starts`), advancing them."""
    for task in numba.prange(task_bounds.shape[0] - 1):
        for u in range(task_bounds[task], task_bounds[task + 1]):
            original = order[u]
            for k in range(offsets[original], offsets[original + 1]):
                r = new_label[neighbors[k]]
                slot = cursors[task, r]
                cursors[task, r] = slot + 1
                if scatter:
                    new_neighbors[slot] = u
                    if weights.shape[0] > 0:
                        new_weights[slot] = weights[k]


@numba.njit(cache=True)
def _starts(new_offsets, cursors):
    """Turn counts into each task's first slot in each row."""
    for r in range(new_offsets.shape[0] - 1):
        slot = new_offsets[r]
        for task in range(cursors.shape[0]):
            count = cursors[task, r]
            cursors[task, r] = slot
            slot += count


@numba.njit(parallel=True, cache=True)
def _count_light(offsets, weights, split_below, task_bounds, light_counts):
    """``light_counts[row]``: the row's entries lighter than ``split_below``; each task counts its rows."""
    for task in numba.prange(task_bounds.shape[0] - 1):
        for row in range(task_bounds[task], task_bounds[task + 1]):
            light = 0
            for k in range(np.uint64(offsets[row]), np.uint64(offsets[row + 1])):
                light += weights[k] < split_below
            light_counts[row] = light


@numba.njit(parallel=True, cache=True)
def _copy_light(offsets, neighbors, weights, split_below, task_bounds, light_offsets, light_neighbors, light_weights):
    """Copy each row's light entries to its place in the light rows; each task copies its rows."""
    for task in numba.prange(task_bounds.shape[0] - 1):
        for row in range(task_bounds[task], task_bounds[task + 1]):
            slot = light_offsets[row]
            if slot == light_offsets[row + 1]:
                continue
            for k in range(np.uint64(offsets[row]), np.uint64(offsets[row + 1])):
                if weights[k] < split_below:
                    light_neighbors[slot] = neighbors[k]
                    light_weights[slot] = weights[k]
                    slot += 1
