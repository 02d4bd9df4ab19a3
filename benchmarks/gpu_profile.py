"""Where a GPU search's time goes: a per-kernel profile under Nsight Compute, against the copy bandwidth.

    PYTHONPATH=. python benchmarks/gpu_profile.py [--scales 24 26] [--roots 4] [--searches bfs sssp]
                                                  [--replay kernel|application] [--ncu PATH] [--workdir DIR]

(``benchmarks/gpu.py --profile`` prints the same tables after its own.)

For each SCALE (edgefactor 16, seeds 2 and 3, the reference's first
``--roots`` search keys) and each search (the default GPU BFS and SSSP, as a
run constructs them on the backend's kernel 1), two child processes of this
script build the graph and the kernel and run one untimed search, then:

1. the plain child times each search with CUDA events (as a run times it),
   each key TIMED_REPEATS times (one SSSP search at SCALE 24 just after
   the warm-up once took 21.7 ms where a run's mean was 8.0 ms), and
   measures the device-to-device copy bandwidth (bytes read plus bytes
   written, ``gpu.copy_bandwidth``);
2. the profiled child runs the same searches between ``cudaProfilerStart``
   and ``cudaProfilerStop`` under ``ncu --profile-from-start off
   --clock-control none --cache-control none`` (Nsight Compute replays each
   kernel to read its counters; the clocks are left as they are and the
   caches are not flushed between kernels, so the L2 holds what the previous
   kernel left, as in a search), which records per kernel
   launch: its duration, the bytes it read from and wrote to device memory
   (DRAM), the L2 hit rate of its sector requests and its achieved occupancy
   (active warps over the most a multiprocessor holds).

The table, per kernel (summed over its launches, divided by the searches):
launches and milliseconds a search, its share of the search's time (the
plain child's median), its DRAM bytes per second of its own duration and
that rate against the copy bandwidth, its L2 hit rate and occupancy
(duration-weighted means). The last row, ``between kernels``, is the search
time no kernel accounts for: launch gaps and the host's round trips (one
per level: the copy of the level's counters).

Cost: Nsight Compute needs several passes per kernel for these metrics.
With ``--replay kernel`` (the default) it replays each launch, saving and
restoring the device memory the kernel can write, so a profiled search
takes far longer than a timed one (on an H100, 2 BFS searches at SCALE 24
took 150 s in all, SCALE 20's BFS and SSSP 130 s; SCALE 24's BFS and SSSP
and a part of SCALE 26's BFS did not finish in 580 s with one key each).
``--replay application`` runs the whole profiled child once per pass
instead (the graph is generated and built each time: some 15 s at SCALE
26) and matches the launches of the passes by kernel name and grid; it
needs the same launches in every pass: the BFS makes them (its levels'
sizes do not depend on timing; SCALE 26's BFS profiled in 60 s), the SSSP
does not (its light iterations' frontiers do: Nsight Compute stops with
"Unexpected number of profiled kernels"), so profile the SSSP by kernel
replay at SCALE 24 or below. Keep ``--roots`` small at large SCALEs.
"""

import argparse
import csv
import json
import os
import shutil
import subprocess
import sys
import tempfile
from collections import defaultdict
from pathlib import Path

import numpy as np
from tabulate import tabulate

EDGEFACTOR = 16
SEEDS = (2, 3)
SEARCHES = ("bfs", "sssp")
PROFILED_SEARCHES = 4  # search keys profiled per SCALE and search
METRICS = {  # Nsight Compute metric -> the name used here
    "gpu__time_duration.sum": "seconds",
    "dram__bytes_read.sum": "read",
    "dram__bytes_write.sum": "written",
    "lts__t_sector_hit_rate.pct": "l2_hit",
    "sm__warps_active.avg.pct_of_peak_sustained_active": "occupancy",
}
REPLAY_MODES = ("kernel", "application")
TIMED_REPEATS = 5  # timed searches of each key in the plain child
NCU_DEFAULT = "/opt/nvidia/nsight-compute/2025.3.1/ncu"


def child(scale, search, num_roots, output, profiled):
    """Build, construct, warm up, then run the searches (timed, or for the profiler); JSON to ``output``."""
    import cupy
    import cupyx.profiler

    from gpu import copy_bandwidth  # benchmarks/gpu.py, beside this script
    from graph500 import kernels
    from graph500.generators import roots as roots_module
    from graph500.kernels.gpu.backend import GPUBackend

    backend = GPUBackend()
    src, dst, weights = backend.generate(scale, EDGEFACTOR, *SEEDS)
    has_edge = backend.incident_vertices(src, dst, 1 << scale)
    roots = [int(root) for root in roots_module.search_keys(scale, *SEEDS, has_edge, num_roots)[0]]
    graph = backend.build(src, dst, 1 << scale, weights)
    del src, dst, weights
    kernel = kernels.get(search, "gpu")(graph)
    kernel.search(roots[0])  # warm-up: compiles
    cupy.cuda.get_current_stream().synchronize()
    result = {"device": backend.describe()["device"]}
    if profiled:
        with cupyx.profiler.profile():
            for root in roots:
                kernel.search(root)
            cupy.cuda.get_current_stream().synchronize()
    else:
        result["seconds"] = [backend.timed(kernel.search, root)[1] for root in roots for _ in range(TIMED_REPEATS)]
        result["copy_bytes_per_second"] = copy_bandwidth()
    Path(output).write_text(json.dumps(result))


def run_child(arguments, ncu=None, report=None, replay="kernel"):
    command = [sys.executable, __file__, "--child", *arguments]
    if ncu:
        command = [ncu, "--profile-from-start", "off", "--clock-control", "none", "--cache-control", "none",
                   "--replay-mode", replay, "--metrics", ",".join(METRICS),
                   "--force-overwrite", "--export", str(report), *command]
    completed = subprocess.run(command, capture_output=True, text=True)
    if completed.returncode:
        raise SystemExit(f"{' '.join(command[:6])}...: exit {completed.returncode}\n{completed.stdout[-2000:]}"
                         f"\n{completed.stderr[-3000:]}")


def ncu_launches(ncu, report):
    """One dict per kernel launch of an Nsight Compute report: kernel name and the METRICS, in base units."""
    exported = subprocess.run([ncu, "--import", str(report), "--csv", "--page", "raw", "--print-units", "base",
                               "--metrics", ",".join(METRICS)], capture_output=True, text=True, check=True).stdout
    rows = list(csv.reader(line for line in exported.splitlines() if line.startswith('"')))
    header, units, records = rows[0], rows[1], rows[2:]
    name_column = header.index("Kernel Name")
    launches = []
    for record in records:
        launch = {"kernel": record[name_column].split("(")[0]}
        for metric, key in METRICS.items():
            column = header.index(metric)
            launch[key] = _to_base(float(record[column].replace(",", "")), units[column])
        launches.append(launch)
    return launches


UNIT_SCALES = {"ns": 1e-9, "nsecond": 1e-9, "us": 1e-6, "usecond": 1e-6, "ms": 1e-3, "msecond": 1e-3, "s": 1.0,
               "second": 1.0, "byte": 1.0, "B": 1.0, "%": 1.0, "": 1.0}


def _to_base(value, unit):
    """Seconds for a duration, bytes for bytes, the value for a percentage."""
    if unit not in UNIT_SCALES:
        raise SystemExit(f"ncu printed a unit this script does not know: {unit!r}")
    return value * UNIT_SCALES[unit]


def profile_table(launches, search_seconds, num_searches, bandwidth):
    """Rows per kernel (most time first), then the time between kernels; times are per search."""
    by_kernel = defaultdict(list)
    for launch in launches:
        by_kernel[launch["kernel"]].append(launch)
    rows, kernel_seconds = [], 0.0
    for name, group in sorted(by_kernel.items(), key=lambda item: -sum(l["seconds"] for l in item[1])):
        seconds = sum(launch["seconds"] for launch in group)
        moved = sum(launch["read"] + launch["written"] for launch in group)
        weights = np.array([launch["seconds"] for launch in group])
        kernel_seconds += seconds
        rate = moved / seconds if seconds else 0.0
        rows.append([name, len(group) / num_searches, seconds / num_searches * 1e3,
                     seconds / num_searches / search_seconds, rate / 1e9, rate / bandwidth,
                     np.average([launch["l2_hit"] for launch in group], weights=weights),
                     np.average([launch["occupancy"] for launch in group], weights=weights)])
    between = search_seconds - kernel_seconds / num_searches
    rows.append(["between kernels", "", between * 1e3, between / search_seconds, "", "", "", ""])
    return rows


HEADERS = ["kernel", "launches/search", "ms/search", "share", "DRAM GB/s", "of copy", "L2 hit %", "occupancy %"]


def profile(scales, searches, num_roots, ncu, workdir, replay="kernel"):
    """Print and return the profile tables: ``{(scale, search): {"search_seconds", "copy_bytes_per_second",
    "rows"}}``."""
    results = {}
    for scale in scales:
        for search in searches:
            arguments = ["--scales", str(scale), "--searches", search, "--roots", str(num_roots)]
            plain, report = Path(workdir) / "plain.json", Path(workdir) / f"s{scale}-{search}"
            run_child([*arguments, "--output", str(plain)])
            run_child([*arguments, "--output", str(Path(workdir) / "profiled.json"), "--profiled"], ncu, report, replay)
            timed = json.loads(plain.read_text())
            search_seconds = float(np.median(timed["seconds"]))
            rows = profile_table(ncu_launches(ncu, report.with_suffix(".ncu-rep")), search_seconds, num_roots,
                                 timed["copy_bytes_per_second"])
            print(f"\nSCALE {scale}, {search}: {timed['device']}, {num_roots} searches ({replay} replay), median "
                  f"{search_seconds * 1e3:.3f} ms a search, copy bandwidth "
                  f"{timed['copy_bytes_per_second'] / 1e9:.0f} GB/s (read + write)")
            print(tabulate(rows, headers=HEADERS, floatfmt=("", ".1f", ".3f", ".1%", ".0f", ".0%", ".1f", ".1f")),
                  flush=True)
            results[scale, search] = {"search_seconds": search_seconds, "rows": rows,
                                      "copy_bytes_per_second": timed["copy_bytes_per_second"]}
    return results


def find_ncu(path=None):
    found = path or shutil.which("ncu") or (NCU_DEFAULT if os.path.exists(NCU_DEFAULT) else None)
    if not found:
        raise SystemExit("Nsight Compute (ncu) not found: give its path with --ncu")
    return found


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--scales", type=int, nargs="+", default=[24, 26])
    parser.add_argument("--searches", nargs="+", choices=SEARCHES, default=list(SEARCHES))
    parser.add_argument("--roots", type=int, default=PROFILED_SEARCHES)
    parser.add_argument("--replay", choices=REPLAY_MODES, default="kernel",
                        help="Nsight Compute's replay: each kernel launch, or the whole child once per pass")
    parser.add_argument("--ncu", help="the ncu program (default: on the PATH, or Nsight Compute's usual place)")
    parser.add_argument("--workdir", help="where the reports go (default: a temporary folder, removed)")
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--profiled", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--output", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(args.scales[0], args.searches[0], args.roots, args.output, args.profiled)
        return
    ncu = find_ncu(args.ncu)
    if args.workdir:
        os.makedirs(args.workdir, exist_ok=True)
        profile(args.scales, args.searches, args.roots, ncu, args.workdir, args.replay)
    else:
        with tempfile.TemporaryDirectory() as workdir:
            profile(args.scales, args.searches, args.roots, ncu, workdir, args.replay)


if __name__ == "__main__":
    main()
