"""Tests for graph500.validators: valid trees pass, every planted fault is named by its rule.

Trees are made here by a tiny reference BFS (collections.deque) and Dijkstra
(heapq, float32 sums), independent of the package's kernels.  Every test runs
the array-generic pass and the fused Numba pass on NumPy arrays and, where a
GPU is present (marker ``gpu``), the array-generic pass on CuPy arrays with
the tuples in mapped host memory, as `graph500 run --backend gpu` keeps them,
read in chunks of 4 tuples so that faults lie in later chunks.
"""

import contextlib
import heapq
import subprocess
import sys
from collections import deque

import numba
import numpy as np
import pytest

from graph500 import validators
from graph500.errors import ValidationError
from graph500.validators import ValidationGraph, common, distributed
from graph500.validators import bfs as bfs_validator
from graph500.validators import sssp as sssp_validator


def gpu_unavailable_reason():
    try:
        from graph500.kernels.gpu.backend import gpu_unavailable_reason as reason
    except ImportError as error:
        return str(error)
    return reason()


NO_GPU = gpu_unavailable_reason()
HOST_ENGINES = ["generic", "numba"]
DEVICE_ENGINES = ["device", "cuda"]  # on CuPy arrays: the array-generic pass, the fused CUDA pass
ALL_ENGINES = HOST_ENGINES + ([] if NO_GPU else DEVICE_ENGINES)
ENGINES = HOST_ENGINES + [pytest.param(engine, marks=[pytest.mark.gpu, pytest.mark.skipif(bool(NO_GPU),
                                                                                          reason=str(NO_GPU))])
                          for engine in DEVICE_ENGINES]
DEVICE_TUPLE_CHUNK = 4


def on_device(vg, *arrays):
    """``vg`` with its tuples (same order) in mapped host memory, and ``arrays`` on the device."""
    import cupy
    from graph500.kernels.gpu.runtime import host_mapped_copy

    weights = None if vg.weights is None else host_mapped_copy(vg.weights)
    device_vg = ValidationGraph.from_edges(host_mapped_copy(vg.src), host_mapped_copy(vg.dst), vg.num_vertices,
                                           weights)
    return (device_vg, *(cupy.asarray(array) for array in arrays))


@contextlib.contextmanager
def small_device_chunks():
    """The validators' CuPy passes and relabelling read their tuples in chunks of `DEVICE_TUPLE_CHUNK` (NumPy's
    read theirs whole either way)."""
    chunk = common.TUPLE_CHUNK
    common.TUPLE_CHUNK = distributed.TUPLE_CHUNK = DEVICE_TUPLE_CHUNK
    try:
        yield
    finally:
        common.TUPLE_CHUNK = distributed.TUPLE_CHUNK = chunk


def with_engine(validate, engine, vg, root, *arrays):
    """``validate(vg, root, *arrays)`` by ``engine``: "generic" or "numba" on NumPy, "device" (the array-generic
    pass) or "cuda" on CuPy, in chunks of `DEVICE_TUPLE_CHUNK` tuples."""
    if engine not in DEVICE_ENGINES:
        return validate(vg, root, *arrays, engine=engine)
    with small_device_chunks():
        device_vg, *device_arrays = on_device(vg, *arrays)
        return validate(device_vg, root, *device_arrays, engine="generic" if engine == "device" else engine)


def validate_bfs(vg, root, parents, engine="auto"):
    return with_engine(validators.validate_bfs, engine, vg, root, parents)


def validate_sssp(vg, root, parents, distances, engine="auto"):
    return with_engine(validators.validate_sssp, engine, vg, root, parents, distances)


# ---------------------------------------------------------------- reference trees

def neighbours(num_vertices, src, dst, weights=None):
    """Adjacency lists of the undirected multigraph, self-loops dropped."""
    adjacency = [[] for _ in range(num_vertices)]
    for i, (u, v) in enumerate(zip(src.tolist(), dst.tolist())):
        if u != v:
            w = None if weights is None else np.float32(weights[i])
            adjacency[u].append((v, w))
            adjacency[v].append((u, w))
    return adjacency


def reference_bfs(num_vertices, src, dst, root):
    parents = np.full(num_vertices, -1, dtype=np.int64)
    parents[root] = root
    queue = deque([root])
    adjacency = neighbours(num_vertices, src, dst)
    while queue:
        u = queue.popleft()
        for v, _ in adjacency[u]:
            if parents[v] == -1:
                parents[v] = u
                queue.append(v)
    return parents


def reference_dijkstra(num_vertices, src, dst, weights, root):
    parents = np.full(num_vertices, -1, dtype=np.int64)
    distances = np.full(num_vertices, np.inf, dtype=np.float32)
    parents[root] = root
    distances[root] = 0
    done = np.zeros(num_vertices, dtype=bool)
    heap = [(np.float32(0), root)]
    adjacency = neighbours(num_vertices, src, dst, weights)
    while heap:
        d, u = heapq.heappop(heap)
        if done[u]:
            continue
        done[u] = True
        for v, w in adjacency[u]:
            candidate = np.float32(distances[u]) + np.float32(w)
            if candidate < distances[v]:
                distances[v] = candidate
                parents[v] = u
                heapq.heappush(heap, (candidate, v))
    return parents, distances


def direct_nedge(src, dst, parents):
    reached = parents >= 0
    return int(np.sum((src != dst) & reached[src] & reached[dst]))


def random_graph(seed, num_vertices=80, num_edges=200, components=3):
    """Edges inside `components` disjoint vertex blocks, some vertices left isolated,
    plus duplicated tuples (some reversed) and self-loops."""
    rng = np.random.default_rng(seed)
    labels = rng.permutation(num_vertices)
    bounds = np.linspace(0, num_vertices - 5, components + 1).astype(int)  # last 5: isolated
    block = rng.integers(0, components, num_edges)
    lo, hi = bounds[block], bounds[block + 1]
    src = labels[rng.integers(lo, hi)]
    dst = labels[rng.integers(lo, hi)]
    duplicates = rng.integers(0, num_edges, num_edges // 5)
    flip = rng.random(duplicates.size) < 0.5
    loops = rng.integers(0, num_vertices, 7)
    src = np.concatenate([src, np.where(flip, dst[duplicates], src[duplicates]), loops])
    dst = np.concatenate([dst, np.where(flip, src[duplicates], dst[duplicates]), loops])
    weights = rng.random(src.size, dtype=np.float32)
    return src, dst, weights


# ---------------------------------------------------------------- valid trees

@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("index_dtype", [np.int64, np.int32])
def test_valid_trees_pass_and_count_nedge(engine, seed, index_dtype):
    num_vertices = 80
    src, dst, weights = random_graph(seed, num_vertices)
    src, dst = src.astype(index_dtype), dst.astype(index_dtype)
    vg = ValidationGraph.from_edges(src, dst, num_vertices, weights)
    for root in [int(src[0]), int(dst[5]), int(src[-1])]:  # src[-1]: a self-loop's vertex
        parents = reference_bfs(num_vertices, src, dst, root).astype(index_dtype)
        expected = direct_nedge(src, dst, parents)
        assert validate_bfs(vg, root, parents, engine=engine) == expected
        sssp_parents, distances = reference_dijkstra(num_vertices, src, dst, weights, root)
        assert np.array_equal(sssp_parents >= 0, parents >= 0)
        assert validate_sssp(vg, root, sssp_parents, distances, engine=engine) == expected


@pytest.mark.parametrize("seed", range(4))
def test_tree_levels_are_hops_from_the_root_by_either_engine(seed):
    """The pointer jumping's levels (Numba's fused rounds and the array-generic ones) against the levels of
    a direct walk up each parent chain, on BFS and on (deeper) shortest-path trees; -1 where unreached."""
    num_vertices = 300
    src, dst, weights = random_graph(seed, num_vertices)
    root = int(src[0])
    for parents in (reference_bfs(num_vertices, src, dst, root),
                    reference_dijkstra(num_vertices, src, dst, weights, root)[0]):
        expected = np.full(num_vertices, -1)
        for v in np.flatnonzero(parents >= 0):
            hops, u = 0, v
            while u != root:
                hops, u = hops + 1, parents[u]
            expected[v] = hops
        reached = parents >= 0
        for engine in ("generic", "numba"):
            levels = common.tree_levels("bfs", parents, root, reached, engine)
            assert np.array_equal(levels, expected), (seed, engine)


@pytest.mark.parametrize("engine", ENGINES)
def test_isolated_looking_roots(engine):
    # Vertex 0 appears only as a second endpoint; vertex 4 only in self-loops.
    src = np.array([1, 2, 1, 4, 4, 3])
    dst = np.array([0, 0, 2, 4, 4, 3])
    weights = np.full(src.size, 0.5, dtype=np.float32)
    vg = ValidationGraph.from_edges(src, dst, 5, weights)
    parents = reference_bfs(5, src, dst, 0)
    assert validate_bfs(vg, 0, parents, engine=engine) == 3
    sssp_parents, distances = reference_dijkstra(5, src, dst, weights, 0)
    assert validate_sssp(vg, 0, sssp_parents, distances, engine=engine) == 3
    alone = np.array([-1, -1, -1, -1, 4])
    assert validate_bfs(vg, 4, alone, engine=engine) == 0
    alone_distances = np.array([np.nan, np.inf, 7, -1, 0], dtype=np.float32)
    assert validate_sssp(vg, 4, alone, alone_distances, engine=engine) == 0


@pytest.mark.parametrize("engine", ENGINES)
def test_sssp_accepts_any_parent_with_an_equal_path(engine):
    vg, parents, distances = weighted_example()
    assert parents[3] == 2
    parents[3] = 1  # 0.5 + 0.5 == 0.25 + 0.75: the other tight edge
    assert validate_sssp(vg, 0, parents, distances, engine=engine) == 7


@pytest.mark.parametrize("engine", ENGINES)
def test_sssp_sums_in_float32(engine):
    # float32(0.1) + float32(0.2) rounds to a float32 that is not the float64
    # sum: a validator summing in float64 would find 2 unconfirmed.
    w1, w2 = np.float32(0.1), np.float32(0.2)
    assert float(w1 + w2) != float(w1) + float(w2)
    vg = ValidationGraph.from_edges(np.array([0, 1]), np.array([1, 2]), 3,
                                    np.array([w1, w2], dtype=np.float32))
    parents = np.array([0, 0, 1])
    distances = np.array([0, w1, w1 + w2], dtype=np.float32)
    assert validate_sssp(vg, 0, parents, distances, engine=engine) == 2


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("num_vertices", [1, 2, 3, 64, 65, 100, 300, 40000])
def test_long_path_passes(engine, num_vertices):
    # The deepest tree: every pointer-jumping round is needed.
    src = np.arange(num_vertices - 1)
    vg = ValidationGraph.from_edges(src, src + 1, num_vertices, np.ones(src.size, np.float32))
    parents = np.concatenate([[0], src])
    distances = np.arange(num_vertices, dtype=np.float32)
    assert validate_bfs(vg, 0, parents, engine=engine) == num_vertices - 1
    assert validate_sssp(vg, 0, parents, distances, engine=engine) == num_vertices - 1


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("seed", range(4))
def test_tuple_direction_does_not_matter(engine, seed):
    rng = np.random.default_rng(seed)
    src, dst, weights = random_graph(seed, 80)
    flip = rng.random(src.size) < 0.5
    flipped_src, flipped_dst = np.where(flip, dst, src), np.where(flip, src, dst)
    root = int(src[0])
    parents = reference_bfs(80, src, dst, root)
    sssp_parents, distances = reference_dijkstra(80, src, dst, weights, root)
    for first, second in [(src, dst), (dst, src), (flipped_src, flipped_dst)]:
        vg = ValidationGraph.from_edges(first, second, 80, weights)
        assert validate_bfs(vg, root, parents, engine=engine) == direct_nedge(src, dst, parents)
        assert validate_sssp(vg, root, sssp_parents, distances, engine=engine) == \
            direct_nedge(src, dst, parents)


def test_nedge_from_first_endpoint_counts_matches_direct_count():
    src, dst, weights = random_graph(11, 80)
    vg = ValidationGraph.from_edges(src, dst, 80, weights)
    for root in range(80):
        parents = reference_bfs(80, src, dst, root)
        assert vg.count_reached_tuples(parents >= 0) == direct_nedge(src, dst, parents)


def test_validators_do_not_import_kernels():
    code = ("import sys, graph500.validators; "
            "print(any(m.startswith('graph500.kernels') for m in sys.modules))")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                            check=True)
    assert result.stdout.strip() == "False"


# ---------------------------------------------------------------- BFS faults
#
#   0 - 1 - 2 - 3 - 4    plus edges 0-3 (closing a square) and 0 - 5 - 6,
#                        7 - 8 apart, vertex 9 isolated, a self-loop at 4.
# BFS from 0: levels 0:0; 1, 3, 5: 1; 2, 4, 6: 2.
BFS_EDGES = [(0, 1), (1, 2), (2, 3), (0, 3), (3, 4), (0, 5), (5, 6), (7, 8), (4, 4)]


def bfs_example():
    src = np.array([u for u, _ in BFS_EDGES])
    dst = np.array([v for _, v in BFS_EDGES])
    vg = ValidationGraph.from_edges(src, dst, 10)
    parents = reference_bfs(10, src, dst, 0)
    assert parents.tolist() == [0, 0, 1, 0, 3, 0, 5, -1, -1, -1]
    return vg, parents


@pytest.mark.parametrize("engine, refusal", [("cuda", "engine 'cuda' needs CuPy arrays"),
                                             ("fused", "engine must be one of")])
def test_an_engine_that_cannot_read_the_arrays_is_refused(engine, refusal):
    vg, parents = bfs_example()
    with pytest.raises(ValueError, match=refusal):
        validators.validate_bfs(vg, 0, parents, engine=engine)


def assert_bfs_rule(engine, vg, parents, rule, root=0):
    with pytest.raises(ValidationError) as excinfo:
        validate_bfs(vg, root, parents, engine=engine)
    assert excinfo.value.rule == rule, str(excinfo.value)
    assert excinfo.value.kernel == "bfs"
    assert "\n" not in str(excinfo.value)
    return excinfo.value


@pytest.mark.parametrize("engine", ENGINES)
def test_bfs_example_is_valid(engine):
    vg, parents = bfs_example()
    assert validate_bfs(vg, 0, parents, engine=engine) == 7


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("length", [9, 11])
def test_bfs_parents_length(engine, length):
    vg, parents = bfs_example()
    parents = np.resize(parents, length)
    assert_bfs_rule(engine, vg, parents, "parents-length")


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("bad_parent", [10, -2])
def test_bfs_parent_out_of_range(engine, bad_parent):
    vg, parents = bfs_example()
    parents[6] = bad_parent
    error = assert_bfs_rule(engine, vg, parents, "parent-out-of-range")
    assert error.vertex == 6


def star_example(num_vertices=5000, root=2500, weights=None):
    """A star of ``num_vertices`` vertices around ``root`` (the leaves' edges weighted by ``weights``, in leaf order)
    and its tree: parents spread over many chunks of the Numba passes, so that their first offender comes from the
    first chunk that has one."""
    leaves = np.array([v for v in range(num_vertices) if v != root])
    vg = ValidationGraph.from_edges(np.full(leaves.shape[0], root), leaves, num_vertices, weights)
    return vg, np.full(num_vertices, root, dtype=np.int64)


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("dtype", [np.int32, np.int64])
def test_bfs_first_of_several_faults_is_reported(engine, dtype):
    """Several vertices break a vertex rule, in chunks far apart: the lowest is reported, and the root its own
    parent breaks none."""
    vg, parents = star_example()
    assert validate_bfs(vg, 2500, parents.astype(dtype), engine=engine) == 4999
    out_of_range = parents.astype(dtype)
    out_of_range[[4700, 1200, 3100]] = [-2, 5000, -7]
    assert assert_bfs_rule(engine, vg, out_of_range, "parent-out-of-range", root=2500).vertex == 1200
    self_parents = parents.astype(dtype)
    self_parents[[4321, 2600, 3999]] = [4321, 2600, 3999]
    assert assert_bfs_rule(engine, vg, self_parents, "tree-edge-level", root=2500).vertex == 2600


@pytest.mark.parametrize("engine", ENGINES)
def test_sssp_first_of_several_unconfirmed_distances_is_reported(engine):
    """Leaves a hair nearer than their one edge allows, in chunks far apart: the lowest is reported."""
    weights = np.linspace(0.01, 0.99, 4999, dtype=np.float32)
    vg, parents = star_example(weights=weights)
    distances = np.zeros(5000, dtype=np.float32)
    distances[np.arange(5000) != 2500] = weights
    assert validate_sssp(vg, 2500, parents, distances, engine=engine) == 4999
    for leaf in (4321, 2600, 3999):
        distances[leaf] = np.nextafter(distances[leaf], np.float32(0))
    error = assert_sssp_rule(engine, vg, parents, distances, "unconfirmed-distance", root=2500)
    assert error.vertex == 2600


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("root_parent", [1, -1])
def test_bfs_root_not_self_parent(engine, root_parent):
    vg, parents = bfs_example()
    parents[0] = root_parent
    error = assert_bfs_rule(engine, vg, parents, "root-not-self-parent")
    assert error.vertex == 0


@pytest.mark.parametrize("engine", ENGINES)
def test_bfs_cycle_detached_from_root(engine):
    vg, parents = bfs_example()
    parents[5], parents[6] = 6, 5  # 5 <-> 6, both still look reached
    error = assert_bfs_rule(engine, vg, parents, "cycle")
    assert error.vertex in (5, 6)


@pytest.mark.parametrize("engine", ENGINES)
def test_bfs_chain_into_unreached_vertex(engine):
    vg, parents = bfs_example()
    parents[8] = 7  # 8 looks reached but its parent 7 is not
    error = assert_bfs_rule(engine, vg, parents, "cycle")
    assert error.vertex == 8


@pytest.mark.parametrize("engine", ENGINES)
def test_bfs_long_cycle(engine):
    # A 40-vertex ring that never reaches the root: needs every pointer-jumping round.
    n = 41
    src = np.arange(1, n)
    dst = np.concatenate([np.arange(2, n), [1]])
    vg = ValidationGraph.from_edges(np.append(src, 0), np.append(dst, 1), n)
    parents = np.concatenate([[0], dst]).astype(np.int64)
    assert_bfs_rule(engine, vg, parents, "cycle")


@pytest.mark.parametrize("engine", ENGINES)
def test_bfs_tree_edge_not_in_graph(engine):
    vg, parents = bfs_example()
    parents[6] = 1  # level 1 like 5, so levels stay consistent; but 1-6 is no edge
    error = assert_bfs_rule(engine, vg, parents, "tree-edge-not-in-graph")
    assert error.vertex == 6 and error.edge == (6, 1)


@pytest.mark.parametrize("engine", ENGINES)
def test_bfs_self_loop_is_no_tree_edge(engine):
    vg, parents = bfs_example()
    # 4 has a self-loop tuple, which every rule ignores; 4 as its own parent is
    # a tree edge joining a level to itself.
    parents[4] = 4
    error = assert_bfs_rule(engine, vg, parents, "tree-edge-level")
    assert error.vertex == 4


@pytest.mark.parametrize("engine", ENGINES)
def test_bfs_level_jump(engine):
    vg, parents = bfs_example()
    parents[3] = 2  # 3 moves to level 3 through real edges; edge 0-3 now spans 3 levels
    error = assert_bfs_rule(engine, vg, parents, "level-jump")
    assert set(error.edge) == {0, 3}


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("depth", [100, 200, 40000])
def test_bfs_level_jump_in_a_deep_tree(engine, depth):
    # A path whose last vertex also touches the root: the path as the tree puts it `depth` levels down (levels of a
    # byte, two bytes and four bytes in the tuple pass).
    src = np.concatenate([np.arange(depth), [0]])
    dst = np.concatenate([np.arange(1, depth + 1), [depth]])
    vg = ValidationGraph.from_edges(src, dst, depth + 1)
    parents = np.concatenate([[0], np.arange(depth)])
    error = assert_bfs_rule(engine, vg, parents, "level-jump")
    assert set(error.edge) == {0, depth}


@pytest.mark.parametrize(("deepest", "dtype"), [(-1, np.int8), (127, np.int8), (128, np.int16), (32767, np.int16),
                                                (32768, np.int32)])
def test_tuple_pass_levels_take_the_narrowest_type(deepest, dtype):
    levels = np.array([-1, 0, deepest], dtype=np.int32)
    narrowed = bfs_validator.narrowest_levels(levels)
    assert narrowed.dtype == dtype and narrowed.tolist() == levels.tolist()


@pytest.mark.parametrize("engine", ENGINES)
def test_bfs_reached_unreached_edge(engine):
    vg, parents = bfs_example()
    parents[6] = -1  # leaf 6 dropped from the tree although edge 5-6 leads to it
    error = assert_bfs_rule(engine, vg, parents, "reached-unreached-edge")
    assert error.vertex == 6 and set(error.edge) == {5, 6}


def test_root_must_be_a_vertex():
    vg, parents = bfs_example()
    with pytest.raises(ValueError):
        validate_bfs(vg, 10, parents)


# ---------------------------------------------------------------- SSSP faults
#
# Weighted edges; Dijkstra from 0 gives dist 0:0, 1:0.5, 2:0.25, 3:1.0 (tied via
# 2 and 1), 4:1.125, 5:0.75; 6 - 7 unreached; two 2-5 tuples of different weight.
SSSP_EDGES = [(0, 1, 0.5), (0, 2, 0.25), (1, 3, 0.5), (2, 3, 0.75), (3, 4, 0.125),
              (2, 5, 0.5), (6, 7, 0.5), (5, 5, 0.0), (2, 5, 0.625)]


def weighted_example():
    src = np.array([u for u, _, _ in SSSP_EDGES])
    dst = np.array([v for _, v, _ in SSSP_EDGES])
    weights = np.array([w for _, _, w in SSSP_EDGES], dtype=np.float32)
    vg = ValidationGraph.from_edges(src, dst, 8, weights)
    parents, distances = reference_dijkstra(8, src, dst, weights, 0)
    assert parents.tolist() == [0, 0, 0, 2, 3, 2, -1, -1]
    assert distances[:6].tolist() == [0, 0.5, 0.25, 1.0, 1.125, 0.75]
    return vg, parents, distances


def assert_sssp_rule(engine, vg, parents, distances, rule, root=0):
    with pytest.raises(ValidationError) as excinfo:
        validate_sssp(vg, root, parents, distances, engine=engine)
    assert excinfo.value.rule == rule, str(excinfo.value)
    assert excinfo.value.kernel == "sssp"
    assert "\n" not in str(excinfo.value)
    return excinfo.value


@pytest.mark.parametrize("engine", ENGINES)
def test_sssp_example_is_valid(engine):
    vg, parents, distances = weighted_example()
    assert validate_sssp(vg, 0, parents, distances, engine=engine) == 7


@pytest.mark.parametrize("engine", ENGINES)
def test_sssp_parents_length(engine):
    vg, parents, distances = weighted_example()
    assert_sssp_rule(engine, vg, parents[:-1], distances, "parents-length")


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("length", [7, 9])
def test_sssp_distances_length(engine, length):
    vg, parents, distances = weighted_example()
    assert_sssp_rule(engine, vg, parents, np.resize(distances, length), "distances-length")


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("bad_parent", [8, -2])
def test_sssp_parent_out_of_range(engine, bad_parent):
    vg, parents, distances = weighted_example()
    parents[4] = bad_parent
    assert_sssp_rule(engine, vg, parents, distances, "parent-out-of-range")


@pytest.mark.parametrize("engine", ENGINES)
def test_sssp_root_not_self_parent(engine):
    vg, parents, distances = weighted_example()
    parents[0] = 2
    assert_sssp_rule(engine, vg, parents, distances, "root-not-self-parent")


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("root_distance", [0.25, np.nan])
def test_sssp_root_distance(engine, root_distance):
    vg, parents, distances = weighted_example()
    distances[0] = root_distance
    error = assert_sssp_rule(engine, vg, parents, distances, "root-distance")
    assert error.vertex == 0


@pytest.mark.parametrize("engine", ENGINES)
def test_sssp_cycle(engine):
    vg, parents, distances = weighted_example()
    parents[3], parents[4] = 4, 3
    assert_sssp_rule(engine, vg, parents, distances, "cycle")


@pytest.mark.parametrize("engine", ENGINES)
def test_sssp_self_parent_is_a_cycle(engine):
    vg, parents, distances = weighted_example()
    parents[5] = 5
    error = assert_sssp_rule(engine, vg, parents, distances, "cycle")
    assert error.vertex == 5


def test_chains_end_where_the_tuple_pass_found_no_fault_and_the_ties_form_no_cycle():
    """The SSSP validator skips the pointer jumping where the Numba tuple pass found no fault and the ties it kept
    form no cycle; any fault (a tuple index, 0 included, or an unconfirmed vertex), more ties than it kept (None)
    or a cycle of ties sends it to the pointer jumping."""
    parents = np.array([0, 0, 1, 0, 2])
    no_fault = (None, None, None)

    def chains_end(parents, faults, tied):
        return sssp_validator.chains_end(faults, tied, None if tied is None else parents[tied])

    assert chains_end(parents, no_fault, np.array([2]))  # 2 tied to 1, whose parent 0 is not tied
    assert chains_end(parents, no_fault, np.array([], dtype=np.int64))
    assert not chains_end(parents, no_fault, None)
    for faults in ((0, None, None), (None, 3, None), (None, None, 4)):
        assert not chains_end(parents, faults, np.array([2]))
    tie_cycle = parents.copy()
    tie_cycle[1], tie_cycle[2] = 2, 1
    assert not chains_end(tie_cycle, no_fault, np.array([1, 2]))


def test_ties_end_finds_a_cycle_of_ties_however_long():
    chain = np.arange(1, 1000)
    assert common.ties_end(chain, chain - 1)  # 999 -> ... -> 1 -> 0, which is not tied
    assert not common.ties_end(chain, np.roll(chain, 1))  # 1 -> 999 -> 998 -> ... -> 1
    assert not common.ties_end(np.array([7]), np.array([7]))
    assert common.ties_end(np.array([], dtype=np.int64), np.array([], dtype=np.int64))


def zero_weight_example():
    """A shortest-path tree with a tree edge of weight 0 (1 -> 2): vertex 2 as near as its parent."""
    src, dst = np.array([0, 1, 0, 2]), np.array([1, 2, 3, 4])
    weights = np.array([0.5, 0.0, 0.75, 0.125], dtype=np.float32)
    vg = ValidationGraph.from_edges(src, dst, 5, weights)
    parents, distances = reference_dijkstra(5, src, dst, weights, 0)
    assert parents.tolist() == [0, 0, 1, 0, 2] and distances[1] == distances[2]
    return vg, parents, distances


@pytest.mark.parametrize("engine", ENGINES)
def test_sssp_ties_need_no_pointer_jumping_but_a_cycle_of_ties_is_caught(engine, monkeypatch):
    """A valid tree with a tie (a tree edge of weight 0) validates without the pointer jumping (the fused Numba
    and CUDA passes; the array-generic ones always jump); with the tied vertex and its parent each other's
    parent, the pointer jumping runs and finds the cycle."""
    calls = []
    jumping = sssp_validator.tree_levels
    monkeypatch.setattr(sssp_validator, "tree_levels", lambda *args: calls.append(1) or jumping(*args))
    jumps = engine not in ("numba", "cuda")
    vg, parents, distances = zero_weight_example()
    assert validate_sssp(vg, 0, parents, distances, engine=engine) == 4
    assert len(calls) == jumps
    parents[1], parents[2] = 2, 1  # 1 and 2 each other's parent, at the same distance
    assert_sssp_rule(engine, vg, parents, distances, "cycle")
    assert len(calls) == 1 + jumps


@pytest.mark.parametrize("engine", ENGINES)
def test_sssp_reached_unreached_edge(engine):
    vg, parents, distances = weighted_example()
    parents[4] = -1
    error = assert_sssp_rule(engine, vg, parents, distances, "reached-unreached-edge")
    assert error.vertex == 4


@pytest.mark.parametrize("engine", ENGINES)
def test_sssp_distance_increased(engine):
    vg, parents, distances = weighted_example()
    distances[4] = np.nextafter(np.float32(1.125), np.float32(2))  # one ulp too far
    error = assert_sssp_rule(engine, vg, parents, distances, "distance-not-minimal")
    assert error.vertex == 4 and set(error.edge) == {3, 4}


@pytest.mark.parametrize("engine", ENGINES)
def test_sssp_distance_decreased(engine):
    vg, parents, distances = weighted_example()
    distances[3] = np.float32(0.5)  # then 4 at 1.125 is more than 0.5 + 0.125 away
    error = assert_sssp_rule(engine, vg, parents, distances, "distance-not-minimal")
    assert error.vertex == 4 and set(error.edge) == {3, 4}


@pytest.mark.parametrize("engine", ENGINES)
def test_sssp_unconfirmed_distance_slightly_short(engine):
    vg, parents, distances = weighted_example()
    distances[5] = np.nextafter(np.float32(0.75), np.float32(0))  # shorter than any path
    error = assert_sssp_rule(engine, vg, parents, distances, "unconfirmed-distance")
    assert error.vertex == 5 and error.edge == (5, 2)


@pytest.mark.filterwarnings("ignore:invalid value encountered")  # NumPy's, at a signalling NaN
@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("bits", [0x7FC00000, 0xFFC00000, 0x7FC00001, 0x7F800001])
def test_sssp_reached_vertex_with_a_nan_distance_is_unconfirmed(engine, bits):
    # a NaN, of any sign and payload, compares false: no tuple confirms it, and none is too short for it
    vg, parents, distances = weighted_example()
    distances[5] = np.array([bits], dtype=np.uint32).view(np.float32)[0]
    error = assert_sssp_rule(engine, vg, parents, distances, "unconfirmed-distance")
    assert error.vertex == 5


@pytest.mark.parametrize("engine", ENGINES)
def test_sssp_unconfirmed_distance_wrong_parent(engine):
    vg, parents, distances = weighted_example()
    parents[4] = 1  # 1-4 is no edge; the distances stay minimal
    error = assert_sssp_rule(engine, vg, parents, distances, "unconfirmed-distance")
    assert error.vertex == 4


# ---------------------------------------------------------------- both engines agree

def tree_depths(parents):
    """Hops from the root along the parent chain (-1 where unreached), for a valid tree."""
    depths = np.full(parents.size, -1)
    for v in np.flatnonzero(parents >= 0):
        depth, u = 0, v
        while parents[u] != u:
            depth, u = depth + 1, parents[u]
        depths[v] = depth
    return depths


def plant_random_faults(rng, parents, distances, kind):
    """Corrupt a valid tree in place: move vertices under shallower reached vertices,
    drop reached vertices, or scale distances."""
    depths = tree_depths(parents)
    for _ in range(3):
        v = int(rng.choice(np.flatnonzero(depths > 0)))
        if kind == "reparent":
            parents[v] = rng.choice(np.flatnonzero((depths >= 0) & (depths < depths[v])))
        elif kind == "drop":
            parents[v] = -1
        else:
            distances[v] *= np.float32(rng.choice([0.5, 0.999, 1.001, 2]))


FAULT_KINDS = ["reparent", "drop", "distance"]
# The rules a planted fault of each kind can break first, (BFS, SSSP): a vertex moved under a shallower one
# leaves a tree edge that is no tuple (or skips a level) and a distance no tuple confirms; a dropped vertex
# leaves its children's chains short of the root (a cycle) or a tuple between reached and unreached; a
# scaled distance is unconfirmed or not minimal, and leaves the BFS tree valid (None).
FAULT_RULES = {
    "reparent": ({"tree-edge-not-in-graph", "level-jump", "tree-edge-level"},
                 {"unconfirmed-distance", "distance-not-minimal"}),
    "drop": ({"cycle", "reached-unreached-edge"}, {"cycle", "reached-unreached-edge"}),
    "distance": (None, {"distance-not-minimal", "unconfirmed-distance"}),
}


@pytest.fixture(params=[common.PREFETCH_AHEAD, 0, 1, 2**40])
def prefetch_ahead(request, monkeypatch):
    """How far ahead the fused passes ask for the next tuples' values: anything, past the last tuple too, leaves
    the results as they are."""
    monkeypatch.setattr(common, "PREFETCH_AHEAD", request.param)


@pytest.mark.parametrize("kind", FAULT_KINDS)
@pytest.mark.parametrize("seed", range(8))
def test_engines_report_the_same_fault(seed, kind, prefetch_ahead):
    """Every engine (generic, Numba, and the device's where there is one) reports the same first fault, and it
    is a fault of a rule the planted kind breaks."""
    rng = np.random.default_rng(seed)
    num_vertices = 300
    src, dst, weights = random_graph(seed, num_vertices, 1200, components=4)
    vg = ValidationGraph.from_edges(src, dst, num_vertices, weights)
    root = int(src[0])
    bfs_parents = reference_bfs(num_vertices, src, dst, root)
    sssp_parents, distances = reference_dijkstra(num_vertices, src, dst, weights, root)
    plant_random_faults(rng, bfs_parents, distances.copy(), kind)
    plant_random_faults(rng, sssp_parents, distances, kind)
    outcomes = []
    for engine in ALL_ENGINES:
        outcome = []
        for check in (lambda: validate_bfs(vg, root, bfs_parents, engine=engine),
                      lambda: validate_sssp(vg, root, sssp_parents, distances, engine=engine)):
            try:
                outcome.append(check())
            except ValidationError as error:
                outcome.append((error.rule, error.vertex, error.edge))
        outcomes.append(outcome)
    assert all(outcome == outcomes[0] for outcome in outcomes[1:]), outcomes
    for result, rules in zip(outcomes[0], FAULT_RULES[kind]):
        if rules is None:
            assert isinstance(result, int) and result > 0, result  # valid: its nedge
        else:
            assert isinstance(result, tuple) and result[0] in rules, result


@pytest.mark.parametrize("threads", sorted({1, numba.config.NUMBA_NUM_THREADS}))
@pytest.mark.parametrize("weighted", [True, False])
def test_graph_groups_tuples_stably_by_each_endpoint(threads, weighted):
    rng = np.random.default_rng(11)
    src, dst = rng.integers(0, 50, 3000), rng.integers(0, 50, 3000)
    dst[::7] = src[::7]
    weights = rng.random(3000, dtype=np.float32) if weighted else None
    previous = numba.get_num_threads()
    numba.set_num_threads(threads)
    try:
        vg = ValidationGraph.from_edges(src, dst, 60, weights)
    finally:
        numba.set_num_threads(previous)
    keep = src != dst
    by_src = np.argsort(src[keep], kind="stable")
    np.testing.assert_array_equal(vg.src, src[keep][by_src])
    assert vg.src is not vg.src  # made from the offsets when asked, not held
    np.testing.assert_array_equal(vg.dst, dst[keep][by_src])
    np.testing.assert_array_equal(vg.src_offsets, np.concatenate([[0], np.cumsum(np.bincount(vg.src, minlength=60))]))
    dst_offsets, src_by_dst = vg.incoming()
    by_dst = np.argsort(vg.dst, kind="stable")
    np.testing.assert_array_equal(src_by_dst, vg.src[by_dst])
    np.testing.assert_array_equal(dst_offsets, np.concatenate([[0], np.cumsum(np.bincount(vg.dst, minlength=60))]))
    if weighted:
        np.testing.assert_array_equal(vg.weights, weights[keep][by_src])
    else:
        assert vg.weights is None


def test_every_cuda_kernel_can_be_found_by_name():
    """CuPy finds a kernel by its name: a non-template kernel of the package's CUDA sources must have C linkage
    (a C++ name is mangled: the launch fails on the device alone), and every template instance the validators
    compile names a template kernel of their source."""
    import pathlib
    import re

    from graph500.validators import device

    kernel = re.compile(r'(template\s*<[^>]*>\s*)?(extern "C"\s+)?__global__\s+void\s+(\w+)')
    sources = sorted(pathlib.Path(validators.__file__).parent.parent.rglob("*.cu"))
    assert len(sources) > 1
    for source in sources:
        for match in kernel.finditer(source.read_text()):
            assert match.group(1) or match.group(2), f"{source.name}: {match.group(3)} has a C++ name"
    templates = {match.group(3) for match in kernel.finditer(device.SOURCES[0].read_text()) if match.group(1)}
    assert {instance.split("<")[0] for instance in device._INSTANCES} == templates
