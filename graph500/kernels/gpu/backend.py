"""The GPU backend: how the harness generates, builds, times and sizes a run on an NVIDIA GPU.

The same methods as the CPU backend (``graph500.kernels.cpu.backend``), on
CuPy arrays: the edge list, the graph, the search outputs and the
validator's arrays all stay in device memory; only the search keys' vertex
flags and the report come to the host.

- Generation: the reference-exact Kronecker generator in CUDA C++
  (``gpu/generator.py``), bit-identical to the CPU's, written straight into
  device memory; labels are int32 when ``N <= 2^31``.
- Construction: the sort-based device builder (``gpu/build.py``).
- Timing: CUDA events on the current stream, one recorded before the search's
  first launch and one after it returns (its last act is the copy of the final
  level's counters, after the parent array is complete), so a search's time
  runs from its launch until its parent array is complete in device memory.
  Copies for validation happen later and are not timed.
- Memory planning: ``memory_estimate_bytes`` bounds a run's device memory at
  its peak, which is while the validator prepares its copy of the edge list
  (edge list, graph and the validator's sort at once); ``check_memory``
  refuses a run that does not fit, naming needed and free memory.
"""

from graph500.errors import Graph500Error
from graph500.kernels.gpu import build as gpu_build, generator
from graph500.kernels.gpu.runtime import cupy
from graph500.kernels.graph import CSRGraph, neighbor_dtype
from graph500.validators import ValidationGraph

# Device bytes per edge tuple at the run's peak, by owner.
EDGE_LIST_BYTES = 4 + 4 + 4  # int32 labels, float32 weight
GRAPH_BYTES = 2 * (4 + 4)  # two directed entries: neighbour, weight
VALIDATION_SETUP_BYTES = 1 + 4 + 4 + 8 + 16  # mask, labels, sort order (int64), sort scratch
# Device bytes per vertex: offsets; BFS queues, prefix sums, parents, bitmaps; SSSP state, light_end,
# queues, stamps, outputs; validator offsets, counts, levels.
PER_VERTEX_BYTES = 8 + (8 + 8 + 4 + 1) + (8 + 8 + 12 + 8 + 8) + (8 + 8 + 16)


def memory_estimate_bytes(scale, edgefactor):
    """Peak device bytes of a run at this SCALE and edgefactor."""
    num_tuples = edgefactor << scale
    per_tuple = EDGE_LIST_BYTES + GRAPH_BYTES + VALIDATION_SETUP_BYTES
    return num_tuples * per_tuple + (PER_VERTEX_BYTES << scale)


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


class Backend:
    name = "gpu"
    xp = cupy

    def describe(self):
        """Facts for the report's extensions block."""
        device = cupy.cuda.Device()
        properties = cupy.cuda.runtime.getDeviceProperties(device.id)
        name = properties["name"].decode() if isinstance(properties["name"], bytes) else properties["name"]
        total = device.mem_info[1]
        return {
            "device": f"{name}, {total / 2**30:.0f} GiB, compute capability {device.compute_capability}, "
                      f"{properties['multiProcessorCount']} SMs",
            "cuda_runtime": cupy.cuda.runtime.runtimeGetVersion(),
            "cupy": cupy.__version__,
        }

    def energy_devices(self):
        """PCI bus ids of the GPUs whose energy this run draws: the current CUDA device."""
        return [cupy.cuda.Device().pci_bus_id]

    def check_memory(self, scale, edgefactor):
        needed = memory_estimate_bytes(scale, edgefactor)
        free = free_device_bytes()
        if needed > free:
            raise Graph500Error(
                f"SCALE {scale} with edgefactor {edgefactor} needs about {needed / 2**30:.1f} GiB "
                f"of device memory; {free / 2**30:.1f} GiB is free on the GPU"
            )

    def generate(self, scale, edgefactor, seed1, seed2, progress=None):
        """The reference's edge list ``(src, dst, weights)`` on the device; ``progress(n)`` is told of each chunk."""
        edges = generator.generate_edges(scale, edgefactor, seed1, seed2, progress=progress)
        cupy.cuda.get_current_stream().synchronize()  # generation is timed by the caller's clock
        return edges

    def generate_rmat(self, scale, edgefactor, probabilities, seed):
        from graph500.generators import rmat

        a, b, c, d = probabilities
        return self.edges_from_host(*rmat.generate_rmat(scale, edgefactor, a=a, b=b, c=c, d=d, seed=seed), 1 << scale)

    def edges_from_host(self, src, dst, weights, num_vertices):
        """Host edge arrays as `generate` returns them here: on the device, labels of the graph's label type."""
        label = neighbor_dtype(num_vertices)
        return cupy.asarray(src, dtype=label), cupy.asarray(dst, dtype=label), cupy.asarray(weights)

    def build(self, src, dst, num_vertices, weights):
        graph = gpu_build.build_csr(src, dst, num_vertices, weights)
        cupy.cuda.get_current_stream().synchronize()  # construction is timed by the caller's clock
        return graph

    def from_host_csr(self, graph):
        """A host `CSRGraph` as kernel 1 returns graphs here: on the device."""
        return CSRGraph(graph.num_vertices, *(cupy.asarray(array) for array in (graph.offsets, graph.neighbors,
                                                                                graph.weights)))

    def validation_graph(self, src, dst, num_vertices, weights):
        """The validators' `ValidationGraph` of the run's tuples."""
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
