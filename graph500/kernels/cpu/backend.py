"""The CPU backend: how the harness generates, builds, times and sizes a run on the host.

A backend is the small set of steps of the run protocol that depend on where
the run happens. The harness calls, in order: `check_memory`, `generate`,
`build` (kernel 1), `incident_vertices` (for the search keys),
`validation_graph` (the validators' view of the tuples), and
`timed(search, root)` for each search; the warm-up also uses
`edges_from_host` and `from_host_csr`, which hand small edge lists and
graphs made with NumPy to kernel 1 and the kernels as the generator and
kernel 1 would. The GPU backend
(``graph500.kernels.gpu.backend``) offers the same methods on CuPy arrays,
and ``graph500.distributed.DistributedBackend`` on the ranks of a run.
"""

import platform
import time

import numpy as np

from graph500.errors import Graph500Error
from graph500.generators import kronecker, rmat, roots
from graph500.kernels.cpu.build import build_memory_bytes
from graph500.kernels.cpu.reorder import Relabeled, degree_ordered_graph
from graph500.validators import ValidationGraph

GENERATION_CHUNKS = 32  # progress granularity of edge generation
RUNTIME_BYTES = 256 << 20  # Python, NumPy, Numba and its compiler, measured at about 250 MB


def available_memory_bytes():
    """Memory the OS says is available now (MemAvailable), or None where it cannot tell."""
    try:
        with open("/proc/meminfo") as meminfo:
            for line in meminfo:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return None


def cpu_model():
    """The processor's name as the OS gives it (Linux's /proc/cpuinfo), or "CPU" where it cannot tell."""
    try:
        with open("/proc/cpuinfo") as cpuinfo:
            for line in cpuinfo:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip() or "CPU"
    except OSError:
        pass
    return platform.processor() or "CPU"


def memory_estimate_bytes(scale, edgefactor):
    """Peak host bytes of a run: the largest of `memory_phases`."""
    return max(memory_phases(scale, edgefactor).values())


# Bytes a vertex of the kernels' arrays (labels, row bounds, bitmaps, parents, states, the light rows' share, the
# BFS's first neighbours' original labels; measured at SCALE 22) and of the validator's (its rows' offsets); bytes a
# tuple of the validator's grouped tuples (17.5 measured at SCALE 22 while it held the first endpoints too: second
# endpoints and weights by first endpoint, first endpoints by second).
KERNEL_VERTEX_BYTES = 68
VALIDATION_VERTEX_BYTES = 16
VALIDATION_TUPLE_BYTES = 14


def memory_phases(scale, edgefactor):
    """Host bytes of a run at its three peaks: ``construction`` (the edge list, the builder's typical
    scratch), ``validation set-up`` (the edge list, the graph and the validator's grouped tuples: the validator
    is set up before the kernels, `graph500.harness`), ``searches`` (the edge list freed, the kernels' arrays,
    the outputs); all with the runtime. Peak resident memory measured on 2 threads at SCALE 22: kernel 1 3.53
    GiB, the validation set-up 3.31 (this plan: 3.58 and 3.44; docs/measurements.md, session 33)."""
    num_vertices = 1 << scale
    num_tuples = edgefactor << scale
    edge_list = num_tuples * (8 + 8 + 4)
    graph = 2 * num_tuples * (4 + 4)  # both kernels share it
    kernels = num_vertices * KERNEL_VERTEX_BYTES
    validation = num_tuples * VALIDATION_TUPLE_BYTES + num_vertices * VALIDATION_VERTEX_BYTES
    outputs = num_vertices * (8 + 4 + 4)  # parents and distances of a search, and their validation levels
    return {"construction": RUNTIME_BYTES + edge_list + build_memory_bytes(num_tuples, num_vertices, True,
                                                                           bound=False),
            "validation set-up": RUNTIME_BYTES + edge_list + graph + validation,
            "searches": RUNTIME_BYTES + graph + kernels + validation + outputs}


def generate_range(scale, edgefactor, seed1, seed2, start, stop, progress=None, progress_weight=1,
                   label_dtype=np.int64):
    """Tuples ``[start, stop)`` of the reference's edge list as ``(src, dst, weights)`` (labels of
    ``label_dtype``: int32 holds those of a graph of up to 2^31 vertices), made in `GENERATION_CHUNKS` chunks;
    ``progress(n)`` is told of each chunk's tuples times ``progress_weight``."""
    src = np.empty(stop - start, dtype=label_dtype)
    dst = np.empty(stop - start, dtype=label_dtype)
    weights = np.empty(stop - start, dtype=np.float32)
    bounds = np.linspace(0, stop - start, GENERATION_CHUNKS + 1, dtype=np.int64)
    # the generator writes int64 labels (one compiled variant): narrower ones through a chunk of int64
    wide = np.dtype(label_dtype) == np.int64
    scratch_size = 0 if wide else int(np.diff(bounds).max(initial=0))
    scratch = [np.empty(scratch_size, dtype=np.int64) for _ in range(2)]
    for first, last in zip(bounds[:-1].tolist(), bounds[1:].tolist()):
        labels = (src[first:last], dst[first:last]) if wide else [array[:last - first] for array in scratch]
        kronecker.generate_edges(scale, edgefactor, seed1, seed2, start + first, start + last,
                                 out=(*labels, weights[first:last]))
        if not wide:
            src[first:last], dst[first:last] = labels
        if progress:
            progress((last - first) * progress_weight)
    return src, dst, weights


class CPUBackend:
    name = "cpu"
    xp = np
    validator_first = True

    def describe(self):
        """Facts for the report's extensions block."""
        import numba

        return {"device": f"{cpu_model()}, {numba.get_num_threads()} Numba threads"}

    def energy_devices(self):
        """PCI bus ids of the GPUs whose energy this run draws (None: every GPU NVML sees)."""
        return None

    def memory_step(self, name):
        """The run's step ``name`` begins (GPU backends measure their memory by step; a CPU run reports its
        resident peak only)."""

    def check_memory(self, scale, edgefactor):
        needed = memory_estimate_bytes(scale, edgefactor)
        available = available_memory_bytes()
        if available is not None and needed > available:
            from graph500.plan import fits_here, largest_scale  # the plan's model (plan imports this module)

            largest = largest_scale(edgefactor, 1, None, "cpu", available, None)
            raise Graph500Error(
                f"SCALE {scale} with edgefactor {edgefactor} needs about {needed / 2**30:.1f} GiB "
                f"of memory; {available / 2**30:.1f} GiB is available {fits_here(largest)}"
            )

    def kernel_options(self, kernel_class):
        """Constructor options the backend sets (none here; the GPU's memory plan sets some)."""
        return {}

    def generate(self, scale, edgefactor, seed1, seed2, progress=None):
        """The reference's edge list ``(src, dst, weights)``; ``progress(n)`` is told of each chunk."""
        return generate_range(scale, edgefactor, seed1, seed2, 0, edgefactor << scale, progress)

    def generate_rmat(self, scale, edgefactor, probabilities, seed):
        a, b, c, d = probabilities
        return rmat.generate_rmat(scale, edgefactor, a=a, b=b, c=c, d=d, seed=seed)

    def build(self, src, dst, num_vertices, weights):
        """Kernel 1: the CSR graph, its vertices renumbered by decreasing degree (the kernels map results back)."""
        return degree_ordered_graph(src, dst, num_vertices, weights)

    def edges_from_host(self, src, dst, weights, num_vertices):
        """Host edge arrays as `generate` returns them here (int64 labels, float32 weights)."""
        return src.astype(np.int64, copy=False), dst.astype(np.int64, copy=False), weights

    def from_host_csr(self, graph):
        """A `CSRGraph` as kernel 1 returns graphs here: renumbered (by the identity, so no copy is made)."""
        identity = np.arange(graph.num_vertices)
        return Relabeled(graph.offsets, graph.neighbors, graph.weights, identity, identity)

    def validation_graph(self, src, dst, num_vertices, weights):
        """The validators' `ValidationGraph` of the run's tuples."""
        return ValidationGraph.from_edges(src, dst, num_vertices, weights)

    def incident_vertices(self, src, dst, num_vertices):
        """Host boolean array: vertices with an edge other than a self-loop."""
        return roots.incident_vertices(src, dst, num_vertices)

    def timed(self, search, root):
        """``(output, seconds)`` of one search, timed from its call until it returns."""
        start = time.perf_counter()
        output = search(root)
        return output, time.perf_counter() - start
