"""`mpiexec -n P graph500 run` end to end: the same report for P = 1, 2 and 3, faults caught, failures contained.

Each test starts real MPI ranks with the launcher on PATH (oversubscribed
where the machine has fewer cores: one Numba thread a rank) and is skipped
where mpiexec or mpi4py is missing. The runs are on the reference fixtures'
parameters, so nedge, roots and validity are compared with the reference's
own report and with the one-process run.
"""

import json
import pathlib
import re
import subprocess
import sys

import pytest

from support import FIXTURES, REPOSITORY, needs_mpi, program_environment, report_fields, run_ranks

from graph500 import energy

DATA = pathlib.Path(__file__).parent / "data" / "reference-v3"
NEDGE_FIELDS = ("min_nedge", "firstquartile_nedge", "median_nedge", "thirdquartile_nedge", "max_nedge",
                "mean_nedge", "stddev_nedge")

pytestmark = needs_mpi


def _run(num_ranks, name, tmp_path, *extra):
    scale, edgefactor, seed1, seed2 = FIXTURES[name]
    record_path = tmp_path / f"{name}-{num_ranks}.json"
    result = run_ranks(num_ranks, "-m", "graph500", "run", "--scale", str(scale), "--edgefactor", str(edgefactor),
                     "--seed1", str(seed1), "--seed2", str(seed2), "--json", str(record_path), *extra)
    assert result.returncode == 0, result.stderr[-3000:]
    return report_fields(result.stdout), json.loads(record_path.read_text()), result


@pytest.mark.parametrize("name", sorted(FIXTURES))
def test_two_and_three_ranks_report_the_reference_nedge_and_roots(tmp_path, name):
    reference = report_fields((DATA / f"{name}.stats").read_text())
    one, one_record, _ = _run(1, name, tmp_path)
    for num_ranks in (2, 3):
        ours, record, result = _run(num_ranks, name, tmp_path)
        assert ours["num_mpi_processes"] == str(num_ranks)
        for field in NEDGE_FIELDS:
            assert ours[field] == reference[field] == one[field], (num_ranks, field)
        assert record["roots"] == one_record["roots"]
        assert record["bfs"]["nedges"] == one_record["bfs"]["nedges"]
        assert record["sssp"]["nedges"] == one_record["sssp"]["nedges"]
        assert ours["validation"] == "passed"
        assert ours["bfs_kernel"] == "distributed-direction-optimizing"
        assert ours["sssp_kernel"] == "distributed-delta-stepping"
        assert f"{num_ranks} ranks x 1 Numba threads" in ours["device"]
        assert result.stdout.count("SCALE:") == 1  # rank 0 alone reports
        assert record["extensions"]["threads_per_rank"] == 1
        assert record["extensions"]["host_memory_peak_bytes"] > 2**26  # the largest rank's peak resident memory


FAULTY_RUN = """
import sys
import numpy as np
from graph500 import harness, kernels
from graph500.comm import world
from graph500.kernels.cpu.bfs_distributed import DistributedBFS

comm = world()
FAULT = sys.argv[1]


@kernels.register()
class FaultyBFS(DistributedBFS):
    name = "faulty"

    def search(self, root):
        parents = super().search(root)
        if comm.size > 1 and comm.rank == comm.size - 1:  # not in the warm-up (one rank, or a spawned worker)
            if FAULT == "raise":
                raise RuntimeError("planted failure")
            reached = np.flatnonzero(parents >= 0)
            vertex = reached[-1]
            parents[vertex] = vertex + self.graph.first_vertex  # a reached vertex its own parent
        return parents


if __name__ == "__main__":  # the warm-up's spawned workers import this script too
    config = harness.RunConfig(scale=10, bfs="faulty", run_sssp=False, num_roots=4)
    sys.exit(harness.run(config, comm=comm))
"""


def test_a_fault_planted_on_the_last_rank_is_caught_and_named(tmp_path):
    script = tmp_path / "faulty.py"
    script.write_text(FAULTY_RUN)
    result = run_ranks(3, str(script), "parents")
    assert result.returncode == 1, result.stderr[-3000:]
    assert result.stdout.count("invalid") >= 1 or "INVALID" in result.stdout.upper()
    assert result.stderr.count("tree-edge-level") == 1, result.stderr  # said once, by rank 0


def test_a_rank_that_fails_aborts_every_rank_with_one_line(tmp_path):
    script = tmp_path / "faulty.py"
    script.write_text(FAULTY_RUN)
    result = run_ranks(2, str(script), "raise", timeout=300)
    assert result.returncode != 0
    lines = [line for line in result.stderr.splitlines() if line.startswith("graph500:")]
    assert lines == ["graph500: rank 1 of 2: planted failure"], result.stderr


def test_an_impossible_partition_is_refused_once(tmp_path):
    result = run_ranks(7, "-m", "graph500", "run", "--scale", "9", timeout=300)
    assert result.returncode == 2
    lines = [line for line in result.stderr.splitlines() if line.startswith("graph500:")]
    assert len(lines) == 1 and "7 ranks cannot share 512 vertices" in lines[0], result.stderr
    assert result.stdout == ""


def test_gpu_backend_on_more_ranks_than_gpus_is_refused_once():
    """Without CuPy or a GPU the backend is unavailable; with one GPU, two ranks would share it."""
    result = run_ranks(3, "-m", "graph500", "run", "--scale", "10", "--backend", "gpu", timeout=300)
    assert result.returncode == 2
    lines = [line for line in result.stderr.splitlines() if line.startswith("graph500:")]
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith("graph500: --backend gpu: ") or "--backend gpu takes one GPU per rank" in lines[0]


def test_a_graph_too_large_for_the_hosts_memory_is_refused_once_before_generating():
    result = run_ranks(2, "-m", "graph500", "run", "--scale", "36", timeout=300)
    assert result.returncode == 2
    lines = [line for line in result.stderr.splitlines() if line.startswith("graph500:")]
    assert len(lines) == 1 and "on 2 ranks needs about" in lines[0] and "(2 ranks there)" in lines[0], result.stderr
    assert re.search(r"\(the largest SCALE that fits here is \d+\); --ignore-memory-plan runs it anyway$", lines[0])


def test_a_flag_the_distributed_kernel_does_not_take_is_refused_once():
    result = run_ranks(2, "-m", "graph500", "run", "--scale", "10", "--numa-domains", "2", timeout=300)
    assert result.returncode == 2
    lines = [line for line in result.stderr.splitlines() if line.startswith("graph500:")]
    assert len(lines) == 1 and "--numa-domains does not apply" in lines[0], result.stderr


def test_an_unwritable_record_is_refused_once_before_the_run(tmp_path):
    """Rank 0 alone writes the record; its check stops every rank, before anything is generated."""
    record = tmp_path / "r.json"
    record.mkdir()
    result = run_ranks(2, "-m", "graph500", "run", "--scale", "10", "--json", str(record), timeout=300)
    assert result.returncode == 2
    lines = [line for line in result.stderr.splitlines() if line.startswith("graph500:")]
    assert lines == [f"graph500: --json: {record} is a directory"], result.stderr
    assert result.stdout == "" and list(record.iterdir()) == []


def test_an_energy_meter_that_cannot_be_read_is_refused_once_before_the_run():
    try:
        energy.open_rapl_meters()
        pytest.skip("RAPL is readable here")
    except energy.MeterUnavailable:
        pass
    result = run_ranks(2, "-m", "graph500", "run", "--scale", "10", "--energy", "rapl", timeout=300)
    assert result.returncode == 2
    lines = [line for line in result.stderr.splitlines() if line.startswith("graph500:")]
    assert len(lines) == 1 and lines[0].startswith("graph500: --energy rapl: "), result.stderr
    assert result.stdout == ""


def test_a_launcher_whose_ranks_mpi_does_not_join_is_refused():
    """A launcher of another MPI than mpi4py's starts P processes that each see a world of one: each would run
    the whole benchmark alone. Here one process carries the launcher's variable without its MPI."""
    environment = dict(program_environment(1), OMPI_COMM_WORLD_SIZE="3")
    result = subprocess.run([sys.executable, "-m", "graph500", "run", "--scale", "8"], capture_output=True,
                            text=True, timeout=300, env=environment, cwd=REPOSITORY)
    assert result.returncode == 2
    lines = [line for line in result.stderr.splitlines() if line.startswith("graph500:")]
    assert len(lines) == 1 and "the launcher started 3 ranks, but MPI sees this process alone" in lines[0], \
        result.stderr
    assert result.stdout == ""
