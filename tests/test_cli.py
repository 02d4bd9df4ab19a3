"""The command line end to end: runs on the fixture graphs, generate, validate, bad input."""

import json
import pathlib
import re
import subprocess
import sys

import numba
import numpy as np
import pytest

from graph500 import cli, io
from support import FIXTURES, report_fields
from graph500.generators import kronecker
from graph500.kernels.cpu.backend import cpu_model
from graph500.kernels.cpu.build import build_csr
from graph500.kernels.cpu.bfs_top_down import TopDownBFS
from graph500.kernels.cpu.sssp_dijkstra import DijkstraSSSP

DATA = pathlib.Path(__file__).parent / "data" / "reference-v3"
EXACT_FIELDS = ("SCALE", "edgefactor", "NBFS", "min_nedge", "firstquartile_nedge", "median_nedge",
                "thirdquartile_nedge", "max_nedge", "mean_nedge", "stddev_nedge")


def _run_cli(capsys, *argv):
    status = cli.main(list(argv))
    captured = capsys.readouterr()
    return status, captured.out, captured.err


@pytest.mark.parametrize("name", sorted(FIXTURES))
def test_run_on_fixture_graph_reports_the_reference_nedge_lines(capsys, tmp_path, name):
    scale, edgefactor, seed1, seed2 = FIXTURES[name]
    record_path = tmp_path / "run.json"
    status, out, err = _run_cli(capsys, "run", "--scale", str(scale), "--edgefactor", str(edgefactor),
                                "--seed1", str(seed1), "--seed2", str(seed2), "--json", str(record_path))
    assert status == 0, err
    ours, reference = report_fields(out), report_fields((DATA / f"{name}.stats").read_text())
    for field in EXACT_FIELDS:
        assert ours[field] == reference[field], field
    assert list(ours)[:6] == list(reference)[:6]
    assert ours["num_mpi_processes"] == "1"
    assert "validation" in ours and ours["validation"] == "passed"
    assert ours["device"] == f"{cpu_model()}, {numba.get_num_threads()} Numba threads"
    record = json.loads(record_path.read_text())
    assert len(record["roots"]) == 64 and len(record["bfs"]["times"]) == 64
    extensions = record["extensions"]
    assert 2**26 < extensions["host_memory_peak_bytes"] < 2**34  # this process's peak resident memory
    steps = {name: value for name, value in extensions.items() if name.startswith("host_memory_bytes_")}
    if sys.platform.startswith("linux"):  # the peak of each step, the run's the most of them or before
        assert [name[len("host_memory_bytes_"):] for name in steps] == [
            "generation", "kernel_1", "validation_set_up", "bfs_set_up", "bfs_pass", "sssp_set_up", "sssp_pass"]
        assert 0 < min(steps.values()) and max(steps.values()) <= extensions["host_memory_peak_bytes"]
    assert record["roots"] == np.loadtxt(DATA / f"{name}.roots", dtype=int).tolist()


def test_bfs_only_run_has_no_sssp_lines(capsys):
    status, out, _ = _run_cli(capsys, "run", "--scale", "8", "--no-sssp", "--roots", "4")
    assert status == 0
    official = out.split("#")[0]
    assert "bfs  harmonic_mean_TEPS" in official
    assert not any(line.startswith("sssp") for line in official.splitlines())


CPU_RUN_IMPORTS = """
import sys
from graph500 import cli

if __name__ == "__main__":
    status = cli.main(["run", "--scale", "8", "--roots", "2", "--energy", "off", "--no-progress"])
    print(status, sorted(name for name in sys.modules if name == "cupy" or name.startswith("graph500.kernels.gpu")))
"""


def test_a_cpu_run_imports_no_gpu_module(tmp_path):
    """A CPU run loads neither CuPy nor the GPU kernels (each rank of a CPU run on a GPU host would carry them)."""
    script = tmp_path / "cpu_run.py"
    script.write_text(CPU_RUN_IMPORTS)
    result = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, result.stderr[-2000:]
    assert result.stdout.splitlines()[-1] == "0 []"


def test_the_sssp_is_set_up_once_the_bfs_is_freed_its_set_up_charged_to_construction(tmp_path, monkeypatch):
    """One kernel at a time: the SSSP's constructor runs after the BFS pass with no BFS alive, and the seconds
    it takes join construction_time (and sssp_setup_time). On the CPUs the BFS is set up after the validator,
    the edge list freed by then, its seconds in construction_time too."""
    import io as text_io
    import time
    import weakref

    from graph500 import harness, kernels
    from graph500.kernels.cpu.backend import CPUBackend
    from graph500.kernels.cpu.bfs_direction_optimizing import DirectionOptimizingBFS
    from graph500.kernels.cpu.sssp_delta_stepping import DeltaSteppingSSSP

    bfs_instances, bfs_alive_at_sssp_set_up, edge_list, edge_list_at_bfs_set_up = [], [], [], []
    validation_graph = CPUBackend.validation_graph

    def watched_validation_graph(self, src, dst, num_vertices, weights):
        edge_list.append(weakref.ref(src))
        return validation_graph(self, src, dst, num_vertices, weights)

    class WatchedBFS(DirectionOptimizingBFS):
        name = "watched-bfs"

        def __init__(self, graph, **options):
            edge_list_at_bfs_set_up.extend("freed" if ref() is None else "alive" for ref in edge_list)
            time.sleep(0.5)
            super().__init__(graph, **options)
            bfs_instances.append(weakref.ref(self))

    class SlowSSSP(DeltaSteppingSSSP):
        name = "slow-sssp"

        def __init__(self, graph, **options):
            bfs_alive_at_sssp_set_up.extend(instance() is not None for instance in bfs_instances)
            time.sleep(0.5)
            super().__init__(graph, **options)

    kernels.register()(WatchedBFS)
    kernels.register()(SlowSSSP)
    monkeypatch.setattr(harness, "_warm_up", lambda *arguments: None)  # the warm-up's workers know neither
    monkeypatch.setattr(CPUBackend, "validation_graph", watched_validation_graph)
    record_path = tmp_path / "run.json"
    try:
        config = harness.RunConfig(scale=10, bfs="watched-bfs", sssp="slow-sssp", num_roots=4, progress=False,
                                   energy="off", json_path=str(record_path))
        assert harness.run(config, stdout=text_io.StringIO()) == 0
    finally:
        kernels._REGISTRY[("bfs", "cpu")].pop("watched-bfs")
        kernels._REGISTRY[("sssp", "cpu")].pop("slow-sssp")
    assert bfs_alive_at_sssp_set_up == [False]
    assert edge_list_at_bfs_set_up == ["freed"]  # the validator made from it first
    record = json.loads(record_path.read_text())
    assert record["extensions"]["sssp_setup_time"] >= 0.5
    assert record["construction_time"] >= record["extensions"]["sssp_setup_time"] + 0.5  # and the BFS's set-up


def test_a_run_the_memory_plan_refuses_stops_with_one_line_unless_told_to_go_on(capsys, monkeypatch):
    from graph500.errors import Graph500Error
    from graph500.kernels.cpu.backend import CPUBackend

    def refuse(self, scale, edgefactor):
        raise Graph500Error(f"SCALE {scale} needs more memory than this host has")

    monkeypatch.setattr(CPUBackend, "check_memory", refuse)
    status, out, err = _run_cli(capsys, "run", "--scale", "8", "--no-sssp", "--roots", "4")
    assert status == 2 and out == "" and err.strip().splitlines() == ["graph500: SCALE 8 needs more memory than this "
                                                                     "host has; --ignore-memory-plan runs it anyway"]
    status, out, err = _run_cli(capsys, "run", "--scale", "8", "--no-sssp", "--roots", "4", "--ignore-memory-plan")
    assert status == 0 and "bfs  harmonic_mean_TEPS" in out
    assert "warning: SCALE 8 needs more memory than this host has" in err


@pytest.mark.parametrize("name", ["s10_ef16_seed2-3", "s11_ef8_seed5-7"])
def test_generate_is_byte_identical_to_the_reference(capsys, tmp_path, name):
    scale, edgefactor, seed1, seed2 = FIXTURES[name]
    output = tmp_path / "graph"
    status, _, err = _run_cli(capsys, "generate", "--scale", str(scale), "--edgefactor", str(edgefactor),
                              "--seed1", str(seed1), "--seed2", str(seed2), "--output", str(output))
    assert status == 0, err
    for ours, reference in (("graph", ".edges"), ("graph.weights", ".edges.weights"), ("graph.roots", ".roots")):
        assert (tmp_path / ours).read_bytes() == (DATA / f"{name}{reference}").read_bytes()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["graph", "graph.roots", "graph.weights"]


def test_generate_npy_format(capsys, tmp_path):
    status, _, _ = _run_cli(capsys, "generate", "--scale", "9", "--edgefactor", "4", "--seed1", "1", "--seed2", "1",
                            "--output", str(tmp_path / "g"), "--format", "npy")
    assert status == 0
    src = np.load(tmp_path / "g.src.npy")
    ref_src, _ = io.read_reference_edges(DATA / "s9_ef4_seed1-1.edges")
    np.testing.assert_array_equal(src, ref_src)


def _fixture_tree(name, tmp_path, kind):
    scale, edgefactor, seed1, seed2 = FIXTURES[name]
    src, dst = io.read_reference_edges(DATA / f"{name}.edges")
    weights = np.fromfile(DATA / f"{name}.edges.weights", dtype="<f4")
    graph = build_csr(src, dst, 1 << scale, weights)
    root = int(np.loadtxt(DATA / f"{name}.roots", dtype=int)[0])
    if kind == "bfs":
        parents, distances = TopDownBFS(graph).search(root), None
    else:
        parents, distances = DijkstraSSSP(graph).search(root)
    np.save(tmp_path / "parents.npy", parents)
    if distances is not None:
        np.save(tmp_path / "distances.npy", distances)
    return root, parents, distances


def test_validate_accepts_a_valid_bfs_tree_in_text_and_npy(capsys, tmp_path):
    name = "s10_ef16_seed2-3"
    root, parents, _ = _fixture_tree(name, tmp_path, "bfs")
    np.savetxt(tmp_path / "parents.txt", parents, fmt="%d")
    for parents_file in ("parents.npy", "parents.txt"):
        status, out, _ = _run_cli(capsys, "validate", "--edges", str(DATA / f"{name}.edges"), "--scale", "10",
                                  "--root", str(root), "--parents", str(tmp_path / parents_file))
        assert status == 0
        assert out.strip() == f"valid BFS tree from root {root}: nedge 16239"


def test_validate_sssp_and_a_broken_tree(capsys, tmp_path):
    name = "s12_ef16_seed2-3"
    root, parents, distances = _fixture_tree(name, tmp_path, "sssp")
    edges = str(DATA / f"{name}.edges")
    status, out, _ = _run_cli(capsys, "validate", "--edges", edges, "--root", str(root),
                              "--parents", str(tmp_path / "parents.npy"), "--distances", str(tmp_path / "distances.npy"))
    assert status == 0 and out.startswith("valid SSSP tree")
    reached = np.flatnonzero((parents >= 0) & (np.arange(len(parents)) != root))
    distances[reached[0]] *= 0.5
    np.save(tmp_path / "distances.npy", distances)
    status, out, _ = _run_cli(capsys, "validate", "--edges", edges, "--root", str(root),
                              "--parents", str(tmp_path / "parents.npy"), "--distances", str(tmp_path / "distances.npy"))
    assert status == 1
    assert out.startswith("invalid: sssp validation failed, rule ")


@pytest.mark.parametrize("problem", ["missing", "truncated", "short-parents", "bad-text", "root-out-of-range",
                                     "labels-out-of-range"])
def test_validate_bad_input_exits_2_with_one_line(capsys, tmp_path, problem):
    name = "s9_ef4_seed1-1"
    root, _, _ = _fixture_tree(name, tmp_path, "bfs")
    edges = tmp_path / "edges"
    edges.write_bytes((DATA / f"{name}.edges").read_bytes())
    parents = tmp_path / "parents.npy"
    arguments = ["validate", "--edges", str(edges), "--scale", "9", "--root", str(root), "--parents", str(parents)]
    if problem == "missing":
        arguments[2] = str(tmp_path / "nothing")
    elif problem == "truncated":
        edges.write_bytes(edges.read_bytes()[:-5])
    elif problem == "short-parents":
        np.save(parents, np.load(parents)[:-1])
    elif problem == "bad-text":
        (tmp_path / "p.txt").write_text("1\n2\nthree\n")
        arguments[-1] = str(tmp_path / "p.txt")
    elif problem == "root-out-of-range":
        arguments[6] = "512"
    elif problem == "labels-out-of-range":
        arguments[4] = "4"
        np.save(parents, np.full(16, -1))
        arguments[6] = "0"
    status, out, err = _run_cli(capsys, *arguments)
    assert status == 2
    assert out == ""
    assert err.count("\n") == 1 and err.startswith("graph500: ")


@pytest.mark.parametrize("arguments, message", [
    (["--scale", "0"], "SCALE must be"),
    (["--scale", "48"], "SCALE must be"),
    (["--edgefactor", "0"], "edgefactor must be"),
    (["--seed1", "-1"], "seed1 must be"),
    (["--seed2", str(2**64)], "seed2 must be"),
    (["--scale", "40"], "GiB of memory; "),  # the memory needed, the largest SCALE that fits and the way past
    (["--scale", "40"], "is available (the largest SCALE that fits here is "),
    (["--scale", "40"], "; --ignore-memory-plan runs it anyway\n"),
    (["--roots", "0"], "--roots must be"),
    (["--bfs", "no-such-kernel"], "no bfs kernel"),
    (["--scale", "2", "--edgefactor", "1"], "too few for 64"),
    (["--numa-domains", "0"], "--numa-domains must be"),
    (["--bfs", "top-down", "--numa-domains", "2"], "does not apply"),
])
def test_run_bad_input_exits_2_with_one_line(capsys, tmp_path, arguments, message):
    record = tmp_path / "r.json"
    status, out, err = _run_cli(capsys, "run", *arguments, "--json", str(record))
    assert status == 2
    assert out == ""
    assert err.count("\n") == 1 and message in err
    assert not record.exists()


@pytest.mark.parametrize("where", ["a-directory", "under-a-file"])
def test_run_refuses_an_unwritable_record_before_it_starts(capsys, tmp_path, where):
    (tmp_path / "file").write_text("")
    record = tmp_path if where == "a-directory" else tmp_path / "file" / "r.json"
    status, out, err = _run_cli(capsys, "run", "--scale", "8", "--json", str(record))
    assert status == 2
    assert out == ""  # refused before the run: no report
    assert err.count("\n") == 1 and err.startswith("graph500: --json: ")
    assert sorted(path.name for path in tmp_path.iterdir()) == ["file"]


def test_run_whose_record_cannot_be_written_at_the_end_says_one_line(capsys, tmp_path, monkeypatch):
    from graph500 import run_report

    def disk_full(path, record):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(run_report, "write_json_atomic", disk_full)
    record = tmp_path / "r.json"
    status, out, err = _run_cli(capsys, "run", "--scale", "8", "--roots", "8", "--json", str(record))
    assert status == 2
    assert report_fields(out)["SCALE"] == "8"  # the report was printed before
    assert err.strip().splitlines()[-1] == f"graph500: cannot write {record}: No space left on device"
    assert "Traceback" not in err and list(tmp_path.iterdir()) == []


def test_generate_refuses_bad_scale_and_leaves_nothing(capsys, tmp_path):
    status, _, err = _run_cli(capsys, "generate", "--scale", "99", "--edgefactor", "16", "--output", str(tmp_path / "g"))
    assert status == 2 and "SCALE must be" in err
    assert list(tmp_path.iterdir()) == []


def test_generate_refuses_an_unwritable_output_with_one_line(capsys, tmp_path):
    (tmp_path / "file").write_text("")
    for output, message in ((tmp_path, "is a directory"), (tmp_path / "file" / "g", "is not a directory")):
        status, out, err = _run_cli(capsys, "generate", "--scale", "8", "--edgefactor", "16", "--output", str(output))
        assert status == 2 and out == ""
        assert err.count("\n") == 1 and err.startswith("graph500: --output: ") and message in err
    assert sorted(path.name for path in tmp_path.iterdir()) == ["file"]


def _interrupt_inside_compiled_code():
    """What Ctrl-C inside a Numba function raises: a SystemError whose context is the KeyboardInterrupt."""
    try:
        raise KeyboardInterrupt
    except KeyboardInterrupt:
        raise SystemError("CPUDispatcher(<function f>) returned a result with an exception set")


@pytest.mark.parametrize("raised", ["ctrl-c", "ctrl-c-in-compiled-code", "other-system-error"])
def test_run_interrupted_says_one_line_and_exits_130(capsys, monkeypatch, raised):
    def interrupted_run(config):
        if raised == "ctrl-c":
            raise KeyboardInterrupt
        if raised == "ctrl-c-in-compiled-code":
            _interrupt_inside_compiled_code()
        raise SystemError("a real bug")

    monkeypatch.setattr(cli.harness, "run", interrupted_run)
    if raised == "other-system-error":  # not an interrupt: not hidden
        with pytest.raises(SystemError, match="a real bug"):
            cli.main(["run", "--scale", "8"])
        return
    status, out, err = _run_cli(capsys, "run", "--scale", "8")
    assert status == 130 and out == "" and err == "graph500: interrupted\n"


@pytest.mark.parametrize("rank", [0, 1])
def test_interrupted_ranks_abort_with_130_and_rank_0_alone_says_it(monkeypatch, rank):
    from graph500 import harness

    class Ranks:  # the communicator of a rank of two whose abort returns (as after a second signal)
        size = 2
        aborts = []

        def __init__(self):
            self.rank = rank

        def abort(self, message, status):
            self.aborts.append((message, status))

    monkeypatch.setattr(harness, "_preflight", lambda config, comm: (None, None, None, None))
    monkeypatch.setattr(harness, "_run_checked", lambda *arguments: _interrupt_inside_compiled_code())
    status = harness.run(harness.RunConfig(scale=8), comm=Ranks())
    assert status == 130
    assert Ranks.aborts == [("graph500: interrupted" if rank == 0 else "", 130)]


def test_interrupted_writer_leaves_no_partial_files(tmp_path):
    with pytest.raises(KeyboardInterrupt):
        with io.EdgeFileWriter(str(tmp_path / "g"), "reference") as writer:
            src, dst, weights = kronecker.generate_edges(6, 4)
            writer.write(src, dst, weights)
            raise KeyboardInterrupt
    assert list(tmp_path.iterdir()) == []


def test_python_dash_m_runs_without_traceback():
    result = subprocess.run([sys.executable, "-m", "graph500", "run", "--scale", "8", "--roots", "8"],
                            capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr
    assert "Traceback" not in result.stderr
    fields = report_fields(result.stdout)
    assert fields["SCALE"] == "8" and fields["NBFS"] == "8"
    bad = subprocess.run([sys.executable, "-m", "graph500", "run", "--scale", "-3"], capture_output=True, text=True)
    assert bad.returncode == 2 and "Traceback" not in bad.stderr


def _gpu_reason():
    from graph500.harness import gpu_unavailable_reason

    return gpu_unavailable_reason()


@pytest.mark.parametrize("command", [["run", "--backend", "gpu", "--scale", "5"],
                                     ["generate", "--scale", "5", "--edgefactor", "2", "--device", "gpu"]])
def test_gpu_requested_without_a_gpu_is_one_line(capsys, tmp_path, command):
    if _gpu_reason() is None:
        pytest.skip("a GPU is present")
    if command[0] == "generate":
        command += ["--output", str(tmp_path / "g")]
    status, out, err = _run_cli(capsys, *command)
    assert status == 2 and out == ""
    assert err.count("\n") == 1 and "gpu" in err
    assert list(tmp_path.iterdir()) == []


@pytest.mark.gpu
def test_generate_on_the_gpu_is_byte_identical_to_the_reference(capsys, tmp_path):
    if _gpu_reason() is not None:
        pytest.skip(_gpu_reason())
    status, _, err = _run_cli(capsys, "generate", "--scale", "12", "--edgefactor", "16", "--device", "gpu",
                              "--output", str(tmp_path / "graph"))
    assert status == 0, err
    for ours, reference in (("graph", ".edges"), ("graph.weights", ".edges.weights"), ("graph.roots", ".roots")):
        assert (tmp_path / ours).read_bytes() == (DATA / f"s12_ef16_seed2-3{reference}").read_bytes()


@pytest.mark.gpu
def test_gpu_run_with_trace_keeps_the_bfs_levels(capsys, tmp_path):
    if _gpu_reason() is not None:
        pytest.skip(_gpu_reason())
    record_path = tmp_path / "traced.json"
    status, _, err = _run_cli(capsys, "run", "--backend", "gpu", "--scale", "10", "--roots", "3", "--trace",
                              "--energy", "off", "--json", str(record_path))
    assert status == 0, err
    record = json.loads(record_path.read_text())
    assert len(record["bfs"]["trace"]) == 3 and record["sssp"].get("trace") is None


def test_trace_prints_levels_and_keeps_them_in_the_record(capsys, tmp_path):
    record_path = tmp_path / "traced.json"
    status, out, err = _run_cli(capsys, "run", "--scale", "9", "--edgefactor", "4", "--seed1", "1", "--seed2", "1",
                                "--roots", "3", "--trace", "--numa-domains", "2",
                                "--energy", "off", "--json", str(record_path))
    assert status == 0, err
    trace = json.loads(record_path.read_text())["bfs"]["trace"]
    assert len(trace) == 3
    printed = [line for line in err.splitlines() if line.startswith("trace bfs root")]
    assert len(printed) == sum(len(levels) for levels in trace)
    for levels in trace:
        assert levels[0]["frontier"] == 1 and levels[0]["direction"] in ("top-down", "bottom-up")
        assert all(set(level) == {"direction", "frontier", "edges", "seconds"} for level in levels)


def test_progress_bars_name_every_long_step(capsys):
    """With --progress, stderr shows a bar for generation, kernel 1, the validation's set-up (long where the edge
    list is generated again) and each pass; without, none."""
    assert cli.main(["run", "--scale", "8", "--roots", "2", "--energy", "off", "--progress"]) == 0
    shown = capsys.readouterr().err
    for step in ("generate", "construct", "validation set-up", "bfs", "sssp"):
        assert f"{step}:" in shown, step
    assert cli.main(["run", "--scale", "8", "--roots", "2", "--energy", "off", "--no-progress"]) == 0
    assert "validation set-up:" not in capsys.readouterr().err


def test_off_a_terminal_a_long_step_says_so_as_it_ends(capsys, monkeypatch):
    """stderr not a terminal (pytest's capture, a batch job's log), no --progress: no bars, and a line as each step
    ends that took the threshold or more (every step, with the threshold at 0); --no-progress: none."""
    from graph500 import harness

    monkeypatch.setattr(harness, "PHASE_LINE_SECONDS", 0.0)
    assert cli.main(["run", "--scale", "8", "--roots", "2", "--energy", "off"]) == 0
    lines = [line for line in capsys.readouterr().err.splitlines() if line.startswith("graph500 progress: ")]
    steps = [line[len("graph500 progress: "):line.index(" done in ")] for line in lines]
    assert steps == ["warm-up (compiles on a first run)", "generate", "construct", "validation set-up", "bfs",
                     "sssp"]
    assert all(re.fullmatch(r"graph500 progress: .+ done in \d+\.\d s", line) for line in lines)
    assert cli.main(["run", "--scale", "8", "--roots", "2", "--energy", "off", "--no-progress"]) == 0
    assert "graph500 progress:" not in capsys.readouterr().err
    monkeypatch.setattr(harness, "PHASE_LINE_SECONDS", 1e9)  # the default's steps at SCALE 8 are short: none said
    assert cli.main(["run", "--scale", "8", "--roots", "2", "--energy", "off"]) == 0
    assert "graph500 progress:" not in capsys.readouterr().err
