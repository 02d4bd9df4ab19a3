"""Validate a BFS or SSSP result split over the P ranks of a run (``mpiexec -n P graph500 run``).

On P ranks every rank holds a slice of the input tuples (rank r generated
tuples ``partition.tuple_range(M, r, P)``) and the result for the vertices it
owns (``partition.VertexBlocks``: parents, int64 global labels, -1 where
unreached, and for SSSP float32 distances, each of length
``blocks.count(r)``).  `DistributedValidationGraph` prepares this rank's slice
once per graph; the public ``graph500.validators.validate_bfs`` and
``validate_sssp`` dispatch here when given one.  Every call is collective:
all ranks call with the same root, in the same order.

The design is the simple robust one:

1. Lengths first.  The ranks exchange their parts' shapes and dtypes and the
   root (one small ``allgather_object``); a part whose length is not
   ``blocks.count(r)`` breaks ``parents-length`` (``distances-length``), the
   message naming the rank ("rank r's part of the parent array has shape
   ..."), the same on every rank.
2. Vertex rules on whole arrays.  Every rank gets the whole parent array
   (and distance array) and runs the single-process validator's vertex
   rules on them, unchanged: `common.check_parents` (parent-out-of-range,
   root-not-self-parent), the self-parent rule (``tree-edge-level``, BFS),
   `common.tree_levels` (pointer jumping, ``cycle``), `sssp.check_distances`
   (``root-distance``).  The ranks read identical arrays, so they raise
   identical errors without talking.  On host buffers the whole arrays are
   gathered arrays of the communicator (one shared copy a host where the
   ranks share its memory, else an allgather); every rank also holds N * 4
   bytes of levels and the single-process validator's N-sized work arrays.
3. Tuple rules on this rank's tuples.  Each rank runs the single-process
   pass (`bfs.edge_pass`, `sssp.edge_pass`: the fused Numba pass, or the
   array-generic one) over its own slice, with the whole levels / parents /
   distances: ``reached-unreached-edge``, then ``level-jump`` (BFS) or
   ``distance-not-minimal`` (SSSP), each tuple checked by the rank that
   generated it.  The pass also fills a bool array of all N vertices: those
   its tuples confirm (joined to their parent by a tuple, for SSSP one of
   weight w with dist[v] == dist[parent] + w).
4. One ``allgather_object`` of each rank's first fault (or None) and its
   nedge share.  If any rank found a fault, every rank raises the same
   ValidationError: the fault of the earliest rule in the single-process
   order (reached-unreached-edge before the second tuple rule) that any rank
   found, as found by the lowest such rank.  (A single process reports a
   reached-unreached tuple before any level jump; so does this.)
5. Confirmation.  ``comm.allreduce(confirmed, "or")``: a vertex is confirmed
   if ANY rank's tuples confirm it, since its tree edge may be a tuple that
   another rank generated.  The first reached vertex other than the root
   that stays unconfirmed breaks ``tree-edge-not-in-graph`` (BFS) or
   ``unconfirmed-distance`` (SSSP), on every rank alike.
6. nedge (spec section 5): the ranks' counts of their tuples with both
   endpoints reached (self-loops excluded, duplicates included), summed.

Errors and messages are the single-process validator's (with P = 1 its very
result); a caller's mistake raises the same error on every rank.

`DistributedValidationGraph.count_reached_tuples(local_reached)` gives nedge
of a run without validation: the first-endpoint counts of all ranks' tuples
are summed once (one allreduce of N int64 in `from_edges`) and each rank
keeps those of its own vertices, so a search costs one scalar allreduce.

Arrays travel through the communicator only, in the array module of the
rank's tuples: NumPy with MPI, CuPy with NCCL (every step on the rank's GPU).
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
