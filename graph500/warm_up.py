"""The warm-up: compile everything a run calls before anything is timed.

Numba compiles a jitted function at its first call and, with ``cache=True``,
keeps the machine code on disk for later runs. A whole CPU run calls about
30 s worth of compilation on a 2-core machine the first time, and loads it
from the cache in under a second afterwards; the GPU backend's NVRTC kernels
are cached by CuPy the same way. The warm-up makes those first calls on small
inputs, in two independent groups:

* pipeline: the Kronecker generator and kernel 1 on a SCALE-6 graph, the
  search-key choice, and (when the run validates) the validator on a star
  graph, whose BFS and SSSP trees are known without searching;
* searches: the chosen BFS and SSSP kernels, built and run from the
  highest-degree vertex of a small skewed R-MAT graph made with NumPy by
  `simple_csr`. It needs neither the generator nor kernel 1, so it does not
  wait for the pipeline group.

On the CPU, with more than one core and Numba's JIT on, a spawned worker
process runs the pipeline group while this process runs the searches group,
so a cold cache fills about twice as fast. This process then runs the
pipeline group itself, which loads what the worker cached. Each group is
complete on its own: a worker that fails or cannot write the cache only
costs the time it would have saved.

Tunables: ``PIPELINE_SCALE`` and ``SEARCH_SCALE`` (large enough that the
direction-optimizing BFS goes bottom-up and delta-stepping fills several
buckets; small enough to take milliseconds).
"""

import multiprocessing
import os

import numpy as np

from graph500.generators import rmat
from graph500.generators.roots import search_keys
from graph500.kernels.graph import simple_csr
from graph500.validators import ValidationGraph, validate_bfs, validate_sssp

PIPELINE_SCALE = 6
SEARCH_SCALE = 12
STAR_LEAVES = 64


def warm_up(backend, make_bfs, make_sssp=None, validate=True):
    """Compile (or load from the caches) what a run on ``backend`` calls.

    ``make_bfs(graph)`` and ``make_sssp(graph)`` build the run's kernels with
    its options; ``make_sssp`` is None for a run without SSSP.
    """
    worker = _start_pipeline_worker(backend, validate)
    try:
        _searches_group(backend, make_bfs, make_sssp)
        if worker is not None:
            worker.join()
    finally:
        if worker is not None and worker.is_alive():
            worker.terminate()
    _pipeline_group(backend, validate)


def _start_pipeline_worker(backend, validate):
    """The spawned process running the pipeline group, or None where it would not help."""
    jit_on = os.environ.get("NUMBA_DISABLE_JIT", "0") in ("", "0")
    if backend.name != "cpu" or not jit_on or _usable_cores() < 2:
        return None
    worker = multiprocessing.get_context("spawn").Process(
        target=_pipeline_group, args=(backend, validate), name="graph500-warm-up", daemon=True)
    try:
        worker.start()
    except OSError:  # no new process allowed here (limits, sandbox): compile everything in this one
        return None
    return worker


def _usable_cores():
    if hasattr(os, "sched_getaffinity"):
        return len(os.sched_getaffinity(0))
    return os.cpu_count() or 1


def _pipeline_group(backend, validate):
    src, dst, weights = backend.generate(PIPELINE_SCALE, 4, 1, 1)
    num_vertices = 1 << PIPELINE_SCALE
    backend.build(src, dst, num_vertices, weights)
    search_keys(PIPELINE_SCALE, 1, 1, backend.incident_vertices(src, dst, num_vertices), 4)
    if validate:
        _validate_star(backend.xp)


def _validate_star(xp):
    """Validate the BFS and SSSP trees of a weighted star (centre 0, one isolated vertex)."""
    num_vertices = STAR_LEAVES + 2
    leaves = np.arange(1, STAR_LEAVES + 1, dtype=np.int64)
    weights = (leaves / (STAR_LEAVES + 1)).astype(np.float32)
    graph = ValidationGraph.from_edges(xp.asarray(np.zeros_like(leaves)), xp.asarray(leaves), num_vertices,
                                       xp.asarray(weights))
    parents = np.zeros(num_vertices, dtype=np.int64)
    parents[-1] = -1
    distances = np.concatenate([[0], weights, [np.inf]]).astype(np.float32)
    validate_bfs(graph, 0, xp.asarray(parents))
    validate_sssp(graph, 0, xp.asarray(parents), xp.asarray(distances))


def _searches_group(backend, make_bfs, make_sssp):
    src, dst, weights = rmat.generate_rmat(SEARCH_SCALE, 16, seed=1)
    host_graph = simple_csr(src, dst, 1 << SEARCH_SCALE, weights)
    graph = type(host_graph)(host_graph.num_vertices, *(backend.xp.asarray(array) for array in
                                                        (host_graph.offsets, host_graph.neighbors, host_graph.weights)))
    hub = int(np.argmax(np.diff(host_graph.offsets)))
    make_bfs(graph).search(hub)
    if make_sssp is not None:
        make_sssp(graph).search(hub)
