"""The warm-up compiles everything a CPU run calls, and its worker processes do their shares."""

import subprocess
import sys

import numpy as np
from support import needs_mpi, run_ranks

from graph500 import warm_up
from graph500.kernels import get
from graph500.kernels.cpu.backend import CPUBackend

# In a fresh interpreter: count the compiled signatures of every Numba function of the package after the
# warm-up and again after the run; print the functions that compiled something after the warm-up.
RUN_AFTER_WARM_UP = """
import io, sys
import numba.core.registry
from graph500 import harness, warm_up

def compiled():
    return {f"{module}.{name}": len(value.overloads) for module, loaded in list(sys.modules.items())
            if module.startswith("graph500") for name, value in vars(loaded).items()
            if isinstance(value, numba.core.registry.CPUDispatcher)}

counts = {}
def recording_warm_up(*args, **kwargs):
    warm_up.warm_up(*args, **kwargs)
    counts.update(compiled())

harness.warm_up = recording_warm_up
status = harness.run(harness.RunConfig(scale=11, num_roots=4, progress=False, energy="off"), stdout=io.StringIO())
late = sorted(name for name, count in compiled().items() if count > counts.get(name, 0))
print(status, " ".join(late))
"""


def test_a_run_compiles_nothing_after_the_warm_up():
    result = subprocess.run([sys.executable, "-c", RUN_AFTER_WARM_UP], capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == ["0"], f"compiled after the warm-up: {result.stdout}"


@needs_mpi
def test_a_run_of_two_ranks_compiles_nothing_after_the_warm_up(tmp_path):
    """The warm-up of a distributed run (the ranks' steps on one rank) compiles what the ranks' steps call."""
    script = tmp_path / "ranks.py"
    script.write_text(RUN_AFTER_WARM_UP.replace(
        "print(status", "sys.stdout = open(sys.argv[1] + str(harness.world().rank), 'w')\nprint(status"))
    result = run_ranks(2, script, tmp_path / "rank")
    assert result.returncode == 0, result.stderr
    for rank in range(2):
        said = (tmp_path / f"rank{rank}").read_text()
        assert said.split() == ["0"], f"rank {rank} compiled after the warm-up: {said}"


def cpu_parts(validate=True, sssp=True):
    return warm_up._parts(CPUBackend(), (get("bfs", "cpu"), {}), (get("sssp", "cpu"), {}) if sssp else None, validate)


def test_parts_cover_the_run():
    names = [function.__name__ for _, function, _ in cpu_parts()]
    assert names == ["_generate_part", "_build_part", "_search_part", "_search_part", "_validate_part"]
    assert len(cpu_parts(validate=False, sssp=False)) == 3


def test_schedule_gives_each_part_once_with_the_smallest_largest_share():
    parts = [(weight, str(index), ()) for index, weight in enumerate([7, 10, 7, 11, 8])]
    assert warm_up.schedule(parts, 1) == [parts]
    two = warm_up.schedule(parts, 2)
    assert sorted(part[1] for share in two for part in share) == ["0", "1", "2", "3", "4"]
    loads = [sum(part[0] for part in share) for share in two]
    assert loads == [22, 21]  # 7 + 7 + 8 here; 10 + 11 and a worker's start (1) in the worker
    assert [len(share) for share in warm_up.schedule(parts, 8)] == [1] * 5


def test_workers_run_their_shares_in_spawned_processes():
    shares = warm_up.schedule(cpu_parts(), 3)
    workers = [warm_up._start_worker(share) for share in shares[1:]]
    for worker in workers:
        worker.join(timeout=600)
    assert [worker.exitcode for worker in workers] == [0, 0]


def test_one_process_on_one_core_without_the_jit_or_on_the_gpu(monkeypatch):
    monkeypatch.setattr(warm_up, "_usable_cores", lambda: 1)
    assert warm_up._worker_processes(CPUBackend(), 5) == 1
    monkeypatch.setattr(warm_up, "_usable_cores", lambda: 8)
    assert warm_up._worker_processes(CPUBackend(), 5) == 5
    assert warm_up._worker_processes(type("GPU", (), {"name": "gpu"})(), 5) == 1
    monkeypatch.setenv("NUMBA_DISABLE_JIT", "1")
    assert warm_up._worker_processes(CPUBackend(), 5) == 1


def test_no_worker_where_no_process_can_start(monkeypatch):
    def refuse(self):
        raise OSError("Resource temporarily unavailable")

    monkeypatch.setattr(warm_up.multiprocessing.context.SpawnProcess, "start", refuse)
    assert warm_up._start_worker([]) is None


def test_searches_start_at_the_hub_of_a_weighted_graph():
    searched = []

    class Recorder:
        def __init__(self, graph, tag):
            self.graph, self.tag = graph, tag

        def search(self, root):
            searched.append((self.graph, root, self.tag))

    warm_up._search_part(CPUBackend(), Recorder, {"tag": "options reach the kernel"})
    [(graph, root, tag)] = searched
    degrees = np.diff(graph.offsets)
    assert root == int(np.argmax(degrees)) and degrees[root] > 0 and tag == "options reach the kernel"
    assert graph.weights is not None and graph.weights.dtype == np.float32


def test_progress_hears_of_every_part_once():
    calls = []
    warm_up.warm_up(CPUBackend(), (get("bfs", "cpu"), {}), (get("sssp", "cpu"), {}),
                    progress=lambda done, total: calls.append((done, total)))
    done = [done for done, _ in calls]
    assert done == sorted(done) and calls[-1] == (5, 5) and {total for _, total in calls} == {5}
