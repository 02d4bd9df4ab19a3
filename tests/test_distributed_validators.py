"""Tests for graph500.validators.distributed: a result split over P ranks is validated like a whole one.

(a) P = 1 (`SelfCommunicator`): on the reference's graphs and on
test_validators' examples, the distributed validator's result (nedge, or the
ValidationError with its rule, vertex, edge and message) is exactly the
single-process validator's, for valid trees and for every planted fault.
(b) P = 2 and 3 under ``mpiexec`` (oversubscribed; skipped without mpiexec
or mpi4py): a script run by every rank validates a tree made by a
single-process kernel on the whole graph and split into the ranks' blocks,
then faults planted in a chosen rank's part (one per rule, on the last rank,
on vertices whose tuples live on another rank): every rank must raise the
same error, of the expected rule, and nedge must be the single-process one.
"""

import glob
import json
import os

import numba
import numpy as np
import pytest
from support import needs_mpi, run_ranks
from test_validators import (BFS_EDGES, FAULT_KINDS, FAULT_RULES, NO_GPU, SSSP_EDGES, plant_random_faults,
                             random_graph, reference_bfs, reference_dijkstra, small_device_chunks,
                             zero_weight_example)

from graph500 import kernels
from graph500.comm import SelfCommunicator
from graph500.errors import ValidationError
from graph500.io import read_edges
from graph500.kernels.cpu.build import build_csr
from graph500.partition import VertexBlocks
from graph500.validators import DistributedValidationGraph, ValidationGraph, validate_bfs, validate_sssp
from graph500.validators import common, distributed

ENGINES = ["generic", "numba"]
# the one-rank tests' engines: the host's, and "cuda", the split graph's tuples on the device (CuPy, the fused CUDA
# passes) against the whole graph's Numba passes on the host
ONE_RANK_ENGINES = ENGINES + [pytest.param("cuda", marks=[pytest.mark.gpu,
                                                          pytest.mark.skipif(bool(NO_GPU), reason=str(NO_GPU))])]
DATA = os.path.join(os.path.dirname(__file__), "data", "reference-v3")
FIXTURES = sorted(path[:-len(".edges")] for path in glob.glob(os.path.join(DATA, "*.edges")))


def outcome(check):
    """nedge, or what the check raised (a ValidationError with everything it says)."""
    try:
        return ("nedge", check())
    except ValidationError as error:
        return (error.rule, error.vertex, error.edge, error.kernel, str(error))
    except (ValueError, TypeError) as error:
        return (type(error).__name__, str(error))


def both_graphs(src, dst, num_vertices, weights=None):
    whole = ValidationGraph.from_edges(src, dst, num_vertices, weights)
    split = DistributedValidationGraph.from_edges(SelfCommunicator(), VertexBlocks(num_vertices, 1), src, dst,
                                                  num_vertices, weights)
    return whole, split


def on_device(whole):
    """A one-rank DistributedValidationGraph of ``whole``'s tuples (in its order) on the device, in chunks of
    `DEVICE_TUPLE_CHUNK` tuples."""
    import cupy

    n = whole.num_vertices
    weights = None if whole.weights is None else cupy.asarray(whole.weights)
    with small_device_chunks():
        return DistributedValidationGraph.from_edges(SelfCommunicator(xp=cupy), VertexBlocks(n, 1),
                                                     cupy.asarray(whole.src), cupy.asarray(whole.dst), n, weights)


def assert_same(validate, graphs, root, arrays, engine):
    """``validate``'s outcome on the split graph is the whole graph's (by ``engine``; "cuda": the split graph on
    the device against the whole one's Numba passes)."""
    whole, split = graphs
    expected = outcome(lambda: validate(whole, root, *arrays, engine="numba" if engine == "cuda" else engine))
    if engine == "cuda":
        split = on_device(whole)
    with small_device_chunks():  # NumPy's passes read their tuples whole either way
        assert outcome(lambda: validate(split, root, *arrays, engine=engine)) == expected
    return expected


def assert_same_bfs(graphs, root, parents, engine):
    return assert_same(validate_bfs, graphs, root, (parents,), engine)


def assert_same_sssp(graphs, root, parents, distances, engine):
    return assert_same(validate_sssp, graphs, root, (parents, distances), engine)


# ---------------------------------------------------------------- (a) P = 1: the reference's graphs

def fixture(path):
    src, dst, weights = read_edges(path + ".edges")
    with open(path + ".roots") as roots_file:
        roots = [int(line) for line in roots_file.read().split()]
    num_vertices = 1 << int(os.path.basename(path).split("_")[0][1:])
    return src, dst, weights, roots, num_vertices


@pytest.mark.parametrize("path", FIXTURES, ids=os.path.basename)
def test_one_rank_matches_single_process_on_reference_graphs(path):
    src, dst, weights, roots, num_vertices = fixture(path)
    graphs = both_graphs(src, dst, num_vertices, weights)
    csr = build_csr(src, dst, num_vertices, weights)
    bfs_kernel = kernels.get("bfs", "cpu")(csr)
    sssp_kernel = kernels.get("sssp", "cpu")(csr)
    rng = np.random.default_rng(5)
    for root in roots[:4]:
        parents = bfs_kernel.search(root)
        sssp_parents, distances = sssp_kernel.search(root)
        for engine in ENGINES:
            nedge = assert_same_bfs(graphs, root, parents, engine)
            assert nedge[0] == "nedge" and nedge[1] > 0
            assert assert_same_sssp(graphs, root, sssp_parents, distances, engine) == nedge
        assert graphs[1].count_reached_tuples(parents >= 0) == nedge[1]
        for kind in FAULT_KINDS:
            bad_parents, bad_sssp_parents, bad_distances = parents.copy(), sssp_parents.copy(), distances.copy()
            plant_random_faults(rng, bad_parents, distances.copy(), kind)
            plant_random_faults(rng, bad_sssp_parents, bad_distances, kind)
            for engine in ENGINES:
                bfs_verdict = assert_same_bfs(graphs, root, bad_parents, engine)
                sssp_verdict = assert_same_sssp(graphs, root, bad_sssp_parents, bad_distances, engine)
                for verdict, rules in zip((bfs_verdict, sssp_verdict), FAULT_RULES[kind]):  # caught, by its rule
                    assert verdict[0] == "nedge" if rules is None else verdict[0] in rules, verdict


# ---------------------------------------------------------------- (a) P = 1: test_validators' faults

def _set(array, index, value):
    array = array.copy()
    array[index] = value
    return array


# (name, rule, fault) on test_validators' BFS example (root 0, parents [0, 0, 1, 0, 3, 0, 5, -1, -1, -1]).
BFS_FAULTS = [
    ("short", "parents-length", lambda p: np.resize(p, 9)),
    ("long", "parents-length", lambda p: np.resize(p, 11)),
    ("too-large", "parent-out-of-range", lambda p: _set(p, 6, 10)),
    ("too-small", "parent-out-of-range", lambda p: _set(p, 6, -2)),
    ("too-large-int8", "parent-out-of-range", lambda p: _set(p.astype(np.int8), 6, 100)),
    ("too-large-int64", "parent-out-of-range", lambda p: _set(p.astype(np.int64), 6, 2**40)),
    ("too-small-int16", "parent-out-of-range", lambda p: _set(p.astype(np.int16), 6, -300)),
    ("root-has-parent", "root-not-self-parent", lambda p: _set(p, 0, 1)),
    ("root-unreached", "root-not-self-parent", lambda p: _set(p, 0, -1)),
    ("detached-cycle", "cycle", lambda p: _set(p, [5, 6], [6, 5])),
    ("chain-into-unreached", "cycle", lambda p: _set(p, 8, 7)),
    ("tree-edge-not-in-graph", "tree-edge-not-in-graph", lambda p: _set(p, 6, 1)),
    ("self-parent", "tree-edge-level", lambda p: _set(p, 4, 4)),
    ("level-jump", "level-jump", lambda p: _set(p, 3, 2)),
    ("reached-unreached", "reached-unreached-edge", lambda p: _set(p, 6, -1)),
    ("float-parents", "TypeError", lambda p: p.astype(np.float64)),
]

# (name, rule, fault) on test_validators' weighted example (root 0, parents [0, 0, 0, 2, 3, 2, -1, -1]).
SSSP_FAULTS = [
    ("parents-short", "parents-length", lambda p, d: (p[:-1], d)),
    ("distances-short", "distances-length", lambda p, d: (p, np.resize(d, 7))),
    ("distances-long", "distances-length", lambda p, d: (p, np.resize(d, 9))),
    ("too-large", "parent-out-of-range", lambda p, d: (_set(p, 4, 8), d)),
    ("too-small", "parent-out-of-range", lambda p, d: (_set(p, 4, -2), d)),
    ("root-has-parent", "root-not-self-parent", lambda p, d: (_set(p, 0, 2), d)),
    ("root-distance", "root-distance", lambda p, d: (p, _set(d, 0, 0.25))),
    ("root-distance-nan", "root-distance", lambda p, d: (p, _set(d, 0, np.nan))),
    ("cycle", "cycle", lambda p, d: (_set(p, [3, 4], [4, 3]), d)),
    ("self-parent", "cycle", lambda p, d: (_set(p, 5, 5), d)),
    ("reached-unreached", "reached-unreached-edge", lambda p, d: (_set(p, 4, -1), d)),
    ("distance-increased", "distance-not-minimal",
     lambda p, d: (p, _set(d, 4, np.nextafter(np.float32(1.125), np.float32(2))))),
    ("distance-decreased", "distance-not-minimal", lambda p, d: (p, _set(d, 3, 0.5))),
    ("slightly-short", "unconfirmed-distance",
     lambda p, d: (p, _set(d, 5, np.nextafter(np.float32(0.75), np.float32(0))))),
    ("wrong-parent", "unconfirmed-distance", lambda p, d: (_set(p, 4, 1), d)),
]


def example_edges(edges):
    src = np.array([edge[0] for edge in edges])
    dst = np.array([edge[1] for edge in edges])
    weights = np.array([edge[2] if len(edge) > 2 else 1.0 for edge in edges], dtype=np.float32)
    return src, dst, weights


@pytest.mark.parametrize("engine", ONE_RANK_ENGINES)
@pytest.mark.parametrize("name, rule, fault", BFS_FAULTS, ids=[fault[0] for fault in BFS_FAULTS])
def test_one_rank_bfs_faults(engine, name, rule, fault):
    src, dst, _ = example_edges(BFS_EDGES)
    graphs = both_graphs(src, dst, 10)
    parents = reference_bfs(10, src, dst, 0)
    assert assert_same_bfs(graphs, 0, parents, engine) == ("nedge", 7)
    assert assert_same_bfs(graphs, 0, fault(parents), engine)[0] == rule


@pytest.mark.parametrize("engine", ONE_RANK_ENGINES)
@pytest.mark.parametrize("dtype", [np.int8, np.int16, np.int32, np.int64])
def test_one_rank_bfs_parents_of_any_signed_type(engine, dtype):
    """Parents of any signed integer type validate as they are (int32 ones not widened), as one process."""
    src, dst, _ = example_edges(BFS_EDGES)
    parents = reference_bfs(10, src, dst, 0).astype(dtype)
    assert assert_same_bfs(both_graphs(src, dst, 10), 0, parents, engine) == ("nedge", 7)


@pytest.mark.parametrize("engine", ONE_RANK_ENGINES)
@pytest.mark.parametrize("name, rule, fault", SSSP_FAULTS, ids=[fault[0] for fault in SSSP_FAULTS])
def test_one_rank_sssp_faults(engine, name, rule, fault):
    src, dst, weights = example_edges(SSSP_EDGES)
    graphs = both_graphs(src, dst, 8, weights)
    parents, distances = reference_dijkstra(8, src, dst, weights, 0)
    assert assert_same_sssp(graphs, 0, parents, distances, engine) == ("nedge", 7)
    assert assert_same_sssp(graphs, 0, *fault(parents, distances), engine)[0] == rule


@pytest.mark.parametrize("engine", ONE_RANK_ENGINES)
def test_one_rank_sssp_tie_along_a_tree_edge(engine):
    """A tree edge of weight 0 (a vertex as near as its parent: the check of parents strictly nearer fails and
    the pointer jumping decides): valid, then with the two ends each other's parent, a cycle, as one process."""
    vg, parents, distances = zero_weight_example()
    graphs = both_graphs(vg.src, vg.dst, 5, vg.weights)
    assert assert_same_sssp(graphs, 0, parents, distances, engine) == ("nedge", 4)
    parents[1], parents[2] = 2, 1
    assert assert_same_sssp(graphs, 0, parents, distances, engine)[0] == "cycle"


@pytest.mark.parametrize("engine", ONE_RANK_ENGINES)
def test_one_rank_sssp_cycle_confirmed_through_a_negative_weight(engine):
    """Two vertices each other's parent, each confirmed by one of two parallel tuples (weights 0.25 and -0.25):
    the tuple pass's confirmations prove no chain where a weight is negative, so the pointer jumping finds the
    cycle, reported before the tuple fault the negative weight makes, as one process reports it."""
    src, dst = np.array([0, 1, 2, 2]), np.array([1, 2, 3, 3])
    weights = np.array([0.5, 0.5, 0.25, -0.25], dtype=np.float32)
    graphs = both_graphs(src, dst, 4, weights)
    parents = np.array([0, 0, 3, 2])
    distances = np.array([0, 0.5, 1.0, 0.75], dtype=np.float32)
    assert assert_same_sssp(graphs, 0, parents, distances, engine)[:2] == ("cycle", 2)


@pytest.mark.parametrize("engine", [engine for engine in ONE_RANK_ENGINES if engine != "generic"])
@pytest.mark.parametrize("depth, jumped", [(common.LEVEL_ROUNDS - 1, False), (2 * common.LEVEL_ROUNDS, True)])
def test_one_rank_levels_of_a_deep_chain(monkeypatch, depth, jumped, engine):
    """A path's BFS tree of ``depth`` levels: found level by level from the root within `LEVEL_ROUNDS` rounds, by
    the pointer jumping past them; valid, then with its last two vertices each other's parent (a cycle), as one
    process."""
    jumps = []
    jumped_levels = distributed._jumped_levels
    monkeypatch.setattr(distributed, "_jumped_levels", lambda *arguments: jumps.append(1) or jumped_levels(*arguments))
    src = np.arange(depth)
    graphs = both_graphs(src, src + 1, depth + 1)
    parents = reference_bfs(depth + 1, src, src + 1, 0)
    assert assert_same_bfs(graphs, 0, parents, engine) == ("nedge", depth)
    assert assert_same_bfs(graphs, 0, _set(parents, [depth - 1, depth], [depth, depth - 1]), engine)[0] == "cycle"
    assert len(jumps) == (2 if jumped else 0)


@pytest.mark.skipif(numba.config.NUMBA_NUM_THREADS < 2, reason="needs two Numba threads")
@pytest.mark.parametrize("seed", range(3))
def test_one_rank_levels_rounds_split_among_threads(monkeypatch, seed):
    """The NumPy rounds of the levels split a round's vertices among the threads at word boundaries (here from one
    vertex on, on two threads): the same outcome as one process, valid and with a cycle planted."""
    parts = []
    split_rounds = common._descend_parts
    monkeypatch.setattr(common, "PARALLEL_PENDING", 1)
    monkeypatch.setattr(common, "_descend_parts", lambda *arguments: parts.append(1) or split_rounds(*arguments))
    threads = numba.get_num_threads()
    numba.set_num_threads(2)
    try:
        num_vertices = 500
        src, dst, _ = random_graph(seed, num_vertices, 2000, components=3)
        graphs = both_graphs(src, dst, num_vertices)
        root = int(src[0])
        parents = reference_bfs(num_vertices, src, dst, root)
        assert assert_same_bfs(graphs, root, parents, "numba")[0] == "nedge"
        child = int(np.flatnonzero((parents >= 0) & (np.arange(num_vertices) != root))[-1])
        assert assert_same_bfs(graphs, root, _set(parents, [child, int(parents[child])], [int(parents[child]), child]),
                               "numba")[0] != "nedge"
    finally:
        numba.set_num_threads(threads)
    assert parts


@pytest.mark.parametrize("engine", ONE_RANK_ENGINES)
@pytest.mark.parametrize("kind", FAULT_KINDS)
@pytest.mark.parametrize("seed", range(6))
def test_one_rank_random_faults(seed, kind, engine):
    rng = np.random.default_rng(seed)
    num_vertices = 300
    src, dst, weights = random_graph(seed, num_vertices, 1200, components=4)
    graphs = both_graphs(src, dst, num_vertices, weights)
    root = int(src[0])
    parents = reference_bfs(num_vertices, src, dst, root)
    sssp_parents, distances = reference_dijkstra(num_vertices, src, dst, weights, root)
    plant_random_faults(rng, parents, distances.copy(), kind)
    plant_random_faults(rng, sssp_parents, distances, kind)
    verdicts = (assert_same_bfs(graphs, root, parents, engine),
                assert_same_sssp(graphs, root, sssp_parents, distances, engine))
    for verdict, rules in zip(verdicts, FAULT_RULES[kind]):  # caught, by a rule the kind breaks
        assert verdict[0] == "nedge" if rules is None else verdict[0] in rules, verdict


def test_one_rank_caller_mistakes():
    src, dst, weights = example_edges(SSSP_EDGES)
    graphs = both_graphs(src, dst, 8, weights)
    parents, distances = reference_dijkstra(8, src, dst, weights, 0)
    assert assert_same_bfs(graphs, 8, parents, "numba")[0] == "ValueError"  # root not a vertex
    unweighted = both_graphs(src, dst, 8)
    assert assert_same_sssp(unweighted, 0, parents, distances, "numba")[0] == "ValueError"
    with pytest.raises(ValueError):
        DistributedValidationGraph.from_edges(SelfCommunicator(), VertexBlocks(8, 1), src, dst + 1, 8)
    with pytest.raises(ValueError):
        DistributedValidationGraph.from_edges(SelfCommunicator(), VertexBlocks(16, 1), src, dst, 8)


# ---------------------------------------------------------------- (b) P = 2, 3 under mpiexec

RANK_SCRIPT = r'''
import json
import sys

import numpy as np

from graph500 import kernels
from graph500.comm import MPICommunicator
from graph500.errors import ValidationError
from graph500.generators.kronecker import generate_edges
from graph500.kernels.cpu.build import build_csr
from graph500.partition import VertexBlocks, tuple_range
from graph500.validators import DistributedValidationGraph, ValidationGraph, validate_bfs, validate_sssp
from graph500.validators import common, distributed

SCALE, EDGEFACTOR, OUT = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
ENGINES = ("numba", "generic")
comm = MPICommunicator()
if sys.argv[4] == "0":
    comm._host_comm = False  # no shared windows (the levels' bitmaps): every rank its own copies, as on several hosts
distributed.LABEL_CONFIRMATIONS = float(sys.argv[5])  # confirmations as labels: 0 never, inf always
P, rank = comm.size, comm.rank
last = P - 1
N, M = 1 << SCALE, EDGEFACTOR << SCALE
blocks = VertexBlocks(N, P)
start, stop = tuple_range(M, rank, P)
src, dst, weights = generate_edges(SCALE, EDGEFACTOR, 2, 3, start, stop)
dvg = DistributedValidationGraph.from_edges(comm, blocks, src, dst, N, weights)

# The whole graph on every rank: the trees (a single-process kernel) and the single-process verdicts.
all_src, all_dst, all_weights = generate_edges(SCALE, EDGEFACTOR, 2, 3)
vg = ValidationGraph.from_edges(all_src, all_dst, N, all_weights)
csr = build_csr(all_src, all_dst, N, all_weights)
degree = np.bincount(all_src, minlength=N) + np.bincount(all_dst, minlength=N)
root = int(np.argmax(degree))
bfs_parents = kernels.get("bfs", "cpu")(csr).search(root)
sssp_parents, distances = kernels.get("sssp", "cpu")(csr).search(root)
tuple_rank = np.concatenate([np.full(tuple_range(M, r, P)[1] - tuple_range(M, r, P)[0], r) for r in range(P)])
loop = all_src == all_dst
owner = blocks.owner(np.arange(N))
levels = np.where(bfs_parents >= 0, -2, -1)
levels[root] = 0
while (levels == -2).any():
    ready = (levels == -2) & (levels[np.maximum(bfs_parents, 0)] >= 0)
    levels[ready] = levels[bfs_parents[ready]] + 1


def joining_ranks(u, v):
    """The ranks whose tuples join u and v (either direction)."""
    mask = ((all_src == u) & (all_dst == v)) | ((all_src == v) & (all_dst == u))
    return set(tuple_rank[mask].tolist())


def touching_ranks(v):
    return set(tuple_rank[((all_src == v) | (all_dst == v)) & ~loop].tolist())


def outcome(check):
    try:
        return ["nedge", check()]
    except ValidationError as error:
        return [error.rule, error.vertex, list(error.edge) if error.edge else None, str(error)]
    except (ValueError, TypeError) as error:
        return [type(error).__name__, str(error)]


def parts(array):
    return [array[blocks.begin(r):blocks.end(r)].copy() for r in range(P)]


reached = bfs_parents >= 0
last_rank = [v for v in np.flatnonzero(reached & (owner == last)).tolist() if v != root]
# Vertices of the last rank whose tree edge is a tuple of other ranks only.
remote_tree_edge = [v for v in last_rank if last not in joining_ranks(v, bfs_parents[v])]
# Vertices of the last rank that no tuple of the last rank touches.
remote_tuples = [v for v in last_rank if last not in touching_ranks(v)]
sssp_remote_tree_edge = [v for v in last_rank if last not in joining_ranks(v, sssp_parents[v])]


def single(kind, parents, dists):
    if kind == "bfs":
        return outcome(lambda: validate_bfs(vg, root, parents))
    return outcome(lambda: validate_sssp(vg, root, parents, dists))


def pick(kind, rule, candidates, fault):
    """The first candidate whose fault breaks `rule` for the single-process validator: (vertex, parents,
    distances)."""
    base = bfs_parents if kind == "bfs" else sssp_parents
    for v in candidates[:300]:
        parents, dists = base.copy(), distances.copy()
        fault(v, parents, dists)
        if single(kind, parents, dists)[0] == rule:
            return v, parents, dists
    raise AssertionError(f"no candidate vertex gives {rule}")


def not_adjacent_at_level(v, level):
    return next(x for x in np.flatnonzero(levels == level).tolist() if x != v and not joining_ranks(v, x))


scenarios = []  # (kind, name, rule, vertex, whole parents or None, whole distances, parts of parents, parts of distances)


def add(kind, name, rule, vertex, parents, dists, parent_parts=None, distance_parts=None):
    scenarios.append((kind, name, rule, vertex, parents, dists,
                      parent_parts if parent_parts is not None else parts(parents),
                      distance_parts if distance_parts is not None else parts(dists)))


def set_at(value, which=0):
    def fault(vertex, parents, dists):
        (parents, dists)[which][vertex] = value(vertex) if callable(value) else value
    return fault


add("bfs", "valid", "nedge", None, bfs_parents, distances)
long_last = parts(bfs_parents)
long_last[last] = np.append(long_last[last], -1)
add("bfs", "long-part-last-rank", "parents-length", None, None, distances, parent_parts=long_last)
short_first = parts(bfs_parents)
short_first[0] = short_first[0][:-1]
add("bfs", "short-part-rank-0", "parents-length", None, None, distances, parent_parts=short_first)
add("bfs", "out-of-range", "parent-out-of-range", *pick("bfs", "parent-out-of-range", last_rank, set_at(N)))
add("bfs", "root-unreached", "root-not-self-parent", *pick("bfs", "root-not-self-parent", [root], set_at(-1)))
add("bfs", "self-parent", "tree-edge-level", *pick("bfs", "tree-edge-level", last_rank, set_at(lambda v: v)))


def swap_with_parent(v, parents, dists):
    parents[parents[v]] = v


add("bfs", "cycle", "cycle", *pick("bfs", "cycle", [v for v in last_rank if bfs_parents[v] != root],
                                   swap_with_parent))
add("bfs", "reached-unreached-remote", "reached-unreached-edge",
    *pick("bfs", "reached-unreached-edge", remote_tuples, set_at(-1)))
deepest = int(levels.max())


def under_deepest(v, parents, dists):
    parents[v] = next(x for x in np.flatnonzero(levels == deepest).tolist() if x != v)


add("bfs", "level-jump-remote", "level-jump",
    *pick("bfs", "level-jump", [v for v in remote_tuples if levels[v] < deepest - 1], under_deepest))
add("bfs", "level-jump-last-rank", "level-jump",
    *pick("bfs", "level-jump", [v for v in last_rank if levels[v] < deepest - 1], under_deepest))


def beside_parent(v, parents, dists):
    parents[v] = not_adjacent_at_level(v, levels[parents[v]])


add("bfs", "not-in-graph-remote", "tree-edge-not-in-graph",
    *pick("bfs", "tree-edge-not-in-graph", remote_tree_edge, beside_parent))

add("sssp", "valid", "nedge", None, sssp_parents, distances)
long_last = parts(distances)
long_last[last] = np.append(long_last[last], 1.0).astype(np.float32)
add("sssp", "long-distances-last-rank", "distances-length", None, None, None, parent_parts=parts(sssp_parents),
    distance_parts=long_last)
short_last = parts(sssp_parents)
short_last[last] = short_last[last][:-1]
add("sssp", "short-parents-last-rank", "parents-length", None, None, None, parent_parts=short_last,
    distance_parts=parts(distances))
add("sssp", "root-distance", "root-distance", *pick("sssp", "root-distance", [root], set_at(0.5, 1)))
add("sssp", "out-of-range", "parent-out-of-range", *pick("sssp", "parent-out-of-range", last_rank, set_at(-2)))
add("sssp", "self-parent", "cycle", *pick("sssp", "cycle", last_rank, set_at(lambda v: v)))
add("sssp", "reached-unreached-remote", "reached-unreached-edge",
    *pick("sssp", "reached-unreached-edge", remote_tuples, set_at(-1)))


def one_ulp(direction):
    def fault(v, parents, dists):
        dists[v] = np.nextafter(dists[v], np.float32(direction))
    return fault


add("sssp", "too-far-remote", "distance-not-minimal",
    *pick("sssp", "distance-not-minimal", remote_tuples, one_ulp(np.inf)))
add("sssp", "too-far-last-rank", "distance-not-minimal",
    *pick("sssp", "distance-not-minimal", last_rank, one_ulp(np.inf)))
add("sssp", "too-short-remote", "unconfirmed-distance",
    *pick("sssp", "unconfirmed-distance", sssp_remote_tree_edge, one_ulp(0)))


def sssp_elsewhere(v, parents, dists):
    parents[v] = next(x for x in np.flatnonzero(sssp_parents >= 0).tolist()
                      if x not in (v, parents[v]) and not joining_ranks(v, x))


add("sssp", "wrong-parent-remote", "unconfirmed-distance",
    *pick("sssp", "unconfirmed-distance", sssp_remote_tree_edge, sssp_elsewhere))


def tied_to_parent(v, parents, dists):
    dists[v] = dists[parents[v]]


def tied_cycle_with_parent(v, parents, dists):
    tied_to_parent(v, parents, dists)
    parents[parents[v]] = v


# a vertex as near as its parent on another rank: the ties gathered on every rank (no cycle: no pointer jumping
# on NumPy ranks, a tuple rule breaks); then the two each other's parent: a cycle of ties across the ranks
sssp_remote_parent = [v for v in last_rank if sssp_parents[v] >= 0 and blocks.owner(int(sssp_parents[v])) != last
                      and sssp_parents[v] != root]
add("sssp", "tie-remote-parent", "distance-not-minimal",
    *pick("sssp", "distance-not-minimal", sssp_remote_parent, tied_to_parent))
add("sssp", "tie-cycle-remote-parent", "cycle", *pick("sssp", "cycle", sssp_remote_parent, tied_cycle_with_parent))

results = {"rank": rank, "size": P, "remote_tree_edges": len(remote_tree_edge),
           "remote_tuples": len(remote_tuples), "scenarios": []}
for kind, name, rule, vertex, parents, dists, parent_parts, distance_parts in scenarios:
    record = {"kind": kind, "name": name, "rule": rule, "vertex": vertex,
              "owner": None if vertex is None else int(owner[vertex]),
              "single": None if parents is None else single(kind, parents, dists)}
    for engine in ENGINES:
        if kind == "bfs":
            record[engine] = outcome(lambda: validate_bfs(dvg, root, parent_parts[rank], engine=engine))
        else:
            record[engine] = outcome(lambda: validate_sssp(dvg, root, parent_parts[rank], distance_parts[rank],
                                                           engine=engine))
    if name == "valid":
        record["count_reached_tuples"] = dvg.count_reached_tuples(parent_parts[rank] >= 0)
    results["scenarios"].append(record)

# A bad tuple on the last rank: every rank refuses the graph alike.
bad_src = src.copy()
if rank == last:
    bad_src[0] = N
results["bad_graph"] = outcome(lambda: DistributedValidationGraph.from_edges(comm, blocks, bad_src, dst, N, weights))
with open(f"{OUT}/rank{rank}.json", "w") as out:
    json.dump(results, out)
'''


VERTEX_RULES = {"parents-length", "distances-length", "parent-out-of-range", "root-not-self-parent",
                "tree-edge-level", "cycle", "root-distance", "tree-edge-not-in-graph", "unconfirmed-distance"}


@needs_mpi
@pytest.mark.parametrize("num_ranks, shared_windows, label_confirmations",
                         [(2, True, 0.0), (3, True, float("inf")), (2, False, float("inf"))])
def test_ranks_agree_and_catch_every_fault(tmp_path, num_ranks, shared_windows, label_confirmations):
    """Every rule's planted fault on 2 and 3 ranks, the confirmations sent as a byte an endpoint or as labels."""
    script = tmp_path / "ranks.py"
    script.write_text(RANK_SCRIPT)
    result = run_ranks(num_ranks, script, 11, 16, tmp_path, int(shared_windows), label_confirmations)
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    ranks = [json.loads((tmp_path / f"rank{rank}.json").read_text()) for rank in range(num_ranks)]
    assert ranks[0]["remote_tree_edges"] > 0 and ranks[0]["remote_tuples"] > 0
    last = num_ranks - 1
    for record in ranks[0]["scenarios"]:
        label = f"{record['kind']} {record['name']}"
        verdict = record["numba"]
        for other in ranks:
            mine = next(r for r in other["scenarios"] if (r["kind"], r["name"]) == (record["kind"], record["name"]))
            assert mine["numba"] == verdict and mine["generic"] == verdict, label
            if record["name"] == "valid":
                assert mine["count_reached_tuples"] == verdict[1], label
        assert verdict[0] == record["rule"], (label, verdict)
        if record["single"] is not None:
            # The single process finds the same rule; for the vertex rules the very same error.
            assert record["single"][0] == record["rule"], (label, record["single"])
            if record["rule"] in VERTEX_RULES or record["rule"] == "nedge":
                assert verdict == record["single"], label
        if record["owner"] is not None and record["name"].endswith(("remote", "last-rank")):
            assert record["owner"] == last, label
        if record["rule"].endswith("-length"):  # the message blames the rank whose part was planted wrong
            blamed = 0 if record["name"].endswith("rank-0") else last
            assert f"rank {blamed}'s part" in verdict[3], verdict
        if record["name"] == "valid":
            assert verdict[1] > 0
    assert {tuple(r["bad_graph"][:1]) for r in ranks} == {("ValueError",)}
    assert len({r["bad_graph"][1] for r in ranks}) == 1 and f"rank {last}" in ranks[0]["bad_graph"][1]
