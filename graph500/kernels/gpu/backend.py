"""The GPU backend: how the harness generates, builds, times and sizes a run on an NVIDIA GPU.

The same methods as the CPU backend (``graph500.kernels.cpu.backend``), on
CuPy arrays. The graph, the kernels' state, the search outputs and the
validator's per-vertex arrays live in device memory; the edge list lives in
pinned host memory mapped into the device's address space
(`runtime.host_mapped_empty`), where the kernels that read it (kernel 1, the
search keys' vertex flags, the validator's pass over the tuples) read it in
place over the bus, so a GPU holds the graph of the largest SCALE its memory
allows rather than the graph and the edge list at once.

- Generation: the reference-exact Kronecker generator in CUDA C++
  (``gpu/generator.py``), bit-identical to the CPU's, written by the kernel
  straight into the mapped host memory; labels are int32 when ``N <= 2^31``.
  ``graph_generation`` includes pinning that memory (0.35-0.4 s a GiB measured on an H200 host).
- Construction: the sort-based device builder (``gpu/build.py``), reading
  the tuples over the bus, vertices renumbered by decreasing degree (the
  kernels take roots and give their outputs under the input's labels).
- Timing: CUDA events on the current stream, one recorded before the search's
  first launch and one after it returns (its last act is the copy of the final
  level's counters, after the parent array is complete), so a search's time
  runs from its launch until its parent array is complete in device memory.
  Validation happens later and is not timed.
- Memory planning: `device_memory_plan` gives the device bytes of each
  phase (kernel 1 at work; the BFS pass and the SSSP pass, each with one
  kernel and the validator's arrays), `memory_estimate_bytes`
  their maximum plus the CUDA context; ``check_memory`` refuses a run that
  does not fit, naming needed and free memory per device and host and the
  largest SCALE that fits. The run's measured high-water mark (CuPy's pool
  at its fullest plus what the context and modules hold) goes in the
  report's extensions beside the estimate.
"""

import inspect

from graph500.errors import Graph500Error
from graph500.kernels.cpu.backend import available_memory_bytes
from graph500.kernels.gpu import build as gpu_build, generator, runtime
from graph500.kernels.gpu.runtime import cupy
from graph500.kernels.graph import CSRGraph, neighbor_dtype
from graph500.validators import ValidationGraph
from graph500.validators.common import TUPLE_CHUNK

# Host bytes per edge tuple: the edge list (int32 labels, float32 weight), pinned.
EDGE_LIST_BYTES = 4 + 4 + 4
# Device bytes per edge tuple of the graph: two directed entries, each a neighbour and a weight.
GRAPH_BYTES = 2 * (4 + 4)
OFFSET_BYTES = 8  # per vertex
# Device bytes per vertex of each kernel's state (gpu/bfs.py, gpu/sssp.py), its output included:
BFS_STATE_BYTES = 4 * 1 / 8 + 4 + 4 + 8 + 4 + 4 + 4  # four bitmaps, two queues, prefix sums, parents (the
# search's, under the graph's labels, and the output), strongest
SSSP_STATE_BYTES = 8 + 8 + 3 * 4 + 2 * 4 + 8 + 4 + 4  # light ends, state, queues, stamps, prefix sums, outputs
# Device bytes per vertex while a tree is validated: the tuples' first-endpoint counts, the kept output and
# the checks' arrays (pointer jumping: ancestors, depths and their gathers; levels, flags, confirmations; the
# passes' records of a parent and a level or distance).
VALIDATION_VERTEX_BYTES = 8 + 8 + 4 * 4 + 4 + 4 * 1 + 1 + 12 + 8
# Device bytes per tuple of a chunk of the validator's pass (`TUPLE_CHUNK` tuples): two staged copies of the
# labels and weight and, a few at a time, the array-generic pass's gathered levels or distances, parents and flags
# (the fused CUDA pass, the default, needs the copies alone).
VALIDATION_CHUNK_TUPLE_BYTES = 36 + 12
CONTEXT_BYTES = 640 << 20  # the CUDA context and the loaded modules: 0.51-0.55 GiB measured on an H100
# The share of the host's available memory a run may pin: pinned pages cannot be reclaimed, and the processes
# need the rest (two ranks pinning 240 GiB of 250.6 available were killed out of memory).
PINNABLE_SHARE = 0.9


def validator_tuple_bytes(num_tuples, tuple_bytes, on_device):
    """The validator's device bytes for its ``num_tuples`` tuples: its copy of them (``tuple_bytes`` each) where
    they are on the GPU, read in place; else its two staged chunks of them."""
    return num_tuples * tuple_bytes if on_device else min(num_tuples, TUPLE_CHUNK) * VALIDATION_CHUNK_TUPLE_BYTES


def device_memory_plan(scale, edgefactor, tuples_on_device=False):
    """Device bytes of a run's phases, CUDA context apart: ``{"construction", "bfs pass", "sssp pass"}``: kernel
    1 at work; then the graph, one kernel's state (the harness sets the SSSP up once the BFS is freed) and the
    validator's arrays and its chunks of the tuples, or with ``tuples_on_device`` its copy of the edge list, read
    in place."""
    num_vertices, num_tuples = 1 << scale, edgefactor << scale
    graph = num_tuples * GRAPH_BYTES + num_vertices * (OFFSET_BYTES + gpu_build.LABEL_TABLE_BYTES)
    validation = num_vertices * VALIDATION_VERTEX_BYTES + validator_tuple_bytes(num_tuples, EDGE_LIST_BYTES,
                                                                                tuples_on_device)
    return {
        "construction": gpu_build.build_memory_bytes(num_tuples, num_vertices, weighted=True, degree_ordered=True),
        "bfs pass": graph + int(num_vertices * BFS_STATE_BYTES) + validation,
        "sssp pass": graph + int(num_vertices * SSSP_STATE_BYTES) + validation,
    }


def memory_estimate_bytes(scale, edgefactor):
    """Peak device bytes of a run at this SCALE and edgefactor: its largest phase plus the CUDA context."""
    return max(device_memory_plan(scale, edgefactor).values()) + CONTEXT_BYTES


def validation_on_device_bytes(scale, edgefactor):
    """The device memory a GPU needs (context counted) for the validator to keep a copy of the edge list on it
    (`EDGE_LIST_BYTES` a tuple, in both passes, in place of its chunks): its passes then read the tuples at the
    device's speed, where from pinned host memory they cross the bus every tree."""
    return max(device_memory_plan(scale, edgefactor, tuples_on_device=True).values()) + CONTEXT_BYTES


def host_memory_bytes(scale, edgefactor):
    """Pinned host bytes of a run: the edge list."""
    return (edgefactor << scale) * EDGE_LIST_BYTES


def largest_fitting_scale(edgefactor, free_device, available_host):
    """The largest SCALE whose run fits this free device memory and available host memory (0: none)."""
    scale = 1
    while (memory_estimate_bytes(scale + 1, edgefactor) - CONTEXT_BYTES <= free_device
           and (available_host is None or host_memory_bytes(scale + 1, edgefactor) <= available_host)):
        scale += 1
    return scale if memory_estimate_bytes(scale, edgefactor) - CONTEXT_BYTES <= free_device else 0


def pinnable_host_bytes():
    """The host memory a run may pin (`PINNABLE_SHARE` of what the OS says is available), or None where the OS
    cannot tell."""
    available = available_memory_bytes()
    return None if available is None else int(available * PINNABLE_SHARE)


def free_device_bytes():
    """Free device memory plus what CuPy's memory pool holds unused."""
    free, _ = cupy.cuda.runtime.memGetInfo()
    return free + cupy.get_default_memory_pool().free_bytes()


def gpu_unavailable_reason():
    """None when CuPy imports and sees a CUDA device; otherwise a one-line reason."""
    if cupy is None:
        return "CuPy is not installed (pip install 'graph500[gpu]')"
    try:
        count = cupy.cuda.runtime.getDeviceCount()
    except Exception as error:  # CuPy raises several types when the driver or device is missing
        return f"CUDA is unavailable ({type(error).__name__}: {error})"
    return None if count else "CuPy sees no CUDA device"


class GPUBackend:
    name = "gpu"
    xp = cupy
    validator_first = False

    def __init__(self):
        self._high_water = runtime.PoolHighWater()
        self._estimate = None  # set by check_memory
        self._validation_on_device = False  # set by check_memory: where the plan leaves room for the tuples

    def describe(self):
        """Facts for the report's extensions block; after `check_memory`, the device memory estimated and the
        high-water mark measured since (CuPy's pool at its fullest plus what the pool does not hold now: the
        context, the modules, anything else on the GPU)."""
        device = cupy.cuda.Device()
        properties = cupy.cuda.runtime.getDeviceProperties(device.id)
        name = properties["name"].decode() if isinstance(properties["name"], bytes) else properties["name"]
        free, total = device.mem_info
        facts = {
            "device": f"{name}, {total / 2**30:.0f} GiB, compute capability {device.compute_capability}, "
                      f"{properties['multiProcessorCount']} SMs",
            "cuda_runtime": cupy.cuda.runtime.runtimeGetVersion(),
            "cupy": cupy.__version__,
        }
        if self._estimate is not None:
            outside_pool = total - free - self._high_water.pool.total_bytes()
            facts["device_memory_peak_bytes"] = self._high_water.peak_bytes + outside_pool
            facts["device_memory_pool_peak_bytes"] = self._high_water.peak_bytes
            facts["device_memory_estimate_bytes"] = self._estimate
            facts.update(self._high_water.step_fields())
            facts["validation_tuples"] = "device" if self._validation_on_device else "host"
        return facts

    def memory_step(self, name):
        """The run's step ``name`` begins: the bytes its arrays use at most are reported by step (`describe`)."""
        self._high_water.step(name)

    def energy_devices(self):
        """PCI bus ids of the GPUs whose energy this run draws: the current CUDA device."""
        return [cupy.cuda.Device().pci_bus_id]

    def check_memory(self, scale, edgefactor):
        """Refuse, before anything is generated, a run whose device or host memory would not suffice.

        The context already holds its memory when this runs, so the device
        need compared with free memory leaves the context out. Starts the
        high-water measurement reported by `describe`.
        """
        free = free_device_bytes()
        estimate = memory_estimate_bytes(scale, edgefactor)
        needed = estimate - CONTEXT_BYTES
        host_needed, host_available = host_memory_bytes(scale, edgefactor), pinnable_host_bytes()
        self._high_water.start()  # also where the run goes on refused (--ignore-memory-plan)
        with_tuples = validation_on_device_bytes(scale, edgefactor)
        self._validation_on_device = with_tuples - CONTEXT_BYTES <= free
        self._estimate = with_tuples if self._validation_on_device else estimate
        short = []
        if needed > free:
            short.append(f"about {needed / 2**30:.1f} GiB of device memory; {free / 2**30:.1f} GiB is free on the GPU")
        if host_available is not None and host_needed > host_available:
            short.append(f"{host_needed / 2**30:.1f} GiB of host memory for the edge list; "
                         f"{host_available / 2**30:.1f} GiB can be pinned ({PINNABLE_SHARE:.0%} of the available)")
        if short:
            largest = largest_fitting_scale(edgefactor, free, host_available)
            raise Graph500Error(
                f"SCALE {scale} with edgefactor {edgefactor} needs {' and '.join(short)} "
                f"(the largest SCALE that fits here is {largest})")

    def kernel_options(self, kernel_class):
        """Constructor options of a run: no ``row_copy`` for the BFS, whose rows no SSSP sorts while it lives
        (the harness sets the SSSP up once the BFS pass is over)."""
        accepted = inspect.signature(kernel_class.__init__).parameters
        return {"row_copy": False} if "row_copy" in accepted else {}

    def generate(self, scale, edgefactor, seed1, seed2, progress=None):
        """The reference's edge list ``(src, dst, weights)`` in mapped host memory; ``progress(n)`` is told of
        each chunk."""
        edges = generator.generate_edges(scale, edgefactor, seed1, seed2, progress=progress,
                                         empty=runtime.host_mapped_empty)
        cupy.cuda.get_current_stream().synchronize()  # generation is timed by the caller's clock
        return edges

    def generate_rmat(self, scale, edgefactor, probabilities, seed):
        from graph500.generators import rmat

        a, b, c, d = probabilities
        return self.edges_from_host(*rmat.generate_rmat(scale, edgefactor, a=a, b=b, c=c, d=d, seed=seed), 1 << scale)

    def edges_from_host(self, src, dst, weights, num_vertices):
        """Host edge arrays as `generate` returns them here: in mapped host memory, labels of the graph's type."""
        label = neighbor_dtype(num_vertices)
        return (runtime.host_mapped_copy(src.astype(label, copy=False)),
                runtime.host_mapped_copy(dst.astype(label, copy=False)),
                runtime.host_mapped_copy(weights.astype("float32", copy=False)))

    def build(self, src, dst, num_vertices, weights):
        graph = gpu_build.build_csr(src, dst, num_vertices, weights, degree_ordered=True)
        cupy.cuda.get_current_stream().synchronize()  # construction is timed by the caller's clock
        return graph

    def from_host_csr(self, graph):
        """A host `CSRGraph` as kernel 1 returns graphs here: on the device."""
        return CSRGraph(graph.num_vertices, *(cupy.asarray(array) for array in (graph.offsets, graph.neighbors,
                                                                                graph.weights)))

    def validation_graph(self, src, dst, num_vertices, weights):
        """The validators' `ValidationGraph` of the run's tuples: of a copy in device memory where `check_memory`
        found room for it (`validation_on_device_bytes`), else of the edge list in mapped host memory."""
        if self._validation_on_device:
            src, dst, weights = (None if array is None else array.copy() for array in (src, dst, weights))
        return ValidationGraph.from_edges(src, dst, num_vertices, weights)

    def incident_vertices(self, src, dst, num_vertices):
        """Host boolean array: vertices with an edge other than a self-loop."""
        return gpu_build.incident_vertices(src, dst, num_vertices)

    def timed(self, search, root):
        """``(output, seconds)`` of one search: CUDA events from its launch until its output is complete."""
        start, end = cupy.cuda.Event(), cupy.cuda.Event()
        start.record()
        output = search(root)
        end.record()
        end.synchronize()
        return output, cupy.cuda.get_elapsed_time(start, end) / 1e3
