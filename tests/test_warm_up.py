"""The warm-up compiles everything a CPU run calls, and its worker process does its share."""

import subprocess
import sys

import numpy as np

from graph500 import warm_up
from graph500.kernels.cpu.backend import Backend

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


def test_the_pipeline_worker_runs_its_group_in_a_spawned_process():
    worker = warm_up._start_pipeline_worker(Backend(), validate=True)
    assert worker is not None, "a 2-core machine with the JIT on should use the worker"
    worker.join(timeout=600)
    assert worker.exitcode == 0


def test_no_worker_on_one_core_or_without_the_jit(monkeypatch):
    monkeypatch.setattr(warm_up, "_usable_cores", lambda: 1)
    assert warm_up._start_pipeline_worker(Backend(), validate=True) is None
    monkeypatch.setattr(warm_up, "_usable_cores", lambda: 8)
    monkeypatch.setenv("NUMBA_DISABLE_JIT", "1")
    assert warm_up._start_pipeline_worker(Backend(), validate=True) is None


def test_no_worker_where_no_process_can_start(monkeypatch):
    def refuse(self):
        raise OSError("Resource temporarily unavailable")

    monkeypatch.setattr(warm_up.multiprocessing.context.SpawnProcess, "start", refuse)
    monkeypatch.setattr(warm_up, "_usable_cores", lambda: 8)
    assert warm_up._start_pipeline_worker(Backend(), validate=True) is None


def test_searches_start_at_the_hub_of_a_weighted_graph():
    searched = []

    class Recorder:
        def __init__(self, graph):
            self.graph = graph

        def search(self, root):
            searched.append((self.graph, root))

    warm_up._searches_group(Backend(), Recorder, Recorder)
    (bfs_graph, bfs_root), (sssp_graph, sssp_root) = searched
    degrees = np.diff(bfs_graph.offsets)
    assert bfs_root == sssp_root == int(np.argmax(degrees)) and degrees[bfs_root] > 0
    assert sssp_graph.weights is not None and sssp_graph.weights.dtype == np.float32
