"""The host's side of a GPU search: each step's time on the host timeline, searches back to back and cold.

    python benchmarks/gpu_host_steps.py [--kernel bfs|sssp] [--scale 26] [--roots 8] [--rounds 3]   (one GPU)
    mpiexec -n P python benchmarks/gpu_host_steps.py [--kernel bfs|sssp] [--scale 26] ...          (P GPUs)

Builds the reference graph and the default GPU BFS or SSSP (the multi-GPU
one on P > 1 ranks), wraps the search's steps (BFS: launches of levels and
switches, the collectives on host numbers, the parents' map; SSSP: a bucket's
collection, light and heavy phases, relaxations, exchanges' offers, pulls;
both: the counters' reads) and times each from the host: enter and exit, in
ms from the search's start (an SSSP's steps nest: a light phase holds its
relaxations and reads). Each key is
searched ``--rounds`` times in two modes, "warm" (back to back) and "cold"
(each search after a 50 ms sleep and 20 ms of GPU work, as a run's searches
follow their validations with the host's caches cold: docs/measurements.md,
session 27); the first round is not counted. Printed by rank 0, per mode: the
median search (wall clock from a barrier to the GPU's end) and each step's
host milliseconds summed over a search (medians over the searches), then the
timeline of the median warm search. A counter read's time is mostly the wait
for the device; a step's launch time is the host's alone.
"""

import argparse
import collections
import time

import numpy as np

from multi_gpu import leave, reference_graph_on_gpus  # benchmarks/multi_gpu.py, beside this script

SSSP_STEPS = ["_collect", "_light_phase", "_small_steps", "_bucket_members", "_heavy_phase", "_pull",
              "_neighbour_distances", "_relax", "_offer", "_global", "_global_sums", "_result"]  # one GPU's and P's
STEPS = {  # the methods wrapped: (kernel, several GPUs)
    ("bfs", True): ["_captured_start", "_small_levels", "_top_down_level", "_bottom_up_level", "_switch",
                    "_to_input_labels", "_global_counts"],
    ("bfs", False): ["_start_search", "_level_counts", "_small_top_down_levels", "_top_down_level", "_bottom_up_level",
                     "_queue_to_bitmap", "_bitmap_to_queue", "_to_input_labels"],
    ("sssp", True): SSSP_STEPS,
    ("sssp", False): SSSP_STEPS,
}
TIMELINE_STEPS = 60  # the median warm search's timeline is printed where it has at most these steps


def wrapped(kernel, names, log, origin):
    """Replace ``kernel``'s methods ``names`` (and its counters' ``read``) by ones that log (name, enter, exit)."""
    def wrap(owner, name, label):
        method = getattr(owner, name)

        def step(*args, **kwargs):
            enter = time.perf_counter()
            result = method(*args, **kwargs)
            log.append((label, enter - origin[0], time.perf_counter() - origin[0]))
            return result
        setattr(owner, name, step)
    for name in names:
        if hasattr(kernel, name):
            wrap(kernel, name, name)
    wrap(kernel._counters, "read", "counters.read")


def summary(runs):
    """``(median search s, {step: (median s summed a search, median calls)})``."""
    sums, calls = collections.defaultdict(list), collections.defaultdict(list)
    labels = {label for _, entries in runs for label, _, _ in entries}
    for _, entries in runs:
        seconds, count = collections.Counter(), collections.Counter()
        for label, enter, exit_ in entries:
            seconds[label] += exit_ - enter
            count[label] += 1
        for label in labels:
            sums[label].append(seconds[label])
            calls[label].append(count[label])
    return (float(np.median([total for total, _ in runs])),
            {label: (float(np.median(sums[label])), float(np.median(calls[label]))) for label in labels})


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--kernel", choices=("bfs", "sssp"), default="bfs")
    parser.add_argument("--scale", type=int, default=26)
    parser.add_argument("--edgefactor", type=int, default=16)
    parser.add_argument("--roots", type=int, default=8)
    parser.add_argument("--rounds", type=int, default=3, help="searches of each key a mode (the first not counted)")
    args = parser.parse_args()
    from graph500.kernels.gpu.runtime import cupy

    comm, graph, roots, _, bfs_class, sssp_class = reference_graph_on_gpus(args.scale, args.edgefactor, args.roots)
    several = comm.size > 1
    kernel = (bfs_class if args.kernel == "bfs" else sssp_class)(graph)
    log, origin = [], [0.0]
    wrapped(kernel, STEPS[args.kernel, several], log, origin)
    stream = cupy.cuda.get_current_stream()
    other_work = cupy.ones(1 << 24, dtype=np.float32)
    runs = {"warm": [], "cold": []}
    for round_number in range(args.rounds):
        for mode in runs:
            for root in roots:
                if mode == "cold":
                    time.sleep(0.05)
                    for _ in range(20):
                        other_work *= 1.0000001
                stream.synchronize()
                comm.barrier()
                log.clear()
                origin[0] = time.perf_counter()
                kernel.search(root)
                stream.synchronize()
                if round_number:
                    runs[mode].append((time.perf_counter() - origin[0], list(log)))
    if comm.rank == 0:
        print_steps(f"{kernel.name} on {comm.size} GPU(s), SCALE {args.scale}, {len(roots)} keys x "
                    f"{args.rounds - 1} counted rounds", runs)
    leave(comm)


def print_steps(title, runs):
    """Each mode's median search and steps, and the median warm search's timeline where it is short."""
    print(title)
    for mode, mode_runs in runs.items():
        search, steps = summary(mode_runs)
        print(f"{mode}: the median search {1e3 * search:.3f} ms; each step's host ms summed over a search (calls):")
        for label, (seconds, calls) in sorted(steps.items(), key=lambda item: -item[1][0]):
            print(f"  {label:24s} {1e3 * seconds:8.3f} ({calls:g})")
    total, entries = sorted(runs["warm"], key=lambda run: run[0])[len(runs["warm"]) // 2]
    if len(entries) > TIMELINE_STEPS:
        return
    print("the median warm search's timeline (ms from its start):")
    for label, enter, exit_ in sorted(entries, key=lambda entry: entry[1]):
        print(f"  {1e3 * enter:8.3f} - {1e3 * exit_:8.3f}  {label}")
    print(f"  {1e3 * total:8.3f}  the search's end (the GPU done)")


if __name__ == "__main__":
    main()
