"""Two versions of the package, A B A B ...: benchmarks/gpu.py run against each source tree in turn.

    PYTHONPATH=. python benchmarks/gpu_trees.py --baseline DIR [--candidate .] [--pairs 3] -- [gpu.py's options]

A change to a kernel's code (not a tunable, which ``gpu_variants.py``
compares in one process) is measured by running each tree's own
``benchmarks/gpu.py`` (this checkout's where a tree has none), in a fresh
process each time, with ``graph500`` imported from the baseline tree (e.g. ``git worktree add /tmp/base HEAD~1``,
or ``git archive`` of a commit unpacked somewhere) and from the candidate
tree, alternately, ``--pairs`` times. Each process generates and builds the
graph and validates every search, as gpu.py does. Printed per SCALE and
kernel: each tree's median harmonic-mean TEPS and the median ratio of
candidate to baseline over the pairs, with its spread (min to max).
"""

import argparse
import json
import os
import subprocess
import sys
import tempfile
from collections import defaultdict
from pathlib import Path

import numpy as np
from tabulate import tabulate

GPU_SCRIPT = Path(__file__).with_name("gpu.py")


def gpu_script(tree):
    """The tree's own ``benchmarks/gpu.py`` (it imports that tree's names), else this checkout's."""
    own = Path(tree) / "benchmarks" / "gpu.py"
    return own if own.exists() else GPU_SCRIPT


def run_gpu_script(tree, options, output):
    """gpu.py's rows with ``graph500`` imported from ``tree``: ``{(scale, kernel): harmonic-mean TEPS}``."""
    environment = {**os.environ, "PYTHONPATH": str(Path(tree).resolve())}
    subprocess.run([sys.executable, str(gpu_script(tree)), *options, "--json", str(output)], env=environment,
                   check=True, stdout=subprocess.DEVNULL)
    rows = json.loads(Path(output).read_text())["rows"]
    return {(row["scale"], row["kernel"]): row["harmonic_mean_teps"] for row in rows}


def check_trees(*trees):
    """Exit with a message unless every tree is a source tree of graph500."""
    for tree in trees:
        if not (Path(tree) / "graph500" / "__init__.py").exists():
            raise SystemExit(f"{tree}: not a source tree of graph500 (no graph500/__init__.py)")


def alternate(baseline, candidate, pairs, measure):
    """``{key: {"baseline": [...], "candidate": [...]}}``: ``measure(tree, workdir)`` (a dict of key -> value, in a
    fresh process) on the baseline tree, then the candidate, ``pairs`` times."""
    values = defaultdict(lambda: {"baseline": [], "candidate": []})
    with tempfile.TemporaryDirectory() as workdir:
        for pair in range(pairs):
            for role, tree in (("baseline", baseline), ("candidate", candidate)):
                for key, value in measure(tree, Path(workdir)).items():
                    values[key][role].append(value)
                print(f"pair {pair + 1}/{pairs}: {role} done", file=sys.stderr, flush=True)
    return values


def ratio_table(values, key_headers, measure_name):
    """The table of `alternate`'s values: per key, each tree's median and the median ratio of candidate to
    baseline over the pairs, with its spread (min to max)."""
    rows = []
    for key, by_role in values.items():
        baseline, candidate = np.array(by_role["baseline"]), np.array(by_role["candidate"])
        ratios = candidate / baseline
        rows.append([*key, f"{np.median(baseline):.4g}", f"{np.median(candidate):.4g}", f"{np.median(ratios):.3f}",
                     f"{ratios.min():.3f}-{ratios.max():.3f}"])
    return tabulate(rows, headers=[*key_headers, f"baseline {measure_name} (median)",
                                   f"candidate {measure_name} (median)", "ratio (median)", "ratio spread"])


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--baseline", required=True, help="source tree of the baseline (holds graph500/)")
    parser.add_argument("--candidate", default=".", help="source tree of the candidate (default: this checkout)")
    parser.add_argument("--pairs", type=int, default=3)
    parser.add_argument("options", nargs=argparse.REMAINDER, help="after --: gpu.py's options")
    args = parser.parse_args()
    options = args.options[1:] if args.options[:1] == ["--"] else args.options
    check_trees(args.baseline, args.candidate)
    teps = alternate(args.baseline, args.candidate, args.pairs,
                     lambda tree, workdir: run_gpu_script(tree, options, workdir / "rows.json"))
    print(ratio_table(teps, ["SCALE", "kernel"], "TEPS"))


if __name__ == "__main__":
    main()
