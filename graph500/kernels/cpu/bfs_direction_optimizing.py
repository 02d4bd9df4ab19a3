"""Kernel 2, ``direction-optimizing``: BFS that switches between top-down and bottom-up levels.

Algorithm: Beamer, Asanovic and Patterson, "Direction-Optimizing
Breadth-First Search" (SC 2012). Small frontiers are expanded top-down
(`bfs_top_down.top_down_step`: per-thread queue buffers); once the frontier
touches a large part of the graph, bottom-up (`bfs_bottom_up.bottom_up_step`:
bitmaps) examines far fewer edges, because most unvisited vertices find a
parent among their first few neighbours. Two switching policies:

- ``beamer`` (default): switch to bottom-up when the frontier's edges exceed
  the edges not yet examined / ``alpha``; back to top-down when the frontier
  shrinks and holds at most N / ``beta`` vertices.
- ``hubs``: the hub-count rule of Liu and Huang, "Enterprise: Breadth-First
  Graph Traversal on GPUs" (SC 2015): switch to bottom-up when the frontier
  holds more than ``gamma`` of the graph's hub vertices (those of degree at
  least ``hub_degree``); back to top-down by the ``beta`` rule.

Data structures: those of the two steps (frontier queue <-> bitmaps, converted
at each switch); the visited bitmap is kept up to date in top-down levels too.
Built once per graph (kernel 1): the graph relabelled by decreasing degree
(`reorder`; parents are written under the original labels, `frontier.Parents`),
the bottom-up layout and, for ``hubs``, a hub flag per vertex.

Tunables: ``alpha`` (default 15), ``beta`` (default 18), ``policy``
(``beamer``), ``gamma`` (0.3), ``hub_degree`` (default: 64 times the average
degree), ``parallel_edges`` (of the top-down step), ``reorder`` (True),
``numa_domains`` (1; see `bfs_numa_bottom_up`). Measured at SCALE 20 with
``benchmarks/cpu_kernels.py --sweep``: alpha from 8 to 60 and beta from 6 to
200 change the harmonic mean by less than the run-to-run noise (5%), so
Beamer's values stay; the hub rule with gamma from 0.1 to 0.5 matches
Beamer's when hubs are the vertices of degree 64 x average and above (with
16 x, some roots switch a level late and the harmonic mean drops by 15-20%).
"""

import time

import numba
import numpy as np

from graph500.kernels import register
from graph500.kernels.cpu.bfs_bottom_up import FIRST_NEIGHBORS, BottomUpLayout, bottom_up_levels
from graph500.kernels.cpu.bfs_top_down import PARALLEL_EDGES, TopDownBuffers, top_down_step
from graph500.kernels.cpu.frontier import (
    Parents, bitmap_to_queue_and_edges, queue_to_bitmap, trace_entry,
)
from graph500.kernels.cpu.reorder import relabel

ALPHA = 15.0
BETA = 18.0
GAMMA = 0.3
HUB_DEGREE_PER_AVERAGE = 64.0
POLICIES = ("beamer", "hubs")


@numba.njit(cache=True)
def _count_flagged(flags, queue):
    count = 0
    for v in queue:
        count += flags[v]
    return count


@register(default=True)
class DirectionOptimizingBFS:
    """Direction-optimizing BFS: top-down for small frontiers, bottom-up for large ones."""

    name = "direction-optimizing"
    kind = "bfs"
    backend = "cpu"

    def __init__(self, graph, alpha=ALPHA, beta=BETA, policy="beamer", gamma=GAMMA, hub_degree=None,
                 parallel_edges=PARALLEL_EDGES, reorder=True, numa_domains=1, first_neighbors=FIRST_NEIGHBORS):
        if policy not in POLICIES:
            raise ValueError(f"policy must be one of {', '.join(POLICIES)}, got {policy!r}")
        if numa_domains < 1:
            raise ValueError(f"numa_domains must be at least 1, got {numa_domains}")
        self.graph = graph = relabel(graph, reorder)
        self.alpha, self.beta, self.policy, self.gamma = alpha, beta, policy, gamma
        self.parallel_edges = parallel_edges
        self.layout = BottomUpLayout(graph, copies=numa_domains, first_neighbors=first_neighbors)
        self.buffers = TopDownBuffers(graph.num_vertices, graph.neighbors.dtype)
        self.parents = Parents(graph, first_neighbors=self.layout.first_neighbors)
        if policy == "hubs":
            degrees = np.diff(graph.offsets)
            if hub_degree is None:
                hub_degree = HUB_DEGREE_PER_AVERAGE * graph.neighbors.shape[0] / max(1, graph.num_vertices)
            self.is_hub = (degrees >= hub_degree).astype(np.uint8)
            self.num_hubs = int(self.is_hub.sum())
        self.trace = []

    def _go_bottom_up(self, queue, queue_edges, unexplored_edges):
        if self.policy == "beamer":
            return queue_edges > unexplored_edges / self.alpha
        return self.num_hubs > 0 and _count_flagged(self.is_hub, queue) > self.gamma * self.num_hubs

    def search(self, root):
        graph = self.graph
        root = int(graph.new_label[root])
        parent = self.parents.start(root)
        parent_labels = self.parents.written
        found_vertex, found_claimer, num_tasks = self.buffers.get()
        word_bounds, task_copy = self.layout.tasks()
        visited = self.layout.visited_bitmap(root)
        frontier_bitmap, next_bitmap = self.layout.frontier_bitmaps(task_copy)
        queue = np.array([root], dtype=np.int64)
        queue_edges = int(graph.offsets[root + 1] - graph.offsets[root])
        unexplored_edges = graph.neighbors.shape[0]
        left_bottom_up = False
        self.trace = []
        while queue.shape[0]:
            if not left_bottom_up and self._go_bottom_up(queue, queue_edges, unexplored_edges):
                queue_to_bitmap(queue, frontier_bitmap)
                last_frontier = bottom_up_levels(graph, self.layout.first_neighbors, word_bounds, task_copy,
                                                 frontier_bitmap, next_bitmap, queue.shape[0], visited, self.parents,
                                                 self.trace, graph.num_vertices / self.beta)
                queue, queue_edges = bitmap_to_queue_and_edges(last_frontier[0], graph.offsets)
                left_bottom_up = True  # as Beamer et al.: at least one top-down level before switching again
                continue
            left_bottom_up = False
            start = time.perf_counter()
            unexplored_edges -= queue_edges
            next_queue, next_edges = top_down_step(graph.offsets, graph.neighbors, queue, queue_edges, visited, parent,
                                                   parent_labels, found_vertex, found_claimer, num_tasks,
                                                   self.parallel_edges)
            self.trace.append(trace_entry("top-down", queue.shape[0], queue_edges, time.perf_counter() - start))
            queue, queue_edges = next_queue, next_edges
        return self.parents.finish()

