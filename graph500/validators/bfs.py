"""Validate a BFS parent array from any program against the Graph500 v3 rules (spec section 9).

Rules, in the order they are checked (the first broken one is raised):

1. ``parents-length``, ``parent-out-of-range``, ``root-not-self-parent``
   (see `common.check_parents`).
2. ``tree-edge-level``: a tree edge joins levels that do not differ by exactly
   one.  Levels are derived from the parent pointers, level[v] =
   level[parent[v]] + 1, so the only tree edge that can break this is a
   vertex other than the root that is its own parent: (v, v) joins a level to
   itself.
3. ``cycle``: a reached vertex whose parent chain does not reach the root
   (levels from the root a round a level with the fused engines, else by
   pointer jumping: `tree_levels_from_root`, `common.tree_levels`).
4. One pass over the input tuples (self-loops dropped), reporting the first
   offending tuple:
   ``reached-unreached-edge`` (exactly one endpoint reached; together with the
   root being reached this also makes the tree span the root's component),
   then ``level-jump`` (both reached, levels differ by more than one).
5. ``tree-edge-not-in-graph``: every reached vertex v other than the root
   must be confirmed: joined to parent[v] by an input tuple, in either
   direction.  The first reached unconfirmed vertex is reported.

Steps 4-5 have three implementations with one meaning, each reporting the
first offending tuple in `ValidationGraph` order and the first unconfirmed
vertex:

- array-generic (NumPy or CuPy): gather the levels and parents of both
  endpoints of every tuple; for every tuple (u, v) mark u confirmed when
  parent[u] == v and v confirmed when parent[v] == u (a boolean scatter);
- fused Numba, for NumPy arrays: one parallel pass over the vertices, each
  reading its tuples as first endpoint (contiguous, since the tuples are
  grouped by first endpoint) and so gathering one level per tuple; a vertex
  is confirmed when parent[v] is among those tuples' second endpoints, or
  else among the first endpoints of its tuples as second endpoint
  (`ValidationGraph.incoming`).  Nothing is scattered, so the pass needs no
  shared writes;
- fused CUDA, for CuPy arrays (`device.bfs_pass`): a thread a tuple, the
  generic pass's gathers and scatter in one kernel a chunk.

Returns nedge (spec section 5), see `common.ValidationGraph`.
"""

import functools

import numba
import numpy

from ..comm import SelfCommunicator
from ..compiled import prefetch
from ..errors import ValidationError
from ..partition import bitmap_words
from . import common, device
from .common import (HostDescent, array_module, check_parents, chunk_count, chunk_start, earliest_per_rule,
                     first_self_parent, first_true, first_unconfirmed, levels_from_root, offset, raise_cycle,
                     raise_reached_unreached, tree_levels, use_cuda, use_numba)

KERNEL = "bfs"


def validate_bfs(vg, root, parents, *, engine="auto"):
    """Check a BFS tree of `vg` from `root`; return nedge or raise ValidationError.

    `parents`: integer array of length N, parents[v] = -1 for unreached v.
    `engine`: "auto" (Numba for NumPy arrays, CUDA for CuPy arrays),
    "numba", "cuda" or "generic".
    """
    xp = array_module(parents, vg.dst)
    root = int(root)
    reached = check_parents(KERNEL, vg, root, parents)
    check_self_parents(parents, root)
    parents = parents.astype(vg.dst.dtype, copy=False)  # each -1 or a vertex: the index dtype, one copy at most
    levels = tree_levels_from_root(KERNEL, parents, root, reached, engine)
    reached_unreached, level_jump, unconfirmed = edge_pass(xp, vg, root, reached, levels, parents, engine)
    raise_tuple_fault(vg, reached, levels, reached_unreached, level_jump)
    raise_unconfirmed(parents, unconfirmed)
    return vg.count_reached_tuples(reached)


def tree_levels_from_root(kernel, parents, root, reached, engine="auto"):
    """`common.tree_levels` of a BFS tree (a few levels deep; ``parents`` in the index dtype of its vertices): with
    the fused engines (Numba, CUDA) from the root a round a level (`common.levels_from_root` on one process), past
    `common.LEVEL_ROUNDS` rounds and with the array-generic engine by the pointer jumping."""
    xp = array_module(parents)
    if use_numba(engine, xp) or use_cuda(engine, xp):
        n = parents.shape[0]
        levels = levels_from_root(SelfCommunicator(xp), [bitmap_words(n)], 0, n, parents, root, level_descent(xp))
        if levels is not None:
            raise_cycle(kernel, first_true(xp, reached & (levels < 0)), root)
            return levels
    return tree_levels(kernel, parents, root, reached, engine)


def level_descent(xp):
    """A round of `common.levels_from_root` for arrays of module ``xp``, made from ``(parents, levels)``:
    `common.HostDescent` on NumPy, a CUDA kernel a round on CuPy (`device.descend_levels`)."""
    if xp is numpy:
        return HostDescent
    return lambda parents, levels: functools.partial(device.descend_levels, parents, levels)


def edge_pass(xp, vg, root, reached, levels, parents, engine, confirmed=None):
    """Steps 4-5 over vg's tuples: (first reached-unreached tuple, first level jump, first unconfirmed vertex).

    Each is an index, or None.  `parents` in vg's index dtype.  `confirmed`:
    None, or a bool array of length N that receives True for every vertex
    the tuples confirm (the distributed validator ORs the ranks' arrays);
    it may hold True for unreached vertices and the root, which no rule reads.
    """
    if use_numba(engine, xp):
        dst_offsets, src_by_dst = vg.incoming()
        confirmed_out = numpy.empty(0, dtype=numpy.bool_) if confirmed is None else confirmed
        chunk_firsts = fused_vertex_pass(vg.src_offsets, vg.dst, dst_offsets, src_by_dst,
                                         narrowest_levels(levels), parents, confirmed_out, chunk_count(),
                                         common.PREFETCH_AHEAD)
        return tuple(earliest_per_rule(chunk_firsts))
    if use_cuda(engine, xp):
        return device.bfs_pass(vg, root, reached, levels, parents, confirmed)
    return generic_edge_pass(xp, vg, root, reached, levels, parents, confirmed)


def narrowest_levels(levels, deepest=None):
    """``levels`` (-1 unreached) in the narrowest signed type that holds them: the tuple pass reads a level at
    random for every tuple, and a Kronecker tree's levels fit a byte (a quarter of the cache lines); the
    distributed validator fetches them so. ``deepest``: the largest level where the caller knows it (every
    rank's), else that of ``levels`` (NumPy)."""
    if deepest is None:
        deepest = int(levels.max(initial=-1))
    for dtype in (numpy.int8, numpy.int16):
        if deepest <= numpy.iinfo(dtype).max:
            return levels.astype(dtype)
    return levels


def raise_tuple_fault(vg, reached, levels, reached_unreached, level_jump):
    """Raise the first of step 4's faults found (tuple indices of vg, or None)."""
    if reached_unreached is not None:
        raise_reached_unreached(KERNEL, vg, reached, reached_unreached)
    if level_jump is not None:
        u, v = vg.edge(level_jump)
        raise ValidationError(KERNEL, "level-jump",
                              f"input edge ({u}, {v}) joins level {int(levels[u])} "
                              f"to level {int(levels[v])}",
                              vertex=v, edge=(u, v))


def raise_unconfirmed(parents, unconfirmed):
    """Raise `tree-edge-not-in-graph` for vertex `unconfirmed` (or nothing when None)."""
    if unconfirmed is not None:
        parent = int(parents[unconfirmed])
        raise ValidationError(KERNEL, "tree-edge-not-in-graph",
                              f"tree edge ({unconfirmed}, {parent}) is not an input edge",
                              vertex=unconfirmed, edge=(unconfirmed, parent))


def check_self_parents(parents, root):
    """Raise `tree-edge-level` for a reached vertex other than the root that is its own parent."""
    raise_self_parent(first_self_parent(parents, root), root)


def raise_self_parent(vertex, root):
    """Raise `tree-edge-level` for ``vertex`` (nothing when None), its own parent but not the root."""
    if vertex is not None:
        raise ValidationError(KERNEL, "tree-edge-level",
                              f"vertex {vertex} is its own parent but not the root {root}: "
                              f"tree edge ({vertex}, {vertex}) joins a level to itself",
                              vertex=vertex, edge=(vertex, vertex))


def generic_edge_pass(xp, vg, root, reached, levels, parents, confirmed=None):
    """Array-generic steps 4-5: the first reached-unreached tuple, level jump, unconfirmed vertex.

    Each is an index, or None where nothing offends.  The tuples are read in
    `ValidationGraph.tuple_chunks`; the pass stops at the first chunk with a
    reached-unreached tuple, the first rule reported.  `confirmed`: see
    `edge_pass`.
    """
    reached_unreached = level_jump = None
    if confirmed is None:
        confirmed = xp.zeros(vg.num_vertices, dtype=bool)
    for first, src, dst, _ in vg.tuple_chunks(weighted=False):
        src_level = xp.take(levels, src)
        dst_level = xp.take(levels, dst)
        src_reached = src_level >= 0
        dst_reached = dst_level >= 0
        reached_unreached = offset(first, first_true(xp, src_reached != dst_reached))
        if reached_unreached is not None:
            return reached_unreached, None, None
        if level_jump is None:
            jump = src_reached & dst_reached & (xp.abs(src_level - dst_level) > 1)
            level_jump = offset(first, first_true(xp, jump))
        del src_level, dst_level, src_reached, dst_reached
        confirmed[src[xp.take(parents, src) == dst]] = True
        confirmed[dst[xp.take(parents, dst) == src]] = True
    return reached_unreached, level_jump, first_unconfirmed(xp, reached, confirmed, root)


@numba.njit(parallel=True, cache=True)
def fused_vertex_pass(src_offsets, dst, dst_offsets, src_by_dst, levels, parents, confirmed_out,
                      num_chunks, ahead):
    """Numba steps 4-5: each chunk's first offender per rule, -1 where none.

    Columns: reached-unreached-edge (tuple), level-jump (tuple),
    tree-edge-not-in-graph (vertex).  `confirmed_out`: empty, or a bool array
    of length N receiving each vertex's confirmation (True also for
    unreached vertices and the root).  The level ``ahead`` tuples on is asked
    for (`graph500.compiled.prefetch`).
    """
    chunk_firsts = numpy.full((num_chunks, 3), -1, dtype=numpy.int64)
    last = dst.shape[0] - 1
    for chunk in numba.prange(num_chunks):
        first_reached_unreached = -1
        first_level_jump = -1
        first_unconfirmed_vertex = -1
        for u in range(chunk_start(src_offsets, chunk, num_chunks),
                       chunk_start(src_offsets, chunk + 1, num_chunks)):
            level_u = numpy.int64(levels[u])  # levels may be a byte each (`narrowest_levels`)
            parent_u = parents[u]
            confirmed = level_u <= 0  # unreached, or the root
            for e in range(src_offsets[u], src_offsets[u + 1]):
                prefetch(levels, dst[min(e + ahead, last)])
                v = dst[e]
                level_v = numpy.int64(levels[v])
                if level_u < 0 or level_v < 0:
                    if (level_u < 0) != (level_v < 0) and first_reached_unreached < 0:
                        first_reached_unreached = e
                elif abs(level_u - level_v) > 1 and first_level_jump < 0:
                    first_level_jump = e
                confirmed |= v == parent_u
            if not confirmed:
                for e in range(dst_offsets[u], dst_offsets[u + 1]):
                    if src_by_dst[e] == parent_u:
                        confirmed = True
                        break
                if not confirmed and first_unconfirmed_vertex < 0:
                    first_unconfirmed_vertex = u
            if confirmed_out.shape[0] > 0:
                confirmed_out[u] = confirmed
        chunk_firsts[chunk, 0] = first_reached_unreached
        chunk_firsts[chunk, 1] = first_level_jump
        chunk_firsts[chunk, 2] = first_unconfirmed_vertex
    return chunk_firsts
