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
  the one-GPU backend keeps its edge list; `runtime.ReleasableHostArray`,
  pinned by chunks of ``TUPLE_CHUNK`` tuples); the search keys from a bitmap
  of the rank's tuples' endpoints on its GPU, the keys' candidates asked a
  batch at a time (`graph500.distributed.IncidentVertices`).
- Kernel 1 (`exchange_tuples`, then `gpu.build.build_rows`): in chunks of
  ``TUPLE_CHUNK`` tuples, each tuple with an endpoint in rank d's block goes
  to rank d (once when both endpoints are d's; self-loops nowhere): the
  chunk copied to the GPU, its destinations, a stable sort by destination,
  one NCCL alltoallv into the received tuples' buffers on the GPU (where
  they and the build fit). Else into pinned host memory: a first pass counts
  them, and the exchange gives each chunk of the slice back to the host once
  it is on the GPU and pins the received tuples as they arrive, so that a
  rank holds the tuples it receives, not those and its slice. Then the rank
  builds the rows of its block from them on its GPU (the one-GPU sort-based
  builder given a row range), its vertices numbered by decreasing degree
  within the block.
- Validation: the distributed validator on each rank's GPU, its tuple slice
  (generated again first where kernel 1 gave it back: untimed, in the
  validation's set-up) relabelled by its distinct endpoints into mapped host
  memory and read in chunks, the endpoints' parents and levels or distances
  asked of their owners through NCCL.
- Searches: the distributed GPU kernels (`graph500.kernels.gpu.bfs_distributed`);
  a search is timed from a barrier until the slowest rank's GPU is done.
- Memory (`memory_needs`): each host's pinned memory for its ranks' tuples
  (kernel 1's received tuples, or the slice and the validator's relabelled
  copy), and each rank's GPU (kernel 1; the BFS pass and the SSSP pass, one kernel
  each, with validation's arrays) against its free memory; refused on every
  rank alike, naming each short host and GPU.
- Energy: NVML on each rank's own GPU, summed over the ranks.
"""

import collections
import socket

import numpy as np

from graph500.comm import NCCLCommunicator, SelfCommunicator, host_placement, slowest
from graph500.distributed import DistributedBackend, IncidentVertices, planned_slice_tuples, validation_endpoints
from graph500.errors import Graph500Error
from graph500.kernels.gpu import backend as single_gpu, build as gpu_build, generator, runtime
from graph500.kernels.gpu.runtime import cupy
from graph500.kernels.graph import PartitionedGraph
from graph500.partition import tuple_range
from graph500.plan import fits_here, largest_scale
from graph500.validators.distributed import DistributedValidationGraph

# Device bytes of a rank: per row entry (neighbour, weight); per owned vertex: the offsets and the block's
# new_label, then each kernel's (the BFS's queues, prefix sums, parents (the search's and the output) and strongest
# neighbours; the SSSP's light ends, states, queues, stamps, prefix sums and outputs); per vertex of the whole
# graph: the label table ``order`` (the parents' input labels; kernel 1 also allgathers new_label), then each
# kernel's (its bitmaps, a bit a vertex each (the BFS's four and its requests' two; the SSSP's requests' two), its
# requests' staging words and send buffers (BFS 4 + 8, SSSP 8 + 12), the SSSP's gathered distances, and the receive
# buffers: the blind parts (the BFS's 16 MiB, the SSSP's 12 bytes a request, 2^16 a peer) and the wide parts and
# rests, grown to the largest exchange, 2 bytes a vertex (about 0.1 GiB measured at SCALE 28 on two GPUs, where 2
# bytes are 0.5). One kernel lives at a time (the harness sets the SSSP up once the BFS is freed), so a pass holds
# the rows, the label tables and one kernel's arrays.
ENTRY_BYTES = 4 + 4
OWNED_VERTEX_BYTES = 8 + 4
GRAPH_VERTEX_BYTES = 4
KERNEL_OWNED_BYTES = {"bfs": 4 + 4 + 8 + 4 + 4 + 4, "sssp": 8 + 8 + 3 * 4 + 2 * 4 + 8 + 4 + 4}
KERNEL_GRAPH_VERTEX_BYTES = {"bfs": 6 / 8 + (4 + 8) + 2, "sssp": 2 / 8 + (8 + 12) + 4 + 2}
# The distributed validator's device bytes at a pass's most (its tuple pass, an SSSP tree's): a distinct endpoint of
# the rank's tuples holds its label (int64), its first-endpoint count (int64) and the owner's requested index
# (int32), then a tree's fetched parent and level or distance (4 + 4), reached and confirmed flags, compressed
# parent (int32), the passes' record of a parent and a value (two int32) and the first unconfirmed's two flags; an
# owned vertex its first-endpoint count (int64) and a tree's reached flag and level (a byte each). The plan takes
# the endpoints' expected count (`distributed.validation_endpoints`, within 0.3% of the counts on CPU ranks). Pointer
# jumping (an SSSP tree with more ties than `validators.common.TIES_ON_DEVICE`, or a fault found) holds about 50
# bytes more a vertex it still walks: not planned. With these the passes' plan was 1.01-1.02x the arrays measured
# at SCALE 26-28 on two H200s (docs/measurements.md, session 42), where the jumping's bytes made it 1.12x.
VALIDATION_ENDPOINT_BYTES = 8 + 8 + 4 + (4 + 4 + 1 + 1 + 4) + 8 + 2
VALIDATION_OWNED_BYTES = 8 + 1 + 1
# The distributed validator's bits a vertex of the whole graph: the bitmap of the rank's endpoints with each word's
# count of the set bits before it (`validators.device.LabelPlaces`: 64 bits a word of 64 vertices) and, while a BFS
# tree's levels are found, the bitmaps of two levels' vertices (`distributed._levels_from_root`)
VALIDATION_BITMAP_BITS = 2 * (1 + 1)
# Pinned host bytes a tuple of the validator's copy of the rank's slice: its endpoints' places (int32 each)
RELABELLED_TUPLE_BYTES = 4 + 4


# NCCL's buffers beside the CUDA context on each GPU of P > 1 ranks: a part and a part per peer (1.2 GiB measured
# on two H100s, 1.95 on four), counted for at most a node's NODE_PEERS (peers over a network: not measured)
NCCL_BYTES, NCCL_PEER_BYTES, NODE_PEERS = 1 << 30, 400 << 20, 7

TUPLE_CHUNK = 1 << 26  # tuples a rank sends at once in kernel 1's exchange
# The most tuples a rank receives above (2 - 1 / P) slices, as a share: a block's share of the tuples depends on the
# hubs it holds (the reference graph, the busiest rank: SCALE 20 on 4 ranks 10% above, SCALE 22 4.9%, SCALE 24 0.8%;
# 8 ranks 18%, 12.5%, 4.0%); a rank that receives more grows its buffers by a quarter (two at once for a moment, the
# grown one kept through the build: 11% above the plan at SCALE 28 on four H200s, with 0.2% of slack).
RECEIVED_SLACK = 0.05
# Device bytes beside kernel 1's planned arrays: arrays of a few words (counts per rank, counters, a small graph's
# bitmaps) and the memory pool's rounding of every allocation up to 512 bytes, which only small SCALEs notice
# (docs/measurements.md, session 30)
SMALL_ARRAYS_BYTES = 1 << 20
# Device bytes per tuple of an exchange chunk: two destinations (int64) and their order, the chunk read from the
# host, the parts sent and received (two each a tuple: labels and weight).
EXCHANGE_CHUNK_TUPLE_BYTES = 2 * 8 + 2 * 8 + 12 + 2 * 2 * 12


def context_bytes(num_ranks):
    """Device bytes outside the kernels' arrays: the CUDA context and modules, and NCCL's buffers on P > 1."""
    peers = min(num_ranks - 1, NODE_PEERS)
    return single_gpu.CONTEXT_BYTES + (NCCL_BYTES + peers * NCCL_PEER_BYTES if num_ranks > 1 else 0)


def received_capacity(num_tuples, num_ranks):
    """The tuples a rank of ``num_ranks`` receives in kernel 1's exchange of slices of ``num_tuples``, planned:
    each of its block's tuples once, twice where the other endpoint is another rank's, about (2 - 1 / P) times its
    slice, and `RECEIVED_SLACK` more (the buffers grow past that if they must)."""
    expected = -(-num_tuples * (2 * num_ranks - 1) // num_ranks)
    return expected + int(expected * RECEIVED_SLACK) + TUPLE_CHUNK // 16


def on_device_exchange_bytes(num_tuples, num_ranks, num_vertices, tuple_bytes, weighted):
    """Device bytes of kernel 1 where the received tuples stay on the GPU (a slice of ``num_tuples`` tuples of
    ``tuple_bytes`` each): the received tuples, an exchange chunk and the build of the block's rows (about two
    entries a tuple of a slice, as many as the rank's share of the graph's, with the whole graph's label tables) and
    `SMALL_ARRAYS_BYTES`."""
    capacity = received_capacity(num_tuples, num_ranks)
    return (capacity * tuple_bytes + min(num_tuples, TUPLE_CHUNK) * EXCHANGE_CHUNK_TUPLE_BYTES
            + gpu_build.build_memory_bytes(num_tuples, num_vertices, weighted, degree_ordered=True)
            + SMALL_ARRAYS_BYTES)


def kernel1_on_device_bytes(scale, edgefactor, num_ranks):
    """The device memory a GPU of ``num_ranks`` needs for kernel 1 to keep the tuples it receives on it
    (`on_device_exchange_bytes` of a run's slice, the CUDA context and NCCL's buffers counted); with less, they go
    to pinned host memory and the build reads them over the bus."""
    return (on_device_exchange_bytes(planned_slice_tuples(scale, edgefactor, num_ranks), num_ranks, 1 << scale,
                                     single_gpu.EDGE_LIST_BYTES, weighted=True) + context_bytes(num_ranks))


def validation_on_device_bytes(scale, edgefactor, num_ranks):
    """The device memory a GPU of ``num_ranks`` needs (context and NCCL counted) for the validator to keep its
    relabelled tuples and their weights on it (`RELABELLED_TUPLE_BYTES` and 4 a tuple of the rank's slice, in both
    passes, in place of its chunks): its passes then read them at the device's speed, where from pinned host memory
    they cross the bus every tree."""
    phases = device_phases(scale, edgefactor, num_ranks, tuples_on_device=True)
    return max(phases.values()) + context_bytes(num_ranks)


def exchange_tuples(device_comm, host_comm, blocks, src, dst, weights, on_device, release=None):
    """``(src, dst, weights or None)``: the tuples, of every rank's slice, with an endpoint in this rank's block
    (self-loops left out): in device memory where ``on_device`` (one pass, no pinning, and the build reads them at
    the device's speed: where `on_device_exchange_bytes` fit), else in mapped host memory (a first pass counts
    them), pinned as they arrive, ``release(begin, end)`` called once the slice's tuples [begin, end) are on the
    device (to give them back); every rank passes its slice (collective)."""
    num_ranks = host_comm.size
    num_tuples = src.shape[0]
    num_chunks = host_comm.allreduce(-(-num_tuples // TUPLE_CHUNK), "max")  # every rank exchanges as often
    bounds = [min(num_tuples, chunk * TUPLE_CHUNK) for chunk in range(num_chunks + 1)]
    chunks = list(zip(bounds[:-1], bounds[1:]))
    arrays = (src, dst) + (() if weights is None else (weights,))

    def destinations(u, v):
        """The rank each tuple of the chunk goes to, then the second rank it goes to (num_ranks: none)."""
        first_owner, second_owner = u // blocks.block, v // blocks.block
        nowhere = cupy.int64(num_ranks)  # sorts after every rank
        return cupy.concatenate([cupy.where(u != v, first_owner, nowhere),
                                 cupy.where((u != v) & (second_owner != first_owner), second_owner, nowhere)])

    def send_counts(destination):
        return cupy.bincount(destination, minlength=num_ranks + 1)[:num_ranks].get().astype(np.int64)

    def chunk_parts(begin, end):
        """The chunk's tuples grouped by destination, and how many go to each rank: the chunk is read over the
        bus once (a copy to the device), the rest is device work."""
        chunk = [array[begin:end].copy() for array in arrays]
        destination = destinations(chunk[0], chunk[1])
        counts = send_counts(destination)
        index = cupy.argsort(destination)[:int(counts.sum())] % max(1, end - begin)  # stable: CuPy's radix sort
        return tuple(array[index] for array in chunk), counts

    if on_device:
        capacity = received_capacity(num_tuples, num_ranks)
        received = [cupy.empty(capacity, dtype=array.dtype) for array in arrays]
        filled = 0
        for begin, end in chunks:
            parts, counts = chunk_parts(begin, end)
            _, incoming = host_comm.alltoallv((), counts)
            arriving = int(incoming.sum())
            if filled + arriving > received[0].shape[0]:
                grown = [cupy.empty(max(filled + arriving, received[0].shape[0] * 5 // 4), dtype=array.dtype)
                         for array in received]
                for target, array in zip(grown, received):
                    target[:filled] = array[:filled]
                received = grown
            device_comm.alltoallv(parts, counts, incoming, out=tuple(target[filled:] for target in received))
            filled += arriving
        received = [array[:filled] for array in received]
    else:
        received_total = 0
        for begin, end in chunks:  # first pass: how many tuples this rank receives
            destination = destinations(src[begin:end].copy(), dst[begin:end].copy())
            _, counts = host_comm.alltoallv((), send_counts(destination))
            received_total += int(counts.sum())
        buffers = [runtime.ReleasableHostArray(received_total, array.dtype, TUPLE_CHUNK, pinned=False)
                   for array in arrays]
        received = [buffer.array for buffer in buffers]
        filled = 0
        for begin, end in chunks:
            parts, counts = chunk_parts(begin, end)  # the chunk read (a copy to the device): not needed again
            if release is not None:
                release(begin, end)
            incoming, counts = device_comm.alltoallv(parts, counts)
            arriving = int(counts.sum())
            for buffer, part in zip(buffers, incoming):
                buffer.write(filled, part)
            filled += arriving
    return received[0], received[1], received[2] if weights is not None else None


def memory_needs(scale, edgefactor, num_ranks):
    """``(host bytes, device bytes)`` of one rank, CUDA context apart: pinned host memory for kernel 1's exchange
    where the tuples it receives do not stay on its GPU (those, `received_capacity`, and a chunk of them and of
    the slice being pinned or given back), or for its slice and the validator's relabelled copy of its endpoints,
    whichever is more; on its GPU the largest phase of `device_phases`."""
    slice_tuples = planned_slice_tuples(scale, edgefactor, num_ranks)
    exchange = (received_capacity(slice_tuples, num_ranks) + 2 * TUPLE_CHUNK) * single_gpu.EDGE_LIST_BYTES
    validation = slice_tuples * (single_gpu.EDGE_LIST_BYTES + RELABELLED_TUPLE_BYTES)
    return max(exchange, validation), max(device_phases(scale, edgefactor, num_ranks).values())


def device_phases(scale, edgefactor, num_ranks, tuples_on_device=False):
    """Device bytes of one rank's phases, CUDA context apart: ``{"exchange", "construction", "bfs pass",
    "sssp pass"}``: kernel 1's exchange chunk, then its row build; each pass's kernel (`device_memory_bytes`) and
    the validator's per-vertex arrays and its chunks of the tuples, or with ``tuples_on_device`` its relabelled
    copy of the slice and its weights, read in place."""
    num_vertices = 1 << scale
    slice_tuples = planned_slice_tuples(scale, edgefactor, num_ranks)
    validation = (validation_endpoints(num_vertices, slice_tuples) * VALIDATION_ENDPOINT_BYTES
                  + num_vertices * VALIDATION_BITMAP_BITS // 8 + -(-num_vertices // num_ranks) * VALIDATION_OWNED_BYTES
                  + single_gpu.validator_tuple_bytes(slice_tuples, RELABELLED_TUPLE_BYTES + 4, tuples_on_device))
    return {"exchange": min(slice_tuples, TUPLE_CHUNK) * EXCHANGE_CHUNK_TUPLE_BYTES,
            "construction": gpu_build.build_memory_bytes(slice_tuples, num_vertices, weighted=True,
                                                         degree_ordered=True),
            **{f"{kind} pass": device_memory_bytes(scale, edgefactor, num_ranks, kind) + validation
               for kind in KERNEL_OWNED_BYTES}}


def whole_graph_bytes(scale):
    """The device bytes of `device_phases`' largest pass that every GPU holds for all N vertices, whatever P: the
    label tables and the kernel's bitmaps, requests' staging and send buffers (and the SSSP's gathered
    distances), and the validator's bitmap."""
    return int((GRAPH_VERTEX_BYTES + max(KERNEL_GRAPH_VERTEX_BYTES.values()) + VALIDATION_BITMAP_BITS / 8)
               * (1 << scale))


def device_memory_bytes(scale, edgefactor, num_ranks, kind):
    """Device bytes one rank needs while the ``kind`` ("bfs" or "sssp") kernel lives, CUDA context apart: its
    share of the rows (about 2 M / P entries) and the kernel's arrays."""
    num_vertices = 1 << scale
    entries = -(-2 * (edgefactor << scale) // num_ranks)
    owned = -(-num_vertices // num_ranks)
    return int(entries * ENTRY_BYTES + owned * (OWNED_VERTEX_BYTES + KERNEL_OWNED_BYTES[kind])
               + num_vertices * (GRAPH_VERTEX_BYTES + KERNEL_GRAPH_VERTEX_BYTES[kind]))


def largest_fitting_scale(edgefactor, num_ranks, reports):
    """The largest SCALE whose plan fits the tightest host and GPU of a run (0: none); ``reports``: each rank's
    ``(host, device, free device bytes, pinnable host bytes or None)``, as `check_memory` gathers them."""
    ranks_per_host = max(collections.Counter(report[0] for report in reports).values())
    pinnable = [report[3] for report in reports if report[3] is not None]
    host_memory = min(pinnable) / single_gpu.PINNABLE_SHARE if pinnable else None
    gpu_memory = min(report[2] for report in reports) + single_gpu.CONTEXT_BYTES  # the plan counts the context
    return largest_scale(edgefactor, num_ranks, ranks_per_host, "gpu", host_memory, gpu_memory)


class DistributedGPUBackend(DistributedBackend):
    """The distributed backend with each rank's graph and searches on its own GPU."""

    name = "gpu"
    validator_first = False

    def __init__(self, comm):
        super().__init__(comm)
        self._high_water = runtime.PoolHighWater()
        self._estimate = None  # set by check_memory
        self._slice, self._slice_generation, self._slice_generated_again = [], None, False  # set by generate
        self._received_on_device = None  # set by build
        self._validation_on_device = False  # set by check_memory: where the plan leaves room for the tuples
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
        described = {"device": f"{facts['num_mpi_processes']} ranks x 1 GPU: {', '.join(gpus)}",
                     "hosts": ", ".join(facts["hosts"]), "mpi_library": facts["mpi_library"],
                     "nccl": facts.get("nccl"), "cuda_runtime": cupy.cuda.runtime.runtimeGetVersion(),
                     "cupy": cupy.__version__}
        if self._received_on_device is not None:
            described["kernel1_received_tuples"] = "device" if self._received_on_device else "host" + (
                " (each rank's slice given back as sent, generated again for validation)"
                if self._slice_generated_again else "")
        if self._estimate is not None:  # the largest rank's, as on one GPU (the pool's fullest and the rest)
            described["validation_tuples"] = "device" if self._validation_on_device else "host"
            free, total = device.mem_info
            outside_pool = total - free - self._high_water.pool.total_bytes()
            described["device_memory_peak_bytes"] = self.comm.allreduce(self._high_water.peak_bytes + outside_pool,
                                                                        "max")
            described["device_memory_pool_peak_bytes"] = self.comm.allreduce(self._high_water.peak_bytes, "max")
            described["device_memory_estimate_bytes"] = self._estimate
            # the largest rank's, step by step (every rank names the same steps)
            described.update(self._high_water.step_fields(lambda used: self.comm.allreduce(used, "max")))
        return described

    def memory_step(self, name):
        """The run's step ``name`` begins on every rank: each reports the bytes its arrays use at most by step."""
        self._high_water.step(name)

    def energy_devices(self):
        """PCI bus ids of the GPUs whose energy this rank draws: its own."""
        return [cupy.cuda.Device().pci_bus_id]

    def check_memory(self, scale, edgefactor):
        """Each host's pinned memory (its ranks' needs summed) and each rank's GPU: refused on every rank alike,
        naming the short ones (collective). Starts the high-water measurement `describe` reports."""
        reports = self.comm.allgather_object((socket.gethostname(), cupy.cuda.Device().id,
                                              single_gpu.free_device_bytes(), single_gpu.pinnable_host_bytes()))
        host_needed, device_needed = memory_needs(scale, edgefactor, self.comm.size)
        device_needed += context_bytes(self.comm.size) - single_gpu.CONTEXT_BYTES  # the context is made already
        short = []
        for host in sorted({report[0] for report in reports}):
            ranks_there = [report for report in reports if report[0] == host]
            available = ranks_there[0][3]
            if available is not None and host_needed * len(ranks_there) > available:
                short.append(f"host {host} needs about {host_needed * len(ranks_there) / 2**30:.1f} GiB of pinned "
                             f"memory for its {len(ranks_there)} ranks' tuples, {available / 2**30:.1f} GiB can be "
                             f"pinned ({single_gpu.PINNABLE_SHARE:.0%} of the available)")
        short += [f"GPU {device} of {host} needs about {device_needed / 2**30:.1f} GiB, {free / 2**30:.1f} GiB "
                  f"is free" for host, device, free, _ in reports if device_needed > free]
        with_tuples = validation_on_device_bytes(scale, edgefactor, self.comm.size) - single_gpu.CONTEXT_BYTES
        self._validation_on_device = all(with_tuples <= free for _, _, free, _ in reports)  # alike on every rank
        self._estimate = (with_tuples if self._validation_on_device else device_needed) + single_gpu.CONTEXT_BYTES
        self._high_water.start()  # also where the run goes on refused (--ignore-memory-plan)
        if short:
            raise Graph500Error(f"SCALE {scale} with edgefactor {edgefactor} on {self.comm.size} GPUs: "
                                + "; ".join(short) + " "
                                + fits_here(largest_fitting_scale(edgefactor, self.comm.size, reports)))

    def kernel_options(self, kernel_class):
        """Constructor options of a run, as on one GPU (no ``row_copy``)."""
        return single_gpu.GPUBackend.kernel_options(self, kernel_class)

    def generate(self, scale, edgefactor, seed1, seed2, progress=None):
        """This rank's slice of the reference's edge list ``(src, dst, weights)``, in mapped host memory that
        kernel 1 may give back (`ReleasableHostArray`s)."""
        start, stop = tuple_range(edgefactor << scale, self.comm.rank, self.comm.size)
        report = None if progress is None else (lambda count: progress(count * self.comm.size))
        self._high_water.start()  # the run's own peak from here on (the warm-up's small graphs are gone)
        self._slice = []  # the slice's buffers, and how to generate it again

        def empty(count, dtype):
            self._slice.append(runtime.ReleasableHostArray(count, dtype, TUPLE_CHUNK))
            return self._slice[-1].array

        edges = generator.generate_edges(scale, edgefactor, seed1, seed2, start, stop, progress=report, empty=empty)
        self._slice_generation = (scale, edgefactor, seed1, seed2, start, stop)
        cupy.cuda.get_current_stream().synchronize()  # generation is timed by the caller's clock
        return edges

    def _release_slice(self, begin, end):
        """Give the slice's tuples [begin, end) back to the host (kernel 1 has them on the device)."""
        for buffer in self._slice:
            buffer.release(begin, end)

    def _restore_slice(self):
        """The slice pinned and generated again where kernel 1 gave it back."""
        if any(buffer.released() for buffer in self._slice):
            for buffer in self._slice:
                buffer.pin(0, buffer.array.shape[0])
            generator.generate_edges(*self._slice_generation, out=[buffer.array for buffer in self._slice])
            cupy.cuda.get_current_stream().synchronize()
            self._slice_generated_again = True

    def edges_from_host(self, src, dst, weights, num_vertices):
        """Host edge arrays as `generate` returns them here (the warm-up's)."""
        return single_gpu.GPUBackend.edges_from_host(self, src, dst, weights, num_vertices)

    def incident_vertices(self, src, dst, num_vertices):
        """Whether vertices have an edge other than a self-loop in any rank's tuples: `IncidentVertices` of a
        bitmap on this rank's GPU (the slice generated again first where kernel 1 gave it back)."""
        self._restore_slice()
        return IncidentVertices(self.comm, gpu_build.incident_bitmap(src, dst, num_vertices))

    def build(self, src, dst, num_vertices, weights):
        """Kernel 1: this rank's rows, built on its GPU from the tuples every rank sends it (collective)."""
        blocks = self.blocks(num_vertices)
        tuple_bytes = sum(array.dtype.itemsize for array in (src, dst) + (() if weights is None else (weights,)))
        on_device_bytes = on_device_exchange_bytes(src.shape[0], self.comm.size, num_vertices, tuple_bytes,
                                                   weights is not None)
        on_device = self.comm.allreduce(int(on_device_bytes <= single_gpu.free_device_bytes()), "min") == 1
        self._received_on_device = on_device
        if on_device and self._estimate is not None:  # the run's estimate: this phase's
            self._estimate = max(self._estimate, on_device_bytes + context_bytes(self.comm.size))
        ours = len(self._slice) == 3 and self._slice[0].array is src and self._slice[1].array is dst  # generated here
        received = exchange_tuples(self.device_comm, self.comm, blocks, src, dst, weights, on_device,
                                   release=self._release_slice if ours else None)
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
        """The validators' `DistributedValidationGraph` of this rank's tuples, validated on its GPU through NCCL
        (collective): relabelled into device memory, the weights copied beside them, where `check_memory` found
        room on every GPU (`validation_on_device_bytes`), else into mapped host memory; the slice generated again
        first where kernel 1 gave it back."""
        self._restore_slice()
        self._slice = []  # the slice's memory goes back with the caller's arrays
        on_device = self._validation_on_device
        if on_device and weights is not None:
            weights = weights.copy()
        return DistributedValidationGraph.from_edges(self.device_comm, self.blocks(num_vertices), src, dst,
                                                     num_vertices, weights,
                                                     empty=cupy.empty if on_device else runtime.host_mapped_empty)

    def timed(self, search, root):
        """``(output, seconds)`` of one collective search: from a barrier until the slowest rank's GPU is done."""
        def search_to_the_end():
            output = search(root)
            cupy.cuda.get_current_stream().synchronize()
            return output

        return slowest(self.comm, search_to_the_end)
