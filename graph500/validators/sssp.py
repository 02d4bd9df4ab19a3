"""Validate SSSP parents and float32 distances against the Graph500 v3 rules (spec section 9).

Every distance comparison is made in float32: weights and distances are cast
to float32 and dist[u] + w is a float32 sum, as in the reference.  Distances
of unreached vertices are never read, so they may hold anything (inf, NaN).

Rules, in the order they are checked (the first broken one is raised):

1. ``parents-length``, ``parent-out-of-range``, ``root-not-self-parent``
   (see `common.check_parents`), then ``distances-length`` (one distance per
   vertex) and ``root-distance`` (dist[root] == 0).
2. ``cycle``: a reached vertex whose parent chain does not reach the root
   (pointer jumping, see `common.tree_levels`; with the fused passes, run
   only where the tuple pass below cannot show that every chain ends at the
   root: `chains_end`).
3. One pass over the weighted input tuples (self-loops dropped), reporting
   the first offending tuple: ``reached-unreached-edge`` (exactly one endpoint
   reached), then ``distance-not-minimal`` (both reached and dist[v] >
   dist[u] + w or dist[u] > dist[v] + w).
4. ``unconfirmed-distance``: every reached vertex v other than the root must
   be confirmed: joined to parent[v] by an input tuple, in either direction,
   whose weight w gives dist[v] == dist[parent[v]] + w.  The first reached
   unconfirmed vertex is reported.

Steps 3-4 have three implementations with one meaning, each reporting the
first offending tuple in `ValidationGraph` order and the first unconfirmed
vertex: an array-generic one (NumPy or CuPy) that gathers both endpoints of
every tuple and scatters the confirmations; for NumPy arrays, a fused
parallel Numba pass over the vertices, each reading its tuples as first
endpoint and writing True for either endpoint the tuple confirms; for CuPy
arrays, a fused CUDA pass, a thread a tuple (`device.sssp_pass`); see `bfs`
for the same scheme.

Returns nedge (spec section 5, the same count as for BFS from that root), see
`common.ValidationGraph`.
"""

import numba
import numpy

from ..compiled import prefetch
from ..errors import ValidationError
from . import common, device
from .common import (TIES_ON_DEVICE, TIES_PER_CHUNK, array_module, check_parents, chunk_count, chunk_start,
                     earliest_per_rule, first_true, first_unconfirmed, offset, raise_reached_unreached, ties_end,
                     tree_levels, use_cuda, use_numba, wrong_length)

KERNEL = "sssp"


def validate_sssp(vg, root, parents, distances, *, engine="auto"):
    """Check a shortest-path tree of `vg` from `root`; return nedge or raise ValidationError.

    `parents`: integer array of length N, parents[v] = -1 for unreached v;
    `distances`: float32 array of length N.  `engine`: "auto" (Numba for
    NumPy arrays, CUDA for CuPy arrays), "numba", "cuda" or "generic".
    """
    if vg.weights is None:
        raise ValueError("SSSP validation needs a ValidationGraph built with weights")
    xp = array_module(parents, distances, vg.dst)
    root = int(root)
    reached = check_parents(KERNEL, vg, root, parents)
    distances = check_distances(vg, root, distances)
    tie_capacity = TIES_PER_CHUNK if use_numba(engine, xp) else TIES_ON_DEVICE if use_cuda(engine, xp) else 0
    if not tie_capacity:
        tree_levels(KERNEL, parents, root, reached, engine)
    parents = parents.astype(vg.dst.dtype, copy=False)
    reached_unreached, not_minimal, unconfirmed, ties = edge_pass(xp, vg, root, reached, parents, distances,
                                                                  engine, tie_capacity=tie_capacity)
    if tie_capacity and not chains_end((reached_unreached, not_minimal, unconfirmed), ties,
                                       None if ties is None else parents[ties]):
        tree_levels(KERNEL, parents, root, reached, engine)  # the cycle, if any, is the first fault to report
    raise_tuple_fault(vg, reached, distances, reached_unreached, not_minimal)
    raise_unconfirmed(parents, distances, unconfirmed)
    return vg.count_reached_tuples(reached)


def edge_pass(xp, vg, root, reached, parents, distances, engine, confirmed=None, tie_capacity=0):
    """Steps 3-4 over vg's tuples: (first reached-unreached tuple, first non-minimal one, first unconfirmed
    vertex, ties).

    Each of the first three is an index, or None.  `parents` in vg's index
    dtype, `distances` float32.  `confirmed`: None, or a bool array of
    length N that receives True for every vertex the tuples confirm (the
    distributed validator ORs the ranks' arrays); it may hold True for
    unreached vertices and the root, which no rule reads.  Ties: with a
    `tie_capacity` and a fused pass, the vertices a tuple confirmed as near
    as their parents (int64, repeats possible), or None where a chunk of
    the Numba pass (the whole CUDA pass) met more than `tie_capacity` (and
    always without them).
    """
    if use_numba(engine, xp):
        if confirmed is None:
            confirmed = numpy.zeros(vg.num_vertices, dtype=numpy.bool_)
        ties = numpy.empty((chunk_count(), tie_capacity), dtype=numpy.int64)
        chunk_firsts = fused_vertex_pass(vg.src_offsets, vg.dst, vg.weights, vertex_records(parents, distances),
                                         confirmed, common.PREFETCH_AHEAD, ties)
        tie_counts = chunk_firsts[:, 2]
        tied = None
        if tie_capacity and (tie_counts <= tie_capacity).all():
            tied = numpy.concatenate([ties[chunk, :count] for chunk, count in enumerate(tie_counts)])
        return (*earliest_per_rule(chunk_firsts[:, :2]), first_unconfirmed(xp, reached, confirmed, root), tied)
    if use_cuda(engine, xp):
        return device.sssp_pass(vg, root, reached, parents, distances, confirmed, tie_capacity)
    return (*generic_edge_pass(xp, vg, root, reached, parents, distances, confirmed), None)


def chains_end(faults, tied, tied_parents):
    """Whether every reached vertex's parent chain ends at the root, from the tuple pass alone (one process, or
    every rank alike): where it found no fault (``faults``: its first offenders, all None), every reached vertex but
    the root is joined by a tuple of weight w to its reached parent with dist == the parent's + w, and no tuple is
    too short, so distances never rise along a chain (a confirming tuple of negative weight would be too short
    unless the sum rounds back to the parent's distance: a tie). Only ties (a vertex as near as its parent) could
    close a chain, and the tie edges ``tied`` -> ``tied_parents`` (None where the pass kept too many) form no cycle
    (`ties_end`). False otherwise: the pointer jumping decides."""
    if tied is None or any(fault is not None for fault in faults):
        return False
    return ties_end(tied, tied_parents)


def vertex_records(parents, distances):
    """Each vertex's parent and distance side by side (a NumPy record array): the tuple pass reads both at
    random for every tuple, one cache line instead of two."""
    records = numpy.empty(parents.shape[0], dtype=[("parent", parents.dtype), ("distance", numpy.float32)])
    _fill_records(parents, distances, records)
    return records


@numba.njit(parallel=True, cache=True)
def _fill_records(parents, distances, records):
    for v in numba.prange(parents.shape[0]):
        records[v].parent = parents[v]
        records[v].distance = distances[v]


def raise_tuple_fault(vg, reached, distances, reached_unreached, not_minimal):
    """Raise the first of step 3's faults found (tuple indices of vg, or None)."""
    if reached_unreached is not None:
        raise_reached_unreached(KERNEL, vg, reached, reached_unreached)
    if not_minimal is not None:
        raise_not_minimal(vg, distances, not_minimal)


def raise_unconfirmed(parents, distances, unconfirmed):
    """Raise `unconfirmed-distance` for vertex `unconfirmed` (or nothing when None)."""
    if unconfirmed is not None:
        parent = int(parents[unconfirmed])
        raise ValidationError(KERNEL, "unconfirmed-distance",
                              f"no input edge joins vertex {unconfirmed} to its parent {parent} "
                              f"with a weight w giving dist {float32_text(distances[unconfirmed])}"
                              f" == {float32_text(distances[parent])} + w",
                              vertex=unconfirmed, edge=(unconfirmed, parent))


def float32_text(value):
    """A float32 written with enough digits to tell it from its neighbours."""
    return f"{float(value):.9g}"


def check_distances(vg, root, distances):
    """Check distances-length and root-distance; return the distances as float32."""
    n = vg.num_vertices
    if distances.ndim != 1 or distances.shape[0] != n:
        raise wrong_length(KERNEL, "distances-length", "distance", distances.shape, n)
    distances = distances.astype(numpy.float32, copy=False)
    raise_root_distance(root, distances[root])
    return distances


def raise_root_distance(root, distance):
    """Raise `root-distance` unless the root's ``distance`` is 0."""
    if not bool(distance == 0):
        raise ValidationError(KERNEL, "root-distance",
                              f"dist[{root}] = {float32_text(distance)}, "
                              f"but the root's distance must be 0",
                              vertex=root)


def raise_not_minimal(vg, distances, index):
    """Raise `distance-not-minimal` for the tuple at `index`, naming the vertex too far away."""
    u, v = vg.edge(index)
    weight = vg.weights[index]
    if bool(distances[v] > distances[u] + weight):
        near, far = u, v
    else:
        near, far = v, u
    raise ValidationError(KERNEL, "distance-not-minimal",
                          f"input edge ({u}, {v}) with weight {float32_text(weight)}: "
                          f"dist[{far}] = {float32_text(distances[far])} > dist[{near}] + w = "
                          f"{float32_text(distances[near] + weight)}",
                          vertex=far, edge=(u, v))


def generic_edge_pass(xp, vg, root, reached, parents, distances, confirmed=None):
    """Array-generic steps 3-4: first reached-unreached tuple, non-minimal one, unconfirmed vertex.

    Each is an index, or None where nothing offends.  The tuples are read in
    `ValidationGraph.tuple_chunks`, as in `bfs.generic_edge_pass`.
    `confirmed`: see `edge_pass`.
    """
    reached_unreached = not_minimal = None
    if confirmed is None:
        confirmed = xp.zeros(vg.num_vertices, dtype=bool)
    for first, src, dst, weights in vg.tuple_chunks():
        src_reached = xp.take(reached, src)
        dst_reached = xp.take(reached, dst)
        reached_unreached = offset(first, first_true(xp, src_reached != dst_reached))
        if reached_unreached is not None:
            return reached_unreached, None, None
        both_reached = src_reached & dst_reached
        del src_reached, dst_reached
        src_distance = xp.take(distances, src)
        dst_distance = xp.take(distances, dst)
        via_src = src_distance + weights
        via_dst = dst_distance + weights
        if not_minimal is None:
            too_far = (dst_distance > via_src) | (src_distance > via_dst)
            not_minimal = offset(first, first_true(xp, both_reached & too_far))
        src_confirmed = both_reached & (xp.take(parents, src) == dst) & (src_distance == via_dst)
        dst_confirmed = both_reached & (xp.take(parents, dst) == src) & (dst_distance == via_src)
        confirmed[src[src_confirmed]] = True
        confirmed[dst[dst_confirmed]] = True
    return reached_unreached, not_minimal, first_unconfirmed(xp, reached, confirmed, root)


@numba.njit(parallel=True, cache=True)
def fused_vertex_pass(src_offsets, dst, weights, vertices, confirmed, ahead, ties):
    """Numba steps 3-4 over ``ties.shape[0]`` chunks: each chunk's first offender per rule, -1 where none
    (columns: reached-unreached-edge, distance-not-minimal; tuple indices), then how many vertices it confirmed
    as near as their parents; True in `confirmed` (length N, False before) for every vertex a tuple joins to its
    parent with the weight that makes its distance, and the first ``ties.shape[1]`` ties of chunk c in
    ``ties[c]``. `vertices`: `vertex_records`, the one ``ahead`` tuples on asked for
    (`graph500.compiled.prefetch`).
    """
    num_chunks = ties.shape[0]
    chunk_firsts = numpy.full((num_chunks, 3), -1, dtype=numpy.int64)
    last = dst.shape[0] - 1
    for chunk in numba.prange(num_chunks):
        first_reached_unreached = -1
        first_not_minimal = -1
        tied = 0
        for u in range(chunk_start(src_offsets, chunk, num_chunks),
                       chunk_start(src_offsets, chunk + 1, num_chunks)):
            parent_u = vertices[u].parent
            distance_u = vertices[u].distance
            for e in range(src_offsets[u], src_offsets[u + 1]):
                prefetch(vertices, dst[min(e + ahead, last)])
                v = dst[e]
                parent_v = vertices[v].parent
                if parent_u < 0 or parent_v < 0:
                    if (parent_u < 0) != (parent_v < 0) and first_reached_unreached < 0:
                        first_reached_unreached = e
                    continue
                distance_v = vertices[v].distance
                via_u = distance_u + weights[e]
                via_v = distance_v + weights[e]
                if (distance_v > via_u or distance_u > via_v) and first_not_minimal < 0:
                    first_not_minimal = e
                if v == parent_u and distance_u == via_v:
                    confirmed[u] = True
                    if distance_u == distance_v:
                        tied = _note_tie(ties, chunk, tied, u)
                if parent_v == u and distance_v == via_u:
                    confirmed[v] = True
                    if distance_v == distance_u:
                        tied = _note_tie(ties, chunk, tied, v)
        chunk_firsts[chunk, 0] = first_reached_unreached
        chunk_firsts[chunk, 1] = first_not_minimal
        chunk_firsts[chunk, 2] = tied
    return chunk_firsts


@numba.njit(inline="always", cache=True)
def _note_tie(ties, chunk, tied, vertex):
    """Keep ``vertex`` as chunk ``chunk``'s tie number ``tied`` where there is room; the count after it."""
    if tied < ties.shape[1]:
        ties[chunk, tied] = vertex
    return tied + 1
