"""graph500 plan: the memory model the runs' checks use, per rank, host and GPU, and its command line."""

import json
import subprocess
import sys

import pytest

from graph500 import distributed, plan
from graph500.errors import Graph500Error
from graph500.kernels.cpu import backend as cpu_backend
from graph500.kernels.gpu import backend as gpu_backend, distributed_backend as gpu_distributed
from graph500.kernels.gpu.bfs import GAMMA
from graph500.kernels.gpu.bfs_distributed import SMALL_LEVEL_EDGES, blind_part, min_bottom_up_frontier

GIB = 2**30


def test_one_process_is_the_single_process_estimate():
    one = plan.memory_plan(20)
    assert one["bytes_per_rank"] == one["bytes_per_host"] == cpu_backend.memory_estimate_bytes(20, 16)
    assert max(one["phases"].values()) == one["bytes_per_rank"] and "bytes_per_gpu" not in one


def test_ranks_share_hosts_as_told():
    four = plan.memory_plan(22, ranks=4)
    assert four["bytes_per_rank"] == distributed.memory_estimate_bytes(22, 16, 4)
    assert (four["hosts"], four["bytes_per_host"]) == (1, 4 * four["bytes_per_rank"])
    two_hosts = plan.memory_plan(22, ranks=4, ranks_per_host=2)
    assert (two_hosts["hosts"], two_hosts["bytes_per_host"]) == (2, 2 * four["bytes_per_rank"])


def test_gpu_plans_are_the_checks_own():
    one = plan.memory_plan(26, backend="gpu")
    assert one["bytes_per_gpu"] == gpu_backend.memory_estimate_bytes(26, 16)
    assert one["bytes_per_rank"] == gpu_backend.host_memory_bytes(26, 16)
    two = plan.memory_plan(27, ranks=2, backend="gpu")
    host, device = gpu_distributed.memory_needs(27, 16, 2)
    assert (two["bytes_per_rank"], two["bytes_per_gpu"]) == (host, device + gpu_distributed.context_bytes(2))
    assert gpu_distributed.context_bytes(2) == gpu_backend.CONTEXT_BYTES + gpu_distributed.NCCL_BYTES + gpu_distributed.NCCL_PEER_BYTES


@pytest.mark.parametrize("ranks", [1, 2])
def test_a_gpu_pass_holds_one_kernel(ranks):
    """The BFS pass and the SSSP pass each hold the graph and their own kernel's arrays, never both kernels': the
    SSSP's pass is the larger by its per-vertex arrays alone (the same graph and validator in both)."""
    phases = plan.memory_plan(24, ranks=ranks, backend="gpu")["phases"]
    if ranks == 1:
        per_vertex = gpu_backend.SSSP_STATE_BYTES - gpu_backend.BFS_STATE_BYTES
    else:
        kernel_owned, kernel_graph = gpu_distributed.KERNEL_OWNED_BYTES, gpu_distributed.KERNEL_GRAPH_VERTEX_BYTES
        per_vertex = ((kernel_owned["sssp"] - kernel_owned["bfs"]) / ranks
                      + kernel_graph["sssp"] - kernel_graph["bfs"])
    assert phases["sssp pass"] - phases["bfs pass"] == pytest.approx(per_vertex * 2**24, abs=1)


def test_gpu_ranks_plan_the_tuples_they_receive_on_the_host():
    """Pinned host memory a rank: kernel 1 gives the slice back as it sends it, so a rank holds the (2 - 1 / P)
    slices it receives and a chunk of them and of the slice (12 bytes a tuple), or later its slice and the
    validator's relabelled copy (20 bytes a tuple), whichever is more."""
    host, _ = gpu_distributed.memory_needs(29, 16, 2)  # a slice of 2^32 tuples: the validation's 80 GiB
    assert host == 80 * GIB
    host, _ = gpu_distributed.memory_needs(30, 16, 4)  # 1.75 slices of 2^32, 5% more and 2^22, two chunks of 2^26
    assert host == 84 * GIB + int(7 * 2**30 * 0.05) * 12 + (2**22 + 2 * 2**26) * 12
    assert plan.memory_plan(29, ranks=2, backend="gpu")["bytes_per_host"] == 160 * GIB  # two H200s' host: 250 GiB


@pytest.mark.parametrize("backend, vertex_bytes", [
    ("cpu", distributed.WHOLE_GRAPH_BYTES_PER_VERTEX),
    ("gpu", gpu_distributed.GRAPH_VERTEX_BYTES + gpu_distributed.KERNEL_GRAPH_VERTEX_BYTES["sssp"]
     + gpu_distributed.VALIDATION_BITMAP_BITS / 8),
])
def test_the_whole_graph_arrays_do_not_shrink_with_more_ranks(backend, vertex_bytes):
    """The part of a rank's (a GPU's) peak held for all N vertices: the same on 4 ranks and on 256, inside the
    peak, named in the text; none for one process."""
    few, many = (plan.memory_plan(24, ranks=ranks, backend=backend) for ranks in (4, 256))
    assert few["whole_graph_bytes"] == many["whole_graph_bytes"] == vertex_bytes * 2**24
    peak = "bytes_per_gpu" if backend == "gpu" else "bytes_per_rank"
    assert many["whole_graph_bytes"] < many[peak] < few[peak]
    assert "whole_graph_bytes" not in plan.memory_plan(24, backend=backend)
    assert f"(more ranks do not shrink it): {vertex_bytes * 2**24 / GIB:.2f} GiB" in "\n".join(plan.plan_text(many))


def test_largest_scale_is_the_last_that_fits():
    at_20 = plan.memory_plan(20)["bytes_per_host"]
    assert plan.largest_scale(16, 1, None, "cpu", at_20, None) == 20
    assert plan.largest_scale(16, 1, None, "cpu", at_20 - 1, None) == 19
    gpu_27 = plan.memory_plan(27, backend="gpu")["bytes_per_gpu"]
    assert plan.largest_scale(16, 1, None, "gpu", 10**15, gpu_27) == 27
    pinned_27 = plan.memory_plan(27, backend="gpu")["bytes_per_host"]  # a GPU run pins at most 90% of a host
    assert plan.largest_scale(16, 1, None, "gpu", int(pinned_27 / gpu_backend.PINNABLE_SHARE) + 1, gpu_27) == 27
    assert plan.largest_scale(16, 1, None, "gpu", pinned_27, gpu_27) == 26


@pytest.mark.parametrize("arguments, message", [
    (["--scale", "48"], "--scale must be from 1 to 47"),
    (["--scale", "20", "--ranks", "0"], "must be at least 1"),
    (["--scale", "5", "--ranks", "8"], "cannot share 32 vertices"),
])
def test_bad_input_is_one_line(arguments, message):
    result = subprocess.run([sys.executable, "-m", "graph500", "plan", *arguments], capture_output=True, text=True)
    assert result.returncode == 2 and result.stdout == ""
    assert result.stderr.count("\n") == 1 and message in result.stderr


def test_command_line_json_and_text():
    result = subprocess.run([sys.executable, "-m", "graph500", "plan", "--scale", "26", "--ranks", "2",
                             "--backend", "gpu", "--gpu-memory", "80", "--host-memory", "256", "--json"],
                            capture_output=True, text=True, check=True)
    record = json.loads(result.stdout)
    assert all(isinstance(record[key], int) for key in ("bytes_per_rank", "bytes_per_host", "bytes_per_gpu"))
    assert record == {**plan.memory_plan(26, ranks=2, backend="gpu"),
                      "largest_scale": record["largest_scale"]} and record["largest_scale"] >= 26
    text = subprocess.run([sys.executable, "-m", "graph500", "plan", "--scale", "20", "--host-memory", "4"],
                          capture_output=True, text=True, check=True).stdout
    assert "a rank: " in text and "largest SCALE that fits 4 GiB a host: 22" in text  # 3.94 GiB at 22, 7.62 at 23


@pytest.mark.parametrize("ranks", [1, 4])
def test_text_says_what_a_cpu_rank_counts_for_the_runtime(ranks):
    text = "\n".join(plan.plan_text(plan.memory_plan(20, ranks=ranks)))
    assert f"of which the runtime (Python, NumPy, Numba) {cpu_backend.RUNTIME_BYTES / 2**30:.2f} GiB" in text
    assert ("the MPI library's own memory: no library named, none counted" in text) == (ranks > 1)


@pytest.mark.parametrize("version, kind", [
    ("Open MPI v4.1.6, package: Debian OpenMPI, ident: 4.1.6, repo rev: v4.1.6, Sep 30, 2023", "openmpi"),
    ("MPICH Version:      4.3.0\nMPICH Release date: Mon Feb  3 2025", "mpich"),
    ("Intel(R) MPI Library 2021.13", None), ("", None), (None, None),
])
def test_the_mpi_library_is_told_by_its_version_string(version, kind):
    assert distributed.mpi_library_kind(version) == kind


@pytest.mark.parametrize("ranks, ranks_per_host", [(4, None), (16, None), (16, 4)])
def test_open_mpi_ranks_plan_their_librarys_memory_for_each_other_rank_of_their_host(ranks, ranks_per_host):
    mpich = plan.memory_plan(24, ranks=ranks, ranks_per_host=ranks_per_host, mpi_library="mpich")
    open_mpi = plan.memory_plan(24, ranks=ranks, ranks_per_host=ranks_per_host, mpi_library="openmpi")
    peers = (ranks_per_host or ranks) - 1
    assert open_mpi["mpi_peer_bytes"] == peers * 22 * 2**20 and mpich["mpi_peer_bytes"] == 0
    assert all(open_mpi["phases"][name] - mpich["phases"][name] == peers * 22 * 2**20 for name in mpich["phases"])
    assert mpich["phases"] == plan.memory_plan(24, ranks=ranks, ranks_per_host=ranks_per_host)["phases"]
    assert open_mpi["bytes_per_rank"] == distributed.memory_estimate_bytes(24, 16, ranks, ranks_per_host or ranks,
                                                                           "openmpi")
    text = "\n".join(plan.plan_text(open_mpi))
    assert f"of which the MPI library's own for the other ranks of its host: {peers * 22 / 1024:.2f} GiB" in text


def test_the_command_line_plans_for_the_mpi_library_named_or_the_one_mpi4py_uses_here():
    def planned(*options):
        return json.loads(subprocess.run([sys.executable, "-m", "graph500", "plan", "--scale", "22", "--ranks", "8",
                                          "--json", *options], capture_output=True, text=True, check=True).stdout)

    named = planned("--mpi-library", "openmpi")
    assert named == plan.memory_plan(22, ranks=8, mpi_library="openmpi")
    here = plan.local_mpi_library()
    pytest.importorskip("mpi4py")
    assert here in distributed.MPI_LIBRARIES and planned() == plan.memory_plan(22, ranks=8, mpi_library=here)


class _OneHostOfFour:
    """Rank 0 of four ranks on one host, whose MPI library is ``version``."""

    rank, size = 0, 4

    def __init__(self, version):
        self.version = version

    def allgather_object(self, value):
        return [value] * self.size

    def describe(self):
        return {"num_mpi_processes": self.size, "hosts": ["here"], "mpi_library": self.version}


def test_a_run_on_open_mpi_ranks_checks_their_librarys_memory_too(monkeypatch):
    needed = {library: distributed.memory_estimate_bytes(22, 16, 4, 4, library) for library in ("mpich", "openmpi")}
    monkeypatch.setattr(distributed, "available_memory_bytes", lambda: 4 * needed["mpich"] + 2**20)
    distributed.DistributedBackend(_OneHostOfFour("MPICH Version: 4.3.0")).check_memory(22, 16)
    with pytest.raises(Graph500Error, match="4 ranks there") as refused:
        distributed.DistributedBackend(_OneHostOfFour("Open MPI v4.1.6")).check_memory(22, 16)
    # the largest SCALE four Open MPI ranks fit in that memory: 21 (22 needs more than 4 MPICH ranks' 22 by itself)
    assert str(refused.value).endswith("(the largest SCALE that fits here is 21)")


def test_one_process_refused_names_the_largest_scale_its_memory_fits(monkeypatch):
    at_22 = cpu_backend.memory_estimate_bytes(22, 16)
    monkeypatch.setattr(cpu_backend, "available_memory_bytes", lambda: at_22)
    cpu_backend.CPUBackend().check_memory(22, 16)
    with pytest.raises(Graph500Error, match=r"GiB is available \(the largest SCALE that fits here is 22\)$"):
        cpu_backend.CPUBackend().check_memory(23, 16)


def _gpu_ranks_fit(scale, num_ranks, ranks_per_host, free, pinnable):
    """The multi-GPU check's own rule: each rank's device need beside the context made already within the
    tightest GPU's free memory, a host's ranks' pinned memory within the tightest host's pinnable memory."""
    host_needed, device_needed = gpu_distributed.memory_needs(scale, 16, num_ranks)
    device_needed += gpu_distributed.context_bytes(num_ranks) - gpu_backend.CONTEXT_BYTES
    return device_needed <= free and (pinnable is None or host_needed * ranks_per_host <= pinnable)


@pytest.mark.parametrize("free, pinnable, bound", [
    (int(76.1 * GIB), 400 * GIB, "gpu"),  # four H100s' free memory: SCALE 29 asks 76.5 GiB a GPU
    (200 * GIB, 60 * GIB, "host"),
    (int(76.1 * GIB), None, "gpu"),  # a host that cannot tell its available memory
])
def test_gpu_ranks_refusal_names_the_largest_scale_the_tightest_gpu_and_host_fit(free, pinnable, bound):
    # three ranks on host a (one GPU with the least free memory), one on host b
    reports = [("a", 0, free + GIB, pinnable), ("a", 1, free, pinnable), ("a", 2, free + 2 * GIB, pinnable),
               ("b", 0, free + GIB, None if pinnable is None else pinnable + GIB)]
    largest = gpu_distributed.largest_fitting_scale(16, 4, reports)
    assert largest >= 20
    assert _gpu_ranks_fit(largest, 4, 3, free, pinnable) and not _gpu_ranks_fit(largest + 1, 4, 3, free, pinnable)
    next_host = gpu_distributed.memory_needs(largest + 1, 16, 4)[0] * 3
    assert (bound == "host") == (pinnable is not None and next_host > pinnable)


def test_an_impossible_plan_raises():
    with pytest.raises(Graph500Error):
        plan.memory_plan(5, ranks=8)


@pytest.mark.parametrize("num_ranks", [1, 4, 16])
def test_the_distinct_endpoints_a_rank_plans_are_those_of_its_slice_of_the_reference_graph(num_ranks):
    import numpy as np
    from graph500.generators.kronecker import generate_edges
    from graph500.partition import tuple_range

    scale = 16
    src, dst, _ = generate_edges(scale, 16, 2, 3)
    begin, end = tuple_range(src.shape[0], 0, num_ranks)
    distinct = np.unique(np.concatenate((src[begin:end], dst[begin:end]))).size
    planned = distributed.validation_endpoints(1 << scale, end - begin)
    assert abs(planned - distinct) < 0.01 * distinct
    assert planned < 0.75 * min(1 << scale, 2 * (end - begin))  # the bound it replaces: far above


def test_scale_32_on_256_ranks_plans_at_most_20_gb_a_rank():
    """Issue 35's bound for a cluster run: no array of all N vertices beyond the bitmaps, the distinct endpoints as
    the generator gives them, uint32 labels up to 2^32 vertices."""
    scale_32 = plan.memory_plan(32, ranks=256)
    assert scale_32["bytes_per_rank"] <= 20 * 10**9
    assert scale_32["whole_graph_bytes"] == distributed.WHOLE_GRAPH_BYTES_PER_VERTEX * 2**32


def test_the_gpu_plan_says_where_kernel_1_keeps_the_tuples_it_receives():
    """SCALE 28 on two GPUs keeps them on an H200, not on an H100, as the runs did (kernel 1 8.4 s and 59 s); SCALE 27
    on two keeps them on an H100; one GPU has no such exchange."""
    h100, h200 = 81559 << 20, 143771 << 20  # the memory nvidia-smi reports
    assert h100 < plan.memory_plan(28, ranks=2, backend="gpu")["kernel1_on_device_bytes"] < h200
    assert plan.memory_plan(27, ranks=2, backend="gpu")["kernel1_on_device_bytes"] < h100
    assert "kernel1_on_device_bytes" not in plan.memory_plan(26, backend="gpu")
    assert "else in pinned host memory" in "\n".join(plan.plan_text(plan.memory_plan(28, ranks=2, backend="gpu")))


def test_the_gpu_plan_says_where_the_validator_keeps_its_tuples():
    """The larger pass with a copy of the tuples in place of the validator's chunks (read in place: two chunks' 48
    bytes a tuple of 2^25 staged no more): the edge list (12 bytes a tuple) on one GPU, a rank's relabelled slice
    and its weights (12 bytes a tuple) on several; SCALE 26 on one H100 and 27 on two keep it, SCALE 29 on two
    H200s does not."""
    h100, h200 = 81559 << 20, 143771 << 20  # the memory nvidia-smi reports
    chunks = (1 << 25) * 48
    one = plan.memory_plan(26, backend="gpu")
    passes = max(one["phases"]["bfs pass"], one["phases"]["sssp pass"])
    assert one["validation_on_device_bytes"] == passes - chunks + 12 * (16 << 26) + one["context"]
    two = plan.memory_plan(27, ranks=2, backend="gpu")
    slice_tuples = distributed.planned_slice_tuples(27, 16, 2)
    assert two["validation_on_device_bytes"] == (two["phases"]["sssp pass"] - chunks + 12 * slice_tuples
                                                 + two["context"])
    assert two["validation_on_device_bytes"] < h100
    assert plan.memory_plan(29, ranks=2, backend="gpu")["validation_on_device_bytes"] > h200
    assert "the validator keeps its tuples on the GPU where it has" in "\n".join(plan.plan_text(two))


def test_the_multi_gpu_bfs_shares_its_blind_part_out_over_the_ranks():
    """2^21 claims a rank receives blind at most, a power of two a peer, never under the small levels' 2^16; a
    capacity given is kept."""
    parts = {ranks: blind_part(ranks) for ranks in (1, 2, 3, 4, 8, 32, 256)}
    assert parts == {1: 1 << 21, 2: 1 << 20, 3: 1 << 19, 4: 1 << 19, 8: 1 << 18, 32: 1 << 16, 256: 1 << 16}
    assert all(ranks * part <= 1 << 21 for ranks, part in parts.items() if part > SMALL_LEVEL_EDGES)
    assert blind_part(2, 8) == 8


def test_the_multi_gpu_bfs_guards_its_switch_to_bottom_up_over_a_rank_s_block():
    # one rank: the one-GPU kernel's guard, N / gamma; four ranks at SCALE 28: a block's, the SCALE 26 one GPU's
    assert min_bottom_up_frontier(1 << 26, GAMMA, 1) == (1 << 26) / GAMMA == 4096
    assert min_bottom_up_frontier(1 << 28, GAMMA, 4) == 4096
    assert min_bottom_up_frontier(1 << 27, GAMMA, 2) == 4096
    assert min_bottom_up_frontier(1 << 28, 0, 4) == 0


def test_gpu_ranks_plan_kernel_1_s_build_with_the_degree_ordering_s_label_tables():
    # SCALE 30 on four H200s (session 43): kernel 1's device arrays 113.1 GiB with the tuples in host memory, where
    # the build's phase without the two label tables of all N (8 bytes a vertex) planned 105.0
    construction = gpu_distributed.device_phases(30, 16, 4)["construction"]
    assert 113.0 * GIB <= construction <= 1.15 * 113.1 * GIB
    without_tables = construction - 8 * (1 << 30)
    assert without_tables < 113.1 * GIB
