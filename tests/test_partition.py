"""The pieces under a run of P ranks: the partition, a block's rows, the exchange, the communicators."""

import multiprocessing

import numpy as np
import pytest
from support import needs_mpi, run_ranks

from graph500.comm import SelfCommunicator, launched_by_mpi
from graph500.distributed import memory_estimate_bytes, partition_graph
from graph500.errors import Graph500Error
from graph500.generators import kronecker
from graph500.kernels.cpu.build import build_csr, build_rows
from graph500.partition import DistinctLabels, VertexBlocks, tuple_range


@pytest.mark.parametrize("num_vertices, num_ranks", [(512, 1), (512, 2), (512, 3), (1 << 12, 5), (1 << 12, 64), (100, 2)])
def test_blocks_cover_the_vertices_in_whole_words(num_vertices, num_ranks):
    blocks = VertexBlocks(num_vertices, num_ranks)
    assert blocks.begin(0) == 0 and blocks.end(num_ranks - 1) == num_vertices
    for rank in range(num_ranks):
        assert blocks.begin(rank) % 64 == 0
        assert blocks.count(rank) > 0
        if rank:
            assert blocks.begin(rank) == blocks.end(rank - 1)
        vertices = np.arange(blocks.begin(rank), blocks.end(rank))
        assert (blocks.owner(vertices) == rank).all()
    assert blocks.counts().sum() == num_vertices


@pytest.mark.parametrize("num_vertices, num_ranks", [(512, 7), (512, 9), (64, 2), (1 << 12, 65)])
def test_a_partition_leaving_a_rank_empty_is_refused(num_vertices, num_ranks):
    with pytest.raises(Graph500Error, match=f"{num_ranks} ranks cannot share {num_vertices} vertices"):
        VertexBlocks(num_vertices, num_ranks)


def test_tuple_ranges_cut_the_list_in_order():
    for num_tuples, num_ranks in [(16, 3), (1000, 7), (5, 8)]:
        ranges = [tuple_range(num_tuples, rank, num_ranks) for rank in range(num_ranks)]
        assert ranges[0][0] == 0 and ranges[-1][1] == num_tuples
        assert all(ranges[i][1] == ranges[i + 1][0] for i in range(num_ranks - 1))


def test_the_rows_of_blocks_are_the_whole_graphs_rows():
    src, dst, weights = kronecker.generate_edges(11, 8, 5, 7, 0, 8 << 11)
    num_vertices = 1 << 11
    whole = build_csr(src, dst, num_vertices, weights)
    for first, last in [(0, 64), (64, 1000), (1000, num_vertices), (0, num_vertices), (5, 5)]:
        offsets, neighbors, row_weights = build_rows(src, dst, num_vertices, weights, first, last - first)
        assert (offsets == whole.offsets[first:last + 1] - whole.offsets[first]).all()
        span = slice(whole.offsets[first], whole.offsets[last])
        assert (neighbors == whole.neighbors[span]).all()
        assert (row_weights == whole.weights[span]).all()
    with pytest.raises(ValueError, match="not within"):
        build_rows(src, dst, num_vertices, weights, 2000, 100)


def test_one_rank_partitions_into_the_whole_graph():
    src, dst, weights = kronecker.generate_edges(10, 16, 2, 3, 0, 16 << 10)
    part = partition_graph(SelfCommunicator(), VertexBlocks(1 << 10, 1), src, dst, weights)
    whole = build_csr(src, dst, 1 << 10, weights)
    assert part.first_vertex == 0 and part.num_local == 1 << 10
    assert (part.offsets == whole.offsets).all() and (part.neighbors == whole.neighbors).all()
    assert (part.weights == whole.weights).all()


def test_self_communicator_collectives_are_identities():
    comm = SelfCommunicator()
    values = np.array([3, 1, 2])
    assert comm.allreduce(values, "max") is not values and (comm.allreduce(values, "max") == values).all()
    assert comm.allreduce(5, "sum") == 5
    total = np.zeros(3, dtype=values.dtype)
    assert comm.allreduce(values, "sum", out=total) is total and total.tolist() == [3, 1, 2]
    (received,), counts = comm.alltoallv((values,), np.array([3]))
    assert (received == values).all() and counts.tolist() == [3]
    into = (np.zeros(5, dtype=values.dtype),)
    (placed,), _ = comm.alltoallv((np.array([9, 9, 3, 1]),), np.array([2]), out=into, send_displacements=[2])
    assert placed.tolist() == [3, 1] and into[0].tolist() == [3, 1, 0, 0, 0]
    (placed,), _ = comm.alltoallv((np.array([7, 8]),), np.array([2]), out=into, receive_displacements=[3])
    assert placed.tolist() == [3, 1, 0, 7, 8] and into[0].tolist() == [3, 1, 0, 7, 8]
    with pytest.raises(ValueError):
        comm.alltoallv((values,), np.array([3]), receive_displacements=[1])
    with comm.group():
        (received,), _ = comm.alltoallv((values,), np.array([3]))
    assert received.tolist() == [3, 1, 2]
    assert (comm.allgather(values) == values).all()
    with pytest.raises(ValueError):
        comm.allreduce(values, "product")
    gathered = comm.gathered_array([3], np.uint64)
    gathered.local[:] = [4, 5, 6]
    gathered.publish()
    assert gathered.whole.tolist() == [4, 5, 6]


def test_memory_estimate_shrinks_per_rank_with_more_ranks():
    assert memory_estimate_bytes(22, 16, 4) < memory_estimate_bytes(22, 16, 2) < memory_estimate_bytes(22, 16, 1)


def test_a_plain_process_is_not_an_mpi_rank(monkeypatch):
    for name in ("PMI_SIZE", "OMPI_COMM_WORLD_SIZE"):
        monkeypatch.delenv(name, raising=False)
    assert not launched_by_mpi()
    monkeypatch.setenv("PMI_SIZE", "1")
    assert not launched_by_mpi()
    monkeypatch.setenv("OMPI_COMM_WORLD_SIZE", "4")
    assert launched_by_mpi()


def test_a_process_a_rank_spawned_is_not_a_rank(monkeypatch):
    monkeypatch.setenv("PMI_SIZE", "4")  # inherited from the launcher by the rank's helpers
    context = multiprocessing.get_context("spawn")
    with context.Pool(1) as pool:
        assert pool.apply(launched_by_mpi) is False
    assert launched_by_mpi()


COLLECTIVES = """
import os
import numpy as np
from graph500.comm import world
comm = world()
rank, size = comm.rank, comm.size
assert size == 3, size
# allgather of uneven parts, in rank order
assert comm.allgather(np.full(rank + 1, rank)).tolist() == [0, 1, 1, 2, 2, 2]
# allreduce: sum, max, min, or (booleans)
assert comm.allreduce(np.array([rank, -rank]), "sum").tolist() == [3, -3]
assert comm.allreduce(rank, "max") == 2 and comm.allreduce(rank, "min") == 0
total = np.zeros(2, dtype=np.int64)
assert comm.allreduce(np.array([rank, 1]), "sum", out=total) is total and total.tolist() == [3, 3]
flags = np.zeros(3, dtype=bool); flags[rank] = rank != 1
assert comm.allreduce(flags, "or").tolist() == [True, False, True]
# alltoallv: rank r sends r + d copies of 10 r + d to rank d
counts = np.array([rank + d for d in range(size)])
values = np.concatenate([np.full(rank + d, 10 * rank + d) for d in range(size)])
(received, doubled), received_counts = comm.alltoallv((values, 2.0 * values), counts)
expected = np.concatenate([np.full(source + rank, 10 * source + rank) for source in range(size)])
assert received.tolist() == expected.tolist() and (doubled == 2.0 * expected).all()
assert received_counts.tolist() == [source + rank for source in range(size)]
(again,), again_counts = comm.alltoallv((values,), counts, received_counts)  # the counts known: not exchanged
assert again.tolist() == expected.tolist() and again_counts.tolist() == received_counts.tolist()
# the parts at given displacements (segments of 5 with gaps), received into a given buffer
segments = np.full(5 * size, -1)
for d in range(size):
    segments[5 * d:5 * d + rank + d] = 10 * rank + d
into = (np.full(20, -7),)
(placed,), _ = comm.alltoallv((segments,), counts, out=into, send_displacements=5 * np.arange(size))
assert placed.tolist() == expected.tolist() and into[0][:expected.size].tolist() == expected.tolist()
# received at given displacements (rank s's part at 6 s, inside a group)
with comm.group():
    (spaced,), _ = comm.alltoallv((values,), counts, received_counts, out=(np.full(20, -7),),
                                  receive_displacements=6 * np.arange(size))
assert spaced.size == 6 * (size - 1) + size - 1 + rank
for source in range(size):
    assert spaced[6 * source:6 * source + source + rank].tolist() == [10 * source + rank] * (source + rank)
assert comm.bcast(rank * 7, root=2) == 14
# a sleeping barrier waits for the slowest rank as a barrier does
import time
started = time.perf_counter()
if rank == 0:
    time.sleep(0.3)
comm.barrier(sleep=True)
assert time.perf_counter() - started >= 0.3 - 0.05 or rank == 0
# gathered arrays: one host, so a shared window; each rank writes its part, publishes, reads the whole, twice
gathered = comm.gathered_array([1, 2, 3], np.uint64)
assert type(gathered).__name__ == "SharedGatheredArray" and gathered.whole.tolist() == [0] * 6
comm.barrier()  # every rank has read the zeros before any writes its part
for round_ in (1, 2):
    gathered.local[:] = 10 * round_ + rank
    gathered.publish()
    assert gathered.whole.tolist() == [10 * round_, 10 * round_ + 1, 10 * round_ + 1] + [10 * round_ + 2] * 3
    comm.barrier()  # no rank writes the next round's parts before every rank has read this one
gathered.free()
assert gathered.whole is None and gathered.local is None
# a freed window gives its memory back: 24 windows of 64 MiB a host made and freed in turn leave the address space
# about as it was (MPI frees a window only when told)
def mapped_bytes():
    with open("/proc/self/statm") as statm:
        return int(statm.read().split()[0]) * os.sysconf("SC_PAGE_SIZE")
before = mapped_bytes()
for _ in range(24):
    comm.gathered_array([1 << 23] * size, np.uint64).free()
assert mapped_bytes() - before < 8 * (64 << 20) * size, (mapped_bytes() - before) / 2**20
print("ok", rank)
"""

@needs_mpi
def test_mpi_communicator_collectives_on_three_ranks(tmp_path):
    script = tmp_path / "collectives.py"
    script.write_text(COLLECTIVES)
    result = run_ranks(3, script, timeout=120)
    assert result.returncode == 0, result.stderr
    assert result.stdout.count("ok") == 3  # the ranks' lines may interleave


def test_distinct_labels_place_each_label_and_ask_its_owner():
    """The distinct labels of two arrays, sorted; each label's place among them (-1 kept, an absent label past
    them); one rank's values of them from its own block."""
    rng = np.random.default_rng(3)
    first, second = rng.integers(0, 1000, size=300), rng.integers(0, 1000, size=200)
    distinct = DistinctLabels((first, second), 1000)
    expected = np.unique(np.concatenate((first, second)))
    assert np.array_equal(distinct.labels, expected)
    probe = np.array([-1, *expected.tolist(), *np.setdiff1d(np.arange(1000), expected)[:5].tolist()])
    places = distinct.places(probe, np.empty(probe.shape[0], dtype=np.int32))
    assert places[0] == -1
    assert np.array_equal(places[1:1 + expected.shape[0]], np.arange(expected.shape[0]))
    assert (places[1 + expected.shape[0]:] == expected.shape[0]).all()
    values = np.arange(1000) * 7
    assert np.array_equal(distinct.values_from_owners(SelfCommunicator(), VertexBlocks(1000, 1), values),
                          expected * 7)
