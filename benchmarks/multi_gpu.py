"""Weak and strong scaling of the multi-GPU kernels against one GPU, each level's compute and exchange.

    python benchmarks/multi_gpu.py [--gpus 2] [--scale 26] [--roots 16] [--edgefactor 16]
                                   [--mpiexec "mpiexec"] [--bfs-option NAME=VALUE ...] [--json PATH]

In one lease, three measurements, each a process group started with
``MPIEXEC -n P python benchmarks/multi_gpu.py --measure ...``: one GPU at
SCALE S (the one-GPU backend and its default kernels, as ``graph500 run
--backend gpu`` runs them), G GPUs at S (strong scaling) and G GPUs at
S + log2 G (weak scaling; the multi-GPU backend and kernels, as ``mpiexec -n
G graph500 run --backend gpu``). Each generates the reference graph, builds
it (kernel 1, timed from a barrier to the slowest rank), then searches from
the first ``--roots`` search keys: the BFS searches, then the SSSP ones, each
timed untraced (from a barrier until every GPU is done) after one untimed
search from the first key, as a run orders them; then every BFS once more traced. The
searches are not validated (``graph500 run`` validates; this measures), so
they run back to back, faster than a run's, each of which follows a
validation with the host's caches cold (several GPUs lose more to that than
one: docs/measurements.md, session 27): ``distributed_sweep.py
--validate-all`` times them as a run does.

Printed: the weak and the strong table (harmonic-mean TEPS over the keys,
taking every search as covering the M = edgefactor * 2^SCALE input edges, so
the ratios compare like with like; kernel 1's seconds), each multi-GPU row
with its ratio to the one-GPU row (weak: TEPS ratio, 1.0 = no gain; the
ideal is G). Then, per multi-GPU run, the BFS levels (medians over the keys
that reach them: the frontier, the edges the busiest GPU scanned) with their
compute and exchange milliseconds from CUDA events on rank 0's stream (an
exchange also waits for the slowest rank),
the SSSP's phases and counts (medians over the keys, traced), and a plain NCCL allgather of one
frontier bitmap (N / 8 bytes) for comparison with a level's exchange; the
same for the one-GPU run (its traced levels take one level per launch).
"""

import argparse
import faulthandler
import functools
import json
import math
import os
import pathlib
import shlex
import subprocess
import sys
import tempfile
import time
from collections import defaultdict

import numpy as np
from tabulate import tabulate

REPOSITORY = pathlib.Path(__file__).resolve().parent.parent


def timed_search(comm, search, root):
    """Seconds of one collective search, from a barrier until every rank's GPU is done."""
    from graph500.kernels.gpu.runtime import cupy

    comm.barrier()
    start = time.perf_counter()
    search(root)
    cupy.cuda.get_current_stream().synchronize()
    comm.barrier()
    return comm.allreduce(time.perf_counter() - start, "max")


def allgather_seconds(comm, num_vertices):
    """Median seconds of a plain NCCL allgather of an N-bit bitmap (each rank its block), rank 0's events."""
    from graph500.kernels.gpu.runtime import cupy

    counts = np.full(comm.size, -(-num_vertices // 32 // comm.size), dtype=np.int64)
    gathered = comm.gathered_array(counts, np.uint32)
    seconds = []
    for _ in range(10):
        comm.barrier()
        start, end = cupy.cuda.Event(), cupy.cuda.Event()
        start.record()
        gathered.publish()
        end.record()
        end.synchronize()
        seconds.append(cupy.cuda.get_elapsed_time(start, end) / 1e3)
    return float(np.median(seconds[2:]))


def reference_graph_on_gpus(scale, edgefactor, num_roots):
    """``(comm, graph, roots, kernel 1's seconds, bfs class, sssp class)``: the reference graph (seeds 2 and 3) built
    on this process group's GPUs, one a rank (the multi-GPU backend and kernels on several, as ``mpiexec -n G
    graph500 run --backend gpu``; the one-GPU ones alone), and its first ``num_roots`` search keys."""
    os.environ.setdefault("NCCL_NVLS_ENABLE", "0")
    from graph500.comm import slowest, world
    from graph500.distributed import set_threads_per_rank
    from graph500.generators.roots import search_keys
    from graph500.kernels.gpu.backend import GPUBackend
    from graph500.kernels.gpu.bfs import DirectionOptimizingBFS
    from graph500.kernels.gpu.bfs_distributed import DistributedDirectionOptimizingBFS
    from graph500.kernels.gpu.distributed_backend import DistributedGPUBackend
    from graph500.kernels.gpu.sssp import DeltaSteppingSSSP
    from graph500.kernels.gpu.sssp_distributed import DistributedDeltaSteppingSSSP

    comm = world()
    if comm.size > 1:
        set_threads_per_rank(comm)
        backend = DistributedGPUBackend(comm)
        bfs_class, sssp_class = DistributedDirectionOptimizingBFS, DistributedDeltaSteppingSSSP
    else:
        backend = GPUBackend()
        bfs_class, sssp_class = DirectionOptimizingBFS, DeltaSteppingSSSP
    num_vertices = 1 << scale
    src, dst, weights = backend.generate(scale, edgefactor, 2, 3)
    graph, build_seconds = slowest(comm, functools.partial(backend.build, src, dst, num_vertices, weights))
    roots, _ = search_keys(scale, 2, 3, backend.incident_vertices(src, dst, num_vertices), num_roots)
    return comm, graph, [int(root) for root in roots], build_seconds, bfs_class, sssp_class


def measure(args):
    """One measurement on this process group's ranks, which then leave (`leave`); rank 0 writes its numbers to
    ``args.measure``. A rank still running near the group's time limit prints every thread's stack and exits (a
    hung collective says where)."""
    faulthandler.dump_traceback_later(0.9 * args.timeout, exit=True)
    comm, graph, roots, build_seconds, bfs_class, sssp_class = reference_graph_on_gpus(args.scale, args.edgefactor,
                                                                                      args.roots)
    several = comm.size > 1
    bfs = bfs_class(graph, **(dict(args.bfs_option) if several else {}))
    sssp = sssp_class(graph)
    seconds = defaultdict(list)
    levels = defaultdict(list)
    traces = []
    for name, kernel in (("bfs", bfs), ("sssp", sssp)):  # each kernel's searches in a row, as a run times them
        kernel.record_trace = False
        kernel.search(roots[0])  # untimed, as a run's first: what a first search compiles or sets up is not timed
        for root in roots:
            seconds[name].append(timed_search(comm, kernel.search, root))
    bfs.record_trace = True
    for root in roots:
        bfs.search(root)
        traces.append(bfs.trace)
        for depth, level in enumerate(bfs.trace):
            levels[depth].append(level)
    sssp.record_trace = True
    sssp_phases = defaultdict(list)
    for root in roots:
        sssp.search(root)
        for key, value in sssp.summary.items():
            sssp_phases[key].append(value)
    exchange = allgather_seconds(graph.comm, 1 << args.scale) if several else None
    if comm.rank != 0:
        leave(comm)
    edges = args.edgefactor << args.scale
    record = {
        "gpus": comm.size, "scale": args.scale, "roots": len(roots), "kernel_1_seconds": build_seconds,
        **{f"{name}_teps": len(times) / sum(time_ / edges for time_ in times) for name, times in seconds.items()},
        **{f"{name}_median_ms": 1e3 * float(np.median(times)) for name, times in seconds.items()},
        "levels": [[depth, "/".join(sorted({entry["direction"] for entry in entries})), len(entries),
                    float(np.median([entry["frontier"] for entry in entries])),
                    float(np.median([entry.get("busiest_scanned_edges", entry.get("scanned_edges", 0))
                                     for entry in entries])),
                    *(1e3 * float(np.median([entry.get(key, 0.0) for entry in entries]))
                      for key in ("seconds", "compute_seconds", "exchange_seconds"))]
                   for depth, entries in sorted(levels.items())],
        "bfs_traces": traces,  # every key's traced levels
        "sssp_phases": {key: float(np.median(values)) for key, values in sssp_phases.items()},  # medians
        "bitmap_allgather_ms": None if exchange is None else 1e3 * exchange,
    }
    pathlib.Path(args.measure).write_text(json.dumps(record))
    leave(comm)


def leave(comm):
    """End a measurement's rank after a barrier, its objects alive: the ranks of two H200s hung destroying them at
    `measure`'s return (the kernels' CUDA graphs, the NCCL communicators: docs/measurements.md). MPI is finalized
    first: Open MPI's launcher fails a job whose rank exits without it."""
    from mpi4py import MPI

    comm.barrier()
    sys.stdout.flush()
    sys.stderr.flush()
    MPI.Finalize()
    os._exit(0)


def run_measurement(args, gpus, scale, folder):
    """Start one measurement's process group and return its record (or an error line)."""
    path = pathlib.Path(folder) / f"g{gpus}-s{scale}.json"
    command = shlex.split(args.mpiexec) + ["-n", str(gpus), sys.executable, str(pathlib.Path(__file__).resolve()),
                                           "--measure", str(path), "--scale", str(scale), "--roots",
                                           str(args.roots), "--edgefactor", str(args.edgefactor),
                                           "--timeout", str(args.timeout)]
    command += [argument for name, value in args.bfs_option for argument in ("--bfs-option", f"{name}={value}")]
    environment = {**os.environ, "NCCL_NVLS_ENABLE": "0",
                   "PYTHONPATH": os.pathsep.join(filter(None, [str(REPOSITORY), os.environ.get("PYTHONPATH")]))}
    try:
        result = subprocess.run(command, env=environment, capture_output=True, text=True, timeout=args.timeout)
    except subprocess.TimeoutExpired as expired:
        result = subprocess.CompletedProcess(command, None, expired.stdout or "", expired.stderr or "")
    if result.returncode != 0 or not path.exists():
        output = result.stderr or result.stdout
        lines = (output.decode(errors="replace") if isinstance(output, bytes) else output).strip().splitlines()
        error = f"timed out after {args.timeout:g} s" if result.returncode is None else (
            lines[-1] if lines else f"exit {result.returncode}")
        print(f"{gpus} GPU(s) at SCALE {scale}: {error}; the group's last lines:", *lines[-40:], sep="\n",
              file=sys.stderr)
        return {"gpus": gpus, "scale": scale, "error": error}
    return json.loads(path.read_text())


def scaling_rows(records, base):
    rows = []
    for record in records:
        if "error" in record:
            rows.append([record["gpus"], record["scale"], record["error"]] + [""] * 5)
            continue
        ratio = (lambda key: record[key] / base[key]) if "error" not in base else (lambda key: math.nan)
        rows.append([record["gpus"], record["scale"], f"{record['bfs_teps']:.3g}", f"{ratio('bfs_teps'):.2f}",
                     f"{record['sssp_teps']:.3g}", f"{ratio('sssp_teps'):.2f}", f"{record['kernel_1_seconds']:.2f}",
                     f"{record['kernel_1_seconds'] / base['kernel_1_seconds']:.2f}" if "error" not in base else ""])
    return rows


def kernel_option(text):
    """``(name, number)`` from ``NAME=VALUE``."""
    name, separator, value = text.partition("=")
    if not separator or not name:
        raise argparse.ArgumentTypeError(f"expected NAME=VALUE, got {text!r}")
    try:
        return name, float(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{name}: not a number: {value!r}") from None


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--gpus", type=int, default=2, help="GPUs of the multi-GPU runs (a power of two)")
    parser.add_argument("--scale", type=int, default=26, help="the one-GPU and strong-scaling SCALE")
    parser.add_argument("--edgefactor", type=int, default=16)
    parser.add_argument("--roots", type=int, default=16)
    parser.add_argument("--mpiexec", default="mpiexec", help='launcher command (default "mpiexec")')
    parser.add_argument("--timeout", type=float, default=900.0,
                        help="seconds a measurement (default 900): a group still running then prints its ranks' "
                             "stacks and fails")
    parser.add_argument("--bfs-option", metavar="NAME=VALUE", type=kernel_option, action="append", default=[],
                        help="a keyword of the multi-GPU BFS (alpha=100, say); repeatable")
    parser.add_argument("--json", metavar="PATH", help="write the records as JSON")
    parser.add_argument("--measure", metavar="PATH", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.measure:
        measure(args)
    weak_scale = args.scale + int(math.log2(args.gpus))
    with tempfile.TemporaryDirectory() as folder:
        one, strong, weak = (run_measurement(args, gpus, scale, folder)
                             for gpus, scale in ((1, args.scale), (args.gpus, args.scale), (args.gpus, weak_scale)))
    headers = ["GPUs", "SCALE", "BFS TEPS", "x 1 GPU", "SSSP TEPS", "x 1 GPU", "kernel 1 s", "x 1 GPU"]
    print(f"Weak scaling ({args.roots} keys; TEPS over M input edges; ideal ratio {args.gpus}):")
    print(tabulate(scaling_rows([one, weak], one), headers=headers, disable_numparse=True))
    print(f"\nStrong scaling at SCALE {args.scale}:")
    print(tabulate(scaling_rows([one, strong], one), headers=headers, disable_numparse=True))
    for record in (one, strong, weak):
        if "error" in record:
            continue
        allgather = record["bitmap_allgather_ms"]
        print(f"\n{record['gpus']} GPU(s), SCALE {record['scale']}: BFS {record['bfs_median_ms']:.2f} ms, SSSP "
              f"{record['sssp_median_ms']:.2f} ms a search (medians)" + (
                  "" if allgather is None else f"; a plain NCCL allgather of the frontier bitmap {allgather:.3f} ms"))
        print(tabulate(record["levels"], headers=["level", "direction", "keys", "frontier", "scanned a GPU", "ms",
                                                  "compute ms", "exchange ms"], floatfmt=".3f"))
        print("SSSP phases (medians over the keys): " + ", ".join(
            f"{key} {1e3 * value:.2f} ms" if key.endswith("seconds") else f"{key} {value:g}"
            for key, value in record["sssp_phases"].items()))
    if args.json:
        pathlib.Path(args.json).write_text(json.dumps([one, strong, weak], indent=1))


if __name__ == "__main__":
    main()
