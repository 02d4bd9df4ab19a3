"""Several GPUs, one per MPI rank: the NCCL communicator's collectives on device buffers, and runs of
``--backend gpu`` on two, three and four ranks (the multi-GPU kernels) against one GPU.

Runs where CuPy sees at least two GPUs and mpi4py and a launcher exist
(marker ``gpu``); skipped otherwise. Each rank is a process started by
``mpiexec -n P`` that picks its own GPU (`graph500.comm.select_device`).
"""

import json

import pytest

from graph500.kernels.gpu import distributed_backend as gpu_distributed
from support import needs_mpi, report_fields, run_ranks

pytestmark = [pytest.mark.gpu, needs_mpi]
cupy = pytest.importorskip("cupy")


def visible_gpus():
    try:
        return cupy.cuda.runtime.getDeviceCount()
    except Exception:  # CuPy raises several types when the driver or device is missing
        return 0


if visible_gpus() < 2:
    pytest.skip("needs two GPUs", allow_module_level=True)

NCCL_COLLECTIVES = """
import os
import cupy, numpy as np
from graph500.comm import NCCLCommunicator, world
comm = NCCLCommunicator(world())
rank, size = comm.rank, comm.size
assert size == 2 and os.environ["NCCL_NVLS_ENABLE"] == "0"
assert os.environ["NCCL_RUNTIME_CONNECT"] == "0", "NCCL connects when the communicator is made, not in a timed step"
assert cupy.cuda.Device().id == rank, "one GPU per rank"
# allgather of uneven device parts, in rank order
gathered = comm.allgather(cupy.full(rank + 2, rank, dtype=cupy.int32))
assert isinstance(gathered, cupy.ndarray) and gathered.tolist() == [0, 0, 1, 1, 1]
# allreduce: sum, max, min on device arrays; or on booleans; numbers through MPI
assert comm.allreduce(cupy.asarray([rank, -rank], dtype=cupy.int64), "sum").tolist() == [1, -1]
assert comm.allreduce(cupy.asarray([1.5 * rank], dtype=cupy.float32), "max").tolist() == [1.5]
assert comm.allreduce(cupy.asarray([rank + 3], dtype=cupy.uint64), "min").tolist() == [3]
total = cupy.zeros(2, dtype=cupy.uint64)
assert comm.allreduce(cupy.asarray([rank, 5], dtype=cupy.uint64), "sum", out=total) is total
assert total.tolist() == [1, 10]
flags = cupy.zeros(3, dtype=bool); flags[rank] = True
assert comm.allreduce(flags, "or").tolist() == [True, True, False]
assert comm.allreduce(rank, "max") == 1
try:
    comm.allreduce(cupy.ones(2, dtype=cupy.uint32), "or")
    raise SystemExit("a bitwise OR of words must be refused")
except TypeError:
    pass
# alltoallv: rank r sends r + d + 1 copies of 10 r + d to rank d, and a float32 companion array
counts = np.array([rank + d + 1 for d in range(size)])
values = cupy.concatenate([cupy.full(rank + d + 1, 10 * rank + d, dtype=cupy.int64) for d in range(size)])
(received, halves), received_counts = comm.alltoallv((values, (values / 2).astype(cupy.float32)), counts)
expected = np.concatenate([np.full(source + rank + 1, 10 * source + rank) for source in range(size)])
assert received.tolist() == expected.tolist() and (halves.get() == expected / 2).all()
assert received_counts.tolist() == [source + rank + 1 for source in range(size)]
# the same exchange with the received counts known (no count exchange)
known = np.array([source + rank + 1 for source in range(size)])
(again,), again_counts = comm.alltoallv((values,), counts, known)
assert again.tolist() == expected.tolist() and again_counts.tolist() == known.tolist()
# the parts at given displacements (segments of 5 with gaps), received into a given buffer
segments = cupy.full(5 * size, -1, dtype=cupy.int64)
for d in range(size):
    segments[5 * d:5 * d + rank + d + 1] = 10 * rank + d
into = (cupy.full(20, -7, dtype=cupy.int64),)
(placed,), _ = comm.alltoallv((segments,), counts, known, out=into, send_displacements=np.array([0, 5]))
assert placed.tolist() == expected.tolist() and into[0][:expected.size].tolist() == expected.tolist()
# a gathered array: each rank writes its part of whole in place, publish() receives the others'
gathered = comm.gathered_array(np.array([3, 2]), np.uint32)
gathered.local[:] = rank + 1
gathered.publish()
assert gathered.whole.tolist() == [1, 1, 1, 2, 2]
# an empty exchange
(nothing,), none_counts = comm.alltoallv((cupy.empty(0, dtype=cupy.int32),), np.zeros(size, dtype=np.int64))
# two exchanges in one group, received at given displacements (rank s's part at 6 s)
spaced_into = (cupy.full(12, -7, dtype=cupy.int64),)
with comm.group():
    (spaced,), _ = comm.alltoallv((values,), counts, known, out=spaced_into, receive_displacements=np.array([0, 6]))
    (again,), _ = comm.alltoallv((values,), counts, known)
for source in range(size):
    assert spaced[6 * source:6 * source + source + rank + 1].tolist() == [10 * source + rank] * (source + rank + 1)
assert spaced.size == 6 + 2 + rank and again.tolist() == expected.tolist()
assert nothing.size == 0 and none_counts.tolist() == [0, 0]
assert comm.bcast(rank * 7, root=1) == 7
comm.barrier()
assert comm.describe()["nccl"].count(".") == 2
print("ok", rank)
"""


def test_nccl_communicator_collectives_on_two_gpus(tmp_path):
    script = tmp_path / "nccl_collectives.py"
    script.write_text(NCCL_COLLECTIVES)
    result = run_ranks(2, script, timeout=300)
    assert result.returncode == 0, result.stderr
    assert result.stdout.count("ok") == 2


# `graph500 run` with the requests' blind part (requests.BLIND_CAPACITY) set by the first argument (0: unchanged; else
# the wide parts half as wide as the last exchange's share, requests.WIDTH_MARGIN 0.5, in steps of 8, so that a wide
# part leaves a rest too) and, where the second is 1, kernel 1's received tuples and the validator's in host memory whatever the
# GPU's room
SETTINGS_RUN = """
import sys
from graph500 import cli
from graph500.kernels.gpu import distributed_backend, requests
from graph500.kernels.gpu.bfs_distributed import DistributedDirectionOptimizingBFS
if int(sys.argv[1]):
    requests.BLIND_CAPACITY, requests.WIDTH_MARGIN, requests.WIDTH_GRAIN = int(sys.argv[1]), 0.5, 8
    DistributedDirectionOptimizingBFS.__init__.__kwdefaults__.update(  # bottom-up to the end, claims past the part
        beta=float("inf"), blind_capacity=int(sys.argv[1]))
if int(sys.argv[2]):
    distributed_backend.on_device_exchange_bytes = lambda *arguments: float("inf")
    distributed_backend.validation_on_device_bytes = lambda *arguments: float("inf")
sys.exit(cli.main(sys.argv[3:]))
"""


def _gpu_run(num_ranks, folder, capacity=None, host_exchange=False):
    record_path = folder / f"gpu-{num_ranks}-{capacity}-{host_exchange}.json"
    argv = ["run", "--backend", "gpu", "--scale", "12", "--roots", "16", "--energy", "off", "--json",
            str(record_path)]
    if capacity is None and not host_exchange:
        result = run_ranks(num_ranks, "-m", "graph500", *argv, timeout=600, threads=4)
    else:
        script = folder / "settings_run.py"
        script.write_text(SETTINGS_RUN)
        result = run_ranks(num_ranks, script, capacity or 0, int(host_exchange), *argv, timeout=600, threads=4)
    assert result.returncode == 0, result.stderr[-3000:]
    return report_fields(result.stdout), json.loads(record_path.read_text())


@pytest.fixture(scope="module")
def one_gpu_record(tmp_path_factory):
    return _gpu_run(1, tmp_path_factory.mktemp("one-gpu"))[1]


@pytest.mark.parametrize("num_ranks, capacity, host_exchange", [
    (2, None, False), (2, 8, False), (2, None, True), (3, 8, True), (4, None, False)])
def test_gpu_ranks_search_the_one_gpu_graph(one_gpu_record, tmp_path, num_ranks, capacity, host_exchange):
    """Same roots and nedge as one GPU (a one-rank run), every tree valid, the multi-GPU kernels; 3 ranks: blocks
    of unequal size; a blind part of 8 requests: the SSSP's large exchanges' parts wide (each pair's width from its
    last exchange, a part a peer on 3 ranks), most exchanges with a rest sent in a second exchange, the BFS's
    top-down levels' claims past 8 too, and the BFS stays bottom-up to the end once bottom-up (infinite beta:
    several levels a read); kernel 1's received tuples in host memory: the slice given back as it is sent and
    generated again for validation, and the validator's tuples read from mapped host memory (else from device
    memory)."""
    if visible_gpus() < num_ranks:
        pytest.skip(f"needs {num_ranks} GPUs")
    fields, record = _gpu_run(num_ranks, tmp_path, capacity, host_exchange)
    assert fields["kernel1_received_tuples"].startswith("host" if host_exchange else "device")
    assert fields["validation_tuples"] == ("host" if host_exchange else "device")
    assert fields["num_mpi_processes"] == str(num_ranks) and fields["validation"] == "passed"
    assert fields["bfs_kernel"] == "gpu-distributed-direction-optimizing"
    assert fields["sssp_kernel"] == "gpu-distributed-delta-stepping"
    assert record["roots"] == one_gpu_record["roots"]
    assert record["bfs"]["nedges"] == one_gpu_record["bfs"]["nedges"]
    assert record["sssp"]["nedges"] == one_gpu_record["sssp"]["nedges"]
    assert f"{num_ranks} ranks x 1 GPU" in fields["device"]
    if host_exchange:  # the plan's sizes were overridden to send the tuples to the host
        return
    extensions = record["extensions"]
    # the plan against the pool's high-water mark: the whole GPU's use also counts other processes on it (this
    # pytest process's context and pool on the first GPU, after the suite's one-GPU tests)
    planned_arrays = extensions["device_memory_estimate_bytes"] - gpu_distributed.context_bytes(num_ranks)
    assert 0 < extensions["device_memory_pool_peak_bytes"] <= planned_arrays
    assert 0 < extensions["device_arrays_bytes_sssp_pass"] <= planned_arrays  # the largest rank's


FAULTY_GPU_RUN = """
import sys
from graph500 import harness, kernels
from graph500.comm import world
from graph500.kernels.gpu.bfs_distributed import DistributedDirectionOptimizingBFS

comm = world()


@kernels.register()
class FaultyBFS(DistributedDirectionOptimizingBFS):
    name = "faulty"

    def search(self, root):
        parents = super().search(root)
        if comm.rank == comm.size - 1:
            vertex = int(parents.nonzero()[0][-1])
            parents[vertex] = vertex + self.graph.first_vertex  # a reached vertex its own parent
        return parents


config = harness.RunConfig(scale=12, backend="gpu", bfs="faulty", run_sssp=False, num_roots=4, progress=False,
                           energy="off")
sys.exit(harness.run(config, comm=comm))
"""


@pytest.mark.parametrize("num_ranks", [2, 3, 4])
def test_a_fault_planted_on_the_last_gpu_is_caught(tmp_path, num_ranks):
    if visible_gpus() < num_ranks:
        pytest.skip(f"needs {num_ranks} GPUs")
    script = tmp_path / "faulty_gpu.py"
    script.write_text(FAULTY_GPU_RUN)
    result = run_ranks(num_ranks, str(script), timeout=600, threads=4)
    assert result.returncode == 1, result.stderr[-3000:]
    assert result.stderr.count("tree-edge-level") == 1, result.stderr


# The reference graph at SCALE 13 built on each rank's GPU, and its first 8 search keys: the SSSP scripts' start
SSSP_GRAPH = """
import numpy as np
from graph500.comm import world
from graph500.generators.roots import search_keys
from graph500.kernels.gpu.distributed_backend import DistributedGPUBackend
from graph500.kernels.gpu.sssp_distributed import DistributedDeltaSteppingSSSP

comm = world()
backend = DistributedGPUBackend(comm)
scale = 13
src, dst, weights = backend.generate(scale, 16, 2, 3)
roots, _ = search_keys(scale, 2, 3, backend.incident_vertices(src, dst, 1 << scale), 8)
graph = backend.build(src, dst, 1 << scale, weights)
"""

MEMBER_PULLS = SSSP_GRAPH + """
searches = {}
for share in (0.0, 1.0):  # never the members' pairs; the pairs at every heavy pull
    kernel = DistributedDeltaSteppingSSSP(graph, pull_members=share)
    trees, pulls = [], [0, 0]
    for root in map(int, roots):
        parents, distances = kernel.search(root)
        trees.append((parents.get(), distances.get().view(np.uint32)))
        pulls = [pulls[0] + kernel.summary["pulls"], pulls[1] + kernel.summary["member_pulls"]]
    searches[share] = trees, pulls
    del kernel
(full, (pulls, none)), (paired, (same_pulls, member_pulls)) = searches[0.0], searches[1.0]
assert none == 0 and 0 < member_pulls < pulls == same_pulls, (pulls, none, same_pulls, member_pulls)
for (parents, distances), (paired_parents, paired_distances) in zip(full, paired):
    assert (parents == paired_parents).all() and (distances == paired_distances).all()
print("ok", comm.rank, pulls, member_pulls)
"""


def test_pulls_from_the_members_pairs_find_the_gathered_distances_trees(tmp_path):
    """A heavy phase's pull that reads only its bucket's members' distances (sent as pairs, NaN elsewhere) finds
    the trees that the pull from every vertex's gathered distances finds, bit for bit (the tail's pull still
    gathers: fewer member pulls than pulls)."""
    _every_rank_ok(tmp_path / "member_pulls.py", MEMBER_PULLS, 2)


def _every_rank_ok(script, text, num_ranks):
    """Run ``text`` as ``script`` on ``num_ranks`` ranks: it exits cleanly and every rank prints its ok."""
    script.write_text(text)
    result = run_ranks(num_ranks, str(script), timeout=600, threads=4)
    assert result.returncode == 0, result.stderr[-3000:]
    assert result.stdout.count("ok") == num_ranks, result.stdout


WIDE_PARTS = SSSP_GRAPH + """
from graph500.kernels.gpu import requests
requests.BLIND_CAPACITY, requests.WIDTH_GRAIN = 8, 8  # a fixed part of 8 requests: most exchanges leave a rest
searches = {}
for margin in (0.0, requests.WIDTH_MARGIN):  # the fixed part only; wide parts
    requests.WIDTH_MARGIN = margin
    kernel = DistributedDeltaSteppingSSSP(graph)
    owner, counts = kernel._requests, {"wide": 0, "rests": 0}

    def wide_transfer(sent, received, transfer=owner._wide_transfer):
        counts["wide"] += 1
        return transfer(sent, received)

    def rest(rest=owner.rest):
        received = rest()
        counts["rests"] += received is not None
        return received

    owner._wide_transfer, owner.rest = wide_transfer, rest
    trees = []
    for root in map(int, roots):
        parents, distances = kernel.search(root)
        trees.append((parents.get(), distances.get().view(np.uint32)))
    searches[margin] = trees, counts
    del kernel
(fixed, fixed_counts), (wide, wide_counts) = searches.values()
assert fixed_counts["wide"] == 0 < wide_counts["wide"], (fixed_counts, wide_counts)
assert wide_counts["rests"] < fixed_counts["rests"], (fixed_counts, wide_counts)
for (parents, distances), (wide_parents, wide_distances) in zip(fixed, wide):
    assert (parents == wide_parents).all() and (distances == wide_distances).all()
print("ok", comm.rank, fixed_counts, wide_counts)
"""


@pytest.mark.parametrize("num_ranks", [2, 3])
def test_wide_blind_parts_find_the_fixed_parts_trees(tmp_path, num_ranks):
    """The SSSP's exchanges with each pair's blind part as wide as its last exchange's share predicts (a part a
    peer on 3 ranks) find the trees of the fixed part and its rests, bit for bit, with fewer rests."""
    if visible_gpus() < num_ranks:
        pytest.skip(f"needs {num_ranks} GPUs")
    _every_rank_ok(tmp_path / "wide_parts.py", WIDE_PARTS, num_ranks)


def test_multi_gpu_benchmark_prints_both_tables(tmp_path):
    """benchmarks/multi_gpu.py on two GPUs at a small SCALE: one GPU, two at SCALE and at SCALE + 1, no failed
    measurement, every level's compute and exchange."""
    import subprocess
    import sys

    from support import MPIEXEC, REPOSITORY, program_environment

    record_path = tmp_path / "scaling.json"
    result = subprocess.run([sys.executable, "benchmarks/multi_gpu.py", "--gpus", "2", "--scale", "12", "--roots",
                             "2", "--mpiexec", MPIEXEC, "--timeout", "150", "--json", str(record_path)],
                            capture_output=True, text=True, timeout=600, env=program_environment(4), cwd=REPOSITORY)
    assert result.returncode == 0, result.stderr[-3000:]
    assert "Weak scaling" in result.stdout and "Strong scaling at SCALE 12" in result.stdout
    records = json.loads(record_path.read_text())
    assert [(record["gpus"], record["scale"]) for record in records] == [(1, 12), (2, 12), (2, 13)]
    assert all("error" not in record for record in records), result.stderr[-3000:]  # a failed group's stacks
    assert all(record["bfs_teps"] > 0 and record["sssp_teps"] > 0 for record in records)
    assert all(level[6] > 0 for level in records[1]["levels"])  # compute milliseconds of every level
