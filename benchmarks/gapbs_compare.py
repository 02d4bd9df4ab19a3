"""This project's CPU kernels against the GAP Benchmark Suite (GAPBS) on the same graph and search keys.

    python benchmarks/gapbs_compare.py --gapbs DIR [--scale 20] [--threads 1,2] [--pairs 5] [--roots 16]
                                       [--kinds bfs,sssp] [--deltas 512,1024,2048,4096,8192] [--workdir DIR]

GAPBS (Beamer, Asanovic, Patterson, https://github.com/sbeamer/gapbs) is not
part of this repository and is never committed to it. Build it from its
public source in a temporary folder, then pass that folder with ``--gapbs``
(or ``GAPBS_DIR``):

    git clone https://github.com/sbeamer/gapbs /tmp/gapbs && make -C /tmp/gapbs bfs sssp

What it measures, per thread count (``OMP_NUM_THREADS`` for GAPBS, Numba's
thread count for ours):

1. The graph: the reference's Kronecker graph (edgefactor 16, seeds 2 and
   3), written once as ``.npy`` arrays and, by ``../shared/tools/gapbs_sg.py``,
   as GAPBS's serialized graphs (``.sg``, ``.wsg``: symmetric, self-loops
   dropped, duplicates merged keeping the lightest weight, integer weights
   ``int(w * 2^20) + 1``), in ``--workdir`` (default: a temporary folder,
   removed at the end).
2. The search keys: the reference's first ``--roots`` keys
   (`graph500.generators.roots`), the same for both programs.
3. GAPBS's SSSP delta: each of ``--deltas`` (GAPBS's integer weight units)
   on the first eight keys, once; the fastest is kept (on SCALE 20, 2
   threads, every delta from 256 to 4096 took the same time within the
   noise, 16384 and above were slower). Ours runs with its default delta.
4. Pairs, interleaved (GAPBS, ours, GAPBS, ours, ...), for BFS then SSSP in
   each pair. GAPBS: one process per key (``bfs -f G.sg -r KEY -n 2``,
   ``sssp -f G.wsg -r KEY -d DELTA -n 2``), timed by its own ``Trial Time``,
   the second trial (the first warms the process, as our one untimed search
   does). Ours: the CPU backend's kernel 1 and default kernels built once
   per thread count, every key's tree validated once before the pairs
   (untimed; its edge count is the key's nedge), then in each pair one
   untimed search and one timed search per key, back to back (from the call
   until it returns, as a run times it). Validating in the first pair
   instead left the threads idle for a validation before each of its timed
   searches (GAPBS's timed trial follows its first at once): on three
   leases of the 16-core host (16 threads, SCALE 22, BFS) the first pair
   was the lowest every time, 0.92x, 1.35x and 0.86x, the other pairs
   1.33-1.67x.
5. TEPS: the harmonic mean over the keys of nedge / seconds, for both (the
   same nedge: the same graph, the same component). A pair's ratio is ours
   over GAPBS; the table gives each program's median TEPS over the pairs and
   the median ratio with its spread (min-max).
"""

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numba
import numpy as np
from tabulate import tabulate

from graph500 import kernels, stats
from graph500.generators import kronecker
from graph500.generators.roots import incident_vertices, search_keys
from graph500.kernels.cpu.backend import CPUBackend
from graph500.harness import validate_output
from graph500.validators import ValidationGraph

EDGEFACTOR = 16
SEEDS = (2, 3)
GAPBS_SG = Path(__file__).resolve().parents[1].parent / "shared" / "tools" / "gapbs_sg.py"
DELTA_SWEEP_KEYS = 8
TRIAL_TIME = re.compile(r"^Trial Time:\s+([0-9.eE+-]+)", re.MULTILINE)


def gapbs_binaries(directory):
    """``{"bfs": path, "sssp": path}`` of a GAPBS build, or exit saying how to build it."""
    binaries = {kind: Path(directory or "") / kind for kind in ("bfs", "sssp")}
    if directory and all(os.access(path, os.X_OK) for path in binaries.values()):
        return binaries
    sys.exit(f"GAPBS's bfs and sssp were not found in {directory or '(no --gapbs and no GAPBS_DIR)'}. Build them "
             "from the public source in a temporary folder (never in this repository):\n"
             "  git clone https://github.com/sbeamer/gapbs /tmp/gapbs && make -C /tmp/gapbs bfs sssp\n"
             "then pass --gapbs /tmp/gapbs (or set GAPBS_DIR).")


def write_graph(scale, num_roots, prefix):
    """The reference graph as npy arrays and GAPBS files under ``prefix``; returns ``(src, dst, weights, roots)``."""
    src, dst, weights = kronecker.generate_edges(scale, EDGEFACTOR, *SEEDS)
    roots, _ = search_keys(scale, *SEEDS, incident_vertices(src, dst, 1 << scale), num_roots)
    if not Path(f"{prefix}.wsg").exists():
        for name, values in (("src", src), ("dst", dst), ("weights", weights), ("roots", roots)):
            np.save(f"{prefix}.{name}.npy", values)
        subprocess.run([sys.executable, str(GAPBS_SG), prefix], check=True, stdout=subprocess.DEVNULL)
    return src, dst, weights, roots


def gapbs_seconds(binary, graph_file, root, threads, extra=()):
    """Seconds of GAPBS's second trial from ``root``."""
    output = subprocess.run([str(binary), "-f", graph_file, "-r", str(root), "-n", "2", *extra], check=True,
                            capture_output=True, text=True, env={**os.environ, "OMP_NUM_THREADS": str(threads)})
    return float(TRIAL_TIME.findall(output.stdout)[-1])


def harmonic_teps(seconds, nedges):
    return stats.teps_summary(seconds, nedges)["harmonic_mean"]


class Ours:
    """This project's default CPU kernels on the graph, built for the current Numba thread count."""

    def __init__(self, src, dst, weights, num_vertices):
        graph = CPUBackend().build(src, dst, num_vertices, weights)
        self.kernels = {kind: kernels.get(kind, "cpu")(graph) for kind in ("bfs", "sssp")}

    def nedges(self, kind, roots, validation):
        """Each key's tree validated (untimed): its nedge."""
        return [validate_output(kind, validation, root, self.kernels[kind].search(root)) for root in roots]

    def seconds(self, kind, roots):
        """Seconds per key, back to back, after one untimed search."""
        kernel = self.kernels[kind]
        kernel.search(int(roots[0]))
        seconds = []
        for root in roots:
            start = time.perf_counter()
            kernel.search(root)
            seconds.append(time.perf_counter() - start)
        return seconds


def best_delta(binary, graph_file, roots, threads, deltas):
    """GAPBS's fastest delta on the first keys."""
    total = {delta: sum(gapbs_seconds(binary, graph_file, root, threads, ("-d", str(delta)))
                        for root in roots[:DELTA_SWEEP_KEYS]) for delta in deltas}
    return min(total, key=total.get)


def compare(args, binaries, prefix):
    num_vertices = 1 << args.scale
    src, dst, weights, roots = write_graph(args.scale, args.roots, prefix)
    roots = [int(root) for root in roots]
    validation = ValidationGraph.from_edges(src, dst, num_vertices, weights)
    rows = []
    for threads in args.threads:
        numba.set_num_threads(threads)
        ours = Ours(src, dst, weights, num_vertices)
        gapbs_runs = {}
        if "bfs" in args.kinds:
            gapbs_runs["bfs"] = (binaries["bfs"], f"{prefix}.sg", ())
        if "sssp" in args.kinds:
            delta = best_delta(binaries["sssp"], f"{prefix}.wsg", roots, threads, args.deltas)
            gapbs_runs["sssp"] = (binaries["sssp"], f"{prefix}.wsg", ("-d", str(delta)))
        nedges = {kind: ours.nedges(kind, roots, validation) for kind in gapbs_runs}
        teps = {kind: ([], []) for kind in gapbs_runs}
        for pair in range(args.pairs):
            for kind, (binary, graph_file, extra) in gapbs_runs.items():
                gapbs = [gapbs_seconds(binary, graph_file, root, threads, extra) for root in roots]
                seconds = ours.seconds(kind, roots)
                teps[kind][0].append(harmonic_teps(gapbs, nedges[kind]))
                teps[kind][1].append(harmonic_teps(seconds, nedges[kind]))
                print(f"threads {threads} pair {pair + 1} {kind}: GAPBS {teps[kind][0][-1]:.3g} TEPS, "
                      f"ours {teps[kind][1][-1]:.3g} TEPS", file=sys.stderr)
        for kind, (gapbs, mine) in teps.items():
            ratios = np.array(mine) / np.array(gapbs)
            note = f"GAPBS delta {gapbs_runs['sssp'][2][1]} (of {len(args.deltas)})" if kind == "sssp" else ""
            rows.append([threads, kind, f"{np.median(gapbs):.3g}", f"{np.median(mine):.3g}",
                         f"{np.median(ratios):.2f}x", f"{ratios.min():.2f}-{ratios.max():.2f}x", len(ratios), note])
    print(f"SCALE {args.scale}, edgefactor {EDGEFACTOR}, seeds {SEEDS}, {len(roots)} search keys, "
          f"load average {os.getloadavg()[0]:.2f}")
    print(tabulate(rows, headers=["threads", "kernel", "GAPBS TEPS (median)", "ours TEPS (median)",
                                  "ours / GAPBS (median)", "spread", "pairs", ""], disable_numparse=True))


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--gapbs", default=os.environ.get("GAPBS_DIR"), help="GAPBS build folder (or GAPBS_DIR)")
    parser.add_argument("--scale", type=int, default=20)
    parser.add_argument("--threads", type=lambda text: [int(t) for t in text.split(",")], default=[1, 2],
                        help="comma-separated thread counts (default 1,2)")
    parser.add_argument("--kinds", type=lambda text: text.split(","), default=["bfs", "sssp"],
                        help="kernels to compare, comma-separated (default bfs,sssp)")
    parser.add_argument("--pairs", type=int, default=5, help="interleaved pairs per thread count (default 5)")
    parser.add_argument("--roots", type=int, default=16, help="search keys (default 16)")
    parser.add_argument("--deltas", type=lambda text: [int(d) for d in text.split(",")],
                        default=[512, 1024, 2048, 4096, 8192], help="GAPBS SSSP deltas to sweep (weight units)")
    parser.add_argument("--workdir", help="keep the graph files here (reused by later runs) instead of a temporary "
                                          "folder")
    args = parser.parse_args()
    if not args.kinds or not set(args.kinds) <= {"bfs", "sssp"}:
        parser.error(f"--kinds takes bfs and sssp, comma-separated, got {','.join(args.kinds)!r}")
    binaries = gapbs_binaries(args.gapbs)
    workdir = args.workdir or tempfile.mkdtemp(prefix="gapbs-compare-")
    try:
        os.makedirs(workdir, exist_ok=True)
        compare(args, binaries, str(Path(workdir) / f"kronecker-s{args.scale}"))
    finally:
        if not args.workdir:
            shutil.rmtree(workdir, ignore_errors=True)


if __name__ == "__main__":
    main()
