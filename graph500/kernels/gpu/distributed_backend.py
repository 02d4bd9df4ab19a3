"""The GPU backend on P ranks (``mpiexec -n P graph500 run --backend gpu``): one GPU per rank.

`DistributedGPUBackend` is the distributed backend (`graph500.distributed`)
with each rank's graph and searches on its GPU:

- Devices: each rank makes the GPU `graph500.comm.select_device` gives it
  current (its rank among the ranks of its host, modulo the GPUs it sees),
  and the kernels' collectives go through `graph500.comm.NCCLCommunicator`
  (NCCL on device buffers, its unique id broadcast by MPI, NVLink multicast
  off). Ranks sharing a GPU are refused: NCCL takes one GPU per rank.
- Generation, kernel 1's exchange and row building and the search keys: the
  distributed CPU backend's, on each rank's host (Numba, the host's cores
  shared among its ranks); kernel 1 then copies the rank's rows to its GPU,
  inside the timed construction. (Building on the GPUs is the next step of
  docs/multi-gpu.md.)
- Validation: the distributed validator on each rank's GPU (its tuple slice
  copied there once; parents and distances allgathered through NCCL).
- Searches: the distributed GPU kernels (`graph500.kernels.gpu.bfs_distributed`);
  a search is timed from a barrier until the slowest rank's GPU is done.
- Memory: each rank's device need (its rows, the kernels' bitmaps of all N
  vertices and per-vertex arrays of its block) against its GPU's free memory,
  besides the host check; refused on every rank alike, naming each short GPU.
- Energy: NVML on each rank's own GPU, summed over the ranks.
"""

import socket

from graph500.comm import NCCLCommunicator, SelfCommunicator, host_placement, slowest
from graph500.distributed import DistributedBackend
from graph500.errors import Graph500Error
from graph500.kernels.gpu import backend as single_gpu
from graph500.kernels.gpu.runtime import cupy
from graph500.kernels.graph import PartitionedGraph
from graph500.validators.distributed import DistributedValidationGraph

# Device bytes of a rank: per row entry (neighbour, weight); per owned vertex: offsets, the BFS's queues, prefix
# sums and parents, the SSSP's states, stamps, queues, prefix sums and outputs; per vertex of the whole graph:
# bitmaps (the BFS's six and the found blocks received, the SSSP's touched: about 8 bits), the SSSP's staging
# words, touched vertices and their requests.
ENTRY_BYTES = 4 + 4
OWNED_VERTEX_BYTES = 8 + (4 + 4 + 8 + 4) + (8 + 4 + 4 + 4 + 8 + 4 + 4)
GRAPH_VERTEX_BYTES = 1 + 8 + 4 + 8


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
        """The host check, then each rank's GPU: refused on every rank alike, naming the short ones
        (collective)."""
        super().check_memory(scale, edgefactor)
        needed = device_memory_bytes(scale, edgefactor, self.comm.size)
        reports = self.comm.allgather_object((socket.gethostname(), cupy.cuda.Device().id, needed,
                                              single_gpu.free_device_bytes()))
        short = [f"GPU {device} of {host} needs about {bytes_needed / 2**30:.1f} GiB, {free / 2**30:.1f} GiB is free"
                 for host, device, bytes_needed, free in reports if bytes_needed > free]
        if short:
            raise Graph500Error(f"SCALE {scale} with edgefactor {edgefactor} on {self.comm.size} GPUs: "
                                + "; ".join(short))

    def build(self, src, dst, num_vertices, weights):
        """Kernel 1: this rank's rows built on the host (collective), then copied to its GPU."""
        return self._on_device(super().build(src, dst, num_vertices, weights), self.device_comm)

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
        """The validators' `DistributedValidationGraph` of this rank's tuples on its GPU, validated there through
        NCCL (collective)."""
        on_device = [None if array is None else cupy.asarray(array) for array in (src, dst, weights)]
        return DistributedValidationGraph.from_edges(self.device_comm, self.blocks(num_vertices), on_device[0],
                                                     on_device[1], num_vertices, on_device[2])

    def timed(self, search, root):
        """``(output, seconds)`` of one collective search: from a barrier until the slowest rank's GPU is done."""
        def search_to_the_end():
            output = search(root)
            cupy.cuda.get_current_stream().synchronize()
            return output

        return slowest(self.comm, search_to_the_end)
