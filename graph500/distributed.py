"""The run's steps on P ranks: a backend made of a one-process backend and a communicator.

`DistributedBackend` offers the harness the methods of a backend
(``graph500.kernels.cpu.backend``), each the same step done by every rank on
its share and combined through the communicator (`graph500.comm`):

- generate: rank r generates the tuples ``partition.tuple_range(M, r, P)``
  with the reference-exact generator (any range of the list is exact), so the
  P slices are the reference's list; the rank keeps them to validate.
- build (kernel 1): every tuple is sent to the owners of its endpoints (one
  Alltoallv; once when both are owned by one rank), and each rank builds the
  CSR rows of its block (`build.build_rows`) into a `PartitionedGraph`.
- incident_vertices (for the search keys): each rank marks the endpoints of
  its tuples in a bitmap; the keys' candidates are asked a batch at a time,
  the ranks ORing their answers (Allreduce), so every rank draws the same
  keys.
- timed: a barrier, the search, a barrier: the time until the slowest rank
  has its part of the output, the same on every rank.
- check_memory: each rank's need, summed per host, against the host's
  available memory; refused on every rank alike.

The partition (`graph500.partition`): vertices in 1D blocks of whole bitmap
words, tuples in generation ranges.
"""

import math
import os
import socket

import numba
import numpy as np

from graph500.comm import SelfCommunicator, host_placement, slowest
from graph500.errors import Graph500Error
from graph500.kernels.cpu.backend import RUNTIME_BYTES, CPUBackend, available_memory_bytes, cpu_model, generate_range
from graph500.kernels.cpu.build import CHUNKS_PER_THREAD, build_memory_bytes, build_rows, write_positions
from graph500.kernels.cpu.frontier import bitmap_words, equal_share, set_bit
from graph500.kernels.graph import PartitionedGraph, whole_graph_part
from graph500.partition import VertexBlocks, stored_label_dtype, tuple_range
from graph500.validators.common import array_module
from graph500.validators.distributed import DistributedValidationGraph

class DistributedBackend(CPUBackend):
    """The run's steps on the ranks of ``comm``, each rank's local work done by the CPU backend's code.

    With a one-rank communicator (the warm-up's) every step is the local one
    and compiles what the ranks' steps call.
    """

    distributed = True

    def __init__(self, comm):
        self.comm = comm

    def one_rank(self):
        """This backend on one rank (the warm-up's: the ranks' steps with no collective)."""
        return type(self)(SelfCommunicator())

    def blocks(self, num_vertices):
        """The vertex partition of a graph of ``num_vertices`` over this run's ranks (Graph500Error if impossible)."""
        return VertexBlocks(num_vertices, self.comm.size)

    def describe(self):
        """Facts for the report's extensions block (collective)."""
        facts = self.comm.describe()
        threads = self.comm.allgather_object(numba.get_num_threads())
        return {"device": f"{cpu_model()}, {facts['num_mpi_processes']} ranks x {max(threads)} Numba threads",
                "hosts": ", ".join(facts["hosts"]), "threads_per_rank": max(threads),
                "mpi_library": facts["mpi_library"]}

    def check_memory(self, scale, edgefactor):
        """Refuse, on every rank alike, a run whose ranks need more than their host has available (collective)."""
        library = mpi_library_kind(self.comm.describe()["mpi_library"])
        hosts = self.comm.allgather_object((socket.gethostname(), available_memory_bytes()))
        for host in sorted({name for name, _ in hosts}):
            on_host = [available for name, available in hosts if name == host]
            # every rank of a host needs alike: the MPI library's own memory counts the host's other ranks
            total = len(on_host) * memory_estimate_bytes(scale, edgefactor, self.comm.size, len(on_host), library)
            available = on_host[0]
            if available is not None and total > available:
                from graph500.plan import fits_here, largest_scale  # the plan's model (plan imports this module)

                largest = largest_scale(edgefactor, self.comm.size, len(on_host), "cpu", available, None, library)
                raise Graph500Error(
                    f"SCALE {scale} with edgefactor {edgefactor} on {self.comm.size} ranks needs about "
                    f"{total / 2**30:.1f} GiB on host {host} ({len(on_host)} ranks there); "
                    f"{available / 2**30:.1f} GiB is available {fits_here(largest)}")

    def generate(self, scale, edgefactor, seed1, seed2, progress=None):
        """This rank's slice of the reference's edge list ``(src, dst, weights)`` (`partition.tuple_range`), its
        labels uint32 where they fit (`stored_label_dtype`: 12 bytes a tuple, not 20)."""
        start, stop = tuple_range(edgefactor << scale, self.comm.rank, self.comm.size)
        return generate_range(scale, edgefactor, seed1, seed2, start, stop, progress, progress_weight=self.comm.size,
                              label_dtype=stored_label_dtype(1 << scale))

    def edges_from_host(self, src, dst, weights, num_vertices):
        """Host edge arrays as `generate` returns them here (labels of `stored_label_dtype`, float32 weights)."""
        label = stored_label_dtype(num_vertices)
        return src.astype(label, copy=False), dst.astype(label, copy=False), weights

    def generate_rmat(self, scale, edgefactor, probabilities, seed):
        raise Graph500Error("--generator rmat runs in one process only")

    def build(self, src, dst, num_vertices, weights):
        """Kernel 1: this rank's `PartitionedGraph` (collective)."""
        return partition_graph(self.comm, self.blocks(num_vertices), src, dst, weights)

    def from_host_csr(self, graph):
        """A whole `CSRGraph` as the one part of a one-rank graph (the warm-up's)."""
        return whole_graph_part(graph)

    def validation_graph(self, src, dst, num_vertices, weights):
        """The validators' `DistributedValidationGraph` of this rank's tuples (collective)."""
        return DistributedValidationGraph.from_edges(self.comm, self.blocks(num_vertices), src, dst, num_vertices,
                                                     weights)

    def incident_vertices(self, src, dst, num_vertices):
        """Whether vertices have an edge other than a self-loop in any rank's tuples: `IncidentVertices`."""
        return IncidentVertices.of_edges(self.comm, src, dst, num_vertices)

    def timed(self, search, root):
        """``(output, seconds)`` of one collective search: from a barrier until the slowest rank is done."""
        return slowest(self.comm, lambda: search(root))


class IncidentVertices:
    """Whether vertices have an edge other than a self-loop in any rank's tuples, for the search keys: each rank
    keeps a bitmap of its own tuples' endpoints (``words``: N / 8 bytes, NumPy or CuPy, bit v of word v // width;
    not a flag of all N vertices every rank ORs), and ``incident[candidates]`` (an int64 array, the same on every
    rank: collective) ORs the ranks' answers."""

    def __init__(self, comm, words):
        self.comm = comm
        self.words = words

    @classmethod
    def of_edges(cls, comm, src, dst, num_vertices):
        """This rank's bitmap of host tuples ``src, dst``."""
        words = np.zeros(bitmap_words(int(num_vertices)), dtype=np.uint64)
        _mark_incident_bits(src, dst, words)
        return cls(comm, words)

    def __getitem__(self, vertices):
        width = 8 * self.words.dtype.itemsize
        vertices = np.asarray(vertices, dtype=np.int64)
        words = self.words[array_module(self.words).asarray(vertices // width)]
        words = words.get() if hasattr(words, "get") else words
        mine = (words >> (vertices % width).astype(words.dtype)) & words.dtype.type(1)
        return self.comm.allreduce(mine.astype(np.bool_), "or")


@numba.njit(cache=True)
def _mark_incident_bits(src, dst, words):
    for i in range(src.shape[0]):
        if src[i] != dst[i]:
            set_bit(words, src[i])
            set_bit(words, dst[i])


def memory_estimate_bytes(scale, edgefactor, num_ranks, ranks_per_host=None, mpi_library=None):
    """Peak host bytes of one rank: the largest of `memory_phases`."""
    return max(memory_phases(scale, edgefactor, num_ranks, ranks_per_host, mpi_library).values())


# The MPI library's own host bytes a rank per other rank of its host, by library (`mpi_library_kind`): Open MPI 4.1
# with UCX on the 16-core host held about 22 MiB a rank per peer on the host beyond the arrays (the largest rank at
# SCALE 24, P = 4, 8 and 16, measured in session 34: the plan without it 1.03x, 0.96x and 0.77x the peaks, with it
# 1.05x, 1.03x and 0.97x; docs/measurements.md); MPICH ranks hold what the runtime term counts at P = 2 to 16.
MPI_PEER_BYTES = {"openmpi": 22 << 20, "mpich": 0}
MPI_LIBRARIES = tuple(MPI_PEER_BYTES)


def mpi_library_kind(version):
    """"openmpi", "mpich" or None (unknown) from an MPI library's version string (``MPI.Get_library_version``)."""
    text = (version or "").lower()
    return "openmpi" if "open mpi" in text else "mpich" if "mpich" in text else None


def mpi_peer_bytes(mpi_library, ranks_per_host):
    """The MPI library's own host bytes a rank holds for the other ranks of its host (`MPI_PEER_BYTES`)."""
    return MPI_PEER_BYTES.get(mpi_library, 0) * max(ranks_per_host - 1, 0)


# Bytes an owned vertex of the kernels' arrays (the inventory at P = 4, SCALE 22, the BFS's bitmaps counted apart,
# the BFS's first neighbours' input labels included); the places of some of all N vertices (a bitmap of all N, a
# uint32 count a 64-bit word: the BFS's labels met, the validator's endpoints, the SSSP's rows' neighbours while it
# is set up: PLACES_BYTES_PER_VERTEX); the BFS's own bitmaps of all N (visited and two frontiers, N / 8 bytes each: the
# frontiers one copy a host, counted in every rank, in whose resident memory they are); the validator's bytes a
# tuple of the rank's slice (its tuples grouped by first endpoint, int32 second endpoints and weights, and by
# second, int32 first endpoints) and a distinct endpoint of it (`validation_endpoints`: both groupings' int32
# offsets, the endpoints (uint32), the owners' int32 requests; the inventory at P = 4, SCALE 22). The BFS's labels
# met (its block's and its rows' neighbours') hold an input label each.
KERNEL_OWNED_BYTES = 138
PLACES_BYTES_PER_VERTEX = (1 + 0.5) / 8
BFS_BITMAPS = 3
WHOLE_GRAPH_BYTES_PER_VERTEX = 2 * PLACES_BYTES_PER_VERTEX + BFS_BITMAPS / 8  # the BFS pass's
VALIDATION_TUPLE_BYTES = 12
VALIDATION_ENDPOINT_BYTES = 16


def planned_slice_tuples(scale, edgefactor, num_ranks):
    """The tuples of the largest rank's slice (`graph500.partition.tuple_range`), as the memory plans count them."""
    return -(-(edgefactor << scale) // num_ranks)


def memory_phases(scale, edgefactor, num_ranks, ranks_per_host=None, mpi_library=None):
    """Host bytes of one rank at its peaks, with the runtime, the MPI library's own for the other ranks of its host
    (`mpi_peer_bytes`; ``ranks_per_host`` default all, ``mpi_library`` "openmpi", "mpich" or None: none counted)
    and its slice of the tuples (two labels, uint32 up to 2^32 vertices, and a weight: 12 or 20 bytes a tuple):
    ``exchange`` (the tuples sent, about (2 - 1/P) times the slice, and as many received: 12 bytes each, uint32
    labels up to 2^32 vertices),
    ``construction`` (the received tuples, which the builder reads as they are and frees once they are its
    keys, and its typical scratch for the rank's rows),
    ``validation set-up`` (the slice, kernel 1's rows (a label and a weight an entry of about 2M / P) and the
    validator's arrays: the validator is set up before any kernel, `graph500.harness`),
    ``bfs`` (the slice freed: kernel 1's rows, the BFS's (a label each), the kernels' arrays, the BFS's bitmaps
    and labels met, the validator's),
    ``sssp set-up`` (the BFS freed: kernel 1's rows, the SSSP's (an int32 column and a weight each), the kernels'
    arrays, the places of the rows' neighbours, the validator's).
    Resident memory measured at SCALE 22 on the largest rank (docs/measurements.md, session 33): P = 4 kernel 1
    1.07, validation set-up 0.89, BFS 0.91, SSSP set-up 1.07 GiB."""
    num_vertices = 1 << scale
    slice_tuples = planned_slice_tuples(scale, edgefactor, num_ranks)
    owned = -(-num_vertices // num_ranks)
    sent = slice_tuples * (2 * num_ranks - 1) // num_ranks
    label_bytes = stored_label_dtype(num_vertices).itemsize  # a label held, on the wire and in the BFS's rows
    sent_bytes = 2 * label_bytes + 4  # a tuple, held or on the wire: its labels and weight
    runtime = RUNTIME_BYTES + mpi_peer_bytes(mpi_library, num_ranks if ranks_per_host is None else ranks_per_host)
    held = runtime + slice_tuples * sent_bytes
    entries = 2 * slice_tuples
    rows = entries * (label_bytes + 4)  # kernel 1's, kept until the SSSP is set up
    places = int(PLACES_BYTES_PER_VERTEX * num_vertices)
    validator = (slice_tuples * VALIDATION_TUPLE_BYTES + places
                 + validation_endpoints(num_vertices, slice_tuples) * VALIDATION_ENDPOINT_BYTES)
    searching = runtime + rows + owned * KERNEL_OWNED_BYTES + validator  # in either kernel's phase
    return {"exchange": held + 2 * sent * sent_bytes,
            "construction": held  # the rows of the rank's block, from the received tuples (freed once sorted)
            + build_memory_bytes(slice_tuples, owned, True, bound=False, freed_inputs=sent * sent_bytes),
            "validation set-up": held + rows + owned * 8 + validator,
            "bfs": searching + entries * label_bytes + places + BFS_BITMAPS * -(-num_vertices // 8)
            + min(num_vertices, owned + kronecker_distinct_vertices(scale, entries))
            * label_bytes,  # the BFS's labels met (its block's, its rows' neighbours'), an input label each
            "sssp set-up": searching + entries * (4 + 4) + places}


def kronecker_distinct_vertices(scale, draws):
    """The expected number of distinct vertices among ``draws`` endpoints of the Kronecker generator's tuples (a
    rank's slice of them: the validator's labels; the neighbours of a block's rows: the BFS's labels met).

    An endpoint's label is, bit by bit, a one with probability B + D = C + D = 0.24 of the initiator (A 0.57, B = C
    0.19, D 0.05; the scramble only renames), so a vertex with k ones is drawn with p_k = 0.24^k 0.76^(S - k), and
    the expectation is the sum over k of C(S, k) (1 - (1 - p_k)^draws): within 0.3% of the counts at SCALE 18 to 22
    on 1 to 16 ranks (docs/measurements.md), where the bound min(N, draws) is 1.7 to 4 times them.
    """
    one = 0.24
    return int(math.ceil(sum(math.comb(scale, k) * -math.expm1(draws * math.log1p(-one**k * (1 - one)**(scale - k)))
                              for k in range(scale + 1))))


def validation_endpoints(num_vertices, slice_tuples):
    """How many distinct endpoints a rank's slice of tuples has (expected): the validator's labels."""
    return min(num_vertices, kronecker_distinct_vertices(num_vertices.bit_length() - 1, 2 * slice_tuples))


def whole_graph_bytes(scale):
    """The host bytes of `memory_phases` that every rank holds for all N vertices, whatever P, at the BFS pass:
    places (the BFS's labels met, the validator's endpoints), the BFS's visited and frontier bitmaps."""
    return int(WHOLE_GRAPH_BYTES_PER_VERTEX * (1 << scale))


def set_threads_per_rank(comm):
    """Give each rank an equal share of its host's cores as Numba threads, unless NUMBA_NUM_THREADS says.

    Returns the threads of this rank.
    """
    _, ranks_here = host_placement(comm)  # collective on every rank
    if "NUMBA_NUM_THREADS" not in os.environ:
        cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
        numba.set_num_threads(max(1, min(numba.config.NUMBA_NUM_THREADS, cores // ranks_here)))
    return numba.get_num_threads()


def partition_graph(comm, blocks, src, dst, weights):
    """Kernel 1 on P ranks: this rank's `PartitionedGraph` from the tuples every rank holds (collective)."""
    weighted = weights is not None
    src, dst = np.ascontiguousarray(src), np.ascontiguousarray(dst)  # uint32 or int64 labels, as generated
    weights = np.ascontiguousarray(weights, dtype=np.float32) if weighted else np.empty(0, dtype=np.float32)
    num_chunks = max(1, min(src.shape[0], CHUNKS_PER_THREAD * numba.get_num_threads()))
    counts = np.zeros((num_chunks, comm.size), dtype=np.int64)
    _count_by_owner(src, dst, blocks.block, counts)
    rank_begin, cursors = write_positions(counts)
    label_dtype = stored_label_dtype(blocks.num_vertices)  # uint32 up to 2^32 vertices: 12 bytes a tuple sent
    send = (np.empty(rank_begin[-1], dtype=label_dtype), np.empty(rank_begin[-1], dtype=label_dtype),
            np.empty(rank_begin[-1] if weighted else 0, dtype=np.float32))
    _scatter_by_owner(src, dst, weights, blocks.block, cursors, *send)
    received = list(comm.alltoallv(send if weighted else send[:2], np.diff(rank_begin))[0])
    del send
    first_vertex = blocks.begin(comm.rank)
    # the received tuples handed over alone: the builder frees them once they are its keys
    offsets, neighbors, row_weights = build_rows(received.pop(0), received.pop(0), blocks.num_vertices,
                                                 received.pop(0) if weighted else None,
                                                 first_vertex, blocks.count(comm.rank))
    return PartitionedGraph(blocks.num_vertices, first_vertex, offsets, neighbors, row_weights, comm, blocks)


@numba.njit(inline="always", cache=True)
def _owners(u, v, block):
    """The ranks a tuple goes to: the owner of each endpoint, -1 for the second when one rank owns both."""
    first = u // block
    second = v // block
    return first, second if second != first else -1


@numba.njit(parallel=True, cache=True)
def _count_by_owner(src, dst, block, counts):
    """``counts[chunk, rank]``: tuples of the chunk to send to the rank (self-loops go nowhere: no rule and no row
    reads them)."""
    num_chunks = counts.shape[0]
    for chunk in numba.prange(num_chunks):
        begin, end = equal_share(chunk, num_chunks, src.shape[0])
        for i in range(begin, end):
            if src[i] != dst[i]:
                first, second = _owners(src[i], dst[i], block)
                counts[chunk, first] += 1
                if second >= 0:
                    counts[chunk, second] += 1


@numba.njit(parallel=True, cache=True)
def _scatter_by_owner(src, dst, weights, block, cursors, send_src, send_dst, send_weights):
    """Write every tuple at its chunk's cursor in each destination rank's region of the send buffers."""
    for chunk in numba.prange(cursors.shape[0]):
        cursor = cursors[chunk]
        begin, end = equal_share(chunk, cursors.shape[0], src.shape[0])
        for i in range(begin, end):
            if src[i] != dst[i]:
                first, second = _owners(src[i], dst[i], block)
                for rank in (first, second):
                    if rank >= 0:
                        slot = cursor[rank]
                        cursor[rank] = slot + 1
                        send_src[slot] = src[i]
                        send_dst[slot] = dst[i]
                        if send_weights.shape[0] > 0:
                            send_weights[slot] = weights[i]
