"""Degree ordering (graph500.kernels.cpu.reorder): the orders, both ways to the renumbered graph, the light rows."""

import numpy as np
import pytest

from graph500.kernels.cpu import reorder
from graph500.kernels.cpu.build import build_csr
from graph500.kernels.graph import simple_csr


@pytest.fixture
def tuples():
    rng = np.random.default_rng(5)
    num_vertices = 300
    src = np.minimum(rng.zipf(1.6, 6000), num_vertices) - 1  # skewed: a few hubs, many ties
    dst = rng.integers(0, num_vertices, 6000)
    dst[::17] = src[::17]  # self-loops
    return src, dst, rng.random(6000, dtype=np.float32), num_vertices


def test_order_is_by_decreasing_degree_ties_in_original_order():
    degrees = np.array([3, 0, 7, 3, 7, 1, 0])
    np.testing.assert_array_equal(reorder.by_decreasing_degree(degrees), [2, 4, 0, 3, 5, 1, 6])
    np.testing.assert_array_equal(reorder.by_decreasing_degree(np.zeros(0, np.int64)), [])


def renamed_reference(src, dst, num_vertices, weights, order):
    new_label = reorder.inverse_permutation(order)
    return simple_csr(new_label[src], new_label[dst], num_vertices, weights)


def assert_same_rows(relabeled, expected):
    np.testing.assert_array_equal(relabeled.offsets, expected.offsets)
    np.testing.assert_array_equal(relabeled.neighbors, expected.neighbors)
    np.testing.assert_array_equal(relabeled.weights, expected.weights)
    np.testing.assert_array_equal(relabeled.new_label[relabeled.order], np.arange(expected.num_vertices))


def tuple_degrees(src, dst, num_vertices):
    """Tuples at each vertex, self-loops left out, duplicates counted."""
    keep = src != dst
    return np.bincount(src[keep], minlength=num_vertices) + np.bincount(dst[keep], minlength=num_vertices)


def test_kernel_1_builds_under_the_tuple_degree_order(tuples):
    src, dst, weights, num_vertices = tuples
    graph = reorder.degree_ordered_graph(src, dst, num_vertices, weights)
    order = reorder.by_decreasing_degree(tuple_degrees(src, dst, num_vertices))
    np.testing.assert_array_equal(graph.order, order)
    assert_same_rows(graph, renamed_reference(src, dst, num_vertices, weights, order))


def test_transpose_renumbers_a_built_graph_by_its_degrees(tuples):
    src, dst, weights, num_vertices = tuples
    built = build_csr(src, dst, num_vertices, weights)
    relabeled = reorder.relabel(built)
    order = reorder.by_decreasing_degree(np.diff(built.offsets))
    np.testing.assert_array_equal(relabeled.order, order)
    assert_same_rows(relabeled, renamed_reference(src, dst, num_vertices, weights, order))
    assert reorder.relabel(relabeled) is relabeled  # kernel 1's renumbering is kept
    kept = reorder.relabel(built, reorder=False)
    assert kept.neighbors is built.neighbors and not kept.renumbered


def test_light_rows_list_each_rows_light_entries_in_order(tuples):
    src, dst, weights, num_vertices = tuples
    graph = reorder.degree_ordered_graph(src, dst, num_vertices, weights)
    offsets, neighbors, light_weights = graph.light_rows(0.25)
    for row in range(num_vertices):
        begin, end = graph.offsets[row], graph.offsets[row + 1]
        light = graph.weights[begin:end] < 0.25
        np.testing.assert_array_equal(neighbors[offsets[row]:offsets[row + 1]], graph.neighbors[begin:end][light])
        np.testing.assert_array_equal(light_weights[offsets[row]:offsets[row + 1]], graph.weights[begin:end][light])


def test_results_map_back_to_original_labels(tuples):
    src, dst, weights, num_vertices = tuples
    graph = reorder.degree_ordered_graph(src, dst, num_vertices, weights)
    new_parent = np.full(num_vertices, -1, dtype=np.int64)
    new_parent[:3] = [0, 0, 1]  # new labels
    original = graph.parents_to_original(new_parent)
    assert original[graph.order[1]] == graph.order[0] and original[graph.order[2]] == graph.order[1]
    assert np.count_nonzero(original >= 0) == 3
    values = np.arange(num_vertices, dtype=np.float32)
    np.testing.assert_array_equal(graph.values_to_original(values)[graph.order], values)
