"""Where the CPU BFS stops scaling: its levels' time at several thread counts, with the host's steal time.

    python benchmarks/cpu_levels.py [--scale 22] [--roots 8] [--rounds 3] [--threads 16 8 4 2 1]

Builds the reference graph (edgefactor 16, seeds 2 and 3) with the CPU
backend's kernel 1 (``cpu_revisions.run_graph``), the default BFS kernel
once, and validates its tree from every key. Then ``--rounds`` rounds; in
each, every thread count in turn (the order rotates from round to round)
searches from every key. A search's levels are the same at every thread
count (the vertices at each distance from the key do not depend on the
threads), so each level's time is compared across thread counts directly.

Printed:

1. Per thread count, medians over the searches: a search's milliseconds,
   its top-down and bottom-up levels' milliseconds, the rest (the work
   between levels: converting the frontier at a switch, counting its
   edges, writing the output), the speed-up over the fewest threads, and
   two host figures over all of that thread count's searches: CPU seconds
   used per wall second per thread (1.0: every thread busy; spinning
   threads count as busy), and the steal
   time (``/proc/stat``: time the host ran something else while one of this
   machine's CPUs wanted to run) as a share of all CPU time.
2. Per level position (the i-th level of a search), the direction most
   searches took there, the median frontier and edges examined, and the
   median milliseconds at each thread count with the speed-up from the
   fewest threads to the most.
"""

import argparse
import os
import time
from collections import defaultdict

import numba
import numpy as np
from tabulate import tabulate

from cpu_revisions import run_graph  # benchmarks/cpu_revisions.py, beside this script
from graph500 import kernels
from graph500.validators import validate_bfs


def cpu_times():
    """``(busy, steal)`` jiffies of all CPUs from /proc/stat (``(0, 0)`` where it does not exist)."""
    try:
        with open("/proc/stat") as stat:
            fields = [int(value) for value in stat.readline().split()[1:]]
    except OSError:
        return 0, 0
    user, nice, system, idle, iowait, irq, softirq, steal = (fields + [0] * 8)[:8]
    return user + nice + system + irq + softirq, steal


def time_searches(kernel, roots):
    """Per key: ``(seconds, trace)``."""
    searches = []
    for root in roots:
        start = time.perf_counter()
        kernel.search(root)
        searches.append((time.perf_counter() - start, list(kernel.trace)))
    return searches


def summarize(searches_by_threads, host_by_threads, thread_counts):
    rows = []
    fewest = min(thread_counts)
    baseline = np.median([seconds for seconds, _ in searches_by_threads[fewest]]) * 1e3
    for threads in thread_counts:
        searches = searches_by_threads[threads]
        total = np.median([seconds for seconds, _ in searches]) * 1e3
        by_direction = {direction: np.median([sum(level["seconds"] for level in trace
                                                  if level["direction"] == direction) for _, trace in searches]) * 1e3
                        for direction in ("top-down", "bottom-up")}
        rest = np.median([seconds - sum(level["seconds"] for level in trace) for seconds, trace in searches]) * 1e3
        wall, process_cpu, busy, steal = host_by_threads[threads]
        rows.append([threads, f"{total:.2f}", f"{by_direction['top-down']:.2f}", f"{by_direction['bottom-up']:.2f}",
                     f"{rest:.2f}", f"{baseline / total:.2f}x", f"{process_cpu / (wall * threads):.2f}",
                     f"{100 * steal / max(1, busy + steal):.1f}%"])
    print(tabulate(rows, headers=["threads", "search ms", "top-down ms", "bottom-up ms", "between levels ms",
                                  f"speed-up over {fewest}", "CPU s / (wall s x threads)", "steal"],
                   disable_numparse=True))


def summarize_levels(searches_by_threads, thread_counts):
    levels = defaultdict(lambda: {"direction": [], "frontier": [], "edges": [], "ms": defaultdict(list)})
    for threads in thread_counts:
        for _, trace in searches_by_threads[threads]:
            for position, level in enumerate(trace):
                entry = levels[position]
                entry["ms"][threads].append(level["seconds"] * 1e3)
                if threads == thread_counts[0]:
                    entry["direction"].append(level["direction"])
                    entry["frontier"].append(level["frontier"])
                    entry["edges"].append(level["edges_examined"])
    fewest, most = min(thread_counts), max(thread_counts)
    rows = []
    for position in sorted(levels):
        entry = levels[position]
        if not entry["direction"]:
            continue
        directions = entry["direction"]
        medians = {threads: np.median(entry["ms"][threads]) for threads in thread_counts if entry["ms"][threads]}
        rows.append([position, max(set(directions), key=directions.count), len(directions),
                     f"{np.median(entry['frontier']):.0f}", f"{np.median(entry['edges']):.3g}",
                     *(f"{medians[threads]:.3f}" if threads in medians else "" for threads in thread_counts),
                     f"{medians[fewest] / medians[most]:.2f}x" if fewest in medians and most in medians else ""])
    print(tabulate(rows, headers=["level", "direction", "searches", "frontier", "edges examined",
                                  *(f"ms at {threads}" for threads in thread_counts), f"{fewest} -> {most} threads"],
                   disable_numparse=True))


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--scale", type=int, default=22)
    parser.add_argument("--roots", type=int, default=8)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--threads", type=int, nargs="+", default=[16, 8, 4, 2, 1])
    args = parser.parse_args()
    if max(args.threads) > numba.config.NUMBA_NUM_THREADS:
        raise SystemExit(f"--threads: at most {numba.config.NUMBA_NUM_THREADS} (NUMBA_NUM_THREADS)")
    graph, roots, validation = run_graph(args.scale, args.roots)
    kernel = kernels.get("bfs", "cpu")(graph)
    for root in roots:
        validate_bfs(validation, root, kernel.search(root))
    print(f"SCALE {args.scale}, {len(roots)} keys, {args.rounds} rounds, Numba layer "
          f"{numba.threading_layer()}, {os.cpu_count()} CPUs, every tree valid", flush=True)
    searches_by_threads = defaultdict(list)
    host_by_threads = defaultdict(lambda: np.zeros(4))
    for round_index in range(args.rounds):
        shift = round_index % len(args.threads)
        for threads in args.threads[shift:] + args.threads[:shift]:
            numba.set_num_threads(threads)
            kernel.search(roots[0])  # the thread count's buffers
            busy, steal = cpu_times()
            process, wall = time.process_time(), time.perf_counter()
            searches_by_threads[threads] += time_searches(kernel, roots)
            busy_after, steal_after = cpu_times()
            host_by_threads[threads] += (time.perf_counter() - wall, time.process_time() - process,
                                         busy_after - busy, steal_after - steal)
        print(f"round {round_index + 1} done", flush=True)
    summarize(searches_by_threads, host_by_threads, args.threads)
    print()
    summarize_levels(searches_by_threads, args.threads)


if __name__ == "__main__":
    main()
