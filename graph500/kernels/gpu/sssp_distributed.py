"""Kernel 3, ``gpu-distributed-delta-stepping``: delta-stepping SSSP over the GPUs of P ranks.

The one-GPU kernel (`graph500.kernels.gpu.sssp`: buckets of width delta,
light phases on the inner short edges, heavy phases, the Bellman-Ford tail
once the settled vertices hold half the edges) on each rank's block of a
`graph500.kernels.graph.PartitionedGraph`, with one exchange after every
relaxation: a candidate for a vertex of another block is reduced per vertex
in the rank's staging words and sent to its owner once
(`graph500.kernels.gpu.requests`; a large relaxation's in a blind part as
wide as the pair's last one predicts, so most need no second exchange),
who offers it to the vertex's state as
its own relaxations do (``offer_requests``: a lower distance takes the
state and, in a light phase, puts the vertex in the next frontier and the
bucket's members). Whether a bucket has a frontier, the least distance past
it and the settled edges are summed or maximised over the ranks (MPI). A
heavy phase pushes, or pulls from the distances of its bucket's members (sent
to every rank as pairs in the requests' send buffers where they are few,
else every vertex's distance allgathered: 4 bytes a vertex). At P = 1 it is
the one-GPU kernel itself.

Data structures per GPU, beyond the one-GPU kernel's for the rank's n
vertices: the requests' staging words (uint64, N) and touched bitmap (N
bits), their send buffers (12 bytes a vertex of the whole graph) and receive
buffers (the blind part's, and the wide parts' and the rest's grown to the largest exchange), the
gathered distances (float32, N), four CUDA graphs of a small light step.

Small light steps (at most 2048 vertices and ``small_edges`` frontier edges
over every rank) run as captured CUDA graphs, ``graph_steps`` a counter read,
as the BFS's small levels: the step decided on the device, the frontier
staged in each block, the blind exchange, the offers, the next frontier's
counts summed by NCCL.

Tunables: the one-GPU kernel's, and ``pull_members`` (PULL_MEMBERS 1/8: a
heavy pull from at most that share of the N vertices sends the members'
12-byte pairs, not 4 bytes of every vertex: pairs move less below a third,
and their scatter writes at random), ``small_edges`` (SMALL_STEP_EDGES 2^16,
the requests' blind capacity: a captured step's candidates always fit it),
``graph_steps`` (GRAPH_STEPS 2, as the BFS's ``graph_levels``). Their
measurements: docs/measurements.md.
"""

from graph500.kernels import register
from graph500.kernels.gpu.bfs_distributed import device_part
from graph500.kernels.gpu.sssp import DeltaSteppingSSSP


@register(distributed_default=True)
class DistributedDeltaSteppingSSSP(DeltaSteppingSSSP):
    """Delta-stepping over the ranks of ``graph.comm``, one GPU each, candidates reduced per vertex and sent to
    their owners."""

    name = "gpu-distributed-delta-stepping"
    distributed = True

    def __init__(self, graph, **options):
        super().__init__(device_part(graph, self.name), **options)
