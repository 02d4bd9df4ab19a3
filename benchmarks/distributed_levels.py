"""Where a distributed BFS search spends its time, per level and per rank: ``mpiexec -n P python
benchmarks/distributed_levels.py``.

    mpiexec -n P python benchmarks/distributed_levels.py [--scale S] [--roots K] [--rounds R]
        [--tunable NAME=VALUE ...]

Every rank generates its slice, kernel 1 builds the partitioned graph, the
default distributed BFS is built (with the given tunables) and every tree of
the first round is validated. Each search is timed as a run times it (from a
barrier to the slowest rank's end). Inside it, every rank times its levels
(the kernel's trace) and the time it spends in collective calls (barriers,
allreduces, allgathers, alltoallvs and the frontier's publication: waiting
for the other ranks included), so a level's time splits into the rank's own
work and its time in collectives.

Printed by rank 0:

1. Per search, medians over the searches: the search as a run times it, its
   levels, the time outside the levels (setting up and the first
   allreduce, the switches' exchanges between levels, writing the parents
   under the input labels) and the time in collectives (in the levels and
   between them), each as the slowest rank's and the median rank's.
2. Per level position (the i-th level of a search): the direction most
   searches took, the median frontier and edges examined (all ranks'), and
   medians over the searches of the level's time, the slowest rank's own
   work (the level's time less its collective calls within it), the median
   rank's, and the least time any rank spent in collectives (what the
   communication itself costs: the slowest rank waits least).
3. Per rank, its time outside the levels (waits in collectives included)
   and its own work at each level position (medians over the searches):
   whether the same ranks are the slowest search after search, and which
   rank the others wait for before the first level.
"""

import argparse
import math
import statistics
import time
from collections import defaultdict

from tabulate import tabulate

from distributed_sweep import reference_graph, tunable_value  # benchmarks/distributed_sweep.py, beside this script
from graph500 import kernels
from graph500.kernels.cpu import bfs_distributed
from graph500.validators import validate_bfs

COLLECTIVES = ("barrier", "allreduce", "allgather", "alltoallv")


class TimedCommunicator:
    """The run's communicator, noting the (start, end) of each collective call in ``intervals``."""

    def __init__(self, comm):
        self._comm = comm
        self.intervals = []
        for name in COLLECTIVES:
            setattr(self, name, self._timed(getattr(comm, name)))

    def _timed(self, call):
        def timed_call(*args, **kwargs):
            start = time.perf_counter()
            try:
                return call(*args, **kwargs)
            finally:
                self.intervals.append((start, time.perf_counter()))
        return timed_call

    def seconds_within(self, begin, end):
        """Seconds of collective calls between ``begin`` and ``end``."""
        return sum(max(0.0, min(end, stop) - max(begin, start)) for start, stop in self.intervals)

    def __getattr__(self, name):
        return getattr(self._comm, name)


def instrument(kernel):
    """Time ``kernel``'s collectives (its communicator's and its frontiers' publication, the visited words' too) and
    record, in each trace entry, the seconds spent in them during that level (``"collective_seconds"``: the calls
    within the level's own ``seconds``, which end as the entry is made; those between levels are outside them)."""
    timed = TimedCommunicator(kernel.comm)
    kernel.comm = timed
    for gathered in kernel.frontiers:
        gathered.publish = timed._timed(gathered.publish)
    plain_entry = bfs_distributed.trace_entry

    def trace_entry(*args):
        entry = plain_entry(*args)
        end = time.perf_counter()
        entry["collective_seconds"] = timed.seconds_within(end - entry["seconds"], end)
        return entry

    def search(root, plain_search=kernel.search):
        timed.intervals.clear()
        return plain_search(root)

    bfs_distributed.trace_entry = trace_entry
    kernel.search = search
    return kernel


def median_ms(values):
    return f"{statistics.median(values) * 1e3:.2f}"


def summarize_searches(searches):
    """``searches``: per search, (seconds as timed, per rank (local seconds, trace, seconds in collectives))."""
    rows = []
    for label, value in (("search (as a run times it)", lambda timed, ranks: [timed]),
                         ("levels", lambda timed, ranks: [sum(level["seconds"] for level in trace)
                                                          for _, trace, _ in ranks]),
                         ("outside the levels", lambda timed, ranks: [seconds - sum(level["seconds"] for level in trace)
                                                                      for seconds, trace, _ in ranks]),
                         ("in collectives", lambda timed, ranks: [collective for _, _, collective in ranks])):
        per_search = [value(timed, ranks) for timed, ranks in searches]
        rows.append([label, median_ms([max(values) for values in per_search]),
                     median_ms([statistics.median(values) for values in per_search])])
    print(tabulate(rows, headers=["per search", "slowest rank ms", "median rank ms"], disable_numparse=True))


def summarize_levels(searches):
    levels = defaultdict(lambda: defaultdict(list))
    for _, ranks in searches:
        for position in range(len(ranks[0][1])):
            entries = [trace[position] for _, trace, _ in ranks]
            own = [entry["seconds"] - entry["collective_seconds"] for entry in entries]
            level = levels[position]
            level["direction"].append(entries[0]["direction"])
            level["frontier"].append(entries[0]["frontier"])
            level["edges examined"].append(entries[0]["edges_examined"])
            level["seconds"].append(max(entry["seconds"] for entry in entries))
            level["slowest own"].append(max(own))
            level["median own"].append(statistics.median(own))
            level["least in collectives"].append(min(entry["collective_seconds"] for entry in entries))
    rows = []
    for position in sorted(levels):
        level = levels[position]
        directions = level["direction"]
        rows.append([position, max(set(directions), key=directions.count), len(directions),
                     f"{statistics.median(level['frontier']):.0f}", f"{statistics.median(level['edges examined']):.3g}",
                     *(median_ms(level[key]) for key in ("seconds", "slowest own", "median own",
                                                         "least in collectives"))])
    print(tabulate(rows, headers=["level", "direction", "searches", "frontier", "edges examined", "level ms", "slowest rank's own ms",
                                  "median rank's own ms", "least in collectives ms"], disable_numparse=True))


def summarize_ranks(searches):
    own = defaultdict(lambda: defaultdict(list))  # rank -> level position -> seconds
    outside = defaultdict(list)  # rank -> seconds outside the levels, collectives included
    for _, ranks in searches:
        for rank, (seconds, trace, _) in enumerate(ranks):
            outside[rank].append(seconds - sum(entry["seconds"] for entry in trace))
            for position, entry in enumerate(trace):
                own[rank][position].append(entry["seconds"] - entry["collective_seconds"])
    positions = sorted({position for levels in own.values() for position in levels})
    rows = [[rank, median_ms(outside[rank]),
             *(median_ms(own[rank][position]) if own[rank][position] else "" for position in positions)]
            for rank in sorted(own)]
    print(tabulate(rows, headers=["rank", "outside the levels ms",
                                  *(f"level {position} own ms" for position in positions)], disable_numparse=True))


def tunable(text):
    name, _, value = text.partition("=")
    return name, tunable_value(value)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--scale", type=int, default=20)
    parser.add_argument("--edgefactor", type=int, default=16)
    parser.add_argument("--roots", type=int, default=8)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--tunable", type=tunable, action="append", default=[], help="NAME=VALUE (repeatable)")
    args = parser.parse_args()

    comm, backend, graph, root_list, validation_graph = reference_graph(args.scale, args.edgefactor, False,
                                                                        args.roots)
    kernel = instrument(kernels.get("bfs", "cpu", distributed=True)(graph, **dict(args.tunable)))
    searches = []
    for round_number in range(args.rounds):
        for root in root_list:
            local = []

            def search(key):
                start = time.perf_counter()
                output = kernel.search(key)
                local.append(time.perf_counter() - start)
                return output

            output, seconds = backend.timed(search, root)
            if round_number == 0:
                validate_bfs(validation_graph, root, output)
            ranks = comm.allgather_object((local[0], kernel.trace, kernel.comm.seconds_within(-math.inf, math.inf)))
            searches.append((seconds, ranks))
    if comm.rank == 0:
        print(f"{kernel.name} {dict(args.tunable)}, SCALE {args.scale}, {comm.size} ranks, {args.roots} keys, "
              f"{args.rounds} rounds, every tree of the first round valid")
        summarize_searches(searches)
        print()
        summarize_levels(searches)
        print()
        summarize_ranks(searches)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
