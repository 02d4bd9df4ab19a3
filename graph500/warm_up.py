"""The warm-up: compile everything a run calls before anything is timed.

Numba compiles a jitted function at its first call and, with ``cache=True``,
keeps the machine code on disk for later runs. A whole CPU run calls about
40 s worth of compilation on the 2-core development machine the first time,
and loads it from the cache in about a second afterwards; the GPU backend's
NVRTC kernels are cached by CuPy the same way. The warm-up makes those first
calls on small inputs, in independent parts (in brackets their compile
seconds measured there, which the schedule uses as weights):

* ``generate``: the Kronecker generator on a SCALE-6 graph and the search-key
  choice (7 s);
* ``build``: kernel 1 on a small R-MAT edge list made with NumPy, handed
  over as the backend's generator would hand it (``backend.edges_from_host``:
  on the GPU, labels of the generator's type) (10 s);
* ``validate``: the validator on a star graph with one leaf's own leaf (so
  that the levels' pointer jumping takes a round), whose BFS and SSSP trees
  are known without searching (8 s);
* ``bfs`` and ``sssp``: the chosen kernel, built and run from the
  highest-degree vertex of a small skewed R-MAT graph made with NumPy by
  `simple_csr` and handed over as the backend's kernel 1 would hand it
  (``backend.from_host_csr``) (7 s and 11 s).

No part needs another's compiled code, so on the CPU, with several cores and
Numba's JIT on, they are spread over this process and up to four spawned
workers (the split with the smallest largest share), and a cold cache fills
in the time of that share: measured 23.5 s instead of 26.5 s with the two
halves of an earlier split on 2 cores, 13.7 s on 16 cores. This process then
runs the workers' parts itself, loading what they cached (the whole warm-up
takes about 2 s with a warm cache on 2 cores). Each part is complete on its own: a
worker that fails or cannot write the cache only costs the time it would
have saved.

Tunables: ``SEARCH_SCALE`` (large enough that the direction-optimizing BFS
goes bottom-up and delta-stepping fills several buckets; small enough to take
milliseconds), ``BUILD_SCALE`` and ``STAR_LEAVES`` (large enough that CuPy
takes the kernels it uses for large arrays: on an H100 with a cold cache, a
SCALE 12 warm-up build left two SCALE-dependent compilations, 1.8 s each, to
the timed construction), ``GENERATE_SCALE``.
"""

import itertools
import multiprocessing
import os

import numpy as np

from graph500.generators import rmat
from graph500.generators.roots import search_keys
from graph500.kernels.graph import simple_csr
from graph500.validators import validate_bfs, validate_sssp

GENERATE_SCALE = 6
BUILD_SCALE = 16
SEARCH_SCALE = 12
STAR_LEAVES = 1 << 16
WORKER_START = 1  # seconds a spawned worker takes to start and import


def warm_up(backend, bfs_kernel, sssp_kernel=None, validate=True, progress=None, workers=True):
    """Compile (or load from the caches) what a run on ``backend`` calls.

    ``bfs_kernel`` and ``sssp_kernel``: the run's ``(kernel class, options)``;
    ``sssp_kernel`` is None for a run without SSSP. ``progress(done, total)``,
    if given, hears of each part done here or in a worker. ``workers=False``:
    every part in this process (where another process filled the caches).
    """
    parts = _parts(backend, bfs_kernel, sssp_kernel, validate)
    shares = schedule(parts, _worker_processes(backend, len(parts)) if workers else 1)
    started = [(share, _start_worker(share)) for share in shares[1:] if share]
    workers = [(share, worker) for share, worker in started if worker is not None]
    here = shares[0] + [part for share, worker in started if worker is None for part in share]
    done = 0

    def tell(count):
        nonlocal done
        done += count
        if progress:
            progress(done, len(parts))

    try:
        for part in here:
            _run_parts([part])
            tell(1)
        for share, worker in workers:
            worker.join()
            tell(len(share))
    finally:
        for _, worker in workers:
            if worker.is_alive():
                worker.terminate()
    _run_parts([part for share, _ in workers for part in share])  # load here what the workers compiled


def _parts(backend, bfs_kernel, sssp_kernel, validate):
    """``(weight, function, arguments)`` of each part; weights are compile seconds measured on 2 cores."""
    parts = [(7, _generate_part, (backend,)), (10, _build_part, (backend,)), (7, _search_part, (backend, *bfs_kernel))]
    if sssp_kernel is not None:
        parts.append((11, _search_part, (backend, *sssp_kernel)))
    if validate:
        parts.append((8, _validate_part, (backend,)))
    return parts


def schedule(parts, processes):
    """``processes`` lists of parts, the first for this process, with the smallest largest load; a worker's
    load counts ``WORKER_START`` more (spawning and imports). Exhaustive: there are at most 5^5 ways."""
    processes = max(1, min(processes, len(parts)))

    def largest_load(assignment):
        loads = [WORKER_START if process else 0 for process in range(processes)]
        for part, process in zip(parts, assignment):
            loads[process] += part[0]
        return max(loads)

    best = min(itertools.product(range(processes), repeat=len(parts)), key=largest_load)
    return [[part for part, process in zip(parts, best) if process == share] for share in range(processes)]


def _worker_processes(backend, num_parts):
    """How many processes share the parts: 1 (this one alone) where workers would not help."""
    jit_on = os.environ.get("NUMBA_DISABLE_JIT", "0") in ("", "0")
    if backend.name != "cpu" or not jit_on:
        return 1
    return max(1, min(_usable_cores(), num_parts))


def _usable_cores():
    if hasattr(os, "sched_getaffinity"):
        return len(os.sched_getaffinity(0))
    return os.cpu_count() or 1


def _start_worker(share):
    """A spawned process running ``share``, or None where none may start (then this process compiles it)."""
    worker = multiprocessing.get_context("spawn").Process(target=_run_parts, args=(share,), name="graph500-warm-up",
                                                          daemon=True)
    try:
        worker.start()
    except OSError:  # no new process allowed here (limits, sandbox)
        return None
    return worker


def _run_parts(parts):
    for _, function, arguments in parts:
        function(*arguments)


def _generate_part(backend):
    src, dst, _ = backend.generate(GENERATE_SCALE, 4, 1, 1)
    has_edge = backend.incident_vertices(src, dst, 1 << GENERATE_SCALE)
    search_keys(GENERATE_SCALE, 1, 1, has_edge, 4)


def _build_part(backend):
    num_vertices = 1 << BUILD_SCALE
    edges = backend.edges_from_host(*rmat.generate_rmat(BUILD_SCALE, 16, seed=1), num_vertices)
    backend.build(edges[0], edges[1], num_vertices, edges[2])


def _validate_part(backend):
    """Validate the BFS and SSSP trees of a weighted star (centre 0) with one leaf's own leaf (a tree of depth
    2: the levels' pointer jumping takes a round) and one isolated vertex."""
    xp = backend.xp
    num_vertices = STAR_LEAVES + 3
    leaves = np.arange(1, STAR_LEAVES + 1, dtype=np.int64)
    grandchild = STAR_LEAVES + 1  # hangs off leaf 1
    weights = (leaves / (STAR_LEAVES + 1)).astype(np.float32)
    src = np.append(np.zeros_like(leaves), 1)
    dst = np.append(leaves, grandchild)
    src, dst, edge_weights = backend.edges_from_host(src, dst, np.append(weights, np.float32(0.5)), num_vertices)
    graph = backend.validation_graph(src, dst, num_vertices, edge_weights)
    parents = np.zeros(num_vertices, dtype=np.int64)
    parents[grandchild] = 1
    parents[-1] = -1
    distances = np.concatenate([[0], weights, [weights[0] + np.float32(0.5)], [np.inf]]).astype(np.float32)
    for dtype in (np.int32, np.int64):  # the BFS kernels' parents are int32 below 2^31 vertices, the SSSP's int64
        validate_bfs(graph, 0, xp.asarray(parents.astype(dtype)))
    validate_sssp(graph, 0, xp.asarray(parents), xp.asarray(distances))


def _search_part(backend, kernel_class, options):
    """Build ``kernel_class(graph, **options)`` on the skewed graph and search from its hub."""
    src, dst, weights = rmat.generate_rmat(SEARCH_SCALE, 16, seed=1)
    host_graph = simple_csr(src, dst, 1 << SEARCH_SCALE, weights)
    kernel = kernel_class(backend.from_host_csr(host_graph), **options)
    kernel.search(int(np.argmax(np.diff(host_graph.offsets))))
