"""How many edges an early-stopping pull would read in the CPU delta-stepping's largest buckets, against the
edges its heavy step pushes there (a planning estimate: nothing here is timed).

    python benchmarks/cpu_sssp_pull_estimate.py [--scale 20] [--roots 1] [--buckets 6] [--prefix 0.05 0.1]

Runs the default CPU SSSP from the first keys (the reference graph, edgefactor 16, seeds 2 and 3) and takes
its final distances. For each of the buckets ``[k delta, (k + 1) delta)`` whose settled vertices hold the
most edges (what the heavy step pushes), it counts the edges a pull would read: every vertex past the bucket
scans its row in increasing weight for neighbours in the bucket and stops at the first edge with
``low + w`` at or above its best candidate (the GPU kernel's pull, ``gpu/sssp.py``). ``final bound``
starts each vertex's best at its final distance (the fewest edges a pull could read), ``no bound`` at
infinity (the most; a real pull starts from the tentative distance, in between). ``prefix TAU``: only the
row's edges lighter than TAU are in weight order (a sorted copy of about TAU of the entries instead of
every row sorted), and a vertex whose best is still above ``low + TAU`` after them reads its whole row.

SCALE 20, the first key (402 buckets; the 6 largest hold 87% of the pushed edges): the two hub buckets
push 11.9 M and 9.2 M edges; a pull reads 0.78-1.27 M and 0.37-1.48 M with whole rows sorted, 2.97 M and
3.50 M with a 0.1 prefix, 4.45 M and 4.87 M with 0.05; from the third bucket on a pull reads more than the
push (2.6-3.2 M edges against 0.7-3.1 M without a bound).
"""

import argparse

import numba
import numpy as np
from tabulate import tabulate

from graph500 import kernels
from graph500.generators import kronecker
from graph500.generators.roots import incident_vertices, search_keys
from graph500.kernels.cpu.backend import CPUBackend


@numba.njit(parallel=True, cache=True)
def pull_edges(offsets, neighbors, weights, distance, low, high, bounded, prefix):
    """Edges the pull for [low, high) reads (see the module docstring); ``prefix`` 1 or more: whole rows."""
    num_vertices = offsets.shape[0] - 1
    read = np.zeros(num_vertices, np.int64)
    for v in numba.prange(num_vertices):
        if distance[v] < high:
            continue
        order = np.argsort(weights[offsets[v]:offsets[v + 1]])
        best = distance[v] if bounded else np.inf
        count = 0
        stopped = False
        for k in order:
            e = offsets[v] + k
            w = weights[e]
            if w >= prefix:
                break
            if not (low + w < best):
                stopped = True
                break
            count += 1
            d = distance[neighbors[e]]
            if low <= d < high and d + w < best:
                best = d + w
        if not stopped and prefix < 1 and not (low + prefix >= best):
            count += offsets[v + 1] - offsets[v]  # the unsorted rest: the whole row again
        read[v] = count
    return read.sum()


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scale", type=int, default=20)
    parser.add_argument("--roots", type=int, default=1)
    parser.add_argument("--buckets", type=int, default=6)
    parser.add_argument("--prefix", type=float, nargs="*", default=[0.05, 0.1])
    args = parser.parse_args()
    num_vertices = 1 << args.scale
    src, dst, weights = kronecker.generate_edges(args.scale, 16, 2, 3)
    graph = CPUBackend().build(src, dst, num_vertices, weights)
    roots, _ = search_keys(args.scale, 2, 3, incident_vertices(src, dst, num_vertices), args.roots)
    kernel = kernels.get("sssp", "cpu")(graph)
    degrees = np.diff(graph.offsets)
    for root in map(int, roots):
        _, distances = kernel.search(root)
        distance = (distances[graph.order] if graph.order is not None else distances).astype(np.float32)
        reached = np.isfinite(distance)
        bucket = np.floor(distance[reached] / kernel.delta).astype(np.int64)
        pushed = np.bincount(bucket, weights=degrees[reached])
        rows = []
        for k in sorted(np.argsort(pushed)[::-1][:args.buckets]):
            low, high = np.float32(k * kernel.delta), np.float32((k + 1) * kernel.delta)
            estimate = [pull_edges(graph.offsets, graph.neighbors, graph.weights, distance, low, high, bounded, 2.0)
                        for bounded in (True, False)]
            estimate += [pull_edges(graph.offsets, graph.neighbors, graph.weights, distance, low, high, False,
                                    np.float32(prefix)) for prefix in args.prefix]
            rows.append([k, int(pushed[k]), *estimate, int((distance >= high).sum())])
        print(f"key {root}: {len(pushed)} buckets, the {args.buckets} largest push "
              f"{sum(row[1] for row in rows) / pushed.sum():.0%} of the pushed edges")
        print(tabulate(rows, headers=["bucket", "pushed edges", "pull, final bound", "pull, no bound",
                                      *(f"prefix {prefix}" for prefix in args.prefix), "vertices past it"]))


if __name__ == "__main__":
    main()
