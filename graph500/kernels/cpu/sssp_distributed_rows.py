"""The set-up of the distributed delta-stepping (`sssp_distributed`): a rank's rows renumbered and split
in four parts (local light, remote light, local heavy, remote heavy), and its ghosts (one index per distinct
remote neighbour, numbered per owner in the owner's degree order, with its owner and its local index there).
"""

import numba
import numpy as np

from graph500.kernels.cpu.frontier import balanced_bounds
from graph500.partition import DistinctLabels, index_dtype_for, place

LOCAL_LIGHT, REMOTE_LIGHT, LOCAL_HEAVY, REMOTE_HEAVY = 0, 1, 2, 3  # the parts of a row, in order
ROW_PARTS = 4


# ---------------------------------------------------------------- construction

@numba.njit(inline="always", cache=True)
def _part(neighbor, weight, first, stop, split_below):
    remote = neighbor < first or neighbor >= stop
    return (REMOTE_LIGHT if remote else LOCAL_LIGHT) + (LOCAL_HEAVY if weight >= split_below else 0)


@numba.njit(parallel=True, cache=True)
def _count_parts(offsets, neighbors, weights, new_label, task_bounds, first, stop, split_below, sizes):
    """``sizes[new, part]``: entries of each part of each renumbered row.

    Like `_fill_parts`, the rows are read in their own order, each task an
    equal share of the entries (`balanced_bounds`): in the new order the hubs
    come first, and a task per equal share of rows had all of them. The
    split, against rows taken in the new order (SCALE 21, 5 alternations in
    one process): 3.2x on one rank of 2 threads, 1.45x on 2 ranks of one
    (the entries read in their order, the rows' parts written in runs)."""
    for task in numba.prange(task_bounds.shape[0] - 1):
        for old in range(task_bounds[task], task_bounds[task + 1]):
            new = new_label[old]
            for k in range(offsets[old], offsets[old + 1]):
                sizes[new, _part(neighbors[k], weights[k], first, stop, split_below)] += 1


@numba.njit(parallel=True, cache=True)
def _fill_parts(offsets, neighbors, weights, new_label, task_bounds, words, word_ranks, column_at, first, stop,
                split_below, bounds, columns, row_weights):
    """Write each renumbered row's entries into its parts: the neighbour's column, ``column_at`` at its place
    among the rows' distinct neighbours (``words``, ``word_ranks``: their bitmap; its local index or its ghost
    index, one table for both: reading the one of two tables that the part names took 1.25x as long, one rank's
    rows of 2 at SCALE 20), and the weight. Tasks as in `_count_parts`."""
    for task in numba.prange(task_bounds.shape[0] - 1):
        for old in range(task_bounds[task], task_bounds[task + 1]):
            row = new_label[old] * ROW_PARTS
            local_light, remote_light, local_heavy, remote_heavy = bounds[row], bounds[row + 1], bounds[row + 2], \
                bounds[row + 3]
            for k in range(offsets[old], offsets[old + 1]):
                neighbor = neighbors[k]
                part = _part(neighbor, weights[k], first, stop, split_below)
                if part == LOCAL_LIGHT:
                    at, local_light = local_light, local_light + 1
                elif part == REMOTE_LIGHT:
                    at, remote_light = remote_light, remote_light + 1
                elif part == LOCAL_HEAVY:
                    at, local_heavy = local_heavy, local_heavy + 1
                else:
                    at, remote_heavy = remote_heavy, remote_heavy + 1
                columns[at] = column_at[place(neighbor, words, word_ranks, 0)]
                row_weights[at] = weights[k]


def _split_rows(graph, new_label, neighbours, column_at, split_below):
    """``(bounds, columns, weights)``: the rows renumbered and split in their four parts (``neighbours``,
    ``column_at``: `_columns_and_ghosts`'s)."""
    num_local = new_label.shape[0]
    task_bounds = balanced_bounds(graph.offsets, numba.get_num_threads())
    first, stop = graph.first_vertex, graph.first_vertex + num_local
    sizes = np.zeros((num_local, ROW_PARTS), dtype=np.int64)
    _count_parts(graph.offsets, graph.neighbors, graph.weights, new_label, task_bounds, first, stop, split_below,
                 sizes)
    bounds = np.empty((num_local + 1) * ROW_PARTS, dtype=np.int64)
    bounds[0] = 0
    np.cumsum(sizes.ravel(), out=bounds[1:num_local * ROW_PARTS + 1])
    bounds[num_local * ROW_PARTS + 1:] = bounds[num_local * ROW_PARTS]
    columns = np.empty(graph.num_edges, dtype=column_at.dtype)
    weights = np.empty(graph.num_edges, dtype=np.float32)
    _fill_parts(graph.offsets, graph.neighbors, graph.weights, new_label, task_bounds, neighbours.words,
                neighbours.word_ranks, column_at, first, stop, split_below, bounds, columns, weights)
    return bounds, columns, weights


def _columns_and_ghosts(graph, new_label):
    """``(neighbours, column_at, owner, target)``: the rows' distinct neighbours (a `partition.DistinctLabels`:
    a bitmap of all N labels, no table of them), what a row entry holds for each (an owned vertex's local index
    ``new_label``, a remote neighbour's ghost index: int32 where they fit, at any N), and per ghost its owner and
    its local index there (asked of the owners: collective)."""
    comm, blocks = graph.comm, graph.blocks
    first, stop = graph.first_vertex, graph.first_vertex + graph.num_local
    neighbours = DistinctLabels((graph.neighbors,), graph.num_vertices)
    labels = neighbours.labels
    remote = (labels < first) | (labels >= stop)
    remote_labels = labels[remote]  # increasing, so grouped by owner in rank order
    owner = blocks.owner(remote_labels)
    (asked,), asked_counts = comm.alltoallv((remote_labels - owner * blocks.block,),
                                            np.bincount(owner, minlength=comm.size))
    (target,), _ = comm.alltoallv((new_label[asked].astype(np.uint32),), asked_counts)
    # The ghosts numbered per owner, its hubs first (their ghosts are the most read): in the order of
    # owner * block + target, distinct labels below N, so placed among the set bits of a bitmap of them (where a
    # lexsort by (owner, target) took 7x as long as marks in a table of N flags).
    ordered_label = owner * blocks.block + target
    ordered = DistinctLabels((ordered_label,), graph.num_vertices)
    column_dtype = index_dtype_for(max(graph.num_local, ordered_label.shape[0]))  # int32 where the indices fit
    column_at = np.empty(labels.shape[0], dtype=column_dtype)
    column_at[remote] = ordered.places(ordered_label, np.empty(ordered_label.shape[0], dtype=column_dtype))
    column_at[~remote] = new_label[labels[~remote] - first]
    ghost_labels = ordered.labels
    ghost_owner = ghost_labels // blocks.block
    ghost_target = (ghost_labels - ghost_owner * blocks.block).astype(np.uint32)
    return neighbours, column_at, ghost_owner.astype(np.int32), ghost_target
