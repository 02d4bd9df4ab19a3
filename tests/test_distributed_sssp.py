"""Tests for the ``distributed-delta-stepping`` SSSP kernel: one rank in this process on the reference
fixtures and on odd graphs, then 2 and 3 ranks under ``mpiexec`` (oversubscribed; skipped without mpiexec or
mpi4py). Every tree must pass the validator and every distance must equal the serial Dijkstra's exactly,
also with every relaxation, bin and settling shared by two threads (``parallel_edges=0``,
``parallel_entries=0``), whose races the kernel repairs.
"""

import glob
import os
import textwrap

import numba
import numpy as np
import pytest
from support import THREADS, needs_mpi, numba_threads, run_ranks

from graph500 import io, kernels
from graph500.kernels.cpu.backend import CPUBackend
from graph500.kernels.cpu.build import build_csr
from graph500.kernels.cpu.sssp_words import _pack
from graph500.kernels.cpu.sssp_distributed import DistributedDeltaStepping, _settle_task_chunks
from graph500.validators import ValidationGraph, validate_sssp

DATA = os.path.join(os.path.dirname(__file__), "data", "reference-v3")
FIXTURES = sorted(glob.glob(os.path.join(DATA, "*.edges")))
NAME = "distributed-delta-stepping"




def check_searches(src, dst, weights, num_vertices, roots, graph=None, **tunables):
    """Search from each root in one rank; validate and compare with Dijkstra."""
    graph = build_csr(src, dst, num_vertices, weights) if graph is None else graph
    validation = ValidationGraph.from_edges(src, dst, num_vertices, weights)
    dijkstra = kernels.get("sssp", "cpu", "dijkstra")(build_csr(src, dst, num_vertices, weights))
    kernel = DistributedDeltaStepping(graph, **tunables)
    for root in roots:
        parents, distances = kernel.search(int(root))
        assert parents.dtype == np.int64 and distances.dtype == np.float32
        assert parents.shape == distances.shape == (num_vertices,)
        validate_sssp(validation, int(root), parents, distances)
        np.testing.assert_array_equal(distances, dijkstra.search(int(root))[1])
    return kernel


@pytest.mark.parametrize("path", FIXTURES, ids=os.path.basename)
@pytest.mark.parametrize("delta", [None, 0.003, 0.3])
@pytest.mark.parametrize("threads, parallel_edges", [(1, None)] + [(threads, 0) for threads in THREADS],
                         ids=lambda value: str(value))
def test_one_rank_on_reference_fixtures(path, delta, threads, parallel_edges):
    src, dst, weights = io.read_edges(path)
    scale = int(os.path.basename(path).split("_")[0][1:])
    roots = np.loadtxt(path.replace(".edges", ".roots"), dtype=np.int64)[:6]
    tunables = {} if parallel_edges is None else {"parallel_edges": parallel_edges, "parallel_entries": 0}
    with numba_threads(threads):
        check_searches(src, dst, weights, 1 << scale, roots, delta=delta, **tunables)


def test_one_rank_on_kernel_1_graph():
    """The one-process backend's degree-ordered graph: results come back in the original labels."""
    path = FIXTURES[-1]
    src, dst, weights = io.read_edges(path)
    num_vertices = 1 << int(os.path.basename(path).split("_")[0][1:])
    roots = np.loadtxt(path.replace(".edges", ".roots"), dtype=np.int64)[:4]
    check_searches(src, dst, weights, num_vertices, roots, graph=CPUBackend().build(src, dst, num_vertices, weights))


ODD_GRAPHS = {
    "single-vertex": ([], [], 1, [0]),
    "isolated-root": ([(1, 2), (2, 3)], [0.5, 0.25], 5, [0, 4, 1]),
    "self-loops-and-duplicates": ([(0, 0), (0, 1), (1, 0), (1, 2), (1, 2), (2, 2), (2, 1)],
                                  [0.1, 0.9, 0.2, 0.7, 0.3, 0.0, 0.05], 4, [0, 2, 3]),
    "zero-weights": ([(0, 1), (1, 2), (2, 0), (2, 3), (3, 4), (4, 0)], [0.0, 0.0, 0.0, 0.5, 0.0, 0.0], 5, [0, 3]),
    "star-and-path": ([(0, k) for k in range(1, 40)] + [(39, 40), (40, 41), (41, 42)],
                      np.linspace(0.0, 0.99, 42), 64, [0, 42, 63]),
}


@pytest.mark.parametrize("name", sorted(ODD_GRAPHS))
@pytest.mark.parametrize("delta", [None, 1e-3, 2.0])
@pytest.mark.parametrize("parallel_edges", [None, 0])
def test_one_rank_on_odd_graphs(name, delta, parallel_edges):
    edges, weights, num_vertices, roots = ODD_GRAPHS[name]
    edges = np.array(edges, dtype=np.int64).reshape(-1, 2)
    tunables = {} if parallel_edges is None else {"parallel_edges": parallel_edges, "parallel_entries": 0}
    with numba_threads(max(THREADS)):
        check_searches(edges[:, 0], edges[:, 1], np.array(weights, dtype=np.float32), num_vertices, roots,
                       delta=delta, **tunables)


@numba.njit(cache=True)
def plant_races_and_settle(rs, lost, torn, better, worse):
    """Two tasks' chunks as their races leave them: at ``lost`` task 1's better word overwritten by task 0's
    worse one (task 1's distance bits left behind), at ``torn`` task 0's better word kept but its distance bits
    overwritten by task 1's. Settles them; returns what the test checks."""
    shift = np.uint64(32)
    rs.state[lost], rs.distance_bits[lost] = worse, np.uint32(better >> shift)
    rs.state[torn], rs.distance_bits[torn] = better, np.uint32(worse >> shift)
    rs.task_vertex[0, 0], rs.task_word[0, 0], rs.task_vertex[0, 1], rs.task_word[0, 1] = lost, worse, torn, better
    rs.task_vertex[1, 0], rs.task_word[1, 0], rs.task_vertex[1, 1], rs.task_word[1, 1] = lost, better, torn, worse
    _settle_task_chunks(rs, np.array([2, 2]), 0, np.array([0, rs.task_vertex.shape[1]]))
    slot = np.int64(np.float64(0.5) * rs.inverse_delta) & (rs.bin_size.shape[0] - 1)
    return (rs.task_vertex.shape[0], rs.state[lost], rs.state[torn], rs.distance_bits[lost], rs.distance_bits[torn],
            rs.request_count, rs.bin_size[slot])


@pytest.mark.skipif(numba.config.NUMBA_NUM_THREADS < 2, reason="needs two Numba threads")
def test_threads_repair_what_their_races_lose():
    """The races of a relaxation shared by threads, planted: `_settle_task_chunks` must put back the smallest
    word any task wrote, make the distance bits the state's, and bin each vertex once, with its winning word."""
    path = FIXTURES[0]
    src, dst, weights = io.read_edges(path)
    num_vertices = 1 << int(os.path.basename(path).split("_")[0][1:])
    with numba_threads(2):
        kernel = DistributedDeltaStepping(build_csr(src, dst, num_vertices, weights))
    better, worse = _pack(np.float32(0.5), np.uint64(7)), _pack(np.float32(0.75), np.uint64(5))
    tasks, lost, torn, lost_bits, torn_bits, requests, binned = plant_races_and_settle(
        kernel.rank_state, 0, 1, better, worse)  # local 0 and 1: hubs, not leaves (degree order)
    assert tasks == 2
    assert lost == torn == better
    assert lost_bits == torn_bits == np.uint32(better >> np.uint64(32))
    assert requests == 0 and binned == 2


def test_trace_and_registry():
    path = FIXTURES[0]
    src, dst, weights = io.read_edges(path)
    num_vertices = 1 << int(os.path.basename(path).split("_")[0][1:])
    root = int(np.loadtxt(path.replace(".edges", ".roots"), dtype=np.int64)[0])
    kernel = check_searches(src, dst, weights, num_vertices, [root], trace=True)
    parents, _ = kernel.search(root)
    assert {entry["direction"] for entry in kernel.trace} <= {"light", "heavy"}
    graph = build_csr(src, dst, num_vertices, weights)
    relaxed = sum(entry["frontier"] for entry in kernel.trace if entry["direction"] == "light")
    leaves = np.diff(graph.offsets) <= 1  # reached leaves are never relaxed: their one edge leads back
    assert relaxed >= np.count_nonzero((parents >= 0) & ~leaves)
    assert relaxed < np.count_nonzero(parents >= 0)  # the fixture has reached leaves
    assert kernels.get("sssp", "cpu", distributed=True) is DistributedDeltaStepping
    assert kernels.get("sssp", "cpu", NAME).distributed
    with pytest.raises(ValueError):
        DistributedDeltaStepping(build_csr(src, dst, num_vertices, weights), delta=0.0)


RANKS_SCRIPT = textwrap.dedent("""
    import sys
    import numpy as np
    from graph500.comm import world
    from graph500.distributed import partition_graph
    from graph500.generators import kronecker
    from graph500.kernels.cpu.build import build_csr
    from graph500.kernels.cpu.sssp_dijkstra import DijkstraSSSP
    from graph500.kernels.cpu.sssp_distributed import DistributedDeltaStepping
    from graph500.partition import VertexBlocks, tuple_range
    from graph500.validators import ValidationGraph, validate_sssp

    scale, parallel_edges, edgefactor = int(sys.argv[1]), int(sys.argv[2]), 16
    comm = world()
    num_vertices, num_tuples = 1 << scale, edgefactor << scale
    start, stop = tuple_range(num_tuples, comm.rank, comm.size)
    src, dst, weights = kronecker.generate_edges(scale, edgefactor, 2, 3, start, stop)
    kernel = DistributedDeltaStepping(partition_graph(comm, VertexBlocks(num_vertices, comm.size), src, dst, weights),
                                      parallel_edges=parallel_edges, parallel_entries=min(parallel_edges, 4096))
    roots = [0, 1, 77, num_vertices // 2 + 3, num_vertices - 1]
    results = []
    for root in roots:
        parents, distances = kernel.search(root)
        results.append((comm.allgather(parents), comm.allgather(distances)))
    if comm.rank == 0:
        src, dst, weights = kronecker.generate_edges(scale, edgefactor, 2, 3)
        validation = ValidationGraph.from_edges(src, dst, num_vertices, weights)
        dijkstra = DijkstraSSSP(build_csr(src, dst, num_vertices, weights))
        for root, (parents, distances) in zip(roots, results):
            nedge = validate_sssp(validation, root, parents, distances)
            assert np.array_equal(distances, dijkstra.search(root)[1]), root
            print(f"root {root} valid nedge {nedge}")
        print(f"ranks {comm.size} ok")
""")


@needs_mpi
@pytest.mark.parametrize("ranks, threads, parallel_edges", [(2, 1, 1 << 15), (3, 1, 1 << 15), (2, 2, 0)])
def test_ranks_under_mpiexec(tmp_path, ranks, threads, parallel_edges):
    script = tmp_path / "sssp_ranks.py"
    script.write_text(RANKS_SCRIPT)
    result = run_ranks(ranks, script, 11, parallel_edges, threads=threads)
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    assert f"ranks {ranks} ok" in result.stdout
    assert result.stdout.count("valid nedge") == 5
