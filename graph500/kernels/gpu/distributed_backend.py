"""The GPU backend on P ranks (``mpiexec -n P graph500 run --backend gpu``): one GPU per rank.

`DistributedGPUBackend` is the distributed backend (`graph500.distributed`)
with each rank's graph and searches on its GPU:

- Devices: each rank makes the GPU `graph500.comm.select_device` gives it
  current (its rank among the ranks of its host, modulo the GPUs it sees),
  and the kernels' collectives go through `graph500.comm.NCCLCommunicator`
  (NCCL on device buffers, its unique id broadcast by MPI, NVLink multicast
  off). Ranks sharing a GPU are refused: NCCL takes one GPU per rank.
- Generation: rank r's slice of the tuples (`graph500.partition.tuple_range`)
  by the device generator, into pinned host memory mapped into its GPU (as
  the one-GPU backend keeps its edge list); the search keys from the ranks'
  incident-vertex flags OR'd (an MPI allreduce).
- Kernel 1 (`exchange_tuples`, then `gpu.build.build_rows`): in chunks of
  ``TUPLE_CHUNK`` tuples, each tuple with an endpoint in rank d's block goes
  to rank d (once when both endpoints are d's; self-loops nowhere): the
  chunk's destinations, a stable sort by destination, one NCCL alltoallv.
  A first pass counts, so each rank pins its received tuples' host memory
  once; then the rank builds the rows of its block from them on its GPU
  (the one-GPU sort-based builder given a row range), reading them in place
  over the bus.
- Validation: the distributed validator on each rank's GPU, its tuple slice
  copied from mapped host memory in chunks, parents and distances allgathered
  through NCCL.
- Searches: the distributed GPU kernels (`graph500.kernels.gpu.bfs_distributed`);
  a search is timed from a barrier until the slowest rank's GPU is done.
- Memory (`memory_needs`): each host's pinned memory for its ranks' tuples,
  and each rank's GPU (kernel 1, the searches, validation) against its free
  memory; refused on every rank alike, naming each short host and GPU.
- Energy: NVML on each rank's own GPU, summed over the ranks.
"""

import socket

import numpy as np

from graph500.comm import NCCLCommunicator, SelfCommunicator, host_placement, slowest
from graph500.distributed import DistributedBackend
from graph500.errors import Graph500Error
from graph500.kernels.cpu.backend import available_memory_bytes
from graph500.kernels.gpu import backend as single_gpu, build as gpu_build, generator, runtime
from graph500.kernels.gpu.runtime import cupy
from graph500.kernels.graph import PartitionedGraph
from graph500.partition import tuple_range
from graph500.validators.common import TUPLE_CHUNK as TUPLE_CHUNK_VALIDATION
from graph500.validators.distributed import DistributedValidationGraph

# Device bytes of a rank: per row entry (neighbour, weight); per owned vertex: offsets, the BFS's queues, prefix
# sums and parents, the SSSP's states, stamps, queues, prefix sums and outputs; per vertex of the whole graph:
# bitmaps (the BFS's six and the found blocks received, the SSSP's touched: about 8 bits), the SSSP's staging
# words, touched vertices and their requests.
ENTRY_BYTES = 4 + 4
OWNED_VERTEX_BYTES = 8 + (4 + 4 + 8 + 4) + (8 + 4 + 4 + 4 + 8 + 4 + 4)
GRAPH_VERTEX_BYTES = 1 + 8 + 4 + 8


TUPLE_CHUNK = 1 << 26  # tuples a rank sends at once in kernel 1's exchange
# Device bytes per tuple of an exchange chunk: two destinations (int64) and their order, the chunk read from the
# host, the parts sent and received (two each a tuple: labels and weight).
EXCHANGE_CHUNK_TUPLE_BYTES = 2 * 8 + 2 * 8 + 12 + 2 * 2 * 12


def exchange_tuples(device_comm, host_comm, blocks, src, dst, weights, free_device=0):
    """``(src, dst, weights or None)``: the tuples, of every rank's slice, with an endpoint in this rank's block
    (self-loops left out): in device memory where they and the build of their rows fit in ``free_device`` bytes
    (no pinning, and the build reads them at the device's speed), else in mapped host memory; every rank passes
    its slice (collective)."""
    num_ranks = host_comm.size
    num_tuples = src.shape[0]
    num_chunks = host_comm.allreduce(-(-num_tuples // TUPLE_CHUNK), "max")  # every rank exchanges as often
    bounds = [min(num_tuples, chunk * TUPLE_CHUNK) for chunk in range(num_chunks + 1)]

    def destinations(begin, end):
        """The rank each tuple of the chunk goes to, then the second rank it goes to (num_ranks: none)."""
        u, v = src[begin:end], dst[begin:end]
        first_owner, second_owner = u // blocks.block, v // blocks.block
        nowhere = cupy.int64(num_ranks)  # sorts after every rank
        return cupy.concatenate([cupy.where(u != v, first_owner, nowhere),
                                 cupy.where((u != v) & (second_owner != first_owner), second_owner, nowhere)])

    def send_counts(destination):
        return cupy.bincount(destination, minlength=num_ranks + 1)[:num_ranks].get().astype(np.int64)

    chunks = list(zip(bounds[:-1], bounds[1:]))
    received_total = 0
    for begin, end in chunks:  # first pass: how many tuples this rank receives
        _, counts = host_comm.alltoallv((), send_counts(destinations(begin, end)))
        received_total += int(counts.sum())
    arrays = (src, dst) + (() if weights is None else (weights,))
    chunk_bytes = min(num_tuples, TUPLE_CHUNK) * EXCHANGE_CHUNK_TUPLE_BYTES
    on_device = received_total * sum(array.dtype.itemsize for array in arrays) + chunk_bytes + \
        gpu_build.build_memory_bytes(received_total, blocks.num_vertices, weighted=weights is not None) <= free_device
    allocate = cupy.empty if on_device else runtime.host_mapped_empty
    received = [allocate(received_total, array.dtype) for array in arrays]
    filled = 0
    for begin, end in chunks:
        destination = destinations(begin, end)
        counts = send_counts(destination)
        index = cupy.argsort(destination)[:int(counts.sum())] % max(1, end - begin)  # stable: CuPy's radix sort
        parts = tuple(array[begin:end].copy()[index] for array in arrays)  # one bulk read of the chunk each
        del destination, index
        if on_device:  # received in place
            _, counts = device_comm.alltoallv(parts, counts, out=tuple(target[filled:] for target in received))
        else:
            incoming, counts = device_comm.alltoallv(parts, counts)
            for target, part in zip(received, incoming):
                target[filled:filled + int(counts.sum())] = part
        del parts
        filled += int(counts.sum())
    return received[0], received[1], received[2] if weights is not None else None


def memory_needs(scale, edgefactor, num_ranks):
    """``(host bytes, device bytes)`` of one rank, CUDA context apart: pinned host memory for its slice of the
    tuples and those it receives (at most twice as many: each of its block's tuples once or twice); on its GPU the
    largest of kernel 1 (one exchange chunk, then the row build), the searches, and the searches plus
    validation's per-vertex arrays and chunk."""
    num_vertices = 1 << scale
    slice_tuples = -(-(edgefactor << scale) // num_ranks)
    host = 3 * slice_tuples * single_gpu.EDGE_LIST_BYTES
    chunk = min(slice_tuples, TUPLE_CHUNK) * EXCHANGE_CHUNK_TUPLE_BYTES
    build = gpu_build.build_memory_bytes(slice_tuples, num_vertices, weighted=True)
    searches = device_memory_bytes(scale, edgefactor, num_ranks)
    validation = searches + num_vertices * single_gpu.VALIDATION_VERTEX_BYTES + \
        min(slice_tuples, TUPLE_CHUNK_VALIDATION) * single_gpu.VALIDATION_CHUNK_TUPLE_BYTES
    return host, max(chunk, build, validation)


def device_memory_bytes(scale, edgefactor, num_ranks):
    """Device bytes one rank needs, CUDA context apart: its share of the rows (about 2 M / P entries) and the
    kernels' arrays."""
    num_vertices = 1 << scale
    entries = -(-2 * (edgefactor << scale) // num_ranks)
    owned = -(-num_vertices // num_ranks)
    return int(entries * ENTRY_BYTES + owned * OWNED_VERTEX_BYTES + num_vertices * GRAPH_VERTEX_BYTES)


class DistributedGPUBackend(DistributedBackend):
    """The distributed backend with each rank's graph and searches on its own GPU."""

    name = "gpu"

    def __init__(self, comm):
        super().__init__(comm)
        if comm.size == 1:  # the warm-up's one rank: on the GPU made current already
            self.device_comm = SelfCommunicator(xp=cupy)
            return
        _, ranks_here = host_placement(comm)
        gpus_here = cupy.cuda.runtime.getDeviceCount()
        if ranks_here > gpus_here:
            raise Graph500Error(f"{ranks_here} ranks on host {socket.gethostname()} but {gpus_here} GPUs: "
                                f"--backend gpu takes one GPU per rank")
        self.device_comm = NCCLCommunicator(comm)

    def describe(self):
        """Facts for the report's extensions block (collective): the hosts, MPI and NCCL, every rank's GPU."""
        facts = self.device_comm.describe()
        device = cupy.cuda.Device()
        properties = cupy.cuda.runtime.getDeviceProperties(device.id)
        name = properties["name"].decode() if isinstance(properties["name"], bytes) else properties["name"]
        gpus = self.comm.allgather_object(f"{name} ({device.pci_bus_id})")
        return {"device": f"{facts['num_mpi_processes']} ranks x 1 GPU: {', '.join(gpus)}",
                "hosts": ", ".join(facts["hosts"]), "mpi_library": facts["mpi_library"],
                "nccl": facts.get("nccl"), "cuda_runtime": cupy.cuda.runtime.runtimeGetVersion(),
                "cupy": cupy.__version__}

    def energy_devices(self):
        """PCI bus ids of the GPUs whose energy this rank draws: its own."""
        return [cupy.cuda.Device().pci_bus_id]

    def check_memory(self, scale, edgefactor):
        """Each host's pinned memory (its ranks' needs summed) and each rank's GPU: refused on every rank alike,
        naming the short ones (collective)."""
        host_needed, device_needed = memory_needs(scale, edgefactor, self.comm.size)
        reports = self.comm.allgather_object((socket.gethostname(), cupy.cuda.Device().id,
                                              single_gpu.free_device_bytes(), available_memory_bytes()))
        short = []
        for host in sorted({report[0] for report in reports}):
            ranks_there = [report for report in reports if report[0] == host]
            available = ranks_there[0][3]
            if available is not None and host_needed * len(ranks_there) > available:
                short.append(f"host {host} needs about {host_needed * len(ranks_there) / 2**30:.1f} GiB of pinned "
                             f"memory for its {len(ranks_there)} ranks' tuples, {available / 2**30:.1f} GiB is "
                             f"available")
        short += [f"GPU {device} of {host} needs about {device_needed / 2**30:.1f} GiB, {free / 2**30:.1f} GiB "
                  f"is free" for host, device, free, _ in reports if device_needed > free]
        if short:
            raise Graph500Error(f"SCALE {scale} with edgefactor {edgefactor} on {self.comm.size} GPUs: "
                                + "; ".join(short))

    def generate(self, scale, edgefactor, seed1, seed2, progress=None):
        """This rank's slice of the reference's edge list ``(src, dst, weights)``, in mapped host memory."""
        start, stop = tuple_range(edgefactor << scale, self.comm.rank, self.comm.size)
        report = None if progress is None else (lambda count: progress(count * self.comm.size))
        edges = generator.generate_edges(scale, edgefactor, seed1, seed2, start, stop, progress=report,
                                         empty=runtime.host_mapped_empty)
        cupy.cuda.get_current_stream().synchronize()  # generation is timed by the caller's clock
        return edges

    def edges_from_host(self, src, dst, weights, num_vertices):
        """Host edge arrays as `generate` returns them here (the warm-up's)."""
        return single_gpu.Backend.edges_from_host(self, src, dst, weights, num_vertices)

    def incident_vertices(self, src, dst, num_vertices):
        """Vertices with an edge other than a self-loop in any rank's tuples, on every rank (collective)."""
        return self.comm.allreduce(gpu_build.incident_vertices(src, dst, num_vertices), "or")

    def build(self, src, dst, num_vertices, weights):
        """Kernel 1: this rank's rows, built on its GPU from the tuples every rank sends it (collective)."""
        blocks = self.blocks(num_vertices)
        received = exchange_tuples(self.device_comm, self.comm, blocks, src, dst, weights,
                                   free_device=single_gpu.free_device_bytes())
        first, count = blocks.begin(self.comm.rank), blocks.count(self.comm.rank)
        offsets, neighbors, row_weights, order, new_label = gpu_build.build_rows(
            *received[:2], num_vertices, received[2], first, count, degree_ordered=True, comm=self.device_comm)
        del received
        cupy.cuda.get_current_stream().synchronize()  # construction is timed by the caller's clock
        return PartitionedGraph(num_vertices, first, offsets, neighbors, row_weights, self.device_comm, blocks,
                                order=order, new_label=new_label)

    def from_host_csr(self, graph):
        """A whole host `CSRGraph` as the one part of a one-rank graph on the GPU (the warm-up's)."""
        return self._on_device(super().from_host_csr(graph), SelfCommunicator(xp=cupy))

    @staticmethod
    def _on_device(part, device_comm):
        """The host part ``part`` with its rows copied to the GPU and ``device_comm`` for the kernels."""
        weights = None if part.weights is None else cupy.asarray(part.weights)
        on_device = PartitionedGraph(part.num_vertices, part.first_vertex, cupy.asarray(part.offsets),
                                     cupy.asarray(part.neighbors), weights, device_comm, part.blocks)
        cupy.cuda.get_current_stream().synchronize()  # construction is timed by the caller's clock
        return on_device

    def validation_graph(self, src, dst, num_vertices, weights):
        """The validators' `DistributedValidationGraph` of this rank's tuples (in mapped host memory), validated on
        its GPU through NCCL (collective)."""
        return DistributedValidationGraph.from_edges(self.device_comm, self.blocks(num_vertices), src, dst,
                                                     num_vertices, weights)

    def timed(self, search, root):
        """``(output, seconds)`` of one collective search: from a barrier until the slowest rank's GPU is done."""
        def search_to_the_end():
            output = search(root)
            cupy.cuda.get_current_stream().synchronize()
            return output

        return slowest(self.comm, search_to_the_end)
