"""Smoke tests of the scripts in benchmarks/: each runs on a tiny graph, exits 0 and prints its table.

The scripts measure speed, and speed is shown by running them, never asserted
here; these tests keep them working as the package changes under them (a
script imports kernel internals, and one at SCALE 10 once read before the
start of the edge list). Scripts for several ranks run on 2 (skipped
without mpi4py or a launcher), GPU scripts are marked ``gpu`` (skipped
without a device; not here: ``gpu_profile.py``, which needs Nsight Compute,
and ``multi_gpu.py``, which needs two GPUs: ``test_multi_gpu.py`` runs it;
here only its report of a hung launch),
and the GAPBS comparison without GAPBS must say how to build it, in a few
lines, and fail.
"""

import shlex
import subprocess
import sys

import pytest
from support import MPIEXEC, REPOSITORY, needs_mpi, program_environment, run_ranks

SCALE = "10"


def run_script(script, *argv, threads=2):
    """The CompletedProcess (text) of ``python benchmarks/SCRIPT argv...`` from the repository."""
    return subprocess.run([sys.executable, f"benchmarks/{script}", *argv], capture_output=True, text=True,
                          timeout=600, env=program_environment(threads), cwd=REPOSITORY)


def assert_ran(result, *expected):
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    for text in expected:
        assert text in result.stdout, f"{text!r} not in:\n{result.stdout[-3000:]}"


CPU_SCRIPTS = [
    ("cpu_kernels.py", ["--scale", SCALE, "--roots", "2"], ["BFS (all searches validated)", "delta-stepping"]),
    ("cpu_levels.py", ["--scale", SCALE, "--roots", "2", "--rounds", "1", "--threads", "2", "1"],
     ["between levels ms", "bottom-up"]),
    ("cpu_sssp_trace.py", ["--scale", SCALE, "--roots", "2"], ["settled bucket"]),
    ("cpu_variants.py", ["--kind", "bfs", "--scale", SCALE, "--roots", "2", "--rounds", "1", "--threads", "2",
                         "--validate"], ["bfs direction-optimizing, SCALE 10", "ratio to the first"]),
    ("cpu_variants.py", ["--kind", "sssp", "--scale", SCALE, "--roots", "2", "--rounds", "2", "--threads", "1",
                         "--variants", "default", "reorder=False"], ["reorder=False"]),
    ("pipeline.py", ["--scale", SCALE, "--roots", "2", "--repeat", "1"],
     ["construction_time of a run", "skip-per-edge positioning", "sssp (delta-stepping)"]),
    ("gpu_memory.py", ["--plan-only", "--scales", SCALE], ["Bytes per edge tuple by phase", "Largest SCALE per GPU"]),
    ("core_speeds.py", ["--iterations", "100000", "--rounds", "1"],
     ["together, round 1 s", "lockstep efficiency bound"]),
]


@pytest.mark.parametrize("script, argv, expected", CPU_SCRIPTS, ids=lambda value: str(value)[:40])
def test_cpu_script_runs(script, argv, expected):
    assert_ran(run_script(script, *argv), *expected)


@pytest.mark.skipif(not (REPOSITORY / ".git").exists(), reason="compares against a git revision")
def test_cpu_revisions_against_head():
    result = run_script("cpu_revisions.py", "--baseline", "HEAD", "--kind", "bfs", "--scale", SCALE, "--roots", "2",
                        "--rounds", "2")
    assert_ran(result, "every tree valid", "candidate / baseline: median")


def test_gapbs_compare_without_gapbs_says_how_to_build_it(tmp_path):
    result = run_script("gapbs_compare.py", "--gapbs", str(tmp_path / "missing"), "--scale", SCALE, "--roots", "2")
    assert result.returncode != 0
    message = result.stdout + result.stderr
    assert "were not found" in message and "make -C" in message and "Traceback" not in message
    assert len(message.strip().splitlines()) <= 4


MPI_SCRIPTS = [
    ("distributed_sweep.py", ["--scale", SCALE, "--kind", "bfs", "--tunable", "alpha=15,40", "--roots", "2",
                              "--rounds", "2"], ["alpha=40", "construction s"]),
    ("distributed_sweep.py", ["--scale", SCALE, "--kind", "bfs", "--tunable", "beta=18,inf", "--roots", "2",
                              "--rounds", "1"], ["beta=inf"]),
    ("distributed_sweep.py", ["--scale", SCALE, "--kind", "sssp", "--tunable", "delta=0.1,0.2", "--roots", "2",
                              "--rounds", "1"], ["delta=0.2"]),
    ("distributed_levels.py", ["--scale", SCALE, "--roots", "2", "--rounds", "1"],
     ["every tree of the first round valid", "outside the levels", "level 0 own ms"]),
]


@needs_mpi
@pytest.mark.parametrize("script, argv, expected", MPI_SCRIPTS, ids=lambda value: str(value)[:40])
def test_mpi_script_runs_on_two_ranks(script, argv, expected):
    assert_ran(run_ranks(2, f"benchmarks/{script}", *argv), *expected)


@needs_mpi
def test_mpi_scaling_runs_both_modes():
    result = run_script("mpi_scaling.py", "--mode", "both", "--ranks", "1,2", "--scale", SCALE, "--base-scale", "9",
                        "--roots", "2", "--repeats", "1", "--cores", "2", "--mpiexec", MPIEXEC, "--core-bound")
    assert_ran(result, "Weak scaling: SCALE = 9 + log2 P", "ok", "2 cores, one integer loop pinned to each",
               "validation s/tree")
    for failure in ("timed out", "exit ", "no JSON record"):  # a run's status when it did not finish
        assert failure not in result.stdout, result.stdout[-3000:]
    rows = [line.split() for line in result.stdout.splitlines() if line[:1].isdigit() and line.endswith("ok")]
    assert len(rows) == 4 and all(float(row[9]) > 0 for row in rows), result.stdout  # validation s/tree


@needs_mpi
def test_run_trees_alternates_whole_runs_of_two_ranks():
    # the launcher a command line of its own (here behind env), as mpi_scaling.py and multi_gpu.py take it
    result = run_script("run_trees.py", "--baseline", str(REPOSITORY), "--pairs", "1", "--ranks", "2", "--mpiexec",
                        f"env GRAPH500_LAUNCHER_TEST=1 {shlex.quote(MPIEXEC)}", "--", "--scale", SCALE, "--roots", "2",
                        "--energy", "off", "--no-progress", "--no-sssp", threads=1)
    assert_ran(result, "2 rank(s), graph500 run --scale 10", "harmonic-mean TEPS", "validation s a tree",
               "construction s")
    ratios = [line.split()[-2] for line in result.stdout.splitlines() if line.startswith(("bfs", "sssp", "kernel"))]
    assert len(ratios) == 3 and all(float(ratio) > 0 for ratio in ratios), result.stdout  # no SSSP pass: no row


# A stand-in package: its `graph500 run` writes a record of 123 seconds' construction, whatever it is asked
FAKE_RUN = """
import json, sys
record = {"statistics": {"bfs": {"TEPS": {"harmonic_mean": 1.0}}, "sssp": None}, "construction_time": 123.0}
with open(sys.argv[sys.argv.index("--json") + 1], "w") as out:
    json.dump(record, out)
"""


def test_run_trees_runs_the_baseline_trees_package_not_the_checkout_it_starts_in(tmp_path):
    package = tmp_path / "graph500"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "__main__.py").write_text(FAKE_RUN)
    result = run_script("run_trees.py", "--baseline", str(tmp_path), "--pairs", "1", "--", "--scale", SCALE,
                        "--roots", "2", "--energy", "off", "--skip-validation", "--no-progress", "--no-sssp", threads=1)
    assert result.returncode == 0, result.stderr[-3000:]
    construction = next(line for line in result.stdout.splitlines() if line.startswith("kernel 1")).split()
    assert float(construction[4]) == 123.0 and float(construction[5]) < 123.0, result.stdout  # baseline, candidate


GPU_SCRIPTS = [
    ("gpu.py", ["--scales", "12", "--roots", "4"]),
    ("gpu_variants.py", ["--scales", "12", "--roots", "4", "--rounds", "1", "--bfs", "default", "--sssp", "default"]),
    ("gpu_sssp_trace.py", ["--scale", "12", "--roots", "2"]),
    ("gpu_memory.py", ["--scales", "12", "--roots", "2"]),
    ("gpu_trees.py", ["--baseline", str(REPOSITORY), "--pairs", "1", "--", "--scales", "12", "--roots", "4"]),
    ("gpu_host_steps.py", ["--scale", "12", "--roots", "2", "--rounds", "2"]),
    ("gpu_host_steps.py", ["--kernel", "sssp", "--scale", "12", "--roots", "2", "--rounds", "2"]),
]


@pytest.mark.gpu
@pytest.mark.parametrize("script, argv", GPU_SCRIPTS, ids=lambda value: str(value)[:40])
def test_gpu_script_runs(script, argv):
    pytest.importorskip("cupy")
    from graph500.kernels.gpu.backend import gpu_unavailable_reason

    if gpu_unavailable_reason():
        pytest.skip(gpu_unavailable_reason())
    result = run_script(script, *argv)
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    assert result.stdout.strip()


def test_multi_gpu_reports_a_hung_group_and_its_last_lines():
    """benchmarks/multi_gpu.py with a launcher that prints a line and then never ends (no GPU needed): each
    measurement group is stopped at ``--timeout``, its row says so, and its last lines reach stderr."""
    result = run_script("multi_gpu.py", "--gpus", "2", "--scale", "10", "--roots", "2", "--timeout", "2",
                        "--mpiexec", "sh -c 'echo the group started >&2; sleep 60'")
    assert_ran(result, "Weak scaling", "Strong scaling at SCALE 10")
    assert result.stdout.count("timed out after 2 s") == 4  # one and two GPUs in both tables
    assert result.stderr.count("timed out after 2 s; the group's last lines:\nthe group started") == 3
