"""Two versions of the package, A B A B ...: whole `graph500 run`s against each source tree in turn, on P ranks.

    PYTHONPATH=. python benchmarks/run_trees.py --baseline DIR [--candidate .] [--pairs 3] [--ranks P]
        [--mpiexec "mpiexec [options]"] -- [graph500 run's options]

A change to code that several ranks run (a distributed kernel, an exchange,
the set-up, kernel 1; CPU or GPU ranks) is measured where it runs: the
candidate tree's and the baseline tree's `graph500 run` alternately, each a
fresh process (``mpiexec -n P`` where P > 1; one rank a GPU with
``--backend gpu``), with ``graph500`` imported from each tree (a ``git
archive`` of a commit unpacked somewhere, or ``git worktree add``). The run's
options go after ``--`` (``--json`` is this script's). Printed per pass:
each tree's median harmonic-mean TEPS, validation seconds a tree (where
validated) and construction seconds, and the
median ratio of candidate to baseline over the pairs with its spread (for
seconds, below 1 is the faster). `gpu_trees.py` does the same with
``benchmarks/gpu.py`` (one GPU, every kernel).
"""

import argparse
import json
import os
import shlex
import statistics
import subprocess
import sys
from pathlib import Path

from gpu_trees import alternate, check_trees, ratio_table  # benchmarks/gpu_trees.py, beside this script


def run_once(tree, ranks, mpiexec, options, output):
    """One run with ``graph500`` from ``tree``: ``{(pass, measure): value}`` from its JSON record. The run starts
    in ``tree``: ``python -m`` puts the working directory first on the module path, so a run started in another
    checkout would import that checkout's package whatever PYTHONPATH says."""
    tree = Path(tree).resolve()
    environment = {**os.environ, "PYTHONPATH": str(tree)}
    launcher = [*shlex.split(mpiexec), "-n", str(ranks)] if ranks > 1 else []
    command = [*launcher, sys.executable, "-m", "graph500", "run", *options, "--json", str(Path(output).resolve())]
    subprocess.run(command, env=environment, cwd=tree, check=True, stdout=subprocess.DEVNULL)
    record = json.loads(Path(output).read_text())
    values = {(kind, "harmonic-mean TEPS"): record["statistics"][kind]["TEPS"]["harmonic_mean"]
              for kind in ("bfs", "sssp") if record["statistics"].get(kind)}  # None for a pass not run
    values.update({(kind, "validation s a tree (median)"): statistics.median(record[kind]["validate_times"])
                   for kind in ("bfs", "sssp") if (record.get(kind) or {}).get("validate_times")})
    values[("kernel 1", "construction s")] = record["construction_time"]
    return values


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--baseline", required=True, help="source tree of the baseline (holds graph500/)")
    parser.add_argument("--candidate", default=".", help="source tree of the candidate (default: this checkout)")
    parser.add_argument("--pairs", type=int, default=3)
    parser.add_argument("--ranks", type=int, default=1, help="MPI ranks a run (default 1: no launcher)")
    parser.add_argument("--mpiexec", default="mpiexec",
                        help='the MPI launcher with its options (default "mpiexec"; e.g. "mpiexec --bind-to none")')
    parser.add_argument("options", nargs=argparse.REMAINDER, help="after --: graph500 run's options")
    args = parser.parse_args()
    options = args.options[1:] if args.options[:1] == ["--"] else args.options
    if "--json" in options:
        raise SystemExit("--json is this script's: leave it out of the run's options")
    check_trees(args.baseline, args.candidate)
    values = alternate(args.baseline, args.candidate, args.pairs,
                       lambda tree, workdir: run_once(tree, args.ranks, args.mpiexec, options, workdir / "run.json"))
    print(f"{args.ranks} rank(s), graph500 run {' '.join(options)}")
    print(ratio_table(values, ["pass", "measure"], "value"))


if __name__ == "__main__":
    main()
