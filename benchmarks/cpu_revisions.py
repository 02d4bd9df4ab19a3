"""One CPU kernel module at two git revisions, interleaved search by search in one process.

    python benchmarks/cpu_revisions.py --baseline REV [--kind sssp] [--scale 20] [--roots 16] [--rounds 5]
                                       [--threads N] [--helpers frontier,bfs_top_down]

A change to a CPU kernel's code (not a tunable, which ``cpu_kernels.py
--sweep`` covers) is measured by loading the kind's default kernel module as
it is in this checkout and as it was at ``--baseline`` (``git show
REV:graph500/kernels/cpu/MODULE.py``, imported under a private name; the
rest of the package is this checkout's, so the module at REV must still
work with it; ``--helpers`` takes other kernel modules that it imports at
REV too, e.g. ``frontier,bfs_top_down`` for the direction-optimizing BFS).
Both kernels run on the CPU backend's kernel 1 graph (degree-ordered, as in
a run), for the reference's search keys (edgefactor 16, seeds 2 and 3);
every tree of both is validated first and both must reach the same edges.
Then ``--rounds`` rounds: per key, one search with each (baseline first in
even rounds, candidate first in odd ones). Printed per round: each one's
harmonic-mean TEPS and their ratio; then the median ratio (candidate over
baseline) and its spread.

Run it once with ``--baseline HEAD`` too: two copies of the same code
should measure alike, and where they do not, the difference is the
process's, not the code's (each kernel's arrays land where the allocator
puts them: huge pages or not). On the 2-core development machine, SSSP,
SCALE 20, 3 rounds: 1.030x (0.981-1.052x) for the same code; an ad-hoc
comparison without that control once showed a 1.21x that did not come back.
"""

import argparse
import importlib.util
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numba
import numpy as np

from graph500 import kernels, stats
from graph500.generators.roots import incident_vertices, search_keys
from graph500.kernels.cpu.backend import CPUBackend
from graph500.harness import validate_output
from graph500.validators import ValidationGraph

EDGEFACTOR = 16
SEEDS = (2, 3)
REPOSITORY = Path(__file__).resolve().parents[1]


def run_graph(scale, num_roots):
    """``(graph, roots, validation graph)``: the reference graph (edgefactor 16, seeds 2 and 3) as the CPU
    backend's kernel 1 builds it for a run (degree-ordered), its search keys and its validator."""
    backend = CPUBackend()
    num_vertices = 1 << scale
    src, dst, weights = backend.generate(scale, EDGEFACTOR, *SEEDS)
    graph = backend.build(src, dst, num_vertices, weights)
    roots = [int(root) for root in search_keys(scale, *SEEDS, incident_vertices(src, dst, num_vertices),
                                               num_roots)[0]]
    return graph, roots, ValidationGraph.from_edges(src, dst, num_vertices, weights)


def _source_at(revision, relative):
    """The text of the file ``relative`` at ``revision``: a git revision, or a directory holding the tree."""
    if Path(revision).is_dir():
        return (Path(revision) / relative).read_text()
    try:
        return subprocess.run(["git", "show", f"{revision}:{relative.as_posix()}"], cwd=REPOSITORY,
                              capture_output=True, text=True, check=True).stdout
    except subprocess.CalledProcessError as error:
        raise SystemExit(f"git show {revision}:{relative.as_posix()}: {error.stderr.strip()}") from None


def kernel_at_revision(kind, revision, workdir, helpers=()):
    """The kind's default CPU kernel class as its module was at ``revision``; the registry keeps this
    checkout's class. ``helpers``: names of other modules of ``graph500/kernels/cpu`` (e.g. ``frontier``) to
    take at ``revision`` too, in an order where each comes after those it imports; the baseline modules
    import the baseline helpers, everything else is this checkout's."""
    current = kernels.get(kind, "cpu")
    package, _, kernel_module = current.__module__.rpartition(".")
    baseline = {}
    for name in (*helpers, kernel_module):
        relative = Path(*package.split("."), name).with_suffix(".py")
        source = _source_at(revision, relative)
        for helper in baseline:
            source = source.replace(f"from {package}.{helper} import", f"from baseline_{helper} import")
        path = Path(workdir) / f"baseline_{name}.py"
        path.write_text(source)
        spec = importlib.util.spec_from_file_location(f"baseline_{name}", path)
        module = importlib.util.module_from_spec(spec)
        sys.modules[spec.name] = module  # Numba finds a jitted function's globals through its module's name
        spec.loader.exec_module(module)  # the kernel's @register files its class under the same name ...
        baseline[name] = module
    kernels.register()(current)  # ... so this checkout's class is filed again
    return getattr(baseline[kernel_module], current.__name__), current


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--baseline", required=True, help="git revision of the baseline, or a directory "
                        "holding its tree (where there is no git: git archive REV graph500 | tar -x -C DIR)")
    parser.add_argument("--kind", choices=("bfs", "sssp"), default="sssp")
    parser.add_argument("--scale", type=int, default=20)
    parser.add_argument("--roots", type=int, default=16)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--threads", type=int, default=numba.config.NUMBA_NUM_THREADS, help="Numba threads")
    parser.add_argument("--helpers", default="", help="comma-separated modules of graph500/kernels/cpu the "
                        "kernel's module imports, also taken at --baseline (e.g. frontier,bfs_top_down)")
    args = parser.parse_args()
    numba.set_num_threads(args.threads)
    graph, roots, validation = run_graph(args.scale, args.roots)
    with tempfile.TemporaryDirectory() as workdir:  # the baseline's source: Numba compiles (and caches) from it
        baseline_class, candidate_class = kernel_at_revision(args.kind, args.baseline, workdir,
                                                              [name for name in args.helpers.split(",") if name])
        ratios = compare({"baseline": baseline_class(graph), "candidate": candidate_class(graph)}, args.kind,
                         validation, roots, args.rounds)
    print(f"candidate / baseline: median {np.median(ratios):.3f}, spread {min(ratios):.3f}-{max(ratios):.3f}")


def compare(searchers, kind, validation, roots, rounds):
    """Validate both kernels' trees, then time the interleaved rounds; the per-round TEPS ratios."""
    nedges = {}
    for role, kernel in searchers.items():
        outputs = [kernel.search(root) for root in roots]
        nedges[role] = [validate_output(kind, validation, root, output) for root, output in zip(roots, outputs)]
    if nedges["baseline"] != nedges["candidate"]:
        raise SystemExit("the two revisions' trees reach different edges")
    print(f"{kind}: {len(roots)} keys, {numba.get_num_threads()} Numba threads, every tree valid", flush=True)
    ratios = []
    for round_index in range(rounds):
        order = ("baseline", "candidate") if round_index % 2 == 0 else ("candidate", "baseline")
        times = {role: [] for role in order}
        for root in roots:
            for role in order:
                start = time.perf_counter()
                searchers[role].search(root)
                times[role].append(time.perf_counter() - start)
        teps = {role: stats.teps_summary(times[role], nedges[role])["harmonic_mean"] for role in order}
        ratios.append(teps["candidate"] / teps["baseline"])
        print(f"round {round_index + 1}: baseline {teps['baseline']:.4g} TEPS, candidate {teps['candidate']:.4g} "
              f"TEPS, ratio {ratios[-1]:.3f}", flush=True)
    return ratios

if __name__ == "__main__":
    main()
