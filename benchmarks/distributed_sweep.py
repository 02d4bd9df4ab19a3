"""Sweep a distributed kernel's tunables on one graph: ``mpiexec -n P python benchmarks/distributed_sweep.py``.

    mpiexec -n P python benchmarks/distributed_sweep.py --scale S [--kind bfs|sssp] [--backend cpu|gpu]
        --tunable NAME=V1,V2,... (e.g. alpha=15,50,200) [--roots K] [--rounds R] [--validate-all]

Every rank (a GPU each with ``--backend gpu``) generates its slice, kernel 1 builds the partitioned graph once,
and for each value of the tunable the kernel is built and searched from the
first K of the reference's search keys. The values take turns, round after
round (A B C A B C ...), so a drift of the machine hits them alike. Each
search is timed from a barrier to the slowest rank's end, and its nedge is
counted by the distributed validator (every tree of the first round is
validated; with ``--validate-all`` every tree of every round, so that each
search starts as a run's does, after a validation: on GPUs that is slower
than back to back, the host's caches cold). Rank 0 prints a table: per
value the harmonic-mean TEPS of each round, their median, the ratio of the
medians to the first value's, and the kernel's construction time.
"""

import argparse
import statistics
import time

from tabulate import tabulate

from graph500 import kernels
from graph500.comm import world
from graph500.distributed import DistributedBackend, set_threads_per_rank
from graph500.generators import roots as roots_module
from graph500.harness import validate_output
from graph500.stats import teps_summary


def tunable_value(text):
    """A tunable's value as given on the command line: an int where it reads as one, else a float (0.5, 1e3, inf)."""
    try:
        return int(text)
    except ValueError:
        return float(text)


def _tunable(text):
    name, _, values = text.partition("=")
    return name, [tunable_value(value) for value in values.split(",")]


def reference_graph(scale, edgefactor, weighted, num_roots, backend_name="cpu"):
    """Every rank's part of the reference graph (seeds 2 and 3), as a run makes it: ``(comm, backend, graph,
    search keys, validation graph)``; each rank takes its share of the host's cores, as in a run."""
    comm = world()
    set_threads_per_rank(comm)
    if backend_name == "gpu":
        from graph500.kernels.gpu.distributed_backend import DistributedGPUBackend

        backend = DistributedGPUBackend(comm)
    else:
        backend = DistributedBackend(comm)
    num_vertices = 1 << scale
    src, dst, weights = backend.generate(scale, edgefactor, 2, 3)
    weights = weights if weighted else None
    graph = backend.build(src, dst, num_vertices, weights)
    root_list, _ = roots_module.search_keys(scale, 2, 3, backend.incident_vertices(src, dst, num_vertices), num_roots)
    return comm, backend, graph, root_list.tolist(), backend.validation_graph(src, dst, num_vertices, weights)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--scale", type=int, default=20)
    parser.add_argument("--edgefactor", type=int, default=16)
    parser.add_argument("--kind", choices=("bfs", "sssp"), default="bfs")
    parser.add_argument("--backend", choices=("cpu", "gpu"), default="cpu")
    parser.add_argument("--tunable", type=_tunable, required=True,
                        help="NAME=V1,V2,...: one of the kind's distributed kernel's tunables (alpha=15,40 for the BFS)")
    parser.add_argument("--roots", type=int, default=8)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--validate-all", action="store_true",
                        help="validate every search, as a run does (each search then follows a validation)")
    args = parser.parse_args()

    comm, backend, graph, root_list, validation_graph = reference_graph(args.scale, args.edgefactor,
                                                                        args.kind == "sssp", args.roots, args.backend)
    kernel_class = kernels.get(args.kind, args.backend, distributed=True)
    name, values = args.tunable
    built = {}
    for value in values:
        comm.barrier()
        start = time.perf_counter()
        built[value] = kernel_class(graph, **{name: value})
        comm.barrier()
        built[value].construction = time.perf_counter() - start
    nedges = {}
    teps = {value: [] for value in values}
    for round_number in range(args.rounds):
        for value in values:
            times = []
            for root in root_list:
                output, seconds = backend.timed(built[value].search, root)
                times.append(seconds)
                if round_number == 0 or args.validate_all:
                    nedge = validate_output(args.kind, validation_graph, root, output)
                    assert nedges.setdefault(root, nedge) == nedge
            teps[value].append(teps_summary(times, [nedges[root] for root in root_list])["harmonic_mean"])
    if comm.rank == 0:
        baseline = statistics.median(teps[values[0]])
        rows = [[f"{name}={value}", " ".join(f"{t:.3g}" for t in teps[value]), f"{statistics.median(teps[value]):.3g}",
                 f"{statistics.median(teps[value]) / baseline:.2f}", f"{built[value].construction:.3f}"]
                for value in values]
        print(f"{kernel_class.name}, SCALE {args.scale}, {comm.size} ranks, {args.roots} keys, {args.rounds} rounds")
        print(tabulate(rows, headers=["value", "harmonic-mean TEPS per round", "median", "ratio", "construction s"]))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
