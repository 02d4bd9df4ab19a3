"""What a shared-memory host leaves of weak scaling: P copies of the one-process search running at once.

    mpiexec -n P python benchmarks/concurrent_copies.py [--scale 20] [--kind bfs] [--roots 16] [--rounds 3]

Weak scaling gives each of P ranks the base problem's work (SCALE 20 + log2 P
has 2^20 vertices a rank), but on one host the ranks share its memory
system: the last-level cache and the memory bandwidth. This script measures
that share alone, without any communication. Every rank builds the whole
reference graph of ``--scale`` (edgefactor 16, seeds 2 and 3) with the
one-process CPU backend's kernel 1, the kind's default kernel, with the
Numba threads the launcher gives it (``env NUMBA_NUM_THREADS=1`` for the
weak-scaling table's one thread a rank), and validates its trees from every
key. Then ``--rounds`` rounds of two parts:

- alone: rank 0 searches from every key while the other ranks wait without
  spinning (a non-blocking barrier polled every millisecond);
- together: every rank searches from every key, a barrier before each key,
  so the searches overlap.

Printed per round: rank 0's harmonic-mean TEPS alone; the ranks' median
(min-max) together; their ratio, the share of a lone process's speed that
each of P processes keeps while all search at once. A rank of a distributed
run does a search of that size's local work and communicates too, so on
that host its weak-scaling efficiency against one process is at most about
this ratio (the distributed rank also reads a frontier bitmap of the whole
graph, P times larger than the copy's).
"""

import argparse
import statistics
import time

import numba
from tabulate import tabulate

from cpu_revisions import run_graph  # benchmarks/cpu_revisions.py, beside this script
from graph500 import kernels, stats
from graph500.harness import validate_output

try:
    from mpi4py import MPI
except ImportError:
    raise SystemExit("concurrent_copies.py needs mpi4py: python3 -m pip install '.[mpi]'") from None

POLL_SECONDS = 0.001


def wait_without_spinning(comm):
    """A barrier that sleeps between polls (an MPI barrier spins a core while it waits)."""
    request = comm.Ibarrier()
    while not request.Test():
        time.sleep(POLL_SECONDS)


def harmonic_teps(kernel, roots, nedges, barrier=None):
    seconds = []
    for root in roots:
        if barrier is not None:
            barrier()
        start = time.perf_counter()
        kernel.search(root)
        seconds.append(time.perf_counter() - start)
    return stats.teps_summary(seconds, nedges)["harmonic_mean"]


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--scale", type=int, default=20)
    parser.add_argument("--kind", choices=("bfs", "sssp"), default="bfs")
    parser.add_argument("--roots", type=int, default=16)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    comm = MPI.COMM_WORLD
    graph, roots, validation = run_graph(args.scale, args.roots)
    kernel = kernels.get(args.kind, "cpu")(graph)
    nedges = [validate_output(args.kind, validation, root, kernel.search(root)) for root in roots]
    if comm.rank == 0:
        print(f"{kernel.name}, SCALE {args.scale}, {comm.size} copies x {numba.get_num_threads()} Numba threads, "
              f"{len(roots)} keys, every tree valid", flush=True)
    rows = []
    for round_number in range(args.rounds):
        wait_without_spinning(comm)
        alone = harmonic_teps(kernel, roots, nedges) if comm.rank == 0 else None
        wait_without_spinning(comm)
        together = comm.gather(harmonic_teps(kernel, roots, nedges, comm.Barrier), root=0)
        if comm.rank == 0:
            median = statistics.median(together)
            rows.append([round_number + 1, f"{alone:.3g}", f"{median:.3g} ({min(together):.3g}-{max(together):.3g})",
                         f"{median / alone:.2f}"])
            print(f"round {round_number + 1} done", flush=True)
    if comm.rank == 0:
        print(tabulate(rows, headers=["round", "rank 0 alone, TEPS", f"{comm.size} at once: median (min-max)",
                                      "at once / alone"], disable_numparse=True))
        ratios = [float(row[3]) for row in rows]
        print(f"at once / alone: median {statistics.median(ratios):.2f} ({min(ratios):.2f}-{max(ratios):.2f})")


if __name__ == "__main__":
    main()
