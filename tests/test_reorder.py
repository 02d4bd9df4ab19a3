"""Degree ordering (graph500.kernels.cpu.reorder): the orders, both ways to the renumbered graph, the light rows;
search keys renamed from the blocks' label tables (`graph.RootLabels`)."""

import numpy as np
import pytest
from support import needs_mpi, run_ranks

from graph500.kernels.cpu import reorder
from graph500.kernels.cpu.build import build_csr
from graph500.kernels.graph import RootLabels, simple_csr


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


ROOT_LABELS_SCRIPT = """
import numpy as np
from graph500.comm import world
from graph500.kernels.graph import PartitionedGraph, RootLabels
from graph500.partition import VertexBlocks

comm = world()
num_vertices = 1000
blocks = VertexBlocks(num_vertices, comm.size)
first, count = blocks.begin(comm.rank), blocks.count(comm.rank)
# each block numbered anew within itself (as the multi-GPU kernel 1 does): the whole table, then this rank's part
new_label = np.concatenate([np.random.default_rng(rank).permutation(blocks.count(rank)) + blocks.begin(rank)
                            for rank in range(comm.size)])
part = PartitionedGraph(num_vertices, first, np.zeros(count + 1, np.int64), np.zeros(0, np.int32), None, comm,
                        blocks, new_label=new_label[first:first + count].astype(np.int32))
rename = RootLabels(part, comm)
roots = [0, 1, num_vertices - 1] + [blocks.begin(rank) for rank in range(comm.size)] + [517, 64]
assert [rename(root) for root in roots] == new_label[roots].tolist(), comm.rank
# the owner's label alone, no collective (a captured start sums the ranks' labels plus one on the device)
owned = [int(new_label[root]) if first <= root < first + count else -1 for root in roots]
assert [rename.local(root) for root in roots] == owned, comm.rank
print("renamed", flush=True)
"""


def test_root_labels_renames_a_key_from_the_block_tables_alone():
    """A search key under a degree-ordered graph's labels, no rank holding the table of all N vertices: one
    process (its one block), and on three ranks (MPI) every rank gets each key's label from its owner."""
    new_label = np.random.default_rng(2).permutation(300)
    graph = simple_csr(np.array([0]), np.array([1]), 300)
    graph.new_label = new_label
    rename = RootLabels(graph)
    assert [rename(root) for root in (0, 7, 299)] == new_label[[0, 7, 299]].tolist()
    graph.new_label = None
    assert RootLabels(graph)(42) == 42


class _DeviceTable:
    """A stand-in for a CuPy table: ``get()`` copies it to the host, counted."""

    def __init__(self, values):
        self.values, self.copies = values, 0

    def get(self):
        self.copies += 1
        return self.values.copy()


def test_root_labels_copy_a_device_table_once_a_graph():
    """The BFS's and the SSSP's set-up share one host copy of a device graph's new_label; a new table is copied
    again."""
    new_label = np.random.default_rng(4).permutation(100)
    graph = simple_csr(np.array([0]), np.array([1]), 100)
    graph.new_label = table = _DeviceTable(new_label)
    assert [RootLabels(graph)(root) for root in (3, 99)] == new_label[[3, 99]].tolist()
    assert table.copies == 1
    graph.new_label = other = _DeviceTable(new_label[::-1].copy())
    assert RootLabels(graph)(3) == new_label[96] and other.copies == 1


@needs_mpi
def test_root_labels_on_ranks(tmp_path):
    script = tmp_path / "root_labels.py"
    script.write_text(ROOT_LABELS_SCRIPT)
    result = run_ranks(3, script)
    assert result.returncode == 0, result.stdout[-2000:] + result.stderr[-2000:]
    assert result.stdout.count("renamed") == 3  # every rank (their lines may interleave)
