"""CPU pipeline benchmark: generation, construction, validation and the default kernels' TEPS.

    python benchmarks/pipeline.py [--scale 20] [--roots 16] [--repeat 3]

Runs the steps of a CPU run on the reference graph (edgefactor 16, seeds 2
and 3) after a warm-up that compiles everything, and prints, per step, the
best of ``--repeat`` wall times beside two baselines. Construction is shown
twice: ``build_csr`` alone (the CSR of the tuples, as the reference's kernel
1 makes it) and what a run reports as ``construction_time`` (the CPU
backend's kernel 1, which also orders the vertices by degree, plus both
default kernels' set-up, which the spec charges to construction). Baselines:

* the Graph500 reference program (v3.0.0, 2 MPI ranks) at SCALE 20 on the
  2-core development machine, as measured when the project began (issue 2):
  generation 3.0 s, construction 1.5 s, BFS validation 1.6 s per search;
* the one-edge-at-a-time way of generating (skip from the seed per edge, as the
  reference does), measured in this run on a sample of edges and scaled up.

Then the harmonic-mean TEPS of the default BFS and SSSP kernels over
``--roots`` search keys, each validated.
"""

import argparse
import time

import numba
import numpy as np
from tabulate import tabulate

from graph500 import kernels, stats
from graph500.generators import kronecker, mrg
from graph500.generators.roots import incident_vertices, search_keys
from graph500.kernels.cpu.backend import CPUBackend
from graph500.kernels.cpu.build import build_csr
from graph500.validators import ValidationGraph, validate_bfs, validate_sssp

REFERENCE_SCALE20 = {"generation": 3.0, "construction": 1.5, "bfs validation / search": 1.6}


def best_time(repeat, function, *args):
    best, result = float("inf"), None
    for _ in range(repeat):
        start = time.perf_counter()
        result = function(*args)
        best = min(best, time.perf_counter() - start)
    return best, result


@numba.njit(cache=True)
def _skip_per_edge(first, count, seed, stride_powers):
    """The reference's way: every edge's state skipped from the seed (the slow baseline)."""
    total = np.uint64(0)
    for edge in range(first, first + count):
        total += kronecker.edge_start_state(edge, seed, stride_powers)[0]
    return total


def skip_per_edge_seconds(scale, sample=200_000):
    """Seconds the skip-from-seed positioning alone would take for all edges (sampled, scaled)."""
    num_edges = 16 << scale
    sample = min(sample, num_edges)  # small graphs: every edge
    seed = mrg.seed_state(2, 3)
    _skip_per_edge(num_edges - 10, 10, seed, mrg.EDGE_STRIDE_POWERS)
    start = time.perf_counter()
    _skip_per_edge(num_edges - sample, sample, seed, mrg.EDGE_STRIDE_POWERS)
    return (time.perf_counter() - start) * num_edges / sample


def kernel_1_as_run(src, dst, num_vertices, weights):
    """What a run's ``construction_time`` covers: the CPU backend's kernel 1 and both default kernels' set-up."""
    graph = CPUBackend().build(src, dst, num_vertices, weights)
    return {kind: kernels.get(kind, "cpu")(graph) for kind in ("bfs", "sssp")}


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--scale", type=int, default=20)
    parser.add_argument("--roots", type=int, default=16)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    num_vertices, num_edges = 1 << args.scale, 16 << args.scale

    warm = kronecker.generate_edges(6, 4)
    build_csr(warm[0], warm[1], 64, warm[2])
    kernel_1_as_run(*warm[:2], 64, warm[2])
    generation, (src, dst, weights) = best_time(args.repeat, kronecker.generate_edges, args.scale, 16, 2, 3)
    construction, _ = best_time(args.repeat, build_csr, src, dst, num_vertices, weights)
    as_run, graph = best_time(args.repeat, kernel_1_as_run, src, dst, num_vertices, weights)
    roots, _ = search_keys(args.scale, 2, 3, incident_vertices(src, dst, num_vertices), args.roots)
    setup, validation_graph = best_time(1, ValidationGraph.from_edges, src, dst, num_vertices, weights)

    rows = [
        ["generation", generation, REFERENCE_SCALE20["generation"], f"{num_edges / generation:.3g} edges/s"],
        ["construction (build_csr)", construction, REFERENCE_SCALE20["construction"], ""],
        ["construction_time of a run", as_run, REFERENCE_SCALE20["construction"], "degree-ordered, kernels' set-up"],
        ["validation set-up (once)", setup, None, ""],
    ]
    teps = {}
    for kind, validate in (("bfs", validate_bfs), ("sssp", validate_sssp)):
        kernel = graph[kind]
        name = kernel.name
        output = kernel.search(int(roots[0]))  # warm-up
        times, nedges, validation_times = [], [], []
        for root in roots.tolist():
            seconds, output = best_time(1, kernel.search, root)
            outputs = output if kind == "sssp" else (output,)
            check, nedge = best_time(1, validate, validation_graph, root, *outputs)
            times.append(seconds)
            nedges.append(nedge)
            validation_times.append(check)
        teps[f"{kind} ({name})"] = stats.teps_summary(times, nedges)["harmonic_mean"]
        reference = REFERENCE_SCALE20["bfs validation / search"] if kind == "bfs" else None
        rows.append([f"{kind} validation / search", float(np.mean(validation_times)), reference, ""])

    if args.scale == 20:
        table = [[step, f"{ours:.3f}", "" if ref is None else f"{ref:.1f}",
                  "" if ref is None else f"{ref / ours:.1f}x", note] for step, ours, ref, note in rows]
        headers = ["step (SCALE 20)", "seconds", "reference s", "speed-up", ""]
    else:
        table = [[step, f"{ours:.3f}", note] for step, ours, _, note in rows]
        headers = [f"step (SCALE {args.scale})", "seconds", ""]
    print(tabulate(table, headers=headers))
    baseline = skip_per_edge_seconds(args.scale)
    print(f"\nskip-per-edge positioning alone (the reference's way, measured now): {baseline:.2f} s "
          f"-> stepping generator is {baseline / generation:.1f}x faster including all draws")
    print(f"\n{numba.get_num_threads()} threads")
    print(tabulate([[name, f"{value:.4g}"] for name, value in teps.items()], headers=["kernel", "harmonic-mean TEPS"]))


if __name__ == "__main__":
    main()
