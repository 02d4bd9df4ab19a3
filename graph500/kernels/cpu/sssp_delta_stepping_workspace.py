"""The workspace of the CPU delta-stepping (`sssp_delta_stepping`): one StructRef that its jitted functions
share, and the per-task segments (two frontiers and the settled list) and bins (blocks of BLOCK entries from
the task's pool) it keeps its entries in.
"""

import numba
import numpy as np
from numba.core import types
from numba.experimental import structref

from graph500.kernels.cpu.sssp_words import _bucket

BLOCK = 512  # bin entries per block
_NO_ENTRY = -1
_SETTLED = 2  # segment roles: 0 and 1 are the two frontiers
_FIRST, _LAST, _FILL, _SIZE = 0, 1, 2, 3  # a bin's metadata


# ---------------------------------------------------------------- the workspace

@structref.register
class WorkspaceType(types.StructRef):
    def preprocess_fields(self, fields):
        return tuple((name, types.unliteral(typ)) for name, typ in fields)


class Workspace(structref.StructRefProxy):
    """Everything a search reads and writes, shared by the jitted functions as one reference."""


WORKSPACE_FIELDS = (
    "row_bounds", "neighbors", "weights", "light_neighbors", "light_weights", "order",  # the relabelled graph
    "state", "parents", "distances",  # per vertex; the outputs in original labels
    "segment_vertex", "segment_word", "segment_row", "segment_prefix", "segment_count",  # [role, task, entry]
    "request_vertex", "request_word", "request_count",  # [task, request]
    "block_vertex", "block_word", "block_next", "free_stack", "free_top", "bin_meta",  # bins, per task
    "inverse_delta", "fusion_edges", "round_edges", "max_degree", "first_leaf",
    "bucket", "source_role", "target_role", "heavy", "slot", "cuts", "count_before",  # the step being run
)
structref.define_proxy(Workspace, WorkspaceType, WORKSPACE_FIELDS)


@numba.njit(cache=True)
def _new_workspace(row_bounds, neighbors, weights, light_neighbors, light_weights, order, state, segment_vertex, segment_word,
                   segment_row, segment_prefix, segment_count, request_vertex, request_word, request_count, block_vertex, block_word, block_next,
                   free_stack, free_top, bin_meta, inverse_delta, fusion_edges, round_edges, max_degree,
                   first_leaf):
    nothing = np.empty(0, dtype=np.int64)  # parents, cuts and count_before are set per search and per step
    return Workspace(row_bounds, neighbors, weights, light_neighbors, light_weights, order, state, nothing, np.empty(0, dtype=np.float32),
                     segment_vertex, segment_word, segment_row, segment_prefix, segment_count,
                     request_vertex, request_word, request_count,
                     block_vertex, block_word, block_next, free_stack, free_top, bin_meta,
                     inverse_delta, fusion_edges, round_edges, max_degree, first_leaf,
                     np.int64(0), np.int64(0), np.int64(1), False, np.int64(0), nothing, nothing)


# ---------------------------------------------------------------- segments and bins

@numba.njit(inline="always", cache=True)
def _append(ws, role, task, vertex, word, row_start, edges):
    i = ws.segment_count[role, task]
    ws.segment_vertex[role, task, i] = vertex
    ws.segment_word[role, task, i] = word
    ws.segment_row[role, task, i] = row_start
    ws.segment_prefix[role, task, i + 1] = ws.segment_prefix[role, task, i] + edges
    ws.segment_count[role, task] = i + 1


@numba.njit(inline="always", cache=True)
def _settle(ws, task, vertex, word):
    """A vertex of the current bucket: into the target frontier if it has light edges, and into the settled
    list (its row)."""
    bounds = ws.row_bounds
    light_edges = bounds[vertex + 1, 1] - bounds[vertex, 1]
    if light_edges:
        _append(ws, ws.target_role, task, vertex, word, bounds[vertex, 1], light_edges)
    _append(ws, _SETTLED, task, vertex, word, bounds[vertex, 0], bounds[vertex + 1, 0] - bounds[vertex, 0])


@numba.njit(inline="always", cache=True)
def _bin_append(ws, task, slot, vertex, word):
    """Append (vertex, word) to the task's bin ``slot``, taking a block from the task's free stack when needed."""
    meta = ws.bin_meta[np.uint64(task), np.uint64(slot)]  # this bin's (first, last, fill, size)
    last = meta[_LAST]
    fill = meta[_FILL]
    if last == _NO_ENTRY or fill == BLOCK:
        ws.free_top[task] -= 1
        block = ws.free_stack[task, ws.free_top[task]]
        ws.block_next[task, block] = _NO_ENTRY
        if last == _NO_ENTRY:
            meta[_FIRST] = block
        else:
            ws.block_next[task, last] = block
        meta[_LAST] = block
        last = block
        fill = 0
    entry = np.uint64(last * BLOCK + fill)
    ws.block_vertex[np.uint64(task), entry] = vertex
    ws.block_word[np.uint64(task), entry] = word
    meta[_FILL] = fill + 1
    meta[_SIZE] += 1


@numba.njit(inline="always", cache=True)
def _bin_has_room(ws, task, slot):
    """Whether bin ``slot`` of the task can take an entry without a block, or the task has a free block."""
    return ws.free_top[task] > 0 or (ws.bin_meta[task, slot, _LAST] != _NO_ENTRY
                                     and ws.bin_meta[task, slot, _FILL] < BLOCK)


@numba.njit(inline="always", cache=True)
def _keep(ws, task, vertex, word):
    """A vertex's new state goes to the target frontier (its bucket is the current one) or to a bin; a leaf's
    stays in ``state`` only."""
    if vertex >= ws.first_leaf:
        return
    target = _bucket(word, ws.inverse_delta)
    if target == ws.bucket:
        _settle(ws, task, vertex, word)
    else:
        _bin_append(ws, task, target % ws.bin_meta.shape[1], vertex, word)


@numba.njit(inline="always", cache=True)
def _empty_bin(meta, task, slot):
    meta[task, slot, _FIRST] = _NO_ENTRY
    meta[task, slot, _LAST] = _NO_ENTRY
    meta[task, slot, _FILL] = 0
    meta[task, slot, _SIZE] = 0
