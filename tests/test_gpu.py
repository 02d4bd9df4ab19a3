"""GPU backend and kernels: the device generator and CSR equal the CPU's; every GPU BFS and SSSP is validated.

Runs only where CuPy imports and sees a CUDA device (marker ``gpu``). Each
search result is validated twice: by the array-generic validator on the
device's CuPy arrays (as ``graph500 run --backend gpu`` does) and by the
Numba validator on a host copy; both must pass and agree on nedge.

Graphs: the reference fixtures (all 64 search keys), hand-made awkward
graphs (SCALE 1-3, many components, a huge hub, a long path, an isolated
root, zero and vanishing weights), and R-MAT graphs of awkward shapes where
the R-MAT generator exists.
"""

import io as text_io
import json
import pathlib
import re

import numpy as np
import pytest

pytestmark = pytest.mark.gpu
cupy = pytest.importorskip("cupy")

from graph500.kernels.gpu.backend import gpu_unavailable_reason  # noqa: E402

if gpu_unavailable_reason():
    pytest.skip(gpu_unavailable_reason(), allow_module_level=True)

from graph500 import harness, io, kernels  # noqa: E402
from graph500.errors import Graph500Error  # noqa: E402
from graph500.generators import kronecker, roots as roots_module  # noqa: E402
from graph500.kernels.cpu.build import build_csr as cpu_build_csr  # noqa: E402
from graph500.kernels.gpu import bfs as gpu_bfs, generator as gpu_generator, sssp as gpu_sssp  # noqa: E402
from graph500.kernels.gpu import backend as gpu_backend  # noqa: E402
from graph500.kernels.gpu.backend import GPUBackend  # noqa: E402
from graph500.kernels.gpu import build as gpu_build  # noqa: E402
from graph500.kernels.gpu.build import build_csr as gpu_build_csr  # noqa: E402
from graph500.kernels.graph import CSRGraph  # noqa: E402
from graph500.partition import VertexBlocks  # noqa: E402
from graph500.validators import ValidationGraph, validate_bfs, validate_sssp  # noqa: E402

FIXTURES = sorted(pathlib.Path(__file__).parent.glob("data/reference-v3/*.edges"))
BFS_KERNELS = [name for name in kernels.available("bfs", "gpu")  # the one-GPU kernels (degree-ordered graphs)
               if not kernels.is_distributed(kernels.get("bfs", "gpu", name))]
# Direction-optimizing variants that force every switching path on small graphs, and the one-block top-down
# levels off (every level a grid), one at a time (as when tracing) and taking frontiers of any edge count.
DO_VARIANTS = {
    "beamer-default": {},
    "no-small-levels": {"small_edges": 0},
    "traced": {"trace": True},
    "small-levels-of-any-edges": {"small_edges": 1 << 40, "gamma": 1e-12},
    "switch-every-level": {"alpha": 1e12, "beta": 1.0},
    "hub-share": {"switch_rule": "hub-share", "hub_degree": 4, "hub_share": 0.01},
    "long-queue": {"alpha": 1e12, "short_scan": 1},
    "rows-only": {"alpha": 1e12, "strongest_first": False},
    "graph-rows": {"row_copy": False},
    "host-asks-small-levels": {"small_follow": False},
}
# Delta-stepping settings that force every path: default, narrow buckets, (nearly) all heavy, all light,
# a pull in every heavy phase, push only without a tail, the tail from the second bucket on, the tail pushed.
SSSP_VARIANTS = {
    "default": {},
    "narrow": {"delta": 0.03},
    "all-heavy": {"delta": 1e-6},
    "all-light": {"delta": 2.0},
    "always-pull": {"pull_ratio": 0.0},
    "push-only": {"pull_ratio": float("inf"), "tail_edges": float("inf")},
    "tail-at-once": {"tail_edges": 0.0},
    "tail-pushed": {"tail_pull": False},
}


class Graph:
    """An edge list on the host with the roots to search from."""

    def __init__(self, name, src, dst, num_vertices, weights=None, roots=None):
        self.name = name
        self.src = np.asarray(src, dtype=np.int64)
        self.dst = np.asarray(dst, dtype=np.int64)
        self.num_vertices = num_vertices
        rng = np.random.default_rng(len(name))
        self.weights = (np.asarray(weights, dtype=np.float32) if weights is not None
                        else rng.random(self.src.shape[0], dtype=np.float32))
        if roots is None:
            has_edge = roots_module.incident_vertices(self.src, self.dst, num_vertices)
            candidates = np.flatnonzero(has_edge)
            degree = np.bincount(self.src, minlength=num_vertices) + np.bincount(self.dst, minlength=num_vertices)
            picked = rng.choice(candidates, size=min(6, candidates.size), replace=False)
            roots = np.unique(np.concatenate([picked, [np.argmax(degree)]]))
        self.roots = [int(r) for r in roots]

    def __repr__(self):
        return self.name


def fixture_parameters(path):
    """``(scale, edgefactor, seed1, seed2)`` from a fixture's name ``sS_efE_seedA-B``."""
    return tuple(int(x) for x in re.match(r"s(\d+)_ef(\d+)_seed(\d+)-(\d+)", path.name).groups())


def vanishing_weights_graph():
    """A star of weight 0.5 around 0 whose leaves form a clique of weights 0 and 1e-9.

    Every leaf is at distance 0.5: 0.5 + 1e-9 rounds to 0.5 in float32, so
    equal-distance relaxations abound and a tie-breaking rule could make the
    parents form a cycle.
    """
    leaves = np.arange(1, 21)
    u, v = np.triu_indices(20, 1)
    src = np.concatenate([np.zeros(20, dtype=np.int64), leaves[u]])
    dst = np.concatenate([leaves, leaves[v]])
    weights = np.concatenate([np.full(20, 0.5), np.where(np.arange(u.size) % 2, 0.0, 1e-9)])
    return Graph("vanishing-weights", src, dst, 32, weights, roots=[0, 20, 7])


def fixture_graph(path):
    scale = fixture_parameters(path)[0]
    src, dst = io.read_reference_edges(str(path))
    weights = io.read_reference_weights(str(path) + ".weights", len(src))
    roots = np.loadtxt(str(path)[: -len(".edges")] + ".roots", dtype=np.int64)
    return Graph(path.stem, src, dst, 1 << scale, weights, roots)


def awkward_graphs():
    rng = np.random.default_rng(7)
    pairs = np.arange(0, 2000, 2)
    hub_leaves = np.arange(1, 4096)
    path = np.arange(2999)
    graphs = [
        Graph("scale1", [0, 1, 0, 1], [1, 1, 1, 0], 2, [0.5, 0.25, 0.125, 1.0]),
        Graph("scale2-loops-duplicates", [0, 1, 2, 2, 3, 0, 1], [0, 2, 1, 2, 3, 1, 2], 4),
        Graph("scale3-two-components", [0, 1, 2, 4, 5, 6], [1, 2, 3, 5, 6, 7], 8),
        Graph("many-components", pairs, pairs + 1, 2048),
        Graph("huge-hub", np.concatenate([np.zeros(4095, dtype=np.int64), rng.integers(0, 4096, 300)]),
              np.concatenate([hub_leaves, rng.integers(0, 4096, 300)]), 4096, roots=[0, 17, 4095]),
        Graph("long-path", path, path + 1, 3000, roots=[0, 1500, 2999]),
        Graph("isolated-root", [1, 2], [2, 3], 5, roots=[0, 4, 1]),
        vanishing_weights_graph(),
    ]
    try:
        from graph500.generators import rmat
    except ImportError:
        return graphs
    shapes = [(1, 4, (0.57, 0.19, 0.19, 0.05)), (2, 4, (0.25, 0.25, 0.25, 0.25)), (3, 2, (0.57, 0.19, 0.19, 0.05)),
              (12, 16, (0.57, 0.19, 0.19, 0.05)), (12, 8, (0.9, 0.04, 0.04, 0.02)), (13, 1, (0.45, 0.15, 0.15, 0.25))]
    for scale, edgefactor, (a, b, c, d) in shapes:
        src, dst, weights = rmat.generate_rmat(scale, edgefactor, a=a, b=b, c=c, d=d, seed=scale)
        graphs.append(Graph(f"rmat-s{scale}-ef{edgefactor}-a{a}", src, dst, 1 << scale, weights))
    return graphs


GRAPHS = [fixture_graph(path) for path in FIXTURES] + awkward_graphs()


def assert_same_csr(expected, actual):
    assert actual.num_vertices == expected.num_vertices
    np.testing.assert_array_equal(cupy.asnumpy(actual.offsets), expected.offsets)
    np.testing.assert_array_equal(cupy.asnumpy(actual.neighbors), expected.neighbors)
    if expected.weights is None:
        assert actual.weights is None
    else:
        np.testing.assert_array_equal(cupy.asnumpy(actual.weights).view(np.uint32), expected.weights.view(np.uint32))


@pytest.mark.parametrize("graph", GRAPHS, ids=repr)
@pytest.mark.parametrize("weighted", [False, True])
def test_gpu_builder_equals_cpu_builder(graph, weighted):
    weights = graph.weights if weighted else None
    expected = cpu_build_csr(graph.src, graph.dst, graph.num_vertices, weights)
    actual = gpu_build_csr(cupy.asarray(graph.src.astype(np.int32)), cupy.asarray(graph.dst.astype(np.int32)),
                           graph.num_vertices, None if weights is None else cupy.asarray(weights))
    assert_same_csr(expected, actual)
    actual64 = gpu_build_csr(graph.src, graph.dst, graph.num_vertices, weights)  # host int64 input
    assert_same_csr(expected, actual64)


def degree_ordered_cpu_csr(graph, weights):
    """``(csr, order)``: the CPU builder's graph renumbered by decreasing tuple count (ties by label), rows
    sorted, and the order (new -> input label)."""
    csr = cpu_build_csr(graph.src, graph.dst, graph.num_vertices, weights)
    loops = graph.src == graph.dst
    counts = (np.bincount(graph.src[~loops], minlength=graph.num_vertices)
              + np.bincount(graph.dst[~loops], minlength=graph.num_vertices))
    order = np.lexsort((np.arange(graph.num_vertices), -counts))
    new_label = np.empty_like(order)
    new_label[order] = np.arange(graph.num_vertices)
    rows = new_label[np.repeat(np.arange(graph.num_vertices), np.diff(csr.offsets))]
    columns = new_label[csr.neighbors]
    entries = np.lexsort((columns, rows))
    offsets = np.concatenate([[0], np.cumsum(np.bincount(rows, minlength=graph.num_vertices))])
    renumbered = CSRGraph(graph.num_vertices, offsets, columns[entries].astype(np.int32),
                          None if weights is None else csr.weights[entries])
    return renumbered, order


@pytest.mark.parametrize("graph", GRAPHS, ids=repr)
@pytest.mark.parametrize("weighted", [False, True])
def test_degree_ordered_builder_gives_the_graph_renumbered_by_decreasing_tuple_count(graph, weighted):
    weights = graph.weights if weighted else None
    expected, order = degree_ordered_cpu_csr(graph, weights)
    actual = gpu_build_csr(graph.src, graph.dst, graph.num_vertices, weights, degree_ordered=True)
    np.testing.assert_array_equal(cupy.asnumpy(actual.order), order)
    np.testing.assert_array_equal(cupy.asnumpy(actual.new_label)[order], np.arange(graph.num_vertices))
    assert_same_csr(expected, actual)


@pytest.mark.parametrize("graph", GRAPHS[:1] + GRAPHS[-1:], ids=repr)
@pytest.mark.parametrize("degree_ordered", [False, True], ids=["input-labels", "degree-ordered"])
def test_gpu_builder_with_many_buckets_equals_cpu_builder(graph, degree_ordered, monkeypatch):
    monkeypatch.setattr(gpu_build, "BUCKET_ENTRIES", 64)
    expected = (degree_ordered_cpu_csr(graph, graph.weights)[0] if degree_ordered
                else cpu_build_csr(graph.src, graph.dst, graph.num_vertices, graph.weights))
    actual = gpu_build_csr(graph.src, graph.dst, graph.num_vertices, graph.weights, degree_ordered=degree_ordered)
    assert_same_csr(expected, actual)


def test_buckets_of_known_row_degrees_share_the_keys_and_others_share_the_rows(monkeypatch):
    monkeypatch.setattr(gpu_build, "BUCKET_ENTRIES", 250)
    row_degrees = cupy.asarray([500, 100, 100, 100, 100, 50, 25, 25, 0, 0], dtype=np.uint32)  # 1000 keys: 4 buckets
    # Equal shares end at 250, 500, 750 keys: after row 0 (500 keys, one row) twice (an empty bucket between),
    # and after row 3 (800).
    assert gpu_build._bucket_bounds(1000, 10, row_degrees).get().tolist() == [0, 1, 1, 4, 10]
    assert gpu_build._bucket_bounds(1000, 10).get().tolist() == [0, 2, 5, 7, 10]
    assert gpu_build._bucket_bounds(200, 10, row_degrees).get().tolist() == [0, 10]  # one bucket


def test_gpu_builder_keeps_minimum_weight_of_duplicates():
    graph = gpu_build_csr(np.array([0, 1, 0]), np.array([1, 0, 1]), 2, np.array([0.5, 0.25, 0.75], dtype=np.float32))
    assert cupy.asnumpy(graph.weights).tolist() == [0.25, 0.25]


@pytest.mark.parametrize("graph", GRAPHS, ids=repr)
@pytest.mark.parametrize("part", [(0, 1), (0, 2), (1, 2), (2, 3)],
                         ids=["whole", "first-half", "second-half", "last-third"])
def test_gpu_build_rows_of_a_block_equal_the_cpu_builders(graph, part):
    """A rank's block of rows (multi-GPU kernel 1), from all the tuples: the CPU builder's arrays exactly."""
    from graph500.kernels.cpu.build import build_rows as cpu_build_rows

    index, parts = part
    n = graph.num_vertices
    first, end = n * index // parts, n * (index + 1) // parts
    expected = cpu_build_rows(graph.src, graph.dst, n, graph.weights, first, end - first)
    actual = gpu_build.build_rows(graph.src, graph.dst, n, graph.weights, first, end - first)[:3]
    for expected_array, actual_array in zip(expected, actual):
        np.testing.assert_array_equal(cupy.asnumpy(actual_array), expected_array)


class _GatheredTables:
    """A stand-in for the ranks' communicator of one rank's degree-ordered build_rows: its two allgathers return
    the whole tables (order, then new_label), made block by block beforehand."""

    def __init__(self, tables):
        self._tables = list(tables)

    def allgather(self, part):
        return self._tables.pop(0)


@pytest.mark.parametrize("graph", GRAPHS, ids=repr)
def test_gpu_build_rows_degree_ordered_within_blocks(graph):
    """Multi-GPU kernel 1's ordering: each block's vertices by decreasing tuple count, numbered from the block's
    first label (owners unchanged); every row is the input graph's row of the vertex under the new labels, with
    its weights, sorted by new label."""
    n = graph.num_vertices
    bounds = [0, n // 2 // 64 * 64, n] if n >= 128 else [0, n]  # blocks of whole 64-vertex words
    src, dst = cupy.asarray(graph.src), cupy.asarray(graph.dst)
    parts = [gpu_build._degree_order(src, dst, n, gpu_build._LABEL_TYPES[src.dtype], first, end - first)[:2]
             for first, end in zip(bounds, bounds[1:])]
    order, new_label = (cupy.concatenate([part[k] for part in parts]) for k in (0, 1))
    assert sorted(cupy.asnumpy(order).tolist()) == list(range(n))
    np.testing.assert_array_equal(cupy.asnumpy(new_label[order]), np.arange(n))
    expected = cpu_build_csr(graph.src, graph.dst, n, graph.weights)
    counts = np.bincount(np.concatenate([graph.src[graph.src != graph.dst], graph.dst[graph.src != graph.dst]]),
                         minlength=n)
    host_order = cupy.asnumpy(order)
    for first, end in zip(bounds, bounds[1:]):
        assert ((host_order[first:end] >= first) & (host_order[first:end] < end)).all()  # owners unchanged
        assert (np.diff(counts[host_order[first:end]]) <= 0).all()
        offsets, neighbors, weights, _, _ = (cupy.asnumpy(array) if array is not None else None for array in
                                             gpu_build.build_rows(graph.src, graph.dst, n, graph.weights, first,
                                                                  end - first, degree_ordered=True,
                                                                  comm=_GatheredTables([order, new_label])))
        for row in range(end - first):
            entries = slice(offsets[row], offsets[row + 1])
            assert (np.diff(neighbors[entries]) > 0).all()
            vertex = host_order[first + row]
            wanted = slice(expected.offsets[vertex], expected.offsets[vertex + 1])
            got = sorted(zip(host_order[neighbors[entries]].tolist(), weights[entries].tolist()))
            assert got == sorted(zip(expected.neighbors[wanted].tolist(), expected.weights[wanted].tolist()))


@pytest.mark.parametrize("weights, message", [
    (np.array([0.5, -1.0], dtype=np.float32), "negative"),
    (np.array([np.nan, 0.5], dtype=np.float32), "NaN"),
])
def test_gpu_builder_rejects_bad_weights(weights, message):
    with pytest.raises(ValueError, match=message):
        gpu_build_csr(np.array([0, 1]), np.array([1, 2]), 3, weights)


def test_gpu_builder_rejects_labels_out_of_range():
    with pytest.raises(ValueError, match="outside"):
        gpu_build_csr(np.array([0, 5]), np.array([1, 2]), 4)


def run_and_validate(kernel, graph, device_graph_validation, host_validation):
    for root in graph.roots:
        parents = kernel.search(root)
        assert isinstance(parents, cupy.ndarray) and parents.dtype == np.int32
        nedge = validate_bfs(device_graph_validation, root, parents)
        assert nedge == validate_bfs(host_validation, root, cupy.asnumpy(parents))
        if graph.src[graph.src != graph.dst].size and np.any((graph.src == root) & (graph.dst != root)):
            assert nedge > 0


def validation_graphs(graph):
    device = ValidationGraph.from_edges(cupy.asarray(graph.src), cupy.asarray(graph.dst), graph.num_vertices)
    host = ValidationGraph.from_edges(graph.src, graph.dst, graph.num_vertices)
    return device, host


@pytest.mark.parametrize("graph", GRAPHS, ids=repr)
@pytest.mark.parametrize("kernel_name", BFS_KERNELS)
@pytest.mark.parametrize("degree_ordered", [False, True], ids=["input-labels", "degree-ordered"])
def test_gpu_bfs_validates(kernel_name, graph, degree_ordered):
    csr = gpu_build_csr(graph.src, graph.dst, graph.num_vertices, degree_ordered=degree_ordered)
    kernel = kernels.get("bfs", "gpu", kernel_name)(csr)
    run_and_validate(kernel, graph, *validation_graphs(graph))


@pytest.mark.parametrize("graph", GRAPHS, ids=repr)
@pytest.mark.parametrize("variant", DO_VARIANTS)
def test_direction_optimizing_variants_validate(variant, graph):
    csr = gpu_build_csr(graph.src, graph.dst, graph.num_vertices, degree_ordered=True)
    kernel = gpu_bfs.DirectionOptimizingBFS(csr, **DO_VARIANTS[variant])
    run_and_validate(kernel, graph, *validation_graphs(graph))


def test_bfs_keeps_rows_in_neighbour_order_that_the_sssp_sorts_by_weight_after_it():
    graph = GRAPHS[0]
    csr = gpu_build_csr(graph.src, graph.dst, graph.num_vertices, graph.weights, degree_ordered=True)
    label_ordered = cupy.asnumpy(csr.neighbors)
    bfs = gpu_bfs.DirectionOptimizingBFS(csr)
    gpu_sssp.DeltaSteppingSSSP(csr)
    assert csr.rows_by_weight and not np.array_equal(cupy.asnumpy(csr.neighbors), label_ordered)
    np.testing.assert_array_equal(cupy.asnumpy(bfs._neighbors), label_ordered)
    run_and_validate(bfs, graph, *validation_graphs(graph))
    after_the_sort = gpu_bfs.DirectionOptimizingBFS(csr)  # no rows in neighbour order to copy: the graph's
    assert after_the_sort._neighbors is csr.neighbors
    run_and_validate(after_the_sort, graph, *validation_graphs(graph))


@pytest.mark.parametrize("options, first_level_bottom_up", [
    ({}, False), ({"alpha": 1e12, "gamma": 0.0}, True), ({"switch_rule": "hub-share", "hub_share": 0.0}, True),
    ({"switch_rule": "hub-share", "hub_share": 1.0}, False)], ids=["beamer", "beamer-bottom-up", "hubs-bottom-up",
                                                                  "hubs-top-down"])
def test_one_block_levels_leave_to_the_host_a_frontier_the_rule_sends_bottom_up(options, first_level_bottom_up):
    """The one-block levels run unasked after start_search: they must take the root's level only where the
    host's rule keeps it top-down (the root of GRAPHS[0] has few edges and is a hub of degree >= 1)."""
    graph = GRAPHS[0]
    csr = gpu_build_csr(graph.src, graph.dst, graph.num_vertices, degree_ordered=True)
    kernel = gpu_bfs.DirectionOptimizingBFS(csr, hub_degree=1, **options)
    root = graph.roots[0]
    kernel.search(root)  # leaves visited and the queue as they end; start again by hand
    kernel._start_search(root, kernel._parent)
    kernel._small_top_down_levels(kernel._parent, csr.num_edges, chosen=False)
    counts = kernel._counters.read()
    assert (counts[gpu_bfs.LEVELS_DONE] == 0) == first_level_bottom_up
    run_and_validate(kernel, graph, *validation_graphs(graph))


DISTRIBUTED_BFS_VARIANTS = {"default": {}, "top-down": {"gamma": 1e-12},
                            "bottom-up": {"alpha": 1e12, "beta": 1e12, "gamma": 0},
                            "bottom-up-to-the-end": {"alpha": 30.0, "beta": float("inf"), "trace": False}}


def one_rank_graph(graph, ordering, weighted=False):
    """A whole graph on the device as a one-rank multi-GPU kernel takes it: under the input's labels, or degree
    ordered (its labels renumbered, as the ranks' kernel 1 renumbers each block)."""
    from graph500.comm import SelfCommunicator
    from graph500.kernels.gpu.distributed_backend import DistributedGPUBackend

    weights = graph.weights if weighted else None
    if ordering == "degree":
        return gpu_build_csr(graph.src, graph.dst, graph.num_vertices, weights, degree_ordered=True)
    return DistributedGPUBackend(SelfCommunicator()).from_host_csr(
        cpu_build_csr(graph.src, graph.dst, graph.num_vertices, weights))


@pytest.mark.parametrize("graph", GRAPHS, ids=repr)
@pytest.mark.parametrize("ordering", ["input", "degree"])
@pytest.mark.parametrize("variant", DISTRIBUTED_BFS_VARIANTS)
def test_distributed_gpu_bfs_on_one_rank_validates(variant, ordering, graph):
    """The multi-GPU kernel on a whole graph with a one-rank communicator: no vertex is another rank's."""
    from graph500.kernels.gpu.bfs_distributed import DistributedDirectionOptimizingBFS

    part = one_rank_graph(graph, ordering)
    kernel = DistributedDirectionOptimizingBFS(part, **{"trace": True, **DISTRIBUTED_BFS_VARIANTS[variant]})
    run_and_validate(kernel, graph, *validation_graphs(graph))
    if variant in ("top-down", "bottom-up") and kernel.trace:
        wanted = gpu_bfs.TOP_DOWN if variant == "top-down" else gpu_bfs.BOTTOM_UP
        assert {level["direction"] for level in kernel.trace} == {wanted}
        assert all(level["compute_seconds"] > 0 for level in kernel.trace)
        # one rank: a bottom-up level's frontier is still published (a copy); a top-down level exchanges nothing
        assert all((level.get("exchange_seconds", 0) > 0) == (level["direction"] == gpu_bfs.BOTTOM_UP)
                   for level in kernel.trace)


@pytest.mark.parametrize("graph", GRAPHS, ids=repr)
@pytest.mark.parametrize("ordering", ["input", "degree"])
@pytest.mark.parametrize("delta", [None, 0.01, 1.0], ids=["default-delta", "narrow", "one-bucket"])
def test_distributed_gpu_sssp_on_one_rank_validates(delta, ordering, graph):
    """The multi-GPU delta-stepping on a whole graph with a one-rank communicator."""
    from graph500.kernels.gpu.sssp_distributed import DistributedDeltaSteppingSSSP

    part = one_rank_graph(graph, ordering, weighted=True)
    kernel = DistributedDeltaSteppingSSSP(part, delta=delta)
    device_vg = ValidationGraph.from_edges(cupy.asarray(graph.src), cupy.asarray(graph.dst), graph.num_vertices,
                                           cupy.asarray(graph.weights))
    for root in graph.roots:
        parents, distances = kernel.search(root)
        assert parents.dtype == np.int32 and distances.dtype == np.float32
        validate_sssp(device_vg, root, parents, distances)


@pytest.mark.parametrize("graph", GRAPHS[:2] + GRAPHS[-2:], ids=repr)
def test_distributed_validator_on_device_arrays_agrees_with_the_host(graph):
    """A one-rank DistributedValidationGraph of CuPy tuples (a device communicator) gives the host's nedge, and
    the host's rule for a planted fault."""
    from graph500.comm import SelfCommunicator
    from graph500.partition import VertexBlocks
    from graph500.validators.distributed import DistributedValidationGraph

    n = graph.num_vertices
    on_device = DistributedValidationGraph.from_edges(SelfCommunicator(xp=cupy), VertexBlocks(n, 1),
                                                      cupy.asarray(graph.src), cupy.asarray(graph.dst), n,
                                                      cupy.asarray(graph.weights))
    on_host = DistributedValidationGraph.from_edges(SelfCommunicator(), VertexBlocks(n, 1), graph.src, graph.dst,
                                                    n, graph.weights)
    bfs_kernel = gpu_bfs.DirectionOptimizingBFS(gpu_build_csr(graph.src, graph.dst, n))
    sssp_kernel = gpu_sssp.DeltaSteppingSSSP(gpu_build_csr(graph.src, graph.dst, n, graph.weights))
    for root in graph.roots[:4]:
        parents = bfs_kernel.search(root)
        assert validate_bfs(on_device, root, parents) == validate_bfs(on_host, root, parents)
        parents, distances = sssp_kernel.search(root)
        assert validate_sssp(on_device, root, parents, distances) == validate_sssp(on_host, root, parents,
                                                                                    distances)
    reached = cupy.flatnonzero(parents >= 0)
    if reached.size > 1:
        planted = parents.copy()
        vertex = int(reached[-1]) if int(reached[-1]) != root else int(reached[0])
        planted[vertex] = vertex  # a reached vertex its own parent
        rules = []
        for vg in (on_device, on_host):
            with pytest.raises(Graph500Error) as caught:
                validate_sssp(vg, root, planted, distances)
            rules.append(caught.value.rule)
        assert rules[0] == rules[1]


@pytest.mark.parametrize("graph", GRAPHS[:2] + GRAPHS[-3:], ids=repr)
def test_strongest_neighbour_is_the_neighbour_of_largest_degree(graph):
    csr = cpu_build_csr(graph.src, graph.dst, graph.num_vertices)
    kernel = gpu_bfs.DirectionOptimizingBFS(gpu_build_csr(graph.src, graph.dst, graph.num_vertices))
    degrees = np.diff(csr.offsets)
    expected = np.full(graph.num_vertices, -1)
    for v in range(graph.num_vertices):
        row = csr.neighbors[csr.offsets[v]:csr.offsets[v + 1]]
        if row.size:
            expected[v] = row[np.lexsort((row, -degrees[row]))[0]]  # largest degree, then smallest label
    np.testing.assert_array_equal(cupy.asnumpy(kernel._strongest), expected)


@pytest.mark.parametrize("graph", GRAPHS[:2] + GRAPHS[-3:], ids=repr)
def test_strongest_neighbours_of_a_block_by_every_vertex_degree(graph):
    """A rank's block of rows (multi-GPU) given every vertex's degree: the whole graph's strongest neighbours."""
    n = graph.num_vertices
    whole = gpu_build_csr(graph.src, graph.dst, n)
    degrees = cupy.diff(whole.offsets).astype(np.uint32)
    first = n // 2
    offsets, neighbors, *_ = gpu_build.build_rows(graph.src, graph.dst, n, None, first, n - first)
    np.testing.assert_array_equal(cupy.asnumpy(gpu_bfs.strongest_neighbours(offsets, neighbors, degrees)),
                                  cupy.asnumpy(gpu_bfs.strongest_neighbours(whole.offsets, whole.neighbors))[first:])


def test_direction_optimizing_switches_both_ways_on_kronecker():
    src, dst, _ = kronecker.generate_edges(14, 16, 2, 3)
    csr = gpu_build_csr(src, dst, 1 << 14)
    kernel = gpu_bfs.DirectionOptimizingBFS(csr, trace=True)
    has_edge = roots_module.incident_vertices(src, dst, 1 << 14)
    roots, _ = roots_module.search_keys(14, 2, 3, has_edge, 4)
    device_vg = ValidationGraph.from_edges(cupy.asarray(src), cupy.asarray(dst), 1 << 14)
    for root in roots:
        validate_bfs(device_vg, int(root), kernel.search(int(root)))
        directions = [level["direction"] for level in kernel.trace]
        assert directions[0] == gpu_bfs.TOP_DOWN and gpu_bfs.BOTTOM_UP in directions
        assert sum(level["discovered"] for level in kernel.trace) + 1 == int((kernel.search(int(root)) >= 0).sum())


@pytest.mark.parametrize("gamma, goes_bottom_up", [(0.0, True), (1.0, False)], ids=["no-guard", "whole-graph-guard"])
def test_bottom_up_needs_a_frontier_of_n_over_gamma_vertices(gamma, goes_bottom_up):
    """alpha 1e12 would switch at the first level with edges; gamma 1 asks for a frontier of all N vertices."""
    src, dst, _ = kronecker.generate_edges(12, 16, 2, 3)
    kernel = gpu_bfs.DirectionOptimizingBFS(gpu_build_csr(src, dst, 1 << 12, degree_ordered=True), alpha=1e12,
                                            gamma=gamma, trace=True)
    root = int(src[0]) if src[0] != dst[0] else int(src[1])
    device_vg = ValidationGraph.from_edges(cupy.asarray(src), cupy.asarray(dst), 1 << 12)
    validate_bfs(device_vg, root, kernel.search(root))
    assert (gpu_bfs.BOTTOM_UP in [level["direction"] for level in kernel.trace]) == goes_bottom_up


def test_backend_generates_the_reference_edges_in_mapped_host_memory():
    pool = cupy.get_default_memory_pool()
    pool.free_all_blocks()
    device_bytes = pool.used_bytes()
    src, dst, weights = GPUBackend().generate(16, 16, 2, 3)  # 12 MiB of tuples
    assert pool.used_bytes() - device_bytes < 1 << 20  # the kernel wrote them to host memory
    expected = kronecker.generate_edges(16, 16, 2, 3)
    for actual, wanted in zip((src, dst, weights), expected):
        np.testing.assert_array_equal(cupy.asnumpy(actual), wanted)


def test_backend_incident_vertices_match_cpu():
    graph = GRAPHS[0]
    expected = roots_module.incident_vertices(graph.src, graph.dst, graph.num_vertices)
    actual = GPUBackend().incident_vertices(cupy.asarray(graph.src), cupy.asarray(graph.dst), graph.num_vertices)
    assert isinstance(actual, np.ndarray) and actual.dtype == np.bool_
    np.testing.assert_array_equal(actual, expected)


def test_backend_refuses_a_run_that_does_not_fit_and_names_the_largest_that_does():
    free = gpu_backend.free_device_bytes()
    with pytest.raises(Graph500Error, match=r"needs about .* GiB of device memory; .* GiB is free") as error:
        GPUBackend().check_memory(36, 16)
    largest = int(re.search(r"the largest SCALE that fits here is (\d+)", str(error.value)).group(1))
    assert gpu_backend.memory_estimate_bytes(largest, 16) - gpu_backend.CONTEXT_BYTES <= free
    assert gpu_backend.memory_estimate_bytes(largest + 1, 16) - gpu_backend.CONTEXT_BYTES > free


def test_backend_gives_the_bfs_no_row_copy_and_estimates_the_larger_pass(monkeypatch):
    """The estimate: the larger pass with the validator's copy of the tuples where it fits, else without."""
    scale, edgefactor = 20, 16
    backend = GPUBackend()
    backend.check_memory(scale, edgefactor)
    assert backend.kernel_options(gpu_bfs.DirectionOptimizingBFS) == {"row_copy": False}
    assert backend.kernel_options(gpu_sssp.DeltaSteppingSSSP) == {}
    facts = backend.describe()
    assert facts["validation_tuples"] == "device"
    assert facts["device_memory_estimate_bytes"] == gpu_backend.validation_on_device_bytes(scale, edgefactor)
    monkeypatch.setattr(gpu_backend, "validation_on_device_bytes", lambda *arguments: float("inf"))
    backend.check_memory(scale, edgefactor)
    phases = gpu_backend.device_memory_plan(scale, edgefactor)
    facts = backend.describe()
    assert facts["validation_tuples"] == "host"
    assert facts["device_memory_estimate_bytes"] == max(phases.values()) + gpu_backend.CONTEXT_BYTES


def test_backend_refuses_to_pin_more_than_its_share_of_the_available_host_memory(monkeypatch):
    needed = gpu_backend.host_memory_bytes(20, 16)
    monkeypatch.setattr(gpu_backend, "available_memory_bytes", lambda: needed)  # all of it: more than the share
    with pytest.raises(Graph500Error, match=r"GiB of host memory for the edge list; .* GiB can be pinned \(90% of"):
        GPUBackend().check_memory(20, 16)
    monkeypatch.setattr(gpu_backend, "available_memory_bytes", lambda: int(needed / gpu_backend.PINNABLE_SHARE) + 1)
    GPUBackend().check_memory(20, 16)


def test_edge_list_that_cannot_be_pinned_is_one_clear_error(monkeypatch):
    def refuse(nbytes):
        raise cupy.cuda.runtime.CUDARuntimeError(2)  # cudaErrorMemoryAllocation

    monkeypatch.setattr(cupy.cuda, "alloc_pinned_memory", refuse)
    with pytest.raises(Graph500Error, match=r"cannot pin 0\.0 GiB of host memory for the edge list"):
        GPUBackend().generate(10, 16, 2, 3)


def test_validation_graph_keeps_the_mapped_tuples_without_a_device_copy():
    backend = GPUBackend()
    src, dst, weights = backend.generate(14, 16, 2, 3)
    pool = cupy.get_default_memory_pool()
    before = pool.used_bytes()
    vg = backend.validation_graph(src, dst, 1 << 14, weights)
    assert vg.src is src and vg.dst is dst and vg.weights is weights
    assert pool.used_bytes() - before < 2 * (8 << 14)  # the first-endpoint counts (int64 a vertex) only


def test_backend_times_a_search_with_events():
    graph = GRAPHS[0]
    csr = gpu_build_csr(graph.src, graph.dst, graph.num_vertices)
    kernel = gpu_bfs.DirectionOptimizingBFS(csr)
    parents, seconds = GPUBackend().timed(kernel.search, graph.roots[0])
    assert 0 < seconds < 1
    assert int(parents[graph.roots[0]]) == graph.roots[0]


@pytest.mark.parametrize("graph", GRAPHS, ids=repr)
@pytest.mark.parametrize("variant", SSSP_VARIANTS)
@pytest.mark.parametrize("degree_ordered", [False, True], ids=["input-labels", "degree-ordered"])
def test_gpu_sssp_validates(variant, graph, degree_ordered):
    csr = gpu_build_csr(graph.src, graph.dst, graph.num_vertices, graph.weights, degree_ordered=degree_ordered)
    kernel = gpu_sssp.DeltaSteppingSSSP(csr, **SSSP_VARIANTS[variant])
    device_vg = ValidationGraph.from_edges(cupy.asarray(graph.src), cupy.asarray(graph.dst), graph.num_vertices,
                                           cupy.asarray(graph.weights))
    host_vg = ValidationGraph.from_edges(graph.src, graph.dst, graph.num_vertices, graph.weights)
    for root in graph.roots:
        parents, distances = kernel.search(root)
        assert parents.dtype == np.int32 and distances.dtype == np.float32
        nedge = validate_sssp(device_vg, root, parents, distances)
        assert nedge == validate_sssp(host_vg, root, cupy.asnumpy(parents), cupy.asnumpy(distances))


@pytest.fixture(scope="module")
def kronecker_16():
    """A SCALE 16 reference graph on the device as the backend builds it (degree-ordered), its validator and
    4 search keys: frontiers of many tiles."""
    src, dst, weights = gpu_generator.generate_edges(16, 16, 2, 3)
    csr = gpu_build_csr(src, dst, 1 << 16, weights, degree_ordered=True)
    has_edge = gpu_build.incident_vertices(src, dst, 1 << 16)
    roots, _ = roots_module.search_keys(16, 2, 3, has_edge, 4)
    return csr, ValidationGraph.from_edges(src, dst, 1 << 16, weights), [int(r) for r in roots]


@pytest.mark.parametrize("kernel_name", BFS_KERNELS)
def test_gpu_bfs_validates_at_scale_16(kernel_name, kronecker_16):
    csr, validation_graph, roots = kronecker_16
    kernel = kernels.get("bfs", "gpu", kernel_name)(csr)
    for root in roots:
        assert validate_bfs(validation_graph, root, kernel.search(root)) > 0


@pytest.mark.parametrize("variant", ["default", "always-pull", "push-only"])
@pytest.mark.parametrize("delta", [None, 0.01])  # the default rule (about 0.25 here); 0.01: few light edges
def test_gpu_sssp_validates_at_scale_16(delta, variant, kronecker_16):
    csr, validation_graph, roots = kronecker_16
    kernel = gpu_sssp.DeltaSteppingSSSP(csr, **{"delta": delta, **SSSP_VARIANTS[variant]})
    for root in roots:
        assert validate_sssp(validation_graph, root, *kernel.search(root)) > 0
        assert kernel.summary["buckets"] > 1


def test_gpu_sssp_pulls_the_hub_core_and_ends_with_a_tail(kronecker_16):
    csr, validation_graph, roots = kronecker_16
    kernel = gpu_sssp.DeltaSteppingSSSP(csr)
    for root in roots:
        validate_sssp(validation_graph, root, *kernel.search(root))
        assert kernel.summary["pulls"] >= 1 and kernel.summary["tail_iterations"] >= 1


def test_gpu_sssp_tail_pull_replaces_the_first_push_with_the_same_distances(kronecker_16):
    csr, validation_graph, roots = kronecker_16
    pulled = gpu_sssp.DeltaSteppingSSSP(csr, pull_ratio=0.0)
    pushed = gpu_sssp.DeltaSteppingSSSP(csr, pull_ratio=0.0, tail_pull=False)
    for root in roots:
        parents, distances = pulled.search(root)
        assert validate_sssp(validation_graph, root, parents, distances) > 0
        _, pushed_distances = pushed.search(root)
        assert pulled.summary["pulls"] == pushed.summary["pulls"] + 1  # the tail's first round
        assert cupy.array_equal(distances, pushed_distances)  # one least fixed point, however reached


def test_default_delta_falls_with_the_square_root_of_the_largest_degree(kronecker_16):
    assert gpu_sssp.delta_for(0) == gpu_sssp.delta_for(1) == 1.0  # capped: every Graph500 weight light
    assert gpu_sssp.delta_for(4 * 10**6) == pytest.approx(gpu_sssp.DELTA_SCALE / 2000)
    csr = kronecker_16[0]
    kernel = gpu_sssp.DeltaSteppingSSSP(csr)
    assert kernel.delta == np.float32(gpu_sssp.delta_for(int(cupy.diff(csr.offsets).max())))


@pytest.mark.parametrize("entries_per_sort", [gpu_sssp.SORT_ENTRIES, 7], ids=["one-sort", "sorts-of-7-entries"])
def test_rows_sorted_by_weight_keep_every_edge_and_light_end_splits_them(entries_per_sort):
    graph, delta = GRAPHS[0], np.float32(0.3)
    expected = cpu_build_csr(graph.src, graph.dst, graph.num_vertices, graph.weights)
    csr = gpu_build_csr(graph.src, graph.dst, graph.num_vertices, graph.weights)
    gpu_sssp.sort_rows_by_weight(csr, entries_per_sort)
    kernel = gpu_sssp.DeltaSteppingSSSP(csr, delta=delta)  # sorts again: no change
    offsets, neighbors, weights = (cupy.asnumpy(a) for a in (csr.offsets, csr.neighbors, csr.weights))
    np.testing.assert_array_equal(offsets, expected.offsets)
    rows = np.repeat(np.arange(graph.num_vertices), np.diff(offsets))
    order = np.lexsort((neighbors, rows))
    np.testing.assert_array_equal(neighbors[order], expected.neighbors)
    np.testing.assert_array_equal(weights[order].view(np.uint32), expected.weights.view(np.uint32))
    same_row = rows[:-1] == rows[1:]
    assert not np.any(same_row & (weights[:-1] > weights[1:])), "a row is not sorted by weight"
    light_end = cupy.asnumpy(kernel._light_end)
    expected_light_end = offsets[:-1] + np.array([np.count_nonzero(weights[offsets[v]:offsets[v + 1]] <= delta)
                                                  for v in range(graph.num_vertices)])
    np.testing.assert_array_equal(light_end, expected_light_end)


@pytest.mark.parametrize("weighted", [False, True], ids=["unweighted", "weights-carried"])
@pytest.mark.parametrize("num_blocks", [2, 3])
@pytest.mark.parametrize("entries_per_sort", [gpu_build.SORT_ENTRIES, 7], ids=["one-sort", "sorts-of-7-entries"])
def test_rows_sorted_by_interleaved_blocks_list_every_blocks_kth_vertex_before_any_next(num_blocks,
                                                                                        entries_per_sort, weighted):
    graph = GRAPHS[0]
    weights = graph.weights if weighted else None
    expected = cpu_build_csr(graph.src, graph.dst, graph.num_vertices, weights)
    csr = gpu_build_csr(graph.src, graph.dst, graph.num_vertices, weights)
    blocks = VertexBlocks(graph.num_vertices, num_blocks)
    gpu_build.sort_rows(csr.offsets, csr.neighbors, csr.weights, blocks=blocks, entries_per_sort=entries_per_sort)
    offsets, neighbors = cupy.asnumpy(csr.offsets), cupy.asnumpy(csr.neighbors)
    np.testing.assert_array_equal(offsets, expected.offsets)
    owners = neighbors // blocks.block
    places = (neighbors - owners * blocks.block) * num_blocks + owners
    rows = np.repeat(np.arange(graph.num_vertices), np.diff(offsets))
    assert not np.any((rows[:-1] == rows[1:]) & (places[:-1] >= places[1:])), "a row is not in interleaved order"
    order = np.lexsort((neighbors, rows))
    np.testing.assert_array_equal(neighbors[order], expected.neighbors)
    if weighted:  # each weight stays with its entry (the builder's rows hold no repeated (row, neighbour))
        np.testing.assert_array_equal(cupy.asnumpy(csr.weights)[order].view(np.uint32),
                                      expected.weights.view(np.uint32))
    assert np.any(np.diff(neighbors)[rows[:-1] == rows[1:]] < 0), "no row changed: a test that cannot fail"


def test_rows_sorted_by_nothing_are_refused():
    graph = GRAPHS[0]
    csr = gpu_build_csr(graph.src, graph.dst, graph.num_vertices)
    with pytest.raises(ValueError, match="give blocks or weights"):
        gpu_build.sort_rows(csr.offsets, csr.neighbors)


@pytest.mark.parametrize("graph", GRAPHS, ids=repr)
def test_filled_vertices_are_those_with_edges_of_a_degree_ordered_graph(graph):
    csr = gpu_build_csr(graph.src, graph.dst, graph.num_vertices, degree_ordered=True)
    degrees = np.diff(cupy.asnumpy(csr.offsets))
    filled = gpu_build.filled_vertices(csr)
    assert np.all(degrees[:filled] > 0) and not np.any(degrees[filled:])
    unordered = gpu_build_csr(graph.src, graph.dst, graph.num_vertices)
    assert gpu_build.filled_vertices(unordered) == graph.num_vertices


@pytest.mark.parametrize("path", FIXTURES, ids=lambda path: path.stem)
def test_gpu_generator_reproduces_the_reference_files(path):
    src, dst, weights = gpu_generator.generate_edges(*fixture_parameters(path))
    expected_src, expected_dst = io.read_reference_edges(str(path))
    expected_weights = io.read_reference_weights(str(path) + ".weights", len(expected_src))
    np.testing.assert_array_equal(cupy.asnumpy(src), expected_src)
    np.testing.assert_array_equal(cupy.asnumpy(dst), expected_dst)
    np.testing.assert_array_equal(cupy.asnumpy(weights).view(np.uint32), expected_weights.view(np.uint32))


@pytest.mark.parametrize("scale, edgefactor, seed1, seed2, start, stop", [
    (20, 16, 2, 3, 0, None),
    (20, 16, 2, 3, 123_457, 3_123_458),
    (16, 4, 2**63 + 5, 2**62 + 7, 0, None),
])
def test_gpu_generator_equals_cpu_generator(scale, edgefactor, seed1, seed2, start, stop):
    src, dst, weights = (cupy.asnumpy(values) for values in
                         gpu_generator.generate_edges(scale, edgefactor, seed1, seed2, start, stop))
    expected_src, expected_dst, expected_weights = kronecker.generate_edges(scale, edgefactor, seed1, seed2,
                                                                            start, stop)
    np.testing.assert_array_equal(src, expected_src)
    np.testing.assert_array_equal(dst, expected_dst)
    np.testing.assert_array_equal(weights.view(np.uint32), expected_weights.view(np.uint32))


def test_the_validators_chunks_are_views_of_device_memory_and_copies_of_mapped_host_memory():
    from graph500.kernels.gpu import runtime
    from graph500.validators.common import in_device_memory, staged_chunks

    device = cupy.arange(10, dtype=cupy.int32)
    host = runtime.host_mapped_copy(device)
    assert in_device_memory(device) and not in_device_memory(host)
    for array, viewed in ((device, True), (host, False)):
        chunks = [(first, chunk[0].data.ptr, chunk[0].get().tolist()) for first, chunk in staged_chunks((array,), 4)]
        assert [values for _, _, values in chunks] == [[0, 1, 2, 3], [4, 5, 6, 7], [8, 9]]
        assert all((pointer == array.data.ptr + 4 * first) == viewed for first, pointer, _ in chunks)


@pytest.mark.parametrize("tuples_on_device", [True, False])
def test_harness_runs_on_the_gpu(tmp_path, monkeypatch, tuples_on_device):
    """The reference's nedge, every tree valid, the validator's tuples in device memory where the plan has room
    for them and in mapped host memory where not."""
    if not tuples_on_device:
        monkeypatch.setattr(gpu_backend, "validation_on_device_bytes", lambda *arguments: float("inf"))
    out = text_io.StringIO()
    config = harness.RunConfig(scale=10, backend="gpu", progress=False, json_path=str(tmp_path / "run.json"))
    assert harness.run(config, stdout=out) == 0
    report = out.getvalue()
    extensions = json.loads((tmp_path / "run.json").read_text())["extensions"]
    assert extensions["validation_tuples"] == ("device" if tuples_on_device else "host")
    assert 0 < extensions["device_memory_peak_bytes"] <= extensions["device_memory_estimate_bytes"]
    steps = {name: value for name, value in extensions.items() if name.startswith("device_arrays_bytes_")}
    assert [name[len("device_arrays_bytes_"):] for name in steps] == [  # what the arrays used at most, by step
        "generation", "kernel_1", "bfs_set_up", "validation_set_up", "bfs_pass", "sssp_set_up", "sssp_pass"]
    assert 0 < max(steps.values()) <= extensions["device_memory_pool_peak_bytes"]
    assert re.search(r"bfs  harmonic_mean_TEPS:\s+!\s+\d", report)
    assert re.search(r"sssp harmonic_mean_TEPS:\s+!\s+\d", report)
    fixture_stats = (FIXTURES[0].parent / "s10_ef16_seed2-3.stats").read_text()
    expected_nedge = re.search(r"^mean_nedge:\s+(\S+)", fixture_stats, re.M).group(1)
    assert re.search(r"^mean_nedge:\s+(\S+)", report, re.M).group(1) == expected_nedge


SPIN_THEN_COPY = r'''
extern "C" __global__ void spin_then_copy(const long long* source, long long* target, long long count,
                                          long long cycles) {
    const long long start = clock64();
    while (clock64() - start < cycles) {}
    for (long long i = threadIdx.x; i < count; i += blockDim.x) target[i] = source[i];
}
'''


def test_staged_chunks_copy_only_after_the_work_queued_before():
    """The chunk buffers may reuse memory that work already queued on the current stream still reads (a
    temporary freed at once, as an NCCL send of one): the first chunk's copy must wait for that work."""
    from graph500.kernels.gpu import runtime
    from graph500.validators.common import staged_chunks

    count = 1 << 16
    temporary = cupy.arange(count, dtype=np.int64)
    result = cupy.empty(count, dtype=np.int64)
    spin = cupy.RawKernel(SPIN_THEN_COPY, "spin_then_copy")
    cycles = 200_000_000  # about 0.1 s
    spin((1,), (256,), (temporary, result, np.int64(count), np.int64(cycles)))
    del temporary  # back to the pool while the kernel above still has to read it
    tuples = runtime.host_mapped_copy(np.full(count, -7, dtype=np.int64))
    for _, (chunk,) in staged_chunks([tuples], count):
        assert int(chunk[0]) == -7
    assert (result == cupy.arange(count, dtype=np.int64)).all(), "a chunk was copied over memory still in use"


def test_a_releasable_host_array_gives_granules_back_and_pins_them_again():
    """Granules of 1024 int32 (a page): a released granule is unpinned, its pages given back (zeros when pinned
    again); the others keep what the device wrote; pinning a range pins the granules it touches, release those it
    covers; `write` copies across granules (one copy could not: each granule is an allocation to the driver)."""
    from graph500.kernels.gpu import runtime

    page_items = 1024
    buffer = runtime.ReleasableHostArray(3 * page_items + 10, np.int32, page_items)
    assert buffer.pinned_bytes() == 4 * 4096 and not buffer.released()
    buffer.array[:] = 2  # a kernel's writes, across granules
    buffer.write(5, cupy.arange(3 * page_items, dtype=np.int32))
    expected = np.r_[[2] * 5, np.arange(3 * page_items), [2] * 5]
    assert ((buffer.array + 0).get() == expected).all()  # read by a kernel (a copy to the host: one granule)
    buffer.release(page_items - 1, 3 * page_items + 10)  # covers granules 1 to 3 (the last one partial)
    assert buffer.pinned_bytes() == 4096 and buffer.released()
    buffer.pin(page_items, page_items + 1)  # touches granule 1 only
    assert buffer.pinned_bytes() == 2 * 4096
    assert ((buffer.array[:2 * page_items] + 0).get() == np.r_[expected[:page_items], np.zeros(page_items)]).all()
    buffer.write(2 * page_items, cupy.full(page_items + 10, 5, dtype=np.int32))  # pins what it writes
    assert ((buffer.array[2 * page_items:] + 0).get() == 5).all() and not buffer.released()
    with pytest.raises(ValueError, match="whole pages"):
        runtime.ReleasableHostArray(10, np.int32, 100)


def test_an_edge_list_generated_again_into_given_arrays_is_the_same():
    """`generate_edges(out=...)` writes a slice again into the arrays given, value for value; wrong arrays are
    refused."""
    from graph500.kernels.gpu import generator

    first = generator.generate_edges(10, 16, 2, 3, 1000, 5000)
    again = [cupy.zeros_like(array) for array in first]
    assert generator.generate_edges(10, 16, 2, 3, 1000, 5000, out=again)[0] is again[0]
    assert all((a == b).all() for a, b in zip(first, again))
    with pytest.raises(ValueError, match="out must be"):
        generator.generate_edges(10, 16, 2, 3, 1000, 4000, out=again)
