"""GPU memory plan against the measured high-water mark, and the largest SCALE per GPU memory size.

    PYTHONPATH=. python benchmarks/gpu_memory.py [--scales 20 22 24 26] [--roots 2]
    PYTHONPATH=. python benchmarks/gpu_memory.py --plan-only     # no GPU needed

For each SCALE (edgefactor 16, seeds 2 and 3) it runs the whole protocol
(`graph500 run --backend gpu`: generation, construction, every search of both
passes validated, energy off) in this process and prints the device memory
of each phase of the plan (`graph500.kernels.gpu.backend.device_memory_plan`),
the estimate (largest phase plus the CUDA context), the measured high-water
mark (CuPy's pool at its fullest plus what the context and modules hold, from
the run's record) and their ratio. The caches of CuPy's device and pinned
pools are emptied between SCALEs so each run starts from nothing held.

Then, from the plan alone: device bytes per edge tuple of each phase, and the
largest SCALE a GPU of each memory size holds (its memory less the context).
"""

import argparse
import contextlib
import io
import json
import os
import tempfile

from tabulate import tabulate

from graph500.kernels.gpu.backend import (CONTEXT_BYTES, EDGE_LIST_BYTES, device_memory_plan, largest_fitting_scale,
                                          memory_estimate_bytes)

EDGEFACTOR = 16
GPU_SIZES_GB = (24, 40, 48, 80, 94, 141, 192)  # marketing gigabytes (10^9 bytes)
PHASES = ("construction", "bfs pass", "sssp pass")


def measure(scale, roots):
    """The run's record extensions: measured peak and estimate (bytes)."""
    import cupy

    from graph500 import harness

    cupy.get_default_memory_pool().free_all_blocks()
    cupy.get_default_pinned_memory_pool().free_all_blocks()
    with tempfile.TemporaryDirectory() as folder:
        record_path = os.path.join(folder, "run.json")
        config = harness.RunConfig(scale=scale, edgefactor=EDGEFACTOR, backend="gpu", num_roots=roots,
                                   energy="off", json_path=record_path, progress=False)
        with contextlib.redirect_stderr(io.StringIO()):
            status = harness.run(config, stdout=io.StringIO())
        if status != 0:
            raise SystemExit(f"SCALE {scale}: the run failed validation")
        with open(record_path) as record:
            return json.load(record)["extensions"]


def gib(value):
    return f"{value / 2**30:.2f}"


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scales", type=int, nargs="+", default=[20, 22, 24, 26])
    parser.add_argument("--roots", type=int, default=2, help="search keys per run (the peak does not depend on it)")
    parser.add_argument("--plan-only", action="store_true", help="print the plan's tables only (no GPU needed)")
    args = parser.parse_args()

    if not args.plan_only:
        rows = []
        for scale in args.scales:
            facts = measure(scale, args.roots)
            plan = device_memory_plan(scale, EDGEFACTOR)
            peak, estimate = facts["device_memory_peak_bytes"], facts["device_memory_estimate_bytes"]
            rows.append([scale, *(gib(plan[phase]) for phase in PHASES), gib(estimate), gib(peak),
                         f"{peak / estimate:.3f}"])
        print(f"Device memory (GiB), edgefactor {EDGEFACTOR}; estimate = largest phase + context "
              f"({gib(CONTEXT_BYTES)} GiB):")
        print(tabulate(rows, headers=["SCALE", *PHASES, "estimate", "measured peak",
                                      "measured / estimate"]))
        print()

    scale = 28
    num_tuples = EDGEFACTOR << scale
    plan = device_memory_plan(scale, EDGEFACTOR)
    print(f"Bytes per edge tuple by phase (SCALE {scale}, edgefactor {EDGEFACTOR}; per-vertex arrays included):")
    print(tabulate([["device", *(f"{plan[phase] / num_tuples:.1f}" for phase in PHASES)],
                    ["host (pinned edge list)", *([EDGE_LIST_BYTES] * len(PHASES))]],
                   headers=["", *PHASES]))
    print()
    print("Largest SCALE per GPU memory size (edgefactor 16, memory less the CUDA context):")
    rows = []
    for size in GPU_SIZES_GB:
        largest = largest_fitting_scale(EDGEFACTOR, size * 10**9 - CONTEXT_BYTES, None)
        rows.append([size, largest, gib(memory_estimate_bytes(largest, EDGEFACTOR)),
                     gib((EDGEFACTOR << largest) * EDGE_LIST_BYTES)])
    print(tabulate(rows, headers=["GPU GB", "largest SCALE", "device GiB needed", "host GiB (edge list)"]))


if __name__ == "__main__":
    main()
