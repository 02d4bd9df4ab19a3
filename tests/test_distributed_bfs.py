"""Tests for the distributed BFS kernel (`graph500.kernels.cpu.bfs_distributed`).

(a) P = 1, in this process: on the reference fixtures and on odd graphs, given
a `CSRGraph`, kernel 1's renumbered graph or a one-rank `PartitionedGraph`,
every tree is valid, nedge equals the one-process kernel's, and the trace
accounts for every reached vertex once.
(b) P = 2 and 3 under ``mpiexec`` (oversubscribed; skipped without mpiexec or
mpi4py): each rank generates its slice of the tuples and builds its part;
rank 0 gathers the parents and validates them against the whole edge list.
"""

import glob
import os

import numpy as np
import pytest
from support import THREADS, needs_mpi, numba_threads, run_ranks

from graph500 import io, kernels
from graph500.comm import SelfCommunicator
from graph500.distributed import partition_graph
from graph500.generators import kronecker
from graph500.generators.roots import incident_vertices, search_keys
from graph500.kernels.cpu.backend import CPUBackend
from graph500.kernels.cpu.bfs_distributed import DistributedBFS
from graph500.kernels.cpu.build import build_csr
from graph500.partition import VertexBlocks
from graph500.validators import ValidationGraph, validate_bfs

DATA = os.path.join(os.path.dirname(__file__), "data", "reference-v3")
FIXTURES = sorted(glob.glob(os.path.join(DATA, "*.edges")))


def one_rank_graphs(src, dst, num_vertices):
    """The graphs a one-rank search may be given: plain CSR, kernel 1's renumbered CSR, a one-rank part."""
    return {"build_csr": build_csr(src, dst, num_vertices),
            "kernel-1": CPUBackend().build(src, dst, num_vertices, None),
            "partition": partition_graph(SelfCommunicator(), VertexBlocks(num_vertices, 1), src, dst, None)}


def edge_array(edges):
    edges = np.array(edges, dtype=np.int64).reshape(-1, 2)
    return edges[:, 0].copy(), edges[:, 1].copy()


def odd_graphs():
    """(name, src, dst, num_vertices, roots)."""
    path = [(k, k + 1) for k in range(59)]
    star = [(0, k) for k in range(1, 200)]
    loops = [(0, 0), (0, 1), (1, 0), (1, 2), (1, 2), (2, 2), (3, 3), (2, 5), (5, 2)]
    return [
        ("isolated-root", *edge_array([(0, 1), (1, 2)]), 64, [5, 0]),
        ("path", *edge_array(path), 70, [0, 30, 59]),
        ("star", *edge_array(star), 256, [0, 7]),
        ("self-loops-and-duplicates", *edge_array(loops), 8, [0, 3, 5]),
        ("single-vertex", *edge_array([]), 1, [0]),
    ]


def fixture_graphs():
    for path in FIXTURES:
        src, dst, _ = io.read_edges(path)
        scale = int(os.path.basename(path).split("_")[0][1:])
        roots = np.loadtxt(path.replace(".edges", ".roots"), dtype=np.int64)[:6]
        yield os.path.basename(path), src, dst, 1 << scale, [int(root) for root in roots]


@pytest.mark.parametrize("tunables", [{}, {"parallel_edges": 0}, {"alpha": 2.0, "beta": 2.0}, {"reorder": False},
                                      {"found_bitmap_edges": 0}, {"found_bitmap_edges": 1 / 64},
                                      {"found_bitmap_edges": 0, "parallel_edges": 0}, {"first_neighbors": False}],
                         ids=["defaults", "parallel-edges-0", "early-switches", "no-reorder", "found-bitmaps",
                              "found-bitmaps-from-n-64", "found-bitmaps-parallel", "rows-only"])
@pytest.mark.parametrize("threads", THREADS)
@pytest.mark.parametrize("case", list(fixture_graphs()) + odd_graphs(), ids=lambda case: case[0])
def test_one_rank_trees_are_valid_with_the_one_process_nedge(case, threads, tunables):
    name, src, dst, num_vertices, roots = case
    validation = ValidationGraph.from_edges(src, dst, num_vertices)
    graphs = one_rank_graphs(src, dst, num_vertices)
    one_process = kernels.get("bfs", "cpu", "direction-optimizing")(graphs["build_csr"])
    with numba_threads(threads):
        for built_by, graph in graphs.items():
            kernel = DistributedBFS(graph, **tunables)
            for root in roots:
                parents = kernel.search(root)
                expected = one_process.search(root)
                assert parents.dtype == expected.dtype and parents.shape == (num_vertices,), built_by
                nedge = validate_bfs(validation, root, parents)
                assert nedge == validate_bfs(validation, root, expected), (built_by, root)
                assert sum(level["frontier"] for level in kernel.trace) == np.count_nonzero(parents >= 0)


def test_registered_as_the_distributed_default():
    assert kernels.default_name("bfs", "cpu", distributed=True) == DistributedBFS.name
    assert kernels.get("bfs", "cpu", DistributedBFS.name, distributed=True) is DistributedBFS


def test_trace_has_both_directions_and_global_counts():
    name, src, dst, num_vertices, roots = next(fixture_graphs())
    graph = build_csr(src, dst, num_vertices)
    kernel = DistributedBFS(graph)  # top-down levels by requests (the default)
    parents = kernel.search(roots[0])
    directions = [level["direction"] for level in kernel.trace]
    assert directions[0] == "top-down" and "bottom-up" in directions
    top_down = [level for level in kernel.trace if level["direction"] == "top-down"]
    # every level takes time, and every vertex reached but the root was found through an edge examined
    assert all(level["seconds"] > 0 for level in kernel.trace)
    assert sum(level["edges_examined"] for level in kernel.trace) >= np.count_nonzero(parents >= 0) - 1
    # A top-down level examines its frontier's edges: the root's level, the root's degree.
    assert top_down[0]["edges_examined"] == graph.offsets[roots[0] + 1] - graph.offsets[roots[0]]
    assert sum(level["frontier"] for level in kernel.trace) == np.count_nonzero(parents >= 0)
    # By found bitmaps, a top-down level also counts the parent search's edges.
    kernel = DistributedBFS(graph, found_bitmap_edges=0)
    assert np.array_equal(kernel.search(roots[0]) >= 0, parents >= 0)
    top_down = [level for level in kernel.trace if level["direction"] == "top-down"]
    assert top_down[0]["edges_examined"] > graph.offsets[roots[0] + 1] - graph.offsets[roots[0]]


def test_rows_by_degree_class_relabels_and_orders_each_row_with_either_table_width():
    """Degree ordering's row rewrite: every new row is its input row under the new labels (the same multiset),
    hubs first (non-increasing degree class, input order within a class); the packed table of classes and labels
    is uint32 up to 2^26 vertices and uint64 beyond, and both widths give the same rows."""
    from graph500.kernels.cpu.bfs_distributed import _bit_lengths, _rows_by_degree_class
    from graph500.kernels.cpu.frontier import balanced_bounds
    from graph500.kernels.cpu.reorder import by_decreasing_degree, inverse_permutation
    from graph500.partition import DistinctLabels

    name, src, dst, num_vertices, _ = next(fixture_graphs())
    graph = build_csr(src, dst, num_vertices)
    degrees = np.diff(graph.offsets)
    new_local = inverse_permutation(by_decreasing_degree(degrees))
    degree_class = _bit_lengths(degrees)
    num_classes = int(degree_class.max()) + 1
    label_bits = max(1, (num_vertices - 1).bit_length())
    new_offsets = np.zeros_like(graph.offsets)
    np.cumsum(degrees[np.argsort(new_local)], out=new_offsets[1:])
    neighbours = DistinctLabels((graph.neighbors,), num_vertices)  # the table holds the rows' neighbours only
    rows = []
    for dtype in (np.uint32, np.uint64):
        table = (degree_class.astype(dtype) << dtype(label_bits)) | new_local.astype(dtype)
        new_neighbors = np.empty_like(graph.neighbors)
        _rows_by_degree_class(graph.offsets, graph.neighbors, new_local, neighbours.words, neighbours.word_ranks,
                              table[neighbours.labels], label_bits, num_classes, balanced_bounds(graph.offsets, 2),
                              new_offsets, new_neighbors)
        rows.append(new_neighbors)
    assert np.array_equal(rows[0], rows[1]), name
    new_class = np.empty_like(degree_class)
    new_class[new_local] = degree_class
    for r in range(num_vertices):
        row = rows[0][new_offsets[new_local[r]]:new_offsets[new_local[r] + 1]]
        expected = new_local[graph.neighbors[graph.offsets[r]:graph.offsets[r + 1]]]
        assert np.array_equal(np.sort(row), np.sort(expected)), (name, r)
        classes = new_class[row]
        assert np.all(np.diff(classes.astype(np.int64)) <= 0), (name, r)
        stable = expected[np.argsort(-new_class[expected].astype(np.int64), kind="stable")]
        assert np.array_equal(row, stable), (name, r)


RANK_SCRIPT = r'''
import sys

import numpy as np

from graph500.comm import world
from graph500.distributed import partition_graph
from graph500.generators import kronecker
from graph500.generators.roots import mark_incident, search_keys
from graph500.kernels.cpu.bfs_distributed import DistributedBFS
from graph500.partition import VertexBlocks, tuple_range
from graph500.validators import ValidationGraph, validate_bfs

scale, edgefactor, num_roots, parallel_edges, busiest_rank = (int(arg) for arg in sys.argv[1:6])
found_bitmap_edges = float(sys.argv[6])
comm = world()
if sys.argv[7] == "0":
    comm._host_comm = False  # no shared windows: every rank its own copies, as ranks on several hosts
num_vertices, num_tuples = 1 << scale, edgefactor << scale
blocks = VertexBlocks(num_vertices, comm.size)
start, stop = tuple_range(num_tuples, comm.rank, comm.size)
src, dst, weights = kronecker.generate_edges(scale, edgefactor, 2, 3, start, stop)
graph = partition_graph(comm, blocks, src, dst, None)
has_edge = np.zeros(num_vertices, dtype=bool)
mark_incident(src, dst, has_edge)
roots, _ = search_keys(scale, 2, 3, comm.allreduce(has_edge, "or"), num_roots)
kernel = DistributedBFS(graph, parallel_edges=parallel_edges, busiest_rank=bool(busiest_rank),
                        found_bitmap_edges=found_bitmap_edges)
if comm.rank == 0:
    all_src, all_dst, _ = kronecker.generate_edges(scale, edgefactor, 2, 3)
    validation = ValidationGraph.from_edges(all_src, all_dst, num_vertices)
for root in roots:
    parents = kernel.search(int(root))
    assert parents.shape == (blocks.count(comm.rank),)
    directions = [level["direction"] for level in kernel.trace]
    if "bottom-up" in directions and directions[-1] == "top-down":
        # bottom-up levels keep only each rank's own visited words; top-down ones need every rank's
        assert np.array_equal(kernel.visited, comm.allgather(kernel.local_visited)), "stale visited bitmap"
    directions = set(directions)
    reached = comm.allreduce(np.count_nonzero(parents >= 0), "sum")
    assert sum(level["frontier"] for level in kernel.trace) == reached
    parents = comm.allgather(parents)
    if comm.rank == 0:
        print("nedge", int(root), validate_bfs(validation, int(root), parents), " ".join(sorted(directions)),
              flush=True)
'''


@needs_mpi
@pytest.mark.parametrize("num_ranks, threads, parallel_edges, busiest_rank, found_bitmap_edges, shared",
                         [(2, 1, 1 << 15, 1, float("inf"), 1), (3, 2, 0, 0, 0, 1), (2, 2, 0, 1, 1 / 64, 1),
                          (3, 1, 1 << 15, 1, float("inf"), 0), (3, 1, 0, 0, 0, 0)])
def test_ranks_build_valid_trees_with_the_one_process_nedge(tmp_path, num_ranks, threads, parallel_edges, busiest_rank,
                                                            found_bitmap_edges, shared):
    scale, edgefactor, num_roots = 11, 16, 8
    script = tmp_path / "ranks.py"
    script.write_text(RANK_SCRIPT)
    result = run_ranks(num_ranks, script, scale, edgefactor, num_roots, parallel_edges, busiest_rank,
                       found_bitmap_edges, shared, threads=threads)
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    lines = [line.split() for line in result.stdout.splitlines() if line.startswith("nedge")]
    src, dst, _ = kronecker.generate_edges(scale, edgefactor, 2, 3)
    num_vertices = 1 << scale
    roots, _ = search_keys(scale, 2, 3, incident_vertices(src, dst, num_vertices), num_roots)
    assert [int(line[1]) for line in lines] == roots.tolist()
    validation = ValidationGraph.from_edges(src, dst, num_vertices)
    one_process = kernels.get("bfs", "cpu", "direction-optimizing")(build_csr(src, dst, num_vertices))
    for line in lines:
        root = int(line[1])
        assert int(line[2]) == validate_bfs(validation, root, one_process.search(root)), root
    assert any("bottom-up" in line[3:] for line in lines) and any("top-down" in line[3:] for line in lines)
