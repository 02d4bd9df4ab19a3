"""Tests for the CPU kernels: every BFS and SSSP kernel, under every tunable that picks a code path,
gives trees the validators accept, on the reference fixtures and on odd graphs, for several thread counts.

Each kernel's SSSP distances must equal the serial Dijkstra's exactly (the
float32 shortest distances are unique), and each BFS trace must account for
every reached vertex once.
"""

import glob
import os

import numba
import numpy as np
import pytest
from support import numba_threads

from graph500 import io, kernels
from graph500.generators import kronecker
from graph500.generators.rmat import generate_rmat
from graph500.generators.roots import incident_vertices, search_keys
from graph500.kernels.cpu import (bfs_numa_bottom_up, frontier, sssp_delta_stepping, sssp_delta_stepping_workspace,
                                  sssp_words)
from graph500.kernels.cpu.backend import CPUBackend
from graph500.kernels.cpu.build import build_csr
from graph500.kernels.graph import neighbor_dtype
from graph500.validators import ValidationGraph, validate_bfs, validate_sssp

DATA = os.path.join(os.path.dirname(__file__), "data", "reference-v3")
FIXTURES = sorted(glob.glob(os.path.join(DATA, "*.edges")))
THREADS = sorted({1, min(2, numba.config.NUMBA_NUM_THREADS), numba.config.NUMBA_NUM_THREADS})

# (name, tunables): every switch that selects a different code path
BFS_KERNELS = [
    ("top-down", {}),
    ("top-down", {"parallel_edges": 0}),
    ("bottom-up", {}),
    ("bottom-up", {"reorder": False}),
    ("direction-optimizing", {}),
    ("direction-optimizing", {"parallel_edges": 0, "reorder": False}),
    ("direction-optimizing", {"first_neighbors": False}),
    ("direction-optimizing", {"policy": "hubs"}),
    ("direction-optimizing", {"policy": "hubs", "gamma": 0.0, "hub_degree": 1, "parallel_edges": 0}),
    ("numa-bottom-up", {"numa_domains": 1}),
    ("numa-bottom-up", {"numa_domains": 3, "parallel_edges": 0}),
]
SSSP_KERNELS = [
    ("dijkstra", {}),
    ("delta-stepping", {}),
    ("delta-stepping", {"delta": 0.05, "fusion_edges": 0, "round_edges": 1000}),
    ("delta-stepping", {"delta": 0.3, "reorder": False, "fusion_edges": 0}),
    ("delta-stepping", {"delta": 2.0}),
    ("delta-stepping", {"delta": 1e-3, "fusion_edges": 512}),
]


def kernel_id(case):
    name, tunables = case
    return name + "".join(f"-{key}={value}" for key, value in tunables.items())


class Case:
    """A graph as the kernels and the validators see it, with the roots to search from."""

    def __init__(self, name, src, dst, weights, num_vertices, roots):
        self.name = name
        self.num_vertices = num_vertices
        self.graphs = {"build_csr": build_csr(src, dst, num_vertices, weights),  # original labels
                       "kernel-1": CPUBackend().build(src, dst, num_vertices, weights)}  # degree-ordered
        self.validation = ValidationGraph.from_edges(src, dst, num_vertices, weights)
        self.roots = [int(root) for root in roots]


def fixture_case(path):
    src, dst = io.read_reference_edges(path)
    weights = np.fromfile(path + ".weights", "<f4")
    scale = int(os.path.basename(path).split("_")[0][1:])
    roots = np.loadtxt(path.replace(".edges", ".roots"), dtype=np.int64)[:4]
    return Case(os.path.basename(path), src, dst, weights, 1 << scale, roots)


def rmat_case(scale, edgefactor, seed):
    """An R-MAT graph with many components; roots: hubs, leaves whose neighbour is a leaf, isolated vertices."""
    src, dst, weights = generate_rmat(scale, edgefactor, seed=seed)
    num_vertices = 1 << scale
    degree = np.bincount(np.concatenate([src[src != dst], dst[src != dst]]), minlength=num_vertices)
    neighbour = np.zeros(num_vertices, dtype=np.int64)
    neighbour[src] = dst
    neighbour[dst] = src
    leaf_pairs = np.flatnonzero((degree == 1) & (degree[neighbour] == 1))
    roots = [int(np.argmax(degree))] + leaf_pairs[:2].tolist() + np.flatnonzero(degree == 0)[:1].tolist()
    return Case(f"rmat-s{scale}-ef{edgefactor}-seed{seed}", src, dst, weights, num_vertices, roots)


def small_case(name, edges, weights, num_vertices, roots):
    edges = np.array(edges, dtype=np.int64).reshape(-1, 2)
    return Case(name, edges[:, 0], edges[:, 1], np.array(weights, dtype=np.float32), num_vertices, roots)


def small_cases():
    return [
        small_case("single-vertex", [], [], 1, [0]),
        small_case("one-edge", [(0, 1)], [0.5], 2, [0, 1]),
        small_case("self-loops-and-duplicates", [(0, 0), (0, 1), (1, 0), (1, 2), (1, 2), (2, 2)],
                   [0.1, 0.9, 0.2, 0.7, 0.3, 0.0], 4, [0, 2, 3]),
        small_case("zero-weights", [(0, 1), (1, 2), (2, 0), (2, 3), (3, 4)], [0.0, 0.0, 0.0, 0.5, 0.0], 5,
                   [0, 3]),
        small_case("star-and-path", [(0, k) for k in range(1, 40)] + [(39, 40), (40, 41), (41, 42)],
                   np.linspace(0.0, 0.99, 42), 64, [0, 42, 63]),
    ]


@pytest.fixture(scope="module", params=FIXTURES + ["rmat", "small"], ids=lambda p: os.path.basename(p))
def cases(request):
    if request.param == "rmat":
        return [rmat_case(10, 2, seed=1), rmat_case(9, 1, seed=2)]
    if request.param == "small":
        return small_cases()
    return [fixture_case(request.param)]


@pytest.fixture(scope="module")
def dijkstra_distances(cases):
    """Exact distances per (case, root), from the serial baseline."""
    distances = {}
    for case in cases:
        kernel = kernels.get("sssp", "cpu", "dijkstra")(case.graphs["build_csr"])
        for root in case.roots:
            distances[case.name, root] = kernel.search(root)[1]
    return distances


@pytest.mark.parametrize("built_by", ["build_csr", "kernel-1"])
@pytest.mark.parametrize("threads", THREADS)
@pytest.mark.parametrize("kernel_case", BFS_KERNELS, ids=kernel_id)
def test_bfs_kernel_trees_are_valid(cases, kernel_case, threads, built_by):
    name, tunables = kernel_case
    with numba_threads(threads):
        for case in cases:
            kernel = kernels.get("bfs", "cpu", name)(case.graphs[built_by], **tunables)
            for root in case.roots:
                parents = kernel.search(root)
                # the labels' dtype (int32 here): half the bytes to map back to the original labels
                assert parents.dtype == neighbor_dtype(case.num_vertices) == np.int32
                assert parents.shape == (case.num_vertices,)
                validate_bfs(case.validation, root, parents)
                assert sum(level["frontier"] for level in kernel.trace) == np.count_nonzero(parents >= 0)


@pytest.mark.parametrize("built_by", ["build_csr", "kernel-1"])
@pytest.mark.parametrize("threads", THREADS)
@pytest.mark.parametrize("kernel_case", SSSP_KERNELS, ids=kernel_id)
def test_sssp_kernel_trees_are_valid_and_exact(cases, dijkstra_distances, kernel_case, threads, built_by):
    name, tunables = kernel_case
    with numba_threads(threads):
        for case in cases:
            kernel = kernels.get("sssp", "cpu", name)(case.graphs[built_by], **tunables)
            for root in case.roots:
                parents, distances = kernel.search(root)
                assert parents.dtype == np.int64 and distances.dtype == np.float32
                validate_sssp(case.validation, root, parents, distances)
                np.testing.assert_array_equal(distances, dijkstra_distances[case.name, root])


@pytest.mark.parametrize("name", ["top-down", "bottom-up", "direction-optimizing"])
def test_bfs_parent_array_is_kept_between_searches_and_never_returned(name):
    """Each search returns a new array (earlier outputs stay valid after later searches), and a search that
    stopped before mapping its parents back (left the kept array dirty) does not spoil the next one."""
    case = fixture_case(FIXTURES[-1])
    kernel = kernels.get("bfs", "cpu", name)(case.graphs["kernel-1"])
    outputs = [kernel.search(root) for root in case.roots]
    for root, parents in zip(case.roots, outputs):
        validate_bfs(case.validation, root, parents)
    dirty = kernel.parents.start(case.roots[0])  # as a search interrupted after claiming some vertices
    dirty[:] = case.roots[0]
    np.testing.assert_array_equal(kernel.search(case.roots[1]), outputs[1])


@pytest.mark.parametrize("name", ["top-down", "bottom-up", "direction-optimizing"])
def test_bfs_parent_array_holds_minus_one_past_the_vertices_with_edges(name):
    """`Parents.finish` gathers the output without testing whether a vertex has edges: the kept array's entries
    from the first vertex without edges on must hold -1 after every search, from an isolated root too."""
    case = rmat_case(10, 4, seed=7)
    kernel = kernels.get("bfs", "cpu", name)(case.graphs["kernel-1"])
    degrees = np.diff(kernel.graph.offsets)
    filled = int(np.count_nonzero(degrees))  # degree order puts the vertices without edges last
    assert filled < case.num_vertices and not degrees[filled:].any()
    assert degrees[kernel.graph.new_label[case.roots[-1]]] == 0  # an isolated root among the keys
    for root in case.roots:
        parents = kernel.search(root)
        validate_bfs(case.validation, root, parents)
        assert (kernel.parents.array[filled:] == -1).all()
        assert parents[root] == root


def test_delta_stepping_grows_its_buffers_and_searches_again():
    case = fixture_case(FIXTURES[-1])
    reference = kernels.get("sssp", "cpu", "dijkstra")(case.graphs["build_csr"])
    kernel = kernels.get("sssp", "cpu", "delta-stepping")(case.graphs["build_csr"], fusion_edges=0)
    kernel.room = 1 / 1024  # buffers of 2 entries: the first searches stop and start again
    for root in case.roots:
        parents, distances = kernel.search(root)
        validate_sssp(case.validation, root, parents, distances)
        np.testing.assert_array_equal(distances, reference.search(root)[1])
    assert kernel.room > 1 / 1024


@pytest.mark.parametrize("where", ["requests", "bin"])
def test_delta_stepping_restores_the_updates_a_round_lost(where):
    """Threads improved v at once and the largest word landed last: that word is kept as the round found it,
    then the smallest lost one becomes the state and is kept too; a lost word above it is not. The words wait
    in a request buffer (classified after a round) or in the current bucket's bin (the heavy step's, settled
    when the bin is emptied)."""
    case = small_cases()[-1]
    kernel = sssp_delta_stepping.DeltaSteppingSSSP(case.graphs["build_csr"], delta=1.0)
    workspace, buffers = kernel._workspace(), kernel.buffers
    root = int(kernel.rows.new_label[0])
    v = next(u for u in range(kernel.first_leaf) if u != root)  # not a leaf: a leaf's state is kept in no list
    parents, distances = np.empty(case.num_vertices, dtype=np.int64), np.empty(case.num_vertices, dtype=np.float32)
    sssp_delta_stepping._reset(workspace, root, parents, distances)  # the root is in frontier 0, bucket 0
    smaller, middle, larger = (sssp_words._pack(np.float32(d), root) for d in (0.25, 0.375, 0.5))
    kernel.state[v] = larger
    buffers["request_count"][:] = 0
    if where == "requests":
        buffers["request_vertex"][0, :3] = v
        buffers["request_word"][0, :3] = smaller, larger, middle
        buffers["request_count"][0] = 3
        sssp_delta_stepping._classify_round(workspace, True)
    else:
        for word in (smaller, larger, middle):
            sssp_delta_stepping_workspace._bin_append(workspace, 0, 0, v, word)  # task 0's bin of bucket 0
        assert sssp_delta_stepping._extract(workspace, 0)
    assert kernel.state[v] == smaller
    for role in (0, sssp_delta_stepping_workspace._SETTLED):  # v has light edges: it is in the frontier too
        count = buffers["segment_count"][role, 0]
        assert buffers["segment_vertex"][role, 0, :count].tolist() == [root, v, v]
        assert buffers["segment_word"][role, 0, 1:count].tolist() == [larger, smaller]  # the larger one stale now


def test_defaults_are_the_fast_kernels():
    assert kernels.default_name("bfs", "cpu") == "direction-optimizing"
    assert kernels.default_name("sssp", "cpu") == "delta-stepping"


def test_traces_describe_each_level():
    case = fixture_case(FIXTURES[-1])
    root = case.roots[0]
    bfs = kernels.get("bfs", "cpu", "direction-optimizing")(case.graphs["build_csr"], alpha=2.0)
    found = bfs.search(root) >= 0
    directions = [level["direction"] for level in bfs.trace]
    assert directions[0] == "top-down" and "bottom-up" in directions
    # every level takes time, and every vertex reached but the root was found through an edge examined
    assert all(level["seconds"] > 0 for level in bfs.trace)
    assert sum(level["edges_examined"] for level in bfs.trace) >= np.count_nonzero(found) - 1
    graph = case.graphs["build_csr"]
    top_down = kernels.get("bfs", "cpu", "top-down")(graph)
    reached = top_down.search(root) >= 0
    assert sum(level["edges_examined"] for level in top_down.trace) == np.diff(graph.offsets)[reached].sum()
    sssp = kernels.get("sssp", "cpu", "delta-stepping")(case.graphs["build_csr"])
    parents, _ = sssp.search(root)
    assert [entry["bucket"] for entry in sssp.trace] == sorted(entry["bucket"] for entry in sssp.trace)
    branching = sssp.rows.new_label < sssp.first_leaf  # the leaves are never settled
    assert sum(entry["frontier"] for entry in sssp.trace) >= np.count_nonzero((parents >= 0) & branching)


def test_numa_domains_come_from_the_os_or_the_caller():
    assert bfs_numa_bottom_up.detected_numa_domains() >= 1
    case = small_cases()[-1]
    kernel = kernels.get("bfs", "cpu", "numa-bottom-up")(case.graphs["build_csr"], numa_domains=4)
    assert kernel.layout.copies == 4
    with pytest.raises(ValueError):
        kernels.get("bfs", "cpu", "numa-bottom-up")(case.graphs["build_csr"], numa_domains=0)


def test_bad_tunables_are_refused():
    case = small_cases()[1]
    with pytest.raises(ValueError):
        kernels.get("bfs", "cpu", "direction-optimizing")(case.graphs["build_csr"], policy="sideways")
    with pytest.raises(ValueError):
        kernels.get("sssp", "cpu", "delta-stepping")(case.graphs["build_csr"], delta=0.0)
    unweighted = build_csr(np.array([0]), np.array([1]), 2)
    with pytest.raises(ValueError):
        kernels.get("sssp", "cpu", "delta-stepping")(unweighted)


@pytest.mark.parametrize("threads", THREADS)
@pytest.mark.parametrize("num_words", [0, 1, 3, 1000])
def test_bitmap_to_queue_and_edges_lists_the_set_bits_in_order(threads, num_words):
    rng = np.random.default_rng(num_words)
    bits = rng.random(num_words * 64) < 0.3
    bitmap = np.packbits(bits, bitorder="little").view(np.uint64) if num_words else np.zeros(0, dtype=np.uint64)
    offsets = np.concatenate([[0], np.cumsum(rng.integers(0, 9, num_words * 64))]).astype(np.int64)
    with numba_threads(threads):
        queue, edges = frontier.bitmap_to_queue_and_edges(bitmap, offsets)
        np.testing.assert_array_equal(frontier.bitmap_to_queue(bitmap), queue)
    np.testing.assert_array_equal(queue, np.flatnonzero(bits))
    assert queue.dtype == np.int64
    assert edges == int(np.diff(offsets)[bits].sum())


@pytest.mark.parametrize("threads", THREADS)
def test_bfs_with_large_frontiers_gives_valid_trees(threads):
    """SCALE 16: frontiers of tens of thousands of vertices, parallel top-down levels with many claims (the
    fixtures' frontiers are small)."""
    src, dst, weights = kronecker.generate_edges(16, 16, 2, 3)
    num_vertices = 1 << 16
    validation = ValidationGraph.from_edges(src, dst, num_vertices, weights)
    with numba_threads(threads):
        kernel = kernels.get("bfs", "cpu")(CPUBackend().build(src, dst, num_vertices, weights))
        roots = search_keys(16, 2, 3, incident_vertices(src, dst, num_vertices), 4)[0]
        for root in roots:
            validate_bfs(validation, int(root), kernel.search(int(root)))
    assert max(level["frontier"] for level in kernel.trace) > 10000
