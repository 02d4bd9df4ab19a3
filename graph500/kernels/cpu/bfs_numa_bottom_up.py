"""Kernel 2, ``numa-bottom-up``: direction-optimizing BFS whose bottom-up step is NUMA-aware.

Algorithm: `bfs_direction_optimizing` (Beamer, Asanovic, Patterson, SC 2012)
with the bottom-up step laid out for several memory domains, after Yasui,
Fujisawa and Goto, "NUMA-optimized parallel breadth-first search on
multicore single-node system" (IEEE BigData 2013). The threads are grouped
into one group per NUMA domain; each group owns a contiguous range of
vertices (cut by edges) and reads its own copy of the frontier bitmap, the
bitmap every unvisited vertex probes for each neighbour, so those probes
stay in local memory. A thread writes each next-frontier word it computes
into every copy (a word per 64 vertices, a small share of the traffic).
Each copy is first written by its own domain's threads, so the OS places
its pages there.

On one domain (this is what ``direction-optimizing`` runs) there is one
copy and the kernel is the plain direction-optimizing BFS.
``numa_domains`` overrides the count the OS reports, so the replicated code
path also runs, and is tested, on one-domain machines. Threads are grouped in
Numba's thread order; pin them (e.g. ``OMP_PROC_BIND=close``) so that a group
shares a domain.

Data structures: those of `bfs_direction_optimizing`, with the frontier
bitmaps as one row per domain.

Tunables: ``numa_domains`` (default: the OS's count of NUMA nodes with CPUs),
and those of `bfs_direction_optimizing`.
"""

import glob
import os

from graph500.kernels import register
from graph500.kernels.cpu.bfs_direction_optimizing import DirectionOptimizingBFS


def detected_numa_domains():
    """NUMA nodes that have CPUs, as Linux lists them (1 where it cannot tell)."""
    count = 0
    for node in glob.glob("/sys/devices/system/node/node[0-9]*"):
        try:
            with open(os.path.join(node, "cpulist")) as cpulist:
                count += bool(cpulist.read().strip())
        except OSError:
            pass
    return max(1, count)


@register()
class NumaBottomUpBFS(DirectionOptimizingBFS):
    """Direction-optimizing BFS with one frontier bitmap copy per NUMA domain in the bottom-up step."""

    name = "numa-bottom-up"

    def __init__(self, graph, numa_domains=None, **tunables):
        super().__init__(graph, numa_domains=detected_numa_domains() if numa_domains is None else numa_domains,
                         **tunables)
