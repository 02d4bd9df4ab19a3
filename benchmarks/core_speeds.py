"""How fast each core of this machine runs the same work, alone and with every core busy.

    python benchmarks/core_speeds.py [--cores 0,1,...] [--rounds 2] [--iterations 12000000]

A weak-scaling run of P ranks, one a core, moves in lockstep: a BFS level
ends when its slowest rank ends, about eight times a search. On a machine
whose cores run unequally (a virtual machine's vCPUs share physical cores
with other guests; turbo falls as more cores work), its efficiency is
bounded by the slowest busy core against the one core of the P = 1 run,
before any communication or memory traffic. This script measures that bound
with no graph and no MPI: a Python integer loop (``--iterations`` steps,
compute-bound, no memory beyond the caches), one process a core, pinned
with ``os.sched_setaffinity``:

- together: every listed core runs the loop at once (``--rounds`` times);
- alone: each core runs it with the others idle, one after another.

Printed: the seconds per core alone and in every round together, then the
bound ``(median core alone) / (slowest core together)``, the efficiency a
lockstep computation of equal work per core could keep against a one-core
run on a typical core, and the same against the fastest core alone.
"""

import argparse
import os
import statistics
import subprocess
import sys
import time

from tabulate import tabulate


def spin(iterations):
    """Seconds to run the integer loop ``iterations`` times."""
    start = time.perf_counter()
    value = 0
    for step in range(iterations):
        value += step * step & 7
    return time.perf_counter() - start


def start_pinned(core, iterations):
    """A child process running `spin` on ``core`` only; it prints its seconds."""
    return subprocess.Popen([sys.executable, __file__, "--spin", str(iterations)], stdout=subprocess.PIPE, text=True,
                            preexec_fn=lambda: os.sched_setaffinity(0, {core}))


def seconds_of(processes):
    """Each finished child's seconds, in the order given."""
    results = []
    for process in processes:
        output, _ = process.communicate()
        if process.returncode:
            raise SystemExit(f"core_speeds.py: a pinned loop failed (exit status {process.returncode})")
        results.append(float(output))
    return results


def measure(cores, rounds, iterations):
    """``(alone, together)``: each core's seconds alone, and per round every core's with all of them busy."""
    together = [seconds_of([start_pinned(core, iterations) for core in cores]) for _ in range(rounds)]
    alone = [seconds_of([start_pinned(core, iterations)])[0] for core in cores]
    return alone, together


def bound_line(alone, together):
    """The lockstep efficiency bound of `measure`'s seconds, as a line of text."""
    slowest_together = max(max(times) for times in together)
    return (f"lockstep efficiency bound: {statistics.median(alone) / slowest_together:.2f} against the median core "
            f"alone, {min(alone) / slowest_together:.2f} against the fastest")


def core_list(text):
    cores = [int(core) for core in text.split(",")]
    usable = os.sched_getaffinity(0)
    if not cores or any(core not in usable for core in cores):
        raise argparse.ArgumentTypeError(f"cores must be some of this process's cores {sorted(usable)}")
    return cores


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--cores", type=core_list, default=sorted(os.sched_getaffinity(0)),
                        help="comma-separated core numbers (default: every core this process may use)")
    parser.add_argument("--rounds", type=int, default=2, help="rounds with every core busy")
    parser.add_argument("--iterations", type=int, default=12_000_000, help="steps of the loop")
    parser.add_argument("--spin", type=int, help=argparse.SUPPRESS)  # a pinned child: run the loop, print seconds
    args = parser.parse_args()
    if args.spin is not None:
        print(f"{spin(args.spin):.6f}")
        return 0

    alone, together = measure(args.cores, args.rounds, args.iterations)
    rows = [[core, f"{alone[i]:.2f}", *(f"{times[i]:.2f}" for times in together)] for i, core in enumerate(args.cores)]
    print(f"{args.iterations} steps of an integer loop, one process a core, {len(args.cores)} cores")
    print(tabulate(rows, headers=["core", "alone s", *(f"together, round {r + 1} s" for r in range(args.rounds))],
                   disable_numparse=True))
    print(f"alone: median {statistics.median(alone):.2f} s, fastest {min(alone):.2f} s; together: slowest "
          f"{max(max(times) for times in together):.2f} s")
    print(bound_line(alone, together))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
