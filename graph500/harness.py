"""The run protocol of Graph500 v3 (spec section 8), shared by every backend and kernel.

0. Warm-up (`graph500.warm_up`): compile, or load from the caches, what the
   steps below call, on small graphs, before anything is timed.
1. Generate the edge list (timed: ``graph_generation``).
2. Choose the search keys exactly as the reference does (from the edge list,
   before kernel 1, which may give its memory back: several GPUs).
3. Build the graph (timed: ``construction_time``): kernel 1 plus each chosen
   kernel's own precomputation, which the spec charges to construction. One
   kernel lives at a time: the SSSP is set up (timed, added to
   ``construction_time``, reported as ``sssp_setup_time`` too) once the BFS
   pass is over and the BFS freed, so a run's peak memory is the graph and the
   larger kernel, not both. The validator is set up from the edge list after
   kernel 1, untimed; on a backend whose ``validator_first`` is true (the
   CPUs') before the BFS's set-up (timed apart, added to
   ``construction_time``), so that the edge list, freed then, never sits
   beside a kernel's arrays.
4. One untimed, validated search from the first root per kernel (it catches
   what the warm-up's small graphs did not reach, outside every timed search).
5. BFS pass, then SSSP pass: for each root, time the search alone, count nedge,
   validate (timed apart).
6. Statistics and the report: the official block on stdout, then the
   extensions block; a JSON record when asked.

A run of P ranks (``mpiexec -n P graph500 run``) is this same protocol: the
communicator (`graph500.comm.world`) has P ranks, the backend is a
`graph500.distributed.DistributedBackend` whose steps each rank does on its
share (its slice of the tuples, its block of vertices; with ``--backend
gpu``, `graph500.kernels.gpu.distributed_backend`, one GPU a rank), the kernels are the
registry's distributed ones, every timed step runs from a barrier to the
slowest rank's end, and rank 0 alone writes the report, progress bars and
record. One process is the case P = 1, with the one-process backend and
kernels. Errors found before the ranks start working together (parameters,
partition, memory) are found by every rank alike: each exits with the
message printed once; an error on one rank after that aborts every rank
(MPI_Abort) with one line naming the rank.

The harness talks to kernels only through the registry interface
(``kernel.search(root)``), to the validators only through
``ValidationGraph`` / ``validate_bfs`` / ``validate_sssp``, and writes nothing
but the report to stdout (progress bars go to stderr).
"""

import dataclasses
import functools
import gc
import inspect
import os
import resource
import sys
import time

from tqdm import tqdm

from graph500 import energy, kernels, run_report
from graph500.comm import slowest, world
from graph500.errors import INTERRUPTED_STATUS, Graph500Error, ValidationError, is_interrupt
from graph500.generators import kronecker, roots as roots_module
from graph500.kernels.backend import step_field
from graph500.validators import validate_bfs, validate_sssp
from graph500.warm_up import warm_up


@dataclasses.dataclass
class RunConfig:
    """Everything that defines a run; the CLI fills it from its arguments."""

    scale: int = 16
    edgefactor: int = 16
    seed1: int = 2
    seed2: int = 3
    backend: str = "cpu"
    bfs: str = None
    sssp: str = None
    run_sssp: bool = True
    num_roots: int = 64
    validate: bool = True
    json_path: str = None
    generator: str = "kronecker"
    rmat_probabilities: tuple = (0.57, 0.19, 0.19, 0.05)
    progress: bool = None  # None: only when stderr is a terminal
    energy: str = "auto"
    energy_loop: float = 10.0
    trace: bool = False
    numa_domains: int = None
    memory_check: bool = True  # False: a run the memory plan refuses goes on, with a warning


PHASE_LINE_SECONDS = 10.0  # where stderr is no terminal, a step that took this long says so as it ends


def _progress(config, **kwargs):
    """A progress bar on stderr for a long step (``--progress``; by default where stderr is a terminal); where
    it is not (a batch job's log) by default, a line as the step ends if it took `PHASE_LINE_SECONDS` or more."""
    if config.progress is None and not sys.stderr.isatty():
        return _StepLine(kwargs["desc"])
    return tqdm(file=sys.stderr, disable=config.progress is False, leave=False, **kwargs)


class _StepLine:
    """A progress bar's interface (``n``, ``total``, `update`) that prints one line to stderr when a step that
    ends normally took `PHASE_LINE_SECONDS` or more: where a long run stands, in a log that holds no bars."""

    def __init__(self, desc):
        self.desc, self.n, self.total = desc, 0, None

    def update(self, count=1):
        self.n += count

    def __enter__(self):
        self._start = time.perf_counter()
        return self

    def __exit__(self, kind, value, traceback):
        seconds = time.perf_counter() - self._start
        if kind is None and seconds >= PHASE_LINE_SECONDS:
            print(f"graph500 progress: {self.desc} done in {seconds:.1f} s", file=sys.stderr, flush=True)
        return False


def check_config(config):
    """Raise Graph500Error with a one-line reason for parameters out of range."""
    try:
        kronecker.check_parameters(config.scale, config.edgefactor, config.seed1, config.seed2)
    except ValueError as error:
        raise Graph500Error(str(error)) from None
    if config.num_roots < 1:
        raise Graph500Error(f"--roots must be at least 1, got {config.num_roots}")
    if config.numa_domains is not None and config.numa_domains < 1:
        raise Graph500Error(f"--numa-domains must be at least 1, got {config.numa_domains}")


def gpu_unavailable_reason():
    """None when the GPU backend can run here, else a one-line reason."""
    try:
        from graph500.kernels.gpu.backend import gpu_unavailable_reason as backend_reason
    except ImportError as error:
        return f"the GPU backend cannot load ({error})"
    return backend_reason()


def load_backend(name, comm=None):
    """The backend object for ``cpu``, ``gpu`` or ``auto`` (the GPU when CuPy sees one).

    With a communicator of several ranks: the distributed backend, on the CPUs (``cpu`` and ``auto``) or one
    GPU per rank (``gpu``).
    """
    several_ranks = comm is not None and comm.size > 1
    on_gpu = False
    if name == "gpu" or (name == "auto" and not several_ranks):
        reason = gpu_unavailable_reason()
        if reason is not None and name == "gpu":
            raise Graph500Error(f"--backend gpu: {reason}")
        on_gpu = reason is None
    if several_ranks:
        from graph500.distributed import DistributedBackend, set_threads_per_rank

        set_threads_per_rank(comm)
        if on_gpu:
            from graph500.kernels.gpu.distributed_backend import DistributedGPUBackend

            return DistributedGPUBackend(comm)
        return DistributedBackend(comm)
    if on_gpu:
        from graph500.kernels.gpu.backend import GPUBackend

        return GPUBackend()
    from graph500.kernels.cpu.backend import CPUBackend

    return CPUBackend()


def kernel_options(config, kernel_class):
    """Constructor options the run's flags ask of a kernel: ``trace`` and ``numa_domains`` where it takes them."""
    accepted = inspect.signature(kernel_class.__init__).parameters
    options = {}
    if config.numa_domains is not None and kernel_class.kind == "bfs":
        if "numa_domains" not in accepted:
            raise Graph500Error(f"--numa-domains does not apply to the {kernel_class.kind} kernel {kernel_class.name}")
        options["numa_domains"] = config.numa_domains
    if config.trace and "trace" in accepted:
        options["trace"] = True
    return options


def trace_levels(kernel):
    """The kernel's per-level trace of its last search, in the record's keys, or None."""
    levels = getattr(kernel, "trace", None)
    if levels is None:
        return None
    return [{"direction": level["direction"], "frontier": int(level["frontier"]),
             "edges": int(level.get("edges_examined", level.get("scanned_edges", 0))), "seconds": float(level["seconds"])}
            for level in levels]


def _print_trace(log, kind, root, levels):
    for depth, level in enumerate(levels):
        print(f"trace {kind} root {root} level {depth}: {level['direction']:<9} frontier {level['frontier']:>10} "
              f"edges {level['edges']:>12} {level['seconds'] * 1e3:9.3f} ms", file=log)


def peak_resident_bytes():
    """This process's peak resident memory so far (``ru_maxrss``: KiB on Linux, bytes on macOS)."""
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return peak if sys.platform == "darwin" else peak * 1024


class ResidentSteps:
    """This process's peak resident memory by step of a run (`step`), as the memory plan's phases count it: Linux's
    high-water mark (``VmHWM``) read as a step ends, then reset to the resident size of the moment for the next
    (writing 5 to ``/proc/self/clear_refs``). The reset also resets ``ru_maxrss``, so the run's peak (`peak`) is the
    most of every reading. Where the system has no such reset, no step is measured and the peak is ``ru_maxrss``."""

    def __init__(self, status="/proc/self/status", clear_refs="/proc/self/clear_refs"):
        self._status, self._clear_refs = status, clear_refs
        self.step_peaks = {}
        self._step = None
        self._peak = 0  # the most of every reading so far
        self.measured = self._read_and_reset() is not None

    def step(self, name):
        """Step ``name`` begins: the one before ends (its peak kept; a step named again keeps its most)."""
        if not self.measured:
            return
        peak = self._read_and_reset()
        if self._step is not None:
            self.step_peaks[self._step] = max(self.step_peaks.get(self._step, 0), peak)
        self._step = name

    def finish(self):
        """The last step ends. The steps' peaks, ``{name: bytes}`` (empty where not measured)."""
        self.step(None)
        return self.step_peaks

    def peak(self):
        """The run's peak resident bytes."""
        return max(self._peak, peak_resident_bytes())

    def _read_and_reset(self):
        """The high-water mark since the last reset (bytes), then reset; None where either cannot be done."""
        try:
            with open(self._status) as status:
                kib = next(int(line.split()[1]) for line in status if line.startswith("VmHWM:"))
            with open(self._clear_refs, "w") as clear_refs:
                clear_refs.write("5")
        except (OSError, StopIteration, ValueError, IndexError):
            return None
        self._peak = max(self._peak, kib * 1024)
        return kib * 1024


def _kernel_class(kind, backend, name):
    try:
        return kernels.get(kind, backend.name, name, distributed=getattr(backend, "distributed", False))
    except KeyError as error:
        raise Graph500Error(error.args[0]) from None


def search_all(backend, kernel, root_list):
    """The searches of a pass and nothing else: what the energy loop repeats."""
    for root in root_list:
        backend.timed(kernel.search, int(root))


def validate_output(kind, validation_graph, root, output):
    """Validate a search's output (parents, or (parents, distances)); return nedge."""
    if kind == "bfs":
        return validate_bfs(validation_graph, root, output)
    return validate_sssp(validation_graph, root, *output)


def run_pass(config, backend, kind, kernel, root_list, validation_graph, log=sys.stderr):
    """One pass over all roots: timed searches, nedge, timed validation. Raises ValidationError.

    ``log``: where traces go (stderr; nowhere on the ranks that do not report)."""
    times, nedges, validate_times, traces = [], [], [], []
    with _progress(config, total=len(root_list), desc=kind, unit="search") as bar:
        for root in root_list:
            root = int(root)
            output, seconds = backend.timed(kernel.search, root)
            times.append(seconds)
            levels = trace_levels(kernel) if config.trace else None
            if levels is not None:
                traces.append(levels)
                _print_trace(log, kind, root, levels)
            if config.validate:
                start = time.perf_counter()
                nedge = validate_output(kind, validation_graph, root, output)
                validate_times.append(time.perf_counter() - start)
            else:
                parents = output if kind == "bfs" else output[0]
                nedge = validation_graph.count_reached_tuples(parents >= 0)
            nedges.append(nedge)
            bar.update(1)
    return run_report.PassResult(times, nedges, validate_times if config.validate else None, traces or None)


def _choose_roots(config, backend, src, dst):
    has_edge = backend.incident_vertices(src, dst, 1 << config.scale)
    root_list, complete = roots_module.search_keys(config.scale, config.seed1, config.seed2, has_edge, config.num_roots)
    if not complete:
        usable = int(has_edge.sum())
        raise Graph500Error(
            f"the SCALE {config.scale} graph has {usable} vertices with edges, too few for "
            f"{config.num_roots} distinct search keys; use --roots {max(1, usable // 2)} or a larger SCALE"
        )
    return root_list


def _generator_description(config):
    if config.generator == "kronecker":
        return "kronecker (reference)"
    a, b, c, d = config.rmat_probabilities
    return f"rmat a={a:g} b={b:g} c={c:g} d={d:g} (NOT the Graph500 generator: results are not official)"


class _Discard:
    """Where the report and messages go on every rank but rank 0."""

    def write(self, text):
        return len(text)


def _warm_up(config, backend, comm, bfs_class, sssp_class):
    """The warm-up: rank 0 first (its worker processes fill the caches), then the other ranks load them."""
    if comm.size > 1:
        backend = backend.one_rank()  # the ranks' steps on one rank: no collective
    kernels_used = ((bfs_class, kernel_options(config, bfs_class)),
                    (sssp_class, kernel_options(config, sssp_class)) if sssp_class else None)
    with _progress(config, desc="warm-up (compiles on a first run)", unit="part") as bar:
        def advance(done, total):
            bar.total = total
            bar.update(done - bar.n)

        if comm.rank == 0:
            warm_up(backend, *kernels_used, validate=config.validate, progress=advance)
        comm.barrier(sleep=True)  # the others leave rank 0's worker processes the cores
        if comm.rank != 0:
            warm_up(backend, *kernels_used, validate=config.validate, workers=False)


def run(config, stdout=None, comm=None):
    """Run the whole protocol; print the report to ``stdout``. Returns the exit status (0 valid, 1 invalid).

    ``comm``: the run's communicator (default: `graph500.comm.world`, P = 1
    without an MPI launcher). Every rank calls `run`; rank 0 writes the report.
    """
    comm = comm or world()
    stdout, log = stdout or sys.stdout, sys.stderr
    if comm.rank != 0:  # rank 0 alone reports: progress, traces, messages, the record
        config = dataclasses.replace(config, progress=False, json_path=None)
        stdout = log = _Discard()
    try:
        backend, bfs_class, sssp_class, energy_run = _preflight(config, comm)
    except Graph500Error as error:
        if comm.rank == 0:
            raise
        return error.exit_code  # every rank found it alike; rank 0 says it
    if comm.size == 1:
        return _run_checked(config, stdout, log, comm, backend, bfs_class, sssp_class, energy_run)
    try:
        return _run_checked(config, stdout, log, comm, backend, bfs_class, sssp_class, energy_run)
    except BaseException as error:  # noqa: BLE001 (every rank must stop, whatever stopped this one)
        if is_interrupt(error):  # the launcher signals every rank: rank 0 says it once
            message, status = "graph500: interrupted" if comm.rank == 0 else "", INTERRUPTED_STATUS
        else:
            message = f"graph500: rank {comm.rank} of {comm.size}: {str(error) or type(error).__name__}"
            status = getattr(error, "exit_code", 1)
        comm.abort(message, status)
        return status  # MPI_Abort returned (a second signal during it)


def _preflight(config, comm):
    """``(backend, bfs class, sssp class or None, energy run)`` once the parameters, the record's path, the
    partition, the memory and the energy meters are known good.

    Every check here gives every rank the same answer (the record's path:
    rank 0's; memory and meters: after one exchange of the ranks' findings).
    """
    check_config(config)
    # rank 0 alone writes the record: its answer is every rank's
    unwritable = comm.allgather_object(run_report.unwritable_reason(config.json_path) if config.json_path else None)[0]
    if unwritable:
        raise Graph500Error(f"--json: {unwritable}")
    backend = load_backend(config.backend, comm)
    bfs_class = _kernel_class("bfs", backend, config.bfs)
    sssp_class = _kernel_class("sssp", backend, config.sssp) if config.run_sssp else None
    for kernel_class in (bfs_class, sssp_class):
        if kernel_class:
            kernel_options(config, kernel_class)  # flags a kernel does not take are refused here
    if comm.size > 1:
        backend.blocks(1 << config.scale)  # an impossible partition is refused here
        if config.generator == "rmat":
            raise Graph500Error("--generator rmat runs in one process only")
    try:
        backend.check_memory(config.scale, config.edgefactor)
    except Graph500Error as refusal:
        if config.memory_check:
            raise Graph500Error(f"{refusal}; --ignore-memory-plan runs it anyway") from None
        if comm.rank == 0:
            print(f"graph500: warning: {refusal} (the plan is a bound; going on: --ignore-memory-plan)",
                  file=sys.stderr)
    energy_run = energy.EnergyRun(config.energy, config.energy_loop, gpus=backend.energy_devices(), comm=comm)
    return backend, bfs_class, sssp_class, energy_run


def _run_checked(config, stdout, log, comm, backend, bfs_class, sssp_class, energy_run):
    """The protocol once the run's parameters, partition, memory and energy meters are known to be good."""
    num_vertices = 1 << config.scale
    resident = ResidentSteps()

    def step(name):  # memory measured by step: this process's resident, and the backend's own (a GPU's arrays)
        resident.step(name)
        backend.memory_step(name)

    energy_run.measure_idle()
    _warm_up(config, backend, comm, bfs_class, sssp_class)
    step("generation")

    with _progress(config, total=config.edgefactor << config.scale, desc="generate", unit="edge", unit_scale=True) as bar:
        if config.generator == "rmat":
            (src, dst, weights), graph_generation = slowest(comm, lambda: backend.generate_rmat(
                config.scale, config.edgefactor, config.rmat_probabilities, config.seed1))
        else:
            (src, dst, weights), graph_generation = slowest(comm, lambda: backend.generate(
                config.scale, config.edgefactor, config.seed1, config.seed2, bar.update))

    def make_kernel(kernel_class, graph):
        return kernel_class(graph, **kernel_options(config, kernel_class), **backend.kernel_options(kernel_class))

    def construct():
        step("kernel 1")
        graph = backend.build(src, dst, num_vertices, weights if sssp_class else None)
        if backend.validator_first:
            return graph, None
        step("bfs set-up")
        return graph, make_kernel(bfs_class, graph)

    root_list = _choose_roots(config, backend, src, dst)  # before kernel 1, which may give the edge list back
    with _progress(config, total=1, desc="construct") as bar:
        (graph, kernel), construction_time = slowest(comm, construct)
        bar.update(1)

    with _progress(config, total=1, desc="validation set-up") as bar:  # long where the edge list is made again
        step("validation set-up")
        validation_graph, validation_setup = slowest(comm, lambda: backend.validation_graph(
            src, dst, num_vertices, weights if sssp_class else None))
        bar.update(1)
    del src, dst, weights

    results, sssp_setup_time = {}, None
    kinds = [("bfs", bfs_class)] + ([("sssp", sssp_class)] if sssp_class else [])
    for kind, kernel_class in kinds:
        try:
            if kernel is None:  # one kernel at a time, each set up (timed, charged to construction) in its turn
                gc.collect()  # the BFS and all it held are freed
                step(f"{kind} set-up")
                kernel, setup_time = slowest(comm, functools.partial(make_kernel, kernel_class, graph))
                construction_time += setup_time
                if kind == "sssp":
                    sssp_setup_time = setup_time
                if kind == kinds[-1][0]:
                    graph = None  # the kernel holds what it searches
            step(f"{kind} pass")  # its searches and validations
            root = int(root_list[0])
            warm_up_output = kernel.search(root)  # untimed
            if config.validate:
                validate_output(kind, validation_graph, root, warm_up_output)
            del warm_up_output  # device memory: a pass holds one search's output at a time
            energy_run.measure_pass(kind, lambda: search_all(backend, kernel, root_list))
            results[kind] = run_pass(config, backend, kind, kernel, root_list, validation_graph, log)
            if hasattr(kernel, "release"):  # collective resources (shared memory windows), given back on every rank
                kernel.release()
            kernel = None
        except ValidationError as error:  # raised by every rank alike
            print(f"graph500: {error}", file=log)
            stdout.write(run_report.INVALID_RUN_LINE + "\n")
            return 1

    extensions = {
        "backend": backend.name,
        **backend.describe(),
        "bfs_kernel": bfs_class.name,
        "sssp_kernel": sssp_class.name if sssp_class else "none",
        "generator": _generator_description(config),
        "validation": "passed" if config.validate else "skipped (results are not official)",
        "validation_setup_time": validation_setup,
        **({"sssp_setup_time": sssp_setup_time} if sssp_setup_time is not None else {}),  # in construction_time
        **{step_field("host_memory_bytes_", name): comm.allreduce(peak, "max")  # the largest rank's, by step
           for name, peak in resident.finish().items()},
        "host_memory_peak_bytes": comm.allreduce(resident.peak(), "max"),  # the largest rank's
    }
    stdout.write(run_report.official_block(
        scale=config.scale, edgefactor=config.edgefactor, nbfs=len(root_list),
        graph_generation=graph_generation, num_mpi_processes=comm.size, construction_time=construction_time,
        bfs=results["bfs"], sssp=results.get("sssp"),
    ))
    energy_record = energy_run.record(results)
    stdout.write(run_report.energy_block(energy_record))
    stdout.write(run_report.extensions_block(extensions))
    if config.json_path:
        record = run_report.run_record(
            config=dataclasses.asdict(config), roots=[int(r) for r in root_list], seeds=[config.seed1, config.seed2],
            graph_generation=graph_generation, construction_time=construction_time,
            bfs=results["bfs"], sssp=results.get("sssp"), extensions=extensions, energy=energy_record,
            num_mpi_processes=comm.size,
        )
        try:
            run_report.write_json_atomic(config.json_path, record)
        except OSError as error:  # the path was writable at the start (`_preflight`)
            raise Graph500Error(f"cannot write {os.path.abspath(config.json_path)}: {error.strerror or error}") \
                from None
        print(f"graph500: wrote {os.path.abspath(config.json_path)}", file=sys.stderr)
    return 0
