"""CPU kernel benchmark: harmonic-mean TEPS of every CPU BFS and SSSP kernel on one graph.

    python benchmarks/cpu_kernels.py [--scale 20] [--roots 16] [--sweep] [--threads N]

Builds the reference graph (edgefactor 16, seeds 2 and 3) once with its
original labels (``build_csr``), takes the reference's search keys, and for
each kernel: builds it (its own kernel-1 work, timed: the degree ordering, so
that ``reorder=False`` shows what the ordering is worth; in a run, the CPU
backend's kernel 1 orders the graph once for both kernels, see
``pipeline.py``), runs one untimed warm-up search, then one search per key, each
validated (outside the timing). Prints one table for BFS, with ratios to the
simple ``top-down`` kernel, and one for SSSP, with ratios to the serial
``dijkstra``, both measured in the same run. Wall time and CPU time
(``process_time``, all threads) per search are both shown: the development
machine is shared, and the load average is printed before and after.

``--sweep`` adds the tunables whose defaults were chosen this way: ``alpha``
and ``beta`` of direction-optimizing, ``gamma`` and ``hub_degree`` of its
hub-count policy, ``delta`` and ``fusion_edges`` of delta-stepping.
"""

import argparse
import os
import time

import numba
import numpy as np
from tabulate import tabulate

from graph500 import kernels, stats
from graph500.generators import kronecker
from graph500.generators.roots import incident_vertices, search_keys
from graph500.kernels.cpu.build import build_csr
from graph500.harness import validate_output
from graph500.validators import ValidationGraph

EDGEFACTOR = 16
SEEDS = (2, 3)

BFS_CASES = [
    ("top-down", {}),
    ("bottom-up", {}),
    ("direction-optimizing", {}),
    ("direction-optimizing", {"reorder": False}),
    ("direction-optimizing", {"policy": "hubs"}),
    ("numa-bottom-up", {}),
]
SSSP_CASES = [
    ("dijkstra", {}),
    ("delta-stepping", {}),
    ("delta-stepping", {"reorder": False}),
]
BFS_SWEEP = ([("direction-optimizing", {"alpha": alpha}) for alpha in (4, 8, 30, 60)]
             + [("direction-optimizing", {"beta": beta}) for beta in (6, 50, 200)]
             + [("direction-optimizing", {"policy": "hubs", "gamma": gamma}) for gamma in (0.1, 0.5)]
             + [("direction-optimizing", {"policy": "hubs", "hub_degree": degree}) for degree in (512, 8192)])
SSSP_SWEEP = ([("delta-stepping", {"delta": delta}) for delta in (0.0025, 0.01, 0.02, 0.04)]
              + [("delta-stepping", {"fusion_edges": edges}) for edges in (1 << 10, 1 << 14)])


def run_kernel(kind, name, tunables, graph, validation, roots):
    """One row: build, warm up, time each search, validate each."""
    start = time.perf_counter()
    kernel = kernels.get(kind, "cpu", name)(graph, **tunables)
    build_seconds = time.perf_counter() - start
    kernel.search(int(roots[0]))
    times, cpu_times, nedges = [], [], []
    for root in roots:
        root = int(root)
        cpu_start, start = time.process_time(), time.perf_counter()
        output = kernel.search(root)
        times.append(time.perf_counter() - start)
        cpu_times.append(time.process_time() - cpu_start)
        nedges.append(validate_output(kind, validation, root, output))
    teps = stats.teps_summary(times, nedges)["harmonic_mean"]
    label = name + "".join(f" {key}={value}" for key, value in tunables.items())
    return {"kernel": label, "TEPS": teps, "search ms (median)": 1e3 * np.median(times),
            "CPU ms / search": 1e3 * np.median(cpu_times), "kernel-1 s": build_seconds}


def table(rows, baseline):
    base = next(row["TEPS"] for row in rows if row["kernel"] == baseline)
    return tabulate([[row["kernel"], f"{row['TEPS'] / 1e6:,.1f} M", f"{row['TEPS'] / base:.2f}x",
                      f"{row['search ms (median)']:.1f}", f"{row['CPU ms / search']:.1f}", f"{row['kernel-1 s']:.2f}"]
                     for row in rows],
                    headers=["kernel", "harmonic-mean TEPS", f"vs {baseline}", "search ms (median)",
                             "CPU ms / search", "kernel-1 s"], disable_numparse=True)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--scale", type=int, default=20)
    parser.add_argument("--roots", type=int, default=16, help="search keys per kernel (default 16)")
    parser.add_argument("--sweep", action="store_true", help="also run the tunable sweeps")
    parser.add_argument("--threads", type=int, default=numba.config.NUMBA_NUM_THREADS, help="Numba threads")
    args = parser.parse_args()
    numba.set_num_threads(args.threads)

    num_vertices = 1 << args.scale
    src, dst, weights = kronecker.generate_edges(args.scale, EDGEFACTOR, *SEEDS)
    graph = build_csr(src, dst, num_vertices, weights)
    roots, _ = search_keys(args.scale, *SEEDS, incident_vertices(src, dst, num_vertices), args.roots)
    validation = ValidationGraph.from_edges(src, dst, num_vertices, weights)
    del src, dst, weights
    print(f"SCALE {args.scale}, edgefactor {EDGEFACTOR}, {len(roots)} search keys, {args.threads} Numba threads, "
          f"load average {os.getloadavg()[0]:.2f}")

    for kind, cases, sweep, baseline in (("bfs", BFS_CASES, BFS_SWEEP, "top-down"),
                                         ("sssp", SSSP_CASES, SSSP_SWEEP, "dijkstra")):
        rows = [run_kernel(kind, name, tunables, graph, validation, roots)
                for name, tunables in cases + (sweep if args.sweep else [])]
        print(f"\n{kind.upper()} (all searches validated)\n{table(rows, baseline)}")
    print(f"\nload average {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
