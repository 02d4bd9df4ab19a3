"""Per-level time of the multi-GPU BFS, split into compute and communication, and each search's time.

    mpiexec -n G python benchmarks/multi_gpu.py [--scale 24] [--roots 8] [--edgefactor 16] [--deltas D1 D2 ...]

Each rank takes a GPU (`graph500.kernels.gpu.distributed_backend`), generates
its slice of the reference graph and builds its rows as ``graph500 run
--backend gpu`` does, then runs the BFS (``trace`` on) and the SSSP from the
first ``--roots`` search keys, untimed by the harness and unvalidated (the
run validates; this measures). Printed by rank 0, per BFS level (medians
over the roots): the direction, the frontier, the level's seconds, and of
those the compute (the rank's kernels) and the exchange (the found-bitmap
alltoallv of a top-down level, the frontier allgather, the visited update),
from CUDA events on rank 0's stream: an exchange also waits for the slowest
rank. Then each search's median seconds (BFS with the trace's events, SSSP
without, for each of ``--deltas``: the default bucket width and the
others, as the SSSP's rounds, each with its host round trips, fall as delta
grows and its relaxations rise), and ``--roots`` of each. With G = 1 the
exchanges are copies.
"""

import argparse
import time
from collections import defaultdict

import numpy as np
from tabulate import tabulate

from graph500.comm import world
from graph500.distributed import set_threads_per_rank
from graph500.generators.roots import search_keys
from graph500.kernels.gpu.bfs_distributed import DistributedDirectionOptimizingBFS
from graph500.kernels.gpu.distributed_backend import DistributedGPUBackend
from graph500.kernels.gpu.runtime import cupy
from graph500.kernels.gpu.sssp_distributed import DistributedDeltaSteppingSSSP


def timed_search(comm, search, root):
    """Seconds of one collective search, from a barrier until every rank's GPU is done."""
    comm.barrier()
    start = time.perf_counter()
    search(root)
    cupy.cuda.get_current_stream().synchronize()
    comm.barrier()
    return comm.allreduce(time.perf_counter() - start, "max")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scale", type=int, default=24)
    parser.add_argument("--edgefactor", type=int, default=16)
    parser.add_argument("--roots", type=int, default=8)
    parser.add_argument("--deltas", type=float, nargs="*", default=[], help="SSSP bucket widths besides the default")
    args = parser.parse_args()
    comm = world()
    set_threads_per_rank(comm)
    backend = DistributedGPUBackend(comm)
    num_vertices = 1 << args.scale
    src, dst, weights = backend.generate(args.scale, args.edgefactor, 2, 3)
    graph = backend.build(src, dst, num_vertices, weights)
    roots, _ = search_keys(args.scale, 2, 3, backend.incident_vertices(src, dst, num_vertices), args.roots)
    del src, dst, weights
    bfs = DistributedDirectionOptimizingBFS(graph, trace=True)
    sssp_kernels = [DistributedDeltaSteppingSSSP(graph)] + [DistributedDeltaSteppingSSSP(graph, delta=delta)
                                                            for delta in args.deltas]
    levels = defaultdict(list)
    bfs_seconds, sssp_seconds = [], defaultdict(list)
    for root in map(int, roots):
        bfs_seconds.append(timed_search(comm, bfs.search, root))
        for depth, level in enumerate(bfs.trace):
            levels[depth].append(level)
        for sssp in sssp_kernels:
            sssp_seconds[sssp.delta].append(timed_search(comm, sssp.search, root))
    if comm.rank != 0:
        return
    rows = []
    for depth in sorted(levels):
        entries = levels[depth]
        directions = sorted({entry["direction"] for entry in entries})
        rows.append([depth, "/".join(directions), len(entries), np.median([entry["frontier"] for entry in entries]),
                     *(1e3 * np.median([entry.get(key, 0.0) for entry in entries])
                       for key in ("seconds", "compute_seconds", "exchange_seconds"))])
    print(f"SCALE {args.scale}, {comm.size} GPU rank(s), {len(roots)} roots; BFS levels (medians over the roots "
          f"that reach them), rank 0's stream:")
    print(tabulate(rows, headers=["level", "direction", "roots", "frontier", "ms", "compute ms", "exchange ms"],
                   floatfmt=".3f"))
    print(f"BFS search: median {1e3 * np.median(bfs_seconds):.2f} ms (traced)")
    for sssp in sssp_kernels:
        summary = ", ".join(f"{key} {value}" for key, value in sssp.summary.items())
        print(f"SSSP search, delta {sssp.delta:.4g}: median {1e3 * np.median(sssp_seconds[sssp.delta]):.2f} ms "
              f"(last root: {summary})")


if __name__ == "__main__":
    main()
