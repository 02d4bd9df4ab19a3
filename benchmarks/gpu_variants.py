"""GPU kernel variants against a baseline, as interleaved rounds on one graph.

    PYTHONPATH=. python benchmarks/gpu_variants.py [--scales 24 26] [--roots 64] [--rounds 5]
        [--bfs default strongest_first=0 alpha=30] [--sssp default pull_ratio=2] [--orderings input degree]

For each SCALE (edgefactor 16, seeds 2 and 3, the reference's search keys)
it builds the weighted graph once per ordering (kernel 1's labels: by
decreasing degree, as the backend builds it, or the input's), then runs
rounds: in each round every BFS variant, then every SSSP variant, searches
from every key (A B C A B C ...). A variant is ``default`` or
``name=value,...`` of the kernel's tunables; the first listed is the
baseline. An SSSP kernel is constructed again before each of its rounds (its
construction sorts the rows by weight and finds their light edges by its
delta, as in a run), so SSSP variants may differ in delta. Every variant's trees are validated first.
Printed per variant: the harmonic-mean TEPS of its rounds (median), and the
ratio to the baseline of the same round, median and spread (min to max) over
the rounds.
"""

import argparse
import functools

import numpy as np
from tabulate import tabulate

from settings import kernel_options  # benchmarks/settings.py, beside this script
from graph500 import stats
from graph500.generators import roots as roots_module
from graph500.harness import validate_output
from graph500.kernels.gpu import bfs as gpu_bfs, build as gpu_build, sssp as gpu_sssp
from graph500.kernels.gpu.backend import GPUBackend
from graph500.validators import ValidationGraph

EDGEFACTOR = 16
SEEDS = (2, 3)


def timed_round(backend, kernel, roots):
    return [backend.timed(kernel.search, root)[1] for root in roots]


def measure(scale, bfs_settings, sssp_settings, orderings, num_roots, rounds):
    backend = GPUBackend()
    num_vertices = 1 << scale
    src, dst, weights = backend.generate(scale, EDGEFACTOR, *SEEDS)
    has_edge = backend.incident_vertices(src, dst, num_vertices)
    roots = [int(root) for root in roots_module.search_keys(scale, *SEEDS, has_edge, num_roots)[0]]
    validation_graph = ValidationGraph.from_edges(src, dst, num_vertices, weights)
    variants = []  # (kind, setting, a function giving the kernel to search with)
    for ordering in orderings:
        graph = gpu_build.build_csr(src, dst, num_vertices, weights, degree_ordered=ordering == "degree")
        prefix = f"{ordering}: " if len(orderings) > 1 else ""
        for setting in bfs_settings:
            bfs_kernel = gpu_bfs.DirectionOptimizingBFS(graph, **kernel_options(setting))
            variants.append(("bfs", prefix + setting, lambda kernel=bfs_kernel: kernel))
        for setting in sssp_settings:  # built again for each round: its construction splits the rows by its delta
            variants.append(("sssp", prefix + setting,
                             functools.partial(gpu_sssp.DeltaSteppingSSSP, graph, **kernel_options(setting))))
    del src, dst, weights
    nedges = None
    for kind, setting, make_kernel in variants:  # validate every variant's trees; nedge per key for the TEPS
        kernel = make_kernel()
        counts = []
        for root in roots:
            output = kernel.search(root)
            counts.append(validate_output(kind, validation_graph, root, output))
        del kernel, output
        nedges = nedges or counts
        if counts != nedges:
            raise SystemExit(f"{kind} {setting}: nedge differs from the first variant's")
    teps = {(kind, setting): [] for kind, setting, _ in variants}
    for _ in range(rounds):
        for kind, setting, make_kernel in variants:
            kernel = make_kernel()
            times = timed_round(backend, kernel, roots)
            del kernel
            teps[kind, setting].append(stats.teps_summary(times, nedges)["harmonic_mean"])
    rows = []
    for kind in ("bfs", "sssp"):
        settings = [setting for variant_kind, setting, _ in variants if variant_kind == kind]
        if not settings:
            continue
        baseline = np.array(teps[kind, settings[0]])
        for setting in settings:
            values = np.array(teps[kind, setting])
            ratios = values / baseline
            rows.append([scale, kind, setting, f"{np.median(values):.4g}", f"{np.median(ratios):.3f}",
                         f"{ratios.min():.3f}-{ratios.max():.3f}"])
    return rows


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--scales", type=int, nargs="+", default=[24, 26])
    parser.add_argument("--roots", type=int, default=64)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--bfs", nargs="*", default=["default"], metavar="SETTING")
    parser.add_argument("--sssp", nargs="*", default=[], metavar="SETTING")
    parser.add_argument("--orderings", nargs="+", choices=("degree", "input"), default=["degree"],
                        help="kernel 1's labels: by decreasing degree (the backend's) or the input's; each variant "
                             "runs on each ordering's graph")
    args = parser.parse_args()
    print(f"device: {GPUBackend().describe()['device']}; {args.rounds} interleaved rounds of {args.roots} keys",
          flush=True)
    rows = []
    for scale in args.scales:
        scale_rows = measure(scale, args.bfs, args.sssp, args.orderings, args.roots, args.rounds)
        print(tabulate(scale_rows, tablefmt="plain"), flush=True)
        rows += scale_rows
    print(tabulate(rows, headers=["SCALE", "kernel", "variant", "harmonic-mean TEPS (median)",
                                  "ratio to the first (median)", "ratio spread"]))


if __name__ == "__main__":
    main()
