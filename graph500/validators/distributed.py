"""Validate a BFS or SSSP result split over the P ranks of a run (``mpiexec -n P graph500 run``), owner-computed.

On P ranks every rank holds a slice of the input tuples (rank r generated
``partition.tuple_range(M, r, P)``) and the result for the vertices it owns
(``partition.VertexBlocks``: parents, global labels, -1 unreached, and for
SSSP float32 distances, ``blocks.count(r)`` each). No rank holds an array of
all N vertices but a bitmap: `DistributedValidationGraph` keeps the rank's tuples under
compressed labels (the distinct endpoints of its slice in label order, so
the tuples keep their order and grouping; one more label stands for every
other vertex) and knows which of its vertices each rank's tuples name.
``graph500.validators.validate_bfs`` and ``validate_sssp`` dispatch here
when given one. Every call is collective.

1. Lengths: one ``allgather_object`` of the parts' shapes and the root; a
   wrong one breaks ``parents-length`` (``distances-length``), naming the rank.
2. Vertex rules on each rank's block (parent range, the root's parent, BFS
   self-parents, the root's distance): the lowest offending vertex over the
   ranks (blocks are in label order), as one process finds it.
3. Levels: a BFS (the fused passes' engines) from the root, a round a
   level: round k every rank publishes the bits of its vertices at level k
   (a gathered bitmap of all N) and its unleveled vertices whose parent's
   bit is set take level k + 1 (`common.levels_from_root`); elsewhere (the
   array-generic engine), for a tree deeper than ``LEVEL_ROUNDS`` and for an
   SSSP where the tuple pass leaves a doubt, by pointer jumping: a round asks
   the owners of the pending vertices' ancestors for their (ancestor, depth), an
   alltoallv of requests and one of answers. ``cycle`` where a reached
   vertex's chain does not reach the root. An SSSP (the fused passes, Numba
   or CUDA) decides ``cycle`` after steps 4-5 instead, raising it before
   their faults: where no rank found a tuple fault and every reached vertex
   is confirmed (a tuple joins it to its reached parent with dist == the
   parent's + w) distances never rise along a chain, and where the ties the
   tuple pass noted (a vertex as near as its parent; gathered on every rank)
   form no cycle, no chain cycles and the rounds are not needed
   (`sssp.chains_end`, as one process decides it).
4. Tuple rules on the rank's own tuples (`bfs.edge_pass`, `sssp.edge_pass`
   under the compressed labels): the endpoints' parents and levels or
   distances fetched from their owners (an alltoallv a value); every rank
   raises the earliest rule any rank found, as the lowest such rank found it,
   in global labels.
5. Confirmation: a byte an endpoint, whether a tuple confirmed it, goes back
   to its owner in the order the owner's requests named it (an alltoallv);
   the lowest reached non-root vertex left unconfirmed breaks
   ``tree-edge-not-in-graph`` or ``unconfirmed-distance``.
6. nedge: the ranks' counts of their tuples with a reached first endpoint.

Memory a rank: its tuples, its block's values, a few values an endpoint of
its tuples and a bitmap of those endpoints with a count a word (N / 8 bytes
each: parents relabelled in O(1)); the levels' two bitmaps of all N while
they are found. Errors and messages are the single-process validator's (P = 1
gives its very result). `count_reached_tuples(local_reached)` gives nedge
without validation (the owners' first-endpoint counts, one scalar exchange a
search). Arrays travel through the communicator, in the array module of the
rank's tuples: NumPy with MPI, CuPy with NCCL. The longer text:
docs/kernels/distributed-validator.md.
"""

import math

import numba
import numpy

from ..errors import ValidationError
from ..partition import DistinctLabels, bitmap_words, index_dtype_for
from . import bfs, device, sssp
from .common import (TIES_ON_DEVICE, TIES_PER_CHUNK, TUPLE_CHUNK, ValidationGraph,
                     array_module, check_edges, check_root, first_self_parent, first_true, levels_from_root,
                     raise_cycle, raise_out_of_range, raise_root_not_self_parent, reached_and_out_of_range,
                     staged_chunks, use_cuda, use_numba, wrong_length)

# The tuple rules, in the order a single process reports them.
_TUPLE_RULE_ORDER = {"reached-unreached-edge": 0, "level-jump": 1, "distance-not-minimal": 1}
# Confirmations go to the endpoints' owners as the confirmed endpoints' labels where those bytes, over every rank,
# are fewer than LABEL_CONFIRMATIONS times the ranks' endpoints (a byte each otherwise): about a tenth of a rank's
# endpoints are confirmed at P = 16, most of them at P = 2, where a byte an endpoint moves less.
LABEL_CONFIRMATIONS = 1.0


class DistributedValidationGraph:
    """This rank's input tuples, prepared once per graph for validating every search distributed over `comm`.

    Attributes: `comm`, `blocks` (`graph500.partition.VertexBlocks`),
    `num_vertices`, `endpoints` (the distinct endpoints of this rank's
    tuples, sorted), `local` (the `ValidationGraph` of this rank's tuples
    under compressed labels: endpoint i is label i, label ``len(endpoints)``
    stands for any other vertex), `requested` (the local indices of this
    rank's vertices that each rank's tuples name, by rank) with
    `requested_counts`, `endpoint_counts` (this rank's endpoints by owner),
    `owned_first_endpoint_counts` (int64, one per owned vertex: how many of
    all ranks' tuples, self-loops dropped, have it as first endpoint),
    `distinct_endpoints` (the endpoints' places in O(1): NumPy's
    `partition.DistinctLabels`, CuPy's `device.LabelPlaces`).
    """

    distributed = True

    def __init__(self, comm, blocks, endpoints, local, requests, distinct_endpoints):
        self.comm = comm
        self.blocks = blocks
        self.num_vertices = blocks.num_vertices
        self.first = blocks.begin(comm.rank)
        self.endpoints = endpoints
        self.local = local
        self.endpoint_counts, self.requested, self.requested_counts = requests
        self.distinct_endpoints = distinct_endpoints  # the endpoints' places: `DistinctLabels`, `LabelPlaces`
        xp = self.xp
        counts = xp.ascontiguousarray(local.first_endpoint_counts[:endpoints.shape[0]], dtype=xp.int64)
        (received,), _ = comm.alltoallv((counts,), self.endpoint_counts, self.requested_counts)
        self.owned_first_endpoint_counts = xp.zeros(blocks.count(comm.rank), dtype=xp.int64)
        xp.add.at(self.owned_first_endpoint_counts, self.requested, received)

    @property
    def xp(self):
        """The array module of this rank's tuples (NumPy, or CuPy with a device communicator)."""
        return array_module(self.local.dst)

    @property
    def weights(self):
        """This rank's tuple weights (None when the graph was prepared without weights)."""
        return self.local.weights

    @classmethod
    def from_edges(cls, comm, blocks, src, dst, num_vertices, weights=None, empty=None):
        """Prepare this rank's tuple slice (src[i], dst[i]) with optional float32 weights (collective);
        ``empty(count, dtype)``: where CuPy tuples are kept relabelled (mapped host memory, say; default the
        device's).

        Bad input on any rank raises the same ValueError on every rank.
        """
        num_vertices = int(num_vertices)
        problem, prepared = None, None
        try:
            if blocks.num_vertices != num_vertices or blocks.num_ranks != comm.size:
                raise ValueError(f"the blocks partition {blocks.num_vertices} vertices over {blocks.num_ranks} "
                                 f"ranks, not {num_vertices} over {comm.size}")
            check_edges(src, dst, num_vertices, weights)
            prepared = _compressed(src, dst, weights, num_vertices, empty)
        except ValueError as error:
            problem = str(error)
        reports = comm.allgather_object((problem, weights is not None))
        for rank, (rank_problem, _) in enumerate(reports):
            if rank_problem is not None:
                raise ValueError(rank_problem if comm.size == 1 else f"rank {rank}: {rank_problem}")
        if len({weighted for _, weighted in reports}) > 1:
            raise ValueError("some ranks gave weights and others did not")
        endpoints, local, distinct = prepared
        endpoint_counts = blocks.counts_of(endpoints, array_module(endpoints))
        (requested,), requested_counts = comm.alltoallv((endpoints,), endpoint_counts)
        requested = (requested - blocks.begin(comm.rank)).astype(index_dtype_for(blocks.count(comm.rank)))
        return cls(comm, blocks, endpoints, local, (endpoint_counts, requested, requested_counts), distinct)

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

    def fetch(self, arrays, elsewhere):
        """The values of this rank's endpoints in each of ``arrays`` (each rank's block's values), then its
        ``elsewhere`` value for the label of every other vertex: arrays under the compressed labels (collective:
        one alltoallv)."""
        xp = self.xp
        answers = tuple(_gathered(numpy.ascontiguousarray(values), self.requested) if xp is numpy
                        else xp.ascontiguousarray(values[self.requested]) for values in arrays)
        compressed = [xp.empty(self.endpoints.shape[0] + 1, dtype=values.dtype) for values in arrays]
        self.comm.alltoallv(answers, self.requested_counts, self.endpoint_counts, out=compressed)  # received in place
        for values, value in zip(compressed, elsewhere):
            values[-1] = value
        return compressed

    def compressed_labels(self, labels):
        """Global ``labels`` (of this rank's endpoints' values, a signed type) under the compressed labels, -1 kept,
        any other vertex the label of every other vertex (O(1) each: `distinct_endpoints`)."""
        return self.distinct_endpoints.places(labels, self.xp.empty(labels.shape[0], dtype=self.local.dst.dtype))

    def lowest(self, local_index, *values):
        """``(vertex, values at it...)`` of the lowest vertex any rank offers (its block's ``local_index``, or
        None), or None (collective; the values as NumPy scalars)."""
        offer = None if local_index is None else (self.first + local_index,
                                                  *(_host_scalar(array[local_index]) for array in values))
        offers = [offer for offer in self.comm.allgather_object(offer) if offer is not None]
        return min(offers) if offers else None

    def value_at(self, vertex, values):
        """``values[vertex]`` of the rank that owns ``vertex``, on every rank (collective; a NumPy scalar)."""
        owner = int(self.blocks.owner(vertex))
        mine = _host_scalar(values[vertex - self.first]) if owner == self.comm.rank else None
        return self.comm.allgather_object(mine)[owner]


class _GlobalView:
    """A rank's compressed tuples seen under global labels, for the fault messages."""

    def __init__(self, vg):
        self.local, self.endpoints = vg.local, vg.endpoints
        self.weights = vg.local.weights

    def edge(self, index):
        u, v = self.local.edge(index)
        return int(self.endpoints[u]), int(self.endpoints[v])


class _ByLabel:
    """Values under the compressed labels looked up by global label (of an endpoint), for the fault messages."""

    def __init__(self, vg, values):
        self.vg, self.values = vg, values

    def __getitem__(self, label):
        xp = self.vg.xp
        endpoints = self.vg.endpoints
        return self.values[int(xp.searchsorted(endpoints, xp.asarray([label], dtype=endpoints.dtype))[0])]


def validate_bfs(vg, root, parents, *, engine="auto"):
    """`bfs.validate_bfs` of a result split over the ranks: `parents` is this rank's part (collective)."""
    kernel, xp = bfs.KERNEL, vg.xp
    root, shapes = _exchange_shapes(vg, root, parents, None)
    parents = _own_parents(vg, kernel, parents, shapes)
    reached = _check_parents(vg, kernel, root, parents)
    parents = parents.astype(index_dtype_for(vg.num_vertices), copy=False)  # each -1 or a vertex now
    fault = vg.lowest(first_self_parent(parents, root, vg.first))
    bfs.raise_self_parent(None if fault is None else fault[0], root)
    levels = _tree_levels(vg, kernel, parents, root, reached, engine)
    # the fetch sends a level an endpoint: in the narrowest type that holds every rank's (a byte, mostly)
    levels = bfs.narrowest_levels(levels, vg.comm.allreduce(int(levels.max()) if levels.shape[0] else -1, "max"))
    endpoint_parents, endpoint_levels = vg.fetch((parents, levels), (-1, -1))
    endpoint_reached = endpoint_parents >= 0
    confirmed = xp.zeros(vg.local.num_vertices, dtype=xp.bool_)
    reached_unreached, level_jump, _ = bfs.edge_pass(xp, vg.local, vg.local.num_vertices - 1, endpoint_reached,
                                                     endpoint_levels, vg.compressed_labels(endpoint_parents),
                                                     engine, confirmed)
    fault = _fault(bfs.raise_tuple_fault, _GlobalView(vg), _ByLabel(vg, endpoint_reached),
                   _ByLabel(vg, endpoint_levels), reached_unreached, level_jump)
    fault, unconfirmed, nedge = _settle(vg, root, reached, endpoint_reached, fault, confirmed, parents)
    _raise_fault(fault)
    if unconfirmed is not None:
        vertex, parent = unconfirmed
        bfs.raise_unconfirmed({vertex: parent}, vertex)
    return nedge


def validate_sssp(vg, root, parents, distances, *, engine="auto"):
    """`sssp.validate_sssp` of a result split over the ranks: `parents` and `distances` are this rank's parts
    (collective)."""
    if vg.weights is None:
        raise ValueError("SSSP validation needs a ValidationGraph built with weights")
    kernel, xp = sssp.KERNEL, vg.xp
    root, shapes = _exchange_shapes(vg, root, parents, distances)
    parents = _own_parents(vg, kernel, parents, shapes)
    reached = _check_parents(vg, kernel, root, parents)
    parents = parents.astype(index_dtype_for(vg.num_vertices), copy=False)  # each -1 or a vertex now
    _check_part_lengths(vg, kernel, "distances-length", "distance", [shape[2] for shape in shapes])
    distances = _in(xp, distances).astype(xp.float32, copy=False)
    sssp.raise_root_distance(root, numpy.float32(vg.value_at(root, distances)))
    # the fused passes note the ties their confirmations meet (the Numba pass so many a chunk, the CUDA pass in all)
    tie_capacity = TIES_PER_CHUNK if use_numba(engine, xp) else TIES_ON_DEVICE if use_cuda(engine, xp) else 0
    if not tie_capacity:
        _jumped_levels(vg, kernel, parents, root, reached)  # an SSSP tree is deep: the jumping's log2 rounds
    endpoint_parents, endpoint_distances = vg.fetch((parents, distances), (-1, numpy.nan))
    endpoint_reached = endpoint_parents >= 0
    confirmed = xp.zeros(vg.local.num_vertices, dtype=xp.bool_)
    reached_unreached, not_minimal, _, ties = sssp.edge_pass(
        xp, vg.local, vg.local.num_vertices - 1, endpoint_reached, vg.compressed_labels(endpoint_parents),
        endpoint_distances, engine, confirmed, tie_capacity)
    fault = _fault(sssp.raise_tuple_fault, _GlobalView(vg), _ByLabel(vg, endpoint_reached),
                   _ByLabel(vg, endpoint_distances), reached_unreached, not_minimal)
    fault, unconfirmed, nedge = _settle(vg, root, reached, endpoint_reached, fault, confirmed, parents, distances)
    if tie_capacity and not sssp.chains_end((fault, unconfirmed), *_tie_edges(vg, ties, endpoint_parents)):
        _jumped_levels(vg, kernel, parents, root, reached)
    _raise_fault(fault)
    if unconfirmed is not None:
        vertex, parent, distance = unconfirmed
        parent_distance = numpy.float32(vg.value_at(parent, distances))  # every rank asks: a collective
        sssp.raise_unconfirmed({vertex: parent}, {vertex: numpy.float32(distance), parent: parent_distance}, vertex)
    return nedge


def _compressed(src, dst, weights, num_vertices, empty=None):
    """``(endpoints, local graph, distinct)``: the distinct endpoints, sorted, and the tuples under their places
    there; ``distinct`` places labels among the endpoints in O(1) (kept to place parents). NumPy tuples through
    `partition.DistinctLabels`, each endpoint placed as the grouping reads it (no relabelled copy of the tuples);
    CuPy tuples (which may live in mapped host memory) chunk by chunk, relabelled through `device.LabelPlaces` into
    arrays from ``empty(count, dtype)`` (device memory by default)."""
    xp = array_module(src, dst)
    if xp is numpy:
        distinct = DistinctLabels((src, dst), num_vertices)
        endpoints = distinct.labels
        return endpoints, ValidationGraph.from_host_edges(src, dst, endpoints.shape[0] + 1, weights,
                                                          places=distinct), distinct
    words = xp.zeros(bitmap_words(num_vertices), dtype=xp.uint64)
    for _, chunk in staged_chunks((src, dst), TUPLE_CHUNK):
        for labels in chunk:
            device.set_bits(words, labels)
    distinct = device.LabelPlaces((), num_vertices, words)
    endpoints = distinct.labels
    index_dtype = index_dtype_for(endpoints.shape[0] + 1)
    relabelled = [(empty or xp.empty)(src.shape[0], index_dtype) for _ in range(2)]
    for first, chunk in staged_chunks((src, dst), TUPLE_CHUNK):
        for target, labels in zip(relabelled, chunk):
            distinct.places(labels, target[first:first + labels.shape[0]])
    return endpoints, ValidationGraph.from_edges(*relabelled, endpoints.shape[0] + 1, weights), distinct


def _host_scalar(value):
    """An array's element as a NumPy scalar (picklable, its dtype kept)."""
    return value.get()[()] if hasattr(value, "get") and not isinstance(value, numpy.generic) else value


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


def _own_parents(vg, kernel, parents, shapes):
    """This rank's parents, every rank's part having been checked for length and dtype: in a type that holds
    every label and every given value (the labels' index type or the parents' own, whichever is wider: a GPU
    kernel's int32 parents are not copied, nor widened to int64 and narrowed back)."""
    _check_part_lengths(vg, kernel, "parents-length", "parent", [shape[0] for shape in shapes])
    for rank, (_, dtype, _) in enumerate(shapes):
        if numpy.dtype(dtype).kind != "i":
            part = "" if vg.comm.size == 1 else f"rank {rank}'s "
            raise TypeError(f"{part}parents must be a signed integer array, not {numpy.dtype(dtype)}")
    wide = numpy.promote_types(parents.dtype, index_dtype_for(vg.num_vertices))
    return _in(vg.xp, parents).astype(wide, copy=False)


def _check_part_lengths(vg, kernel, rule, name, shapes):
    """Raise `rule` for the first rank whose part (of shape shapes[r]) is not its block's length."""
    blocks = vg.blocks
    for rank, shape in enumerate(shapes):
        count = blocks.count(rank)
        if shape != (count,):
            part = "" if vg.comm.size == 1 else (f"rank {rank}'s part (vertices {blocks.begin(rank)} to "
                                                 f"{blocks.end(rank) - 1}) of ")
            raise wrong_length(kernel, rule, name, shape, count, part)


def _check_parents(vg, kernel, root, parents):
    """``parent-out-of-range`` at the lowest vertex over the ranks, then ``root-not-self-parent``; `reached`."""
    n = vg.num_vertices
    reached, vertex = reached_and_out_of_range(parents, n)
    fault = vg.lowest(vertex, parents)
    if fault is not None:
        raise_out_of_range(kernel, fault[0], fault[1], n)
    raise_root_not_self_parent(kernel, root, vg.value_at(root, parents))
    return reached


def _tree_levels(vg, kernel, parents, root, reached, engine):
    """Levels of this rank's vertices (-1 unreached) (step 3): from the root, a round a level, with the fused
    passes' engines (`_levels_from_root`); with the array-generic one, or past `LEVEL_ROUNDS` levels, by pointer
    jumping (`_jumped_levels`). Raise `cycle` at the lowest vertex whose parent chain does not reach the root."""
    fused = use_numba(engine, vg.xp) or use_cuda(engine, vg.xp)
    levels = _levels_from_root(vg, parents, root) if fused else None
    if levels is None:
        return _jumped_levels(vg, kernel, parents, root, reached)
    fault = vg.lowest(first_true(vg.xp, reached & (levels < 0)))
    raise_cycle(kernel, None if fault is None else fault[0], root)
    return levels


def _levels_from_root(vg, parents, root):
    """`common.levels_from_root` over the ranks: the levels of this rank's block, or None past `LEVEL_ROUNDS`
    rounds (collective); a round's bitmap of all N gathered from every rank's words (an allgather, or one shared
    window a host), a round by `bfs.level_descent` (NumPy ranks' on their threads, GPU ranks' a CUDA kernel, one
    read)."""
    word_counts = [bitmap_words(vg.blocks.count(rank)) for rank in range(vg.comm.size)]
    return levels_from_root(vg.comm, word_counts, vg.first, vg.num_vertices, parents, root, bfs.level_descent(vg.xp))


def _jumped_levels(vg, kernel, parents, root, reached):
    """`_tree_levels` by pointer jumping across the ranks (any array module)."""
    xp, comm = vg.xp, vg.comm
    # ancestors and depths of one process's widths (int32 below 2^31 vertices, depths below 2^29: they at most
    # double a round); an unreached vertex is its own ancestor, at depth 0
    depth_dtype = numpy.int32 if vg.num_vertices <= 2**29 else numpy.int64
    ancestor = parents.astype(index_dtype_for(vg.num_vertices))
    unreached = xp.flatnonzero(~reached)
    ancestor[unreached] = vg.first + unreached
    depth = reached.astype(depth_dtype)
    if vg.first <= root < vg.first + parents.shape[0]:
        depth[root - vg.first] = 0
    for _ in range(math.ceil(math.log2(vg.num_vertices)) + 1):
        pending = xp.flatnonzero(reached & (ancestor != root))
        if not comm.allreduce(int(pending.shape[0]), "sum"):
            break
        up_ancestor, up_depth = _from_owners(vg, ancestor[pending], lambda asked: (ancestor[asked], depth[asked]))
        depth[pending] += up_depth
        ancestor[pending] = up_ancestor
    fault = vg.lowest(first_true(xp, reached & (ancestor != root)))
    raise_cycle(kernel, None if fault is None else fault[0], root)
    return xp.subtract(depth, ~reached, out=depth)  # -1 where unreached (depth 0 there)


def _tie_edges(vg, ties, endpoint_parents):
    """``(children, parents)``: every rank's tie edges (``ties``: compressed labels of the vertices its tuple pass
    confirmed as near as their parents; None where it kept too many), under global labels, gathered on every rank
    (collective); ``(None, None)`` where any rank kept more than `TIES_ON_DEVICE`."""
    mine = None if ties is None or ties.shape[0] > TIES_ON_DEVICE else (
        _in(numpy, vg.endpoints[ties]).astype(numpy.int64), _in(numpy, endpoint_parents[ties]).astype(numpy.int64))
    gathered = vg.comm.allgather_object(mine)
    if any(part is None for part in gathered):
        return None, None
    return tuple(numpy.concatenate(part) for part in zip(*gathered))


def _from_owners(vg, wanted, answer):
    """The owners' ``answer(asked)`` (a tuple of arrays, ``asked``: local indices of their block) for each of
    ``wanted`` (global labels), in its order: each distinct label asked once on NumPy (collective: an alltoallv
    of requests, one of answers)."""
    targets, answer_of = _asked_once(vg.xp, wanted, vg.blocks, vg.num_vertices)
    send_counts = vg.blocks.counts_of(targets, vg.xp)
    (asked,), asked_counts = vg.comm.alltoallv((targets,), send_counts)
    answers, _ = vg.comm.alltoallv(answer(asked - vg.first), asked_counts, send_counts)
    return [values[answer_of] for values in answers]


def _asked_once(xp, targets, blocks, num_vertices):
    """``(targets to ask, grouped by owner; each target's place among them)``: on NumPy each distinct target once
    (a round's pending vertices share few ancestors: at SCALE 21 a BFS tree's 1.2 million ask 117 thousand, then
    3.9 thousand), in label order, so grouped already, found with a transient bitmap of all N (the harness has
    freed the rank's slice of tuples, 12 bytes a tuple, by then); on CuPy every target, sorted by owner (a
    radix sort of small keys)."""
    if xp is numpy:
        distinct = DistinctLabels((targets,), num_vertices)
        return distinct.labels.astype(numpy.int64), distinct.places(targets, numpy.empty(targets.shape[0], numpy.int64))
    order = xp.argsort((targets // blocks.block).astype(xp.int16 if blocks.num_ranks < 2**15 else xp.int32),
                       kind="stable")
    place = xp.empty_like(order)
    place[order] = xp.arange(order.shape[0], dtype=order.dtype)
    return targets[order], place


def _fault(raise_fault, *args):
    """This rank's tuple fault as ``(kernel, rule, message, vertex, edge)`` (picklable), or None."""
    try:
        raise_fault(*args)
    except ValidationError as error:
        prefix = f"{error.kernel} validation failed, rule {error.rule}: "
        return (error.kernel, error.rule, str(error)[len(prefix):], error.vertex, error.edge)
    return None


def _settle(vg, root, reached, endpoint_reached, fault, confirmed, *values):
    """Steps 4-6 of the module docstring, the same on every rank, nothing raised yet: ``(the tuple fault to
    raise (`_raise_fault`), or None; the lowest unconfirmed vertex with ``values`` at it (its parent, ...), or
    None; nedge)``."""
    comm, xp = vg.comm, vg.xp
    share = vg.local.count_reached_tuples(endpoint_reached)
    reports = comm.allgather_object((fault, share, int(xp.count_nonzero(confirmed[:-1])), vg.endpoints.shape[0]))
    faults = [(_TUPLE_RULE_ORDER[fault[1]], rank, fault) for rank, (fault, *_) in enumerate(reports)
              if fault is not None]
    fault = min(faults, key=lambda item: item[:2])[2] if faults else None
    label_dtype = index_dtype_for(vg.num_vertices)
    label_bytes = numpy.dtype(label_dtype).itemsize * sum(report[2] for report in reports)
    if label_bytes < LABEL_CONFIRMATIONS * sum(report[3] for report in reports):
        unconfirmed = _unconfirmed_by_labels(vg, reached, confirmed, label_dtype)
    else:
        unconfirmed = _unconfirmed_by_bytes(vg, reached, confirmed)
    if vg.blocks.owner(root) == comm.rank:
        unconfirmed[root - vg.first] = False
    return fault, vg.lowest(first_true(xp, unconfirmed), *values), sum(report[1] for report in reports)


def _unconfirmed_by_bytes(vg, reached, confirmed):
    """The block's reached vertices no rank confirmed, from a byte an endpoint sent to its owner in the order the
    owner asked for it (`requested`)."""
    xp = vg.xp
    (arrived,), _ = vg.comm.alltoallv((confirmed[:-1].view(xp.uint8),), vg.endpoint_counts, vg.requested_counts)
    if xp is numpy:
        return _unconfirmed(reached, vg.requested, arrived.view(numpy.bool_))
    owned_confirmed = xp.zeros(reached.shape[0], dtype=xp.bool_)
    owned_confirmed[vg.requested[arrived.view(xp.bool_)]] = True
    return reached & ~owned_confirmed


def _unconfirmed_by_labels(vg, reached, confirmed, label_dtype):
    """The block's reached vertices no rank confirmed, from the labels of the confirmed endpoints sent to their
    owners (``label_dtype``: holds every label)."""
    xp = vg.xp
    labels = vg.endpoints[xp.flatnonzero(confirmed[:-1])].astype(label_dtype, copy=False)
    (arrived,), _ = vg.comm.alltoallv((labels,), vg.blocks.counts_of(labels, xp))
    unconfirmed = reached.copy()
    unconfirmed[arrived - vg.first] = False
    return unconfirmed


def _gathered(values, indices):
    """``values[indices]`` on the rank's threads (NumPy): fancy indexing first copies int32 indices to int64 and
    then gathers on one thread, about 4x slower for a rank's requests at P = 16. Into a NumPy allocation (its
    large arrays ask for huge pages: one made by Numba took several times as long to fill, in page faults)."""
    out = numpy.empty(indices.shape[0], dtype=values.dtype)
    _gather(values, indices, out)
    return out


@numba.njit(parallel=True, cache=True)
def _gather(values, indices, out):
    for i in numba.prange(indices.shape[0]):
        out[i] = values[indices[i]]


def _unconfirmed(reached, requested, arrived):
    """The reached vertices of the block that no rank's tuple confirmed (``arrived[i]``: whether the endpoint the
    asker named ``requested[i]`` was confirmed), in one pass and no array of the confirmed ones (NumPy; the copy of
    ``reached`` by NumPy, as `_gathered`'s output)."""
    unconfirmed = reached.copy()
    _clear_arrived(unconfirmed, requested, arrived)
    return unconfirmed


@numba.njit(parallel=True, cache=True)
def _clear_arrived(unconfirmed, requested, arrived):
    for i in numba.prange(requested.shape[0]):
        if arrived[i]:
            unconfirmed[requested[i]] = False  # threads that race write the same value


def _raise_fault(fault):
    """Raise the tuple fault `_settle` found (``(kernel, rule, message, vertex, edge)``), if any."""
    if fault is not None:
        kernel, rule, message, vertex, edge = fault
        raise ValidationError(kernel, rule, message, vertex=vertex, edge=edge)
