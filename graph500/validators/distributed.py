"""Validate a BFS or SSSP result split over the P ranks of a run (``mpiexec -n P graph500 run``).

On P ranks every rank holds a slice of the input tuples (rank r generated
``partition.tuple_range(M, r, P)``) and the result for the vertices it owns
(``partition.VertexBlocks``: parents, global labels, -1 unreached, and for
SSSP float32 distances, ``blocks.count(r)`` each). `DistributedValidationGraph`
prepares the slice once per graph; ``graph500.validators.validate_bfs`` and
``validate_sssp`` dispatch here when given one. Every call is collective.

1. Lengths: one ``allgather_object`` of the parts' shapes and the root; a
   wrong one breaks ``parents-length`` (``distances-length``), naming the rank.
2. Vertex rules on the whole arrays (gathered: one shared copy a host where
   the ranks share its memory, else an allgather): the single-process rules
   unchanged (parent range, root, self-parent, pointer-jumping levels and
   ``cycle``, ``root-distance``), identical on every rank without talking.
3. Tuple rules on the rank's own tuples (`bfs.edge_pass`, `sssp.edge_pass`):
   ``reached-unreached-edge``, then ``level-jump`` or ``distance-not-minimal``;
   the pass also marks the vertices its tuples confirm (joined to their
   parent by a tuple; for SSSP one of weight w with dist[v] == dist[parent] + w).
4. One ``allgather_object`` of each rank's first fault and nedge share: every
   rank raises the fault of the earliest rule any rank found, as the lowest
   such rank found it (the single-process order).
5. Confirmation: ``allreduce(confirmed, "or")`` (a tree edge may be another
   rank's tuple); the first reached non-root vertex left unconfirmed breaks
   ``tree-edge-not-in-graph`` or ``unconfirmed-distance``.
6. nedge: the ranks' counts of tuples with both endpoints reached, summed.

Errors and messages are the single-process validator's (P = 1 gives its very
result). `DistributedValidationGraph.count_reached_tuples(local_reached)`
gives nedge without validation (the first-endpoint counts summed once in
`from_edges`, one scalar allreduce a search). Arrays travel through the
communicator only, in the array module of the rank's tuples: NumPy with MPI,
CuPy with NCCL. The longer text: docs/kernels/distributed-validator.md.
"""

import numpy

from ..errors import ValidationError
from . import bfs, sssp
from .common import ValidationGraph, array_module, check_parents, check_root, first_unconfirmed, tree_levels, wrong_length

# The tuple rules, in the order a single process reports them.
_TUPLE_RULE_ORDER = {"reached-unreached-edge": 0, "level-jump": 1, "distance-not-minimal": 1}


class DistributedValidationGraph:
    """This rank's input tuples, prepared once per graph for validating every search distributed over `comm`.

    Attributes: `comm`, `blocks` (`graph500.partition.VertexBlocks`),
    `num_vertices`, `local` (the `ValidationGraph` of this rank's tuple
    slice, over all N labels), `owned_first_endpoint_counts` (int64, one per
    owned vertex: how many of all ranks' tuples, self-loops dropped, have it
    as first endpoint).
    """

    distributed = True

    def __init__(self, comm, blocks, local, owned_first_endpoint_counts):
        self.comm = comm
        self.blocks = blocks
        self.local = local
        self.num_vertices = local.num_vertices
        self.owned_first_endpoint_counts = owned_first_endpoint_counts
        self._gathered = {}  # name -> the comm.gathered_array every validation refills (host buffers)

    @property
    def xp(self):
        """The array module of this rank's tuples (NumPy, or CuPy with a device communicator)."""
        return array_module(self.local.src)

    @property
    def weights(self):
        """This rank's tuple weights (None when the graph was prepared without weights)."""
        return self.local.weights

    @classmethod
    def from_edges(cls, comm, blocks, src, dst, num_vertices, weights=None):
        """Prepare this rank's tuple slice (src[i], dst[i]) with optional float32 weights (collective).

        Bad input on any rank raises the same ValueError on every rank.
        """
        num_vertices = int(num_vertices)
        problem, local = None, None
        try:
            if blocks.num_vertices != num_vertices or blocks.num_ranks != comm.size:
                raise ValueError(f"the blocks partition {blocks.num_vertices} vertices over {blocks.num_ranks} "
                                 f"ranks, not {num_vertices} over {comm.size}")
            local = ValidationGraph.from_edges(src, dst, num_vertices, weights)
        except ValueError as error:
            problem = str(error)
        reports = comm.allgather_object((problem, weights is not None))
        for rank, (rank_problem, _) in enumerate(reports):
            if rank_problem is not None:
                raise ValueError(rank_problem if comm.size == 1 else f"rank {rank}: {rank_problem}")
        if len({weighted for _, weighted in reports}) > 1:
            raise ValueError("some ranks gave weights and others did not")
        xp = array_module(local.src)
        counts = comm.allreduce(xp.ascontiguousarray(local.first_endpoint_counts, dtype=xp.int64), "sum")
        owned = counts[blocks.begin(comm.rank):blocks.end(comm.rank)].copy()
        return cls(comm, blocks, local, owned)

    def count_reached_tuples(self, local_reached):
        """nedge of a search from this rank's part of `reached` (one bool per owned vertex), on every rank.

        Counts the tuples whose first endpoint is reached: both endpoints are,
        once reached-unreached-edge holds (see `common.ValidationGraph`).
        """
        local_reached = _in(self.xp, local_reached)
        count = self.blocks.count(self.comm.rank)
        problem = None
        if local_reached.shape != (count,):
            problem = (f"rank {self.comm.rank}'s part of reached has shape {local_reached.shape}, "
                       f"expected ({count},)")
            share = 0
        else:
            share = int((self.owned_first_endpoint_counts * local_reached).sum())
        reports = self.comm.allgather_object((problem, share))
        for rank_problem, _ in reports:
            if rank_problem is not None:
                raise ValueError(rank_problem)
        return sum(rank_share for _, rank_share in reports)


def validate_bfs(vg, root, parents, *, engine="auto"):
    """`bfs.validate_bfs` of a result split over the ranks: `parents` is this rank's part (collective)."""
    kernel, xp = bfs.KERNEL, vg.xp
    root, shapes = _exchange_shapes(vg, root, parents, None)
    parents = _gather_parents(vg, kernel, root, parents, shapes)
    reached = check_parents(kernel, vg, root, parents)
    bfs.check_self_parents(xp, parents, root, reached)
    levels = tree_levels(kernel, parents, root, reached, engine)
    parents = parents.astype(vg.local.src.dtype, copy=False)
    confirmed = xp.zeros(vg.num_vertices, dtype=xp.bool_)
    reached_unreached, level_jump, _ = bfs.edge_pass(xp, vg.local, root, reached, levels, parents, engine,
                                                     confirmed)
    fault = _fault(bfs.raise_tuple_fault, vg.local, reached, levels, reached_unreached, level_jump)
    return _settle(vg, root, reached, fault, confirmed, lambda vertex: bfs.raise_unconfirmed(parents, vertex))


def validate_sssp(vg, root, parents, distances, *, engine="auto"):
    """`sssp.validate_sssp` of a result split over the ranks: `parents` and `distances` are this rank's parts
    (collective)."""
    if vg.weights is None:
        raise ValueError("SSSP validation needs a ValidationGraph built with weights")
    kernel, xp = sssp.KERNEL, vg.xp
    root, shapes = _exchange_shapes(vg, root, parents, distances)
    parents = _gather_parents(vg, kernel, root, parents, shapes)
    reached = check_parents(kernel, vg, root, parents)
    _check_part_lengths(vg, kernel, "distances-length", "distance", [shape[2] for shape in shapes])
    distances = _whole(vg, "distances", distances, xp.float32)
    distances = sssp.check_distances(vg, root, distances)
    tree_levels(kernel, parents, root, reached, engine)
    parents = parents.astype(vg.local.src.dtype, copy=False)
    confirmed = xp.zeros(vg.num_vertices, dtype=xp.bool_)
    reached_unreached, not_minimal, _ = sssp.edge_pass(xp, vg.local, root, reached, parents, distances,
                                                       engine, confirmed)
    fault = _fault(sssp.raise_tuple_fault, vg.local, reached, distances, reached_unreached, not_minimal)
    return _settle(vg, root, reached, fault, confirmed,
                   lambda vertex: sssp.raise_unconfirmed(parents, distances, vertex))


def _in(xp, array):
    """``array`` as an array of module ``xp``: copied between the host and the device where it is not."""
    if array_module(array) is xp:
        return array
    return xp.asarray(array) if xp is not numpy else array.get()


def _exchange_shapes(vg, root, parents, distances):
    """``(root, shapes)``: check that every rank validates the same root, a vertex; shapes[r] is rank r's
    ``(parents shape, parents dtype, distances shape or None)``."""
    root = int(root)
    mine = (root, tuple(parents.shape), numpy.dtype(parents.dtype).str,
            None if distances is None else tuple(distances.shape))
    reports = vg.comm.allgather_object(mine)
    roots = sorted({report[0] for report in reports})
    if len(roots) > 1:
        raise ValueError(f"the ranks validate searches from different roots: {roots}")
    check_root(vg.num_vertices, root)
    return root, [report[1:] for report in reports]


def _gather_parents(vg, kernel, root, parents, shapes):
    """The whole parent array (int64), every rank's part having been checked for length and dtype."""
    _check_part_lengths(vg, kernel, "parents-length", "parent", [shape[0] for shape in shapes])
    for rank, (_, dtype, _) in enumerate(shapes):
        if numpy.dtype(dtype).kind != "i":
            part = "" if vg.comm.size == 1 else f"rank {rank}'s "
            raise TypeError(f"{part}parents must be a signed integer array, not {numpy.dtype(dtype)}")
    return _whole(vg, "parents", parents, vg.xp.int64)


def _whole(vg, name, part, dtype):
    """The whole array of every rank's `part` (checked for length), as `dtype`: on host buffers the gathered
    array that `vg` keeps for `name` (`comm.gathered_array`: one copy a host where the ranks share its memory),
    refilled by every validation; on a device communicator an allgather."""
    part = _in(vg.xp, part).astype(dtype, copy=False)
    if vg.xp is not numpy:
        return vg.comm.allgather(part)
    gathered = vg._gathered.get(name)
    if gathered is None:
        gathered = vg._gathered[name] = vg.comm.gathered_array(
            [vg.blocks.count(rank) for rank in range(vg.comm.size)], dtype)
    vg.comm.barrier()  # no rank still reads the previous validation's array
    gathered.local[:] = part
    gathered.publish()
    return gathered.whole


def _check_part_lengths(vg, kernel, rule, name, shapes):
    """Raise `rule` for the first rank whose part (of shape shapes[r]) is not its block's length."""
    blocks = vg.blocks
    for rank, shape in enumerate(shapes):
        count = blocks.count(rank)
        if shape != (count,):
            part = "" if vg.comm.size == 1 else (f"rank {rank}'s part (vertices {blocks.begin(rank)} to "
                                                 f"{blocks.end(rank) - 1}) of ")
            raise wrong_length(kernel, rule, name, shape, count, part)


def _fault(raise_fault, *args):
    """This rank's tuple fault as ``(kernel, rule, message, vertex, edge)`` (picklable), or None."""
    try:
        raise_fault(*args)
    except ValidationError as error:
        prefix = f"{error.kernel} validation failed, rule {error.rule}: "
        return (error.kernel, error.rule, str(error)[len(prefix):], error.vertex, error.edge)
    return None


def _settle(vg, root, reached, fault, confirmed, raise_unconfirmed):
    """Steps 4-6 of the module docstring: the same fault or nedge on every rank."""
    comm = vg.comm
    share = vg.local.count_reached_tuples(reached)
    reports = comm.allgather_object((fault, share))
    faults = [(_TUPLE_RULE_ORDER[fault[1]], rank, fault) for rank, (fault, _) in enumerate(reports)
              if fault is not None]
    if faults:
        kernel, rule, message, vertex, edge = min(faults, key=lambda item: item[:2])[2]
        raise ValidationError(kernel, rule, message, vertex=vertex, edge=edge)
    confirmed = comm.allreduce(confirmed, "or")
    raise_unconfirmed(first_unconfirmed(vg.xp, reached, confirmed, root))
    return sum(rank_share for _, rank_share in reports)
