"""GPU benchmark: generation rate, per-kernel BFS and SSSP TEPS, construction and validation time,
bottom-up bandwidth.

    PYTHONPATH=. python benchmarks/gpu.py [--scales 20 22 24 26] [--roots 64] [--sssp default delta=0.1,tail_edges=inf]
                                          [--json PATH] [--profile [kernel|application]]

For each SCALE (edgefactor 16, seeds 2 and 3, the reference's search keys):
generate on the GPU (edges and weights per second), build the weighted CSR
on the device (construction time), prepare the validator on the device, then
for each GPU BFS kernel, and for the delta-stepping SSSP with each setting
(``default``, or tunables such as ``delta=0.07,pull_ratio=2,tail_edges=inf``), run
one untimed warm-up and one timed search per key, each validated on the
device (all must pass), and report the harmonic mean TEPS as the Graph500
report does, the kernel's own set-up time (for SSSP: its rows sorted by weight)
and the mean validation time.

Bottom-up bandwidth: the direction-optimizing and bottom-up kernels are run
again with per-level CUDA events (``trace=True``, not the timed runs) on up
to 8 keys. A bottom-up level must move at least: the visited word read and
the next-frontier word written per 32 vertices (8 bytes), both offsets of
every scanned vertex (16), per neighbour read its label and its frontier word
(4 + 4), and a parent per discovered vertex (4). Those bytes over the levels'
time, against the device-to-device copy bandwidth measured in the same run
(bytes read plus bytes written), show how close bottom-up runs to memory speed.

With ``--profile``, then, per SCALE, the per-kernel profile of the default
BFS and SSSP under Nsight Compute (``gpu_profile.py``): each kernel's share
of a search's time, its DRAM bytes/s against the copy bandwidth, L2 hit rate
and occupancy, and the time between kernels (``--profile application``
replays whole runs instead of each launch: far faster at SCALE 26).
"""

import argparse
import json
import tempfile
import time

import cupy
import numpy as np

import gpu_profile  # benchmarks/gpu_profile.py, beside this script
from settings import kernel_options  # benchmarks/settings.py, beside this script
from graph500 import kernels, stats
from graph500.generators import roots as roots_module
from graph500.kernels.gpu import bfs as gpu_bfs
from graph500.kernels.gpu.backend import GPUBackend
from graph500.kernels.gpu import sssp as gpu_sssp
from graph500.validators import ValidationGraph, validate_bfs, validate_sssp

EDGEFACTOR = 16
SEEDS = (2, 3)
PROFILED_ROOTS = 8
COPY_BYTES = 1 << 30
COPY_REPEATS = 10


def copy_bandwidth():
    """Device-to-device copy rate in bytes/s, counting bytes read plus bytes written."""
    source = cupy.arange(COPY_BYTES // 4, dtype=np.uint32)
    target = cupy.empty_like(source)
    target[...] = source  # warm-up
    start, end = cupy.cuda.Event(), cupy.cuda.Event()
    start.record()
    for _ in range(COPY_REPEATS):
        target[...] = source
    end.record()
    end.synchronize()
    return 2 * COPY_BYTES * COPY_REPEATS / (cupy.cuda.get_elapsed_time(start, end) / 1e3)


def bottom_up_level_bytes(level, num_words):
    return 8 * num_words + 16 * level["scanned_vertices"] + 8 * level["scanned_edges"] + 4 * level["discovered"]


def bottom_up_rate(kernel_class, graph, roots):
    """``(bytes/s, levels)`` of the bottom-up levels of searches from the first roots."""
    kernel = kernel_class(graph, trace=True)
    num_words = (graph.num_vertices + 31) // 32
    moved = seconds = levels = 0
    for root in roots[:PROFILED_ROOTS]:
        kernel.search(root)
        for level in kernel.trace:
            if level["direction"] == gpu_bfs.BOTTOM_UP:
                moved += bottom_up_level_bytes(level, num_words)
                seconds += level["seconds"]
                levels += 1
    return (moved / seconds if seconds else float("nan")), levels


def run_kernel(backend, make_kernel, name, validate, validation_graph, roots):
    start = time.perf_counter()
    kernel = make_kernel()
    setup = time.perf_counter() - start
    kernel.search(roots[0])  # warm-up: compiles
    times, nedges, validate_times = [], [], []
    for root in roots:
        output, seconds = backend.timed(kernel.search, root)
        outputs = output if isinstance(output, tuple) else (output,)
        start = time.perf_counter()
        nedges.append(validate(validation_graph, root, *outputs))
        validate_times.append(time.perf_counter() - start)
        times.append(seconds)
    return {
        "kernel": name,
        "harmonic_mean_teps": stats.teps_summary(times, nedges)["harmonic_mean"],
        "median_time": float(np.median(times)),
        "setup_seconds": setup,
        "validate_seconds": float(np.mean(validate_times)),
    }


def run_scale(scale, kernel_names, sssp_settings, num_roots, bandwidth, show_trace):
    backend = GPUBackend()
    num_vertices = 1 << scale
    backend.generate(10, EDGEFACTOR, *SEEDS)  # warm-up: compiles
    start = time.perf_counter()
    src, dst, weights = backend.generate(scale, EDGEFACTOR, *SEEDS)
    generation = time.perf_counter() - start
    start = time.perf_counter()
    graph = backend.build(src, dst, num_vertices, weights)
    construction = time.perf_counter() - start
    has_edge = backend.incident_vertices(src, dst, num_vertices)
    roots, _ = roots_module.search_keys(scale, *SEEDS, has_edge, num_roots)
    roots = [int(root) for root in roots]
    start = time.perf_counter()
    validation_graph = ValidationGraph.from_edges(src, dst, num_vertices, weights)
    validation_setup = time.perf_counter() - start
    del src, dst, weights
    common = {"scale": scale, "generation_edges_per_second": (EDGEFACTOR << scale) / generation,
              "construction_seconds": construction, "validation_setup_seconds": validation_setup}
    print(f"{scale:5d}  generation {common['generation_edges_per_second'] / 1e9:6.2f} G edges/s  "
          f"construction {construction:7.3f} s  validation setup {validation_setup:6.3f} s", flush=True)
    rows = []
    for name in kernel_names:
        kernel_class = kernels.get("bfs", "gpu", name)
        row = {**common, **run_kernel(backend, lambda: kernel_class(graph), name, validate_bfs,
                                      validation_graph, roots)}
        if kernel_class.directions != gpu_bfs.TOP_DOWN:
            rate, levels = bottom_up_rate(kernel_class, graph, roots)
            row.update(bottom_up_bytes_per_second=rate, bottom_up_levels=levels,
                       bottom_up_fraction_of_copy=rate / bandwidth)
        rows.append(row)
        print_row(row)
    if show_trace:
        print_trace(graph, roots[0])
    for setting in sssp_settings:  # after the BFS runs: the SSSP kernel reorders the graph's rows
        options = kernel_options(setting)
        row = {**common, **run_kernel(backend, lambda: gpu_sssp.DeltaSteppingSSSP(graph, **options),
                                      f"gpu-delta-stepping {setting}", validate_sssp, validation_graph, roots)}
        rows.append(row)
        print_row(row)
        if show_trace:
            print_sssp_trace(graph, options, roots[0])
    return rows


def print_row(row):
    bottom_up = (f"{row['bottom_up_bytes_per_second'] / 1e9:8.0f} GB/s ({row['bottom_up_fraction_of_copy']:4.0%})"
                 if "bottom_up_bytes_per_second" in row else " " * 20)
    print(f"{row['scale']:5d}  {row['kernel']:32s} {row['harmonic_mean_teps'] / 1e9:9.2f} GTEPS  "
          f"median {row['median_time'] * 1e3:8.3f} ms  set-up {row['setup_seconds']:6.3f} s  "
          f"validate {row['validate_seconds'] * 1e3:7.1f} ms/search  bottom-up {bottom_up}", flush=True)


def print_trace(graph, root):
    kernel = gpu_bfs.DirectionOptimizingBFS(graph, trace=True)
    kernel.search(root)
    for depth, level in enumerate(kernel.trace):
        print(f"    level {depth:2d} {level['direction']:9s} frontier {level['frontier']:10d} "
              f"discovered {level['discovered']:10d} scanned {level['scanned_edges']:11d} "
              f"{level['seconds'] * 1e3:8.3f} ms", flush=True)


def print_sssp_trace(graph, options, root):
    kernel = gpu_sssp.DeltaSteppingSSSP(graph, **options, trace=True)
    kernel.search(root)
    print("    " + "  ".join(f"{key} {value:.4g}" if isinstance(value, float) else f"{key} {value}"
                             for key, value in kernel.summary.items()), flush=True)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--scales", type=int, nargs="+", default=[20, 22, 24, 26])
    parser.add_argument("--roots", type=int, default=64)
    parser.add_argument("--kernels", nargs="+", default=[name for name in kernels.available("bfs", "gpu")
                                                         if not kernels.is_distributed(kernels.get("bfs", "gpu", name))])
    parser.add_argument("--sssp", nargs="*", default=["default"], metavar="SETTING",
                        help="delta-stepping settings to run: default, or name=value,... of its tunables (delta, "
                             "delta_scale, pull_ratio, tail_edges, tail_pull); none: skip SSSP")
    parser.add_argument("--trace", action="store_true",
                        help="print the direction-optimizing BFS levels and the SSSP phases of one search")
    parser.add_argument("--json", metavar="PATH", help="write the rows as JSON")
    parser.add_argument("--profile", nargs="?", const="kernel", choices=gpu_profile.REPLAY_MODES,
                        help="then the per-kernel profile of the default BFS and SSSP under Nsight Compute "
                             "(gpu_profile.py; ncu on the PATH or at its usual place), with its replay mode "
                             "(default kernel; application for SCALE 26)")
    args = parser.parse_args()
    bandwidth = copy_bandwidth()
    print(f"device: {GPUBackend().describe()['device']}; copy bandwidth {bandwidth / 1e9:.0f} GB/s (read + write)",
          flush=True)
    rows = []
    for scale in args.scales:
        rows += run_scale(scale, args.kernels, args.sssp, args.roots, bandwidth, args.trace)
    if args.json:
        with open(args.json, "w") as handle:
            json.dump({"copy_bytes_per_second": bandwidth, "rows": rows}, handle, indent=1)
    if args.profile:
        with tempfile.TemporaryDirectory() as workdir:
            gpu_profile.profile(args.scales, gpu_profile.SEARCHES, gpu_profile.PROFILED_SEARCHES,
                                gpu_profile.find_ncu(), workdir, args.profile)


if __name__ == "__main__":
    main()
