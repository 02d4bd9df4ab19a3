"""Where the CPU delta-stepping's time goes: its per-bucket trace, summed over search keys.

    python benchmarks/cpu_sssp_trace.py [--scale 20] [--roots 8] [--threads N]

Builds the reference graph (edgefactor 16, seeds 2 and 3) with the CPU
backend's kernel 1, runs the default SSSP kernel from the first ``--roots``
search keys (one untimed search first: compilation), and prints per search:
its seconds, buckets, the buckets that ran a parallel round and their share
of the time and of the edges examined, the share of the first buckets (the
hubs' buckets), and the work efficiency of the first buckets that settle a
vertex (edges examined against the degree sum of the vertices whose distance
falls in the bucket: 1.0 means no row was relaxed twice). On the 2-core development machine,
SCALE 20, 2 threads, 8 keys: 212 buckets, 107 with a parallel round
holding 97.7% of the time; the first 5 that settle a vertex 58% of it, each
at a work efficiency of 1.004 to 1.016 (the light edges relaxed besides
each row once): the time is the cost per edge of the hubs' buckets, not
small buckets or repeated relaxations.
"""

import argparse
import time

import numba
import numpy as np
from tabulate import tabulate

from graph500 import kernels
from graph500.generators import kronecker
from graph500.generators.roots import incident_vertices, search_keys
from graph500.kernels.cpu.backend import CPUBackend

FIRST_BUCKETS = 5


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scale", type=int, default=20)
    parser.add_argument("--roots", type=int, default=8)
    parser.add_argument("--threads", type=int, default=numba.config.NUMBA_NUM_THREADS)
    args = parser.parse_args()
    numba.set_num_threads(args.threads)
    num_vertices = 1 << args.scale
    src, dst, weights = kronecker.generate_edges(args.scale, 16, 2, 3)
    graph = CPUBackend().build(src, dst, num_vertices, weights)
    roots, _ = search_keys(args.scale, 2, 3, incident_vertices(src, dst, num_vertices), args.roots)
    kernel = kernels.get("sssp", "cpu")(graph)
    kernel.search(int(roots[0]))
    degrees = np.zeros(num_vertices, dtype=np.int64)  # under the input's labels, as the distances are
    degrees[graph.order if graph.order is not None else np.arange(num_vertices)] = np.diff(graph.offsets)
    seconds, buckets, first_edges, first_degrees = [], [], np.zeros(FIRST_BUCKETS), np.zeros(FIRST_BUCKETS)
    for root in map(int, roots):
        start = time.perf_counter()
        _, distances = kernel.search(root)
        seconds.append(time.perf_counter() - start)
        buckets.append(kernel.trace)
        for position, entry in enumerate(kernel.trace[:FIRST_BUCKETS]):
            low, high = entry["bucket"] * kernel.delta, (entry["bucket"] + 1) * kernel.delta
            first_edges[position] += entry["edges_examined"]
            first_degrees[position] += degrees[(distances >= low) & (distances < high)].sum()
    entries = [entry for trace in buckets for entry in trace]
    bucket_seconds = np.array([entry["seconds"] for entry in entries])
    edges = np.array([entry["edges_examined"] for entry in entries])
    parallel = np.array([entry["direction"] == "parallel" for entry in entries])
    first = sum(sum(entry["seconds"] for entry in trace[:FIRST_BUCKETS]) for trace in buckets)
    keys = len(roots)
    print(f"SCALE {args.scale}, {args.threads} threads, {keys} keys, delta {kernel.delta:g}")
    print(tabulate([
        ["seconds a search (median)", f"{np.median(seconds):.4f}"],
        ["buckets a search", f"{len(entries) / keys:.1f}"],
        ["buckets with a parallel round", f"{parallel.sum() / keys:.1f}"],
        ["their share of the time", f"{bucket_seconds[parallel].sum() / bucket_seconds.sum():.3f}"],
        ["their share of the edges", f"{edges[parallel].sum() / max(1, edges.sum()):.3f}"],
        [f"the first {FIRST_BUCKETS} buckets' share of the time", f"{first / bucket_seconds.sum():.3f}"],
    ], tablefmt="plain"))
    print(tabulate([[position + 1, f"{first_edges[position] / keys:.0f}", f"{first_degrees[position] / keys:.0f}",
                     f"{first_edges[position] / max(1, first_degrees[position]):.3f}"]
                    for position in range(FIRST_BUCKETS)],
                   headers=["settled bucket", "edges examined", "degree sum settled", "ratio"]))


if __name__ == "__main__":
    main()
