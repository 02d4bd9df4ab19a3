"""CPU kernel tunables against the default, as interleaved rounds on one graph, at several thread counts.

    python benchmarks/cpu_variants.py [--kind bfs] [--scale 22] [--roots 16] [--rounds 5] [--threads 16 2]
                                      [--variants default alpha=30 beta=24]

Builds the graph with the CPU backend's kernel 1 (degree-ordered, as in a
run; edgefactor 16, seeds 2 and 3; ``cpu_revisions.run_graph``), takes the reference's search keys, and
builds the kind's default kernel once per variant (``default`` or
``name=value,...`` of its tunables; the first listed is the baseline). Every
variant's trees are validated first. Then, per thread count, ``--rounds``
rounds: per key, one search with each variant, in an order that rotates from
round to round (A B C, B C A, ...); with ``--validate``, each search's tree
is validated right after it (untimed), as a run does. Printed per thread
count and variant:
the median of its rounds' harmonic-mean TEPS and the median ratio to the
baseline of the same round, with its spread (min to max). ``cpu_kernels.py
--sweep`` times tunables one after another; this script interleaves them,
as the shared machines need (their speed drifts within minutes).
"""

import argparse
import time

import numba
import numpy as np
from tabulate import tabulate

from cpu_revisions import run_graph  # benchmarks/cpu_revisions.py, beside this script
from settings import kernel_options  # benchmarks/settings.py, beside this script
from graph500 import kernels, stats
from graph500.harness import validate_output


def validated_nedges(kind, kernel, validation, roots):
    return [validate_output(kind, validation, root, kernel.search(root)) for root in roots]


def timed_rounds(searchers, nedges, roots, rounds, check=None):
    """``{variant: [harmonic-mean TEPS of each round]}``, the variants' order rotating between rounds;
    ``check(root, output)`` after each search, untimed, when given."""
    names = list(searchers)
    teps = {name: [] for name in names}
    for round_index in range(rounds):
        shift = round_index % len(names)
        order = names[shift:] + names[:shift]
        times = {name: [] for name in names}
        for root in roots:
            for name in order:
                start = time.perf_counter()
                output = searchers[name].search(root)
                times[name].append(time.perf_counter() - start)
                if check is not None:
                    check(root, output)
        for name in names:
            teps[name].append(stats.teps_summary(times[name], nedges)["harmonic_mean"])
    return teps


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--kind", choices=("bfs", "sssp"), default="bfs")
    parser.add_argument("--scale", type=int, default=22)
    parser.add_argument("--roots", type=int, default=16)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--threads", type=int, nargs="+", default=[numba.config.NUMBA_NUM_THREADS])
    parser.add_argument("--variants", nargs="+", default=["default"], metavar="SETTING")
    parser.add_argument("--validate", action="store_true", help="validate each tree right after its search")
    args = parser.parse_args()
    graph, roots, validation = run_graph(args.scale, args.roots)
    kernel_class = kernels.get(args.kind, "cpu", kernels.default_name(args.kind, "cpu"))
    searchers = {setting: kernel_class(graph, **kernel_options(setting)) for setting in args.variants}
    baseline = args.variants[0]
    nedges = validated_nedges(args.kind, searchers[baseline], validation, roots)
    for setting, searcher in searchers.items():
        if validated_nedges(args.kind, searcher, validation, roots) != nedges:
            raise SystemExit(f"{setting}: the trees reach other edges than {baseline}'s")
    rows = []
    for threads in args.threads:
        numba.set_num_threads(threads)
        for searcher in searchers.values():
            searcher.search(roots[0])  # warm-up at this thread count (per-thread buffers)
        check = (lambda root, output: validate_output(args.kind, validation, root, output)) if args.validate else None
        teps = timed_rounds(searchers, nedges, roots, args.rounds, check)
        base = np.array(teps[baseline])
        for setting in args.variants:
            ratios = np.array(teps[setting]) / base
            rows.append([threads, setting, f"{np.median(teps[setting]):.4g}", f"{np.median(ratios):.3f}",
                         f"{ratios.min():.3f}-{ratios.max():.3f}"])
        print(tabulate(rows[-len(args.variants):], tablefmt="plain"), flush=True)
    print(f"\n{args.kind} {kernel_class.name}, SCALE {args.scale}, {len(roots)} keys, {args.rounds} rounds"
          + (", each tree validated after its search" if args.validate else ""))
    print(tabulate(rows, headers=["threads", "variant", "harmonic-mean TEPS (median)", "ratio to the first (median)",
                                  "ratio spread"]))


if __name__ == "__main__":
    main()
