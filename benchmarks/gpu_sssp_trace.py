"""Where the GPU delta-stepping's time goes: every step of a search, bucket by bucket.

    PYTHONPATH=. python benchmarks/gpu_sssp_trace.py [--scale 24] [--roots 4] [--sssp default delta=0.05]

Builds the graph as a run does (degree-ordered, on the GPU), then, for each
setting (``default`` or ``name=value,...`` of the kernel's tunables), times
untraced searches from the first keys (median) and traces one search from the
first key: every collect, light (or tail) iteration and heavy phase (push or
pull) timed by CUDA events with the device idle before it, with its
frontier size and the edges it relaxes. Printed per setting: one row per
bucket (its light iterations summed), the totals per kind of step, and the
edges relaxed per second of each kind. The traced search's steps sum to more
than an untraced search: each step waits for the device before it starts.
"""

import argparse
import time

import cupy
import numpy as np
from tabulate import tabulate

from gpu import EDGEFACTOR, SEEDS  # benchmarks/gpu.py, beside this script
from settings import kernel_options  # benchmarks/settings.py, beside this script
from graph500.generators import roots as roots_module
from graph500.kernels.gpu import sssp as gpu_sssp
from graph500.kernels.gpu.backend import GPUBackend
from graph500.validators import ValidationGraph, validate_sssp


class TracedSSSP(gpu_sssp.DeltaSteppingSSSP):
    """The default kernel with every step timed; ``steps`` lists (bucket, kind, vertices, edges, seconds,
    unchanged vertices, their edges)."""

    def __init__(self, *args, **options):
        super().__init__(*args, **options)
        self.steps = []
        self._bucket_low = None
        self._expanded_at = cupy.full(self.graph.num_vertices, np.inf, dtype=np.float32)
        self._unchanged = (0, 0)
        self._expansions = []  # per light or tail iteration: its vertices, their distances and frontier edges

    def _timed(self, kind, vertices, edges, step):
        cupy.cuda.get_current_stream().synchronize()
        start, end = cupy.cuda.Event(), cupy.cuda.Event()
        start.record()
        result = step()
        end.record()
        end.synchronize()
        self.steps.append((self._bucket_low, kind, int(vertices), int(edges),
                           cupy.cuda.get_elapsed_time(start, end) / 1e3, *self._unchanged))
        self._unchanged = (0, 0)
        return result

    def _count_unchanged(self, queue, size, row_end):
        """Note the queue's vertices whose distance is the one of their last expansion, and their edges."""
        vertices = queue[:size]
        distances = (self._state[vertices] >> np.uint64(32)).astype(np.uint32).view(np.float32)
        unchanged = distances == self._expanded_at[vertices]
        edges = row_end[vertices] - self.graph.offsets[vertices]
        self._unchanged = (int(unchanged.sum()), int(edges[unchanged].sum()))
        self._expanded_at[vertices] = distances
        self._expansions.append((vertices.copy(), distances, edges))

    def final_expansions(self):
        """Per light or tail iteration: its vertices expanded at their final distance, and their edges (the
        others' expansions were wasted: a later one relaxed the same edges from a smaller distance)."""
        final = (self._state >> np.uint64(32)).astype(np.uint32).view(np.float32)
        counts = []
        for vertices, distances, edges in self._expansions:
            at_final = distances == final[vertices]
            counts.append((int(at_final.sum()), int(edges[at_final].sum())))
        return counts

    def _collect(self, low, high):
        self._bucket_low = float(low)
        return self._timed("collect", self.graph.num_vertices, 0,
                           lambda: super(TracedSSSP, self)._collect(low, high))

    def _relax(self, queue, size, edges, row_end, high, next_queue, bound):
        kind = "push" if next_queue is None else ("tail" if high == gpu_sssp.INFINITY else "light")
        if kind != "push":
            self._count_unchanged(queue, size, row_end)
        return self._timed(kind, size, edges, lambda: super(TracedSSSP, self)._relax(
            queue, size, edges, row_end, high, next_queue, bound))

    def _heavy_phase(self, members_edges, member_counts, low, high, unsettled_edges, timer):
        pulls = self._counts["pulls"]
        start = len(self.steps)
        result = self._timed("heavy", int(self._counters.host[gpu_sssp.MEMBERS_SIZE]), members_edges,
                             lambda: super(TracedSSSP, self)._heavy_phase(members_edges, member_counts, low, high,
                                                                          unsettled_edges, timer))
        bucket, _, vertices, edges, seconds, *_ = self.steps.pop()
        del self.steps[start:]
        pulled = self._counts["pulls"] > pulls
        self.steps.append((bucket, "pull" if pulled else "push", vertices, 0 if pulled else edges, seconds, 0, 0))
        return result


def bucket_rows(steps):
    rows, index = [], {}
    for bucket, kind, vertices, edges, seconds, *_ in steps:
        if bucket not in index:
            index[bucket] = len(rows)
            rows.append({"bucket low": bucket, "collect ms": 0.0, "iterations": 0, "light edges": 0,
                         "light ms": 0.0, "heavy": "", "heavy edges": 0, "heavy ms": 0.0})
        row = rows[index[bucket]]
        if kind == "collect":
            row["collect ms"] += seconds * 1e3
        elif kind in ("light", "tail"):
            row["iterations"] += 1
            row["light edges"] += edges
            row["light ms"] += seconds * 1e3
            row["heavy"] = row["heavy"] or ("tail" if kind == "tail" else "")
        else:
            row["heavy"] = kind
            row["heavy edges"] = edges
            row["heavy ms"] = seconds * 1e3
    return rows


def largest_bucket(steps):
    """The low end of the bucket whose light phase (not the tail) relaxed the most edges."""
    edges_by_bucket = {}
    for bucket, kind, _, edges, *_ in steps:
        if kind == "light":
            edges_by_bucket[bucket] = edges_by_bucket.get(bucket, 0) + edges
    return max(edges_by_bucket, key=edges_by_bucket.get)


def distinct_expansions(kernel, low):
    """Vertices expanded in the light phase of the bucket starting at ``low``, and their light edges."""
    high = np.float32(low + kernel.delta)
    expanded = (kernel._expanded_at >= np.float32(low)) & (kernel._expanded_at < high)
    light = kernel._light_end - kernel.graph.offsets[:-1]
    return int(expanded.sum()), int(light[expanded].sum())


def bucket_iterations(steps, largest, final_expansions):
    iterations = [step + final for step, final in zip(
        (step for step in steps if step[1] in ("light", "tail")), final_expansions)]
    return [{"iteration": number, "frontier": vertices, "edges": edges, "ms": seconds * 1e3,
             "G edges/s": edges / seconds / 1e9, "unchanged": unchanged, "unchanged edges": unchanged_edges,
             "at final distance": final, "their edges": final_edges}
            for number, (_, _, vertices, edges, seconds, unchanged, unchanged_edges, final, final_edges) in enumerate(
                step for step in iterations if step[0] == largest)]


def kind_totals(steps):
    totals = {}
    for _, kind, _, edges, seconds, *_ in steps:
        entry = totals.setdefault(kind, {"steps": 0, "edges": 0, "seconds": 0.0})
        entry["steps"] += 1
        entry["edges"] += edges
        entry["seconds"] += seconds
    return [{"kind": kind, "steps": entry["steps"], "edges": entry["edges"], "ms": entry["seconds"] * 1e3,
             "G edges/s": entry["edges"] / entry["seconds"] / 1e9 if entry["edges"] else ""}
            for kind, entry in totals.items()]


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--scale", type=int, default=24)
    parser.add_argument("--roots", type=int, default=4)
    parser.add_argument("--sssp", nargs="+", default=["default"], metavar="SETTING")
    args = parser.parse_args()
    backend = GPUBackend()
    backend.generate(10, EDGEFACTOR, *SEEDS)  # warm-up: compiles
    num_vertices = 1 << args.scale
    src, dst, weights = backend.generate(args.scale, EDGEFACTOR, *SEEDS)
    start = time.perf_counter()
    graph = backend.build(src, dst, num_vertices, weights)
    with_edges = int(cupy.count_nonzero(cupy.diff(graph.offsets)))
    print(f"SCALE {args.scale}: {graph.num_edges} directed edges, {with_edges} of {num_vertices} vertices with "
          f"edges, built in {time.perf_counter() - start:.2f} s", flush=True)
    has_edge = backend.incident_vertices(src, dst, num_vertices)
    roots = [int(root) for root in roots_module.search_keys(args.scale, *SEEDS, has_edge, args.roots)[0]]
    validation_graph = ValidationGraph.from_edges(src, dst, num_vertices, weights)
    del src, dst, weights
    for setting in args.sssp:
        plain = gpu_sssp.DeltaSteppingSSSP(graph, **kernel_options(setting))
        plain.search(roots[0])  # warm-up
        times = [backend.timed(plain.search, root)[1] for root in roots]
        del plain
        kernel = TracedSSSP(graph, **kernel_options(setting))
        parents, distances = kernel.search(roots[0])
        validate_sssp(validation_graph, roots[0], parents, distances)
        print(f"\n{setting} (delta {kernel.delta:.4g}): untraced median {np.median(times) * 1e3:.2f} ms "
              f"over {len(roots)} keys (each: {' '.join(f'{t * 1e3:.1f}' for t in times)}); traced search from key "
              f"{roots[0]}: {kernel.summary}")
        print(tabulate(bucket_rows(kernel.steps), headers="keys", floatfmt=".3f"))
        largest = largest_bucket(kernel.steps)
        vertices, light_edges = distinct_expansions(kernel, largest)
        print(f"bucket at {largest:.4f}: {vertices} distinct vertices expanded, {light_edges} light edges")
        iterations = bucket_iterations(kernel.steps, largest, kernel.final_expansions())
        print(tabulate(iterations, headers="keys", floatfmt=".3f"))
        print(f"expansions at the final distance: {sum(row['at final distance'] for row in iterations)} of "
              f"{sum(row['frontier'] for row in iterations)}, edges {sum(row['their edges'] for row in iterations)} "
              f"of {sum(row['edges'] for row in iterations)}")
        print(tabulate(kind_totals(kernel.steps), headers="keys", floatfmt=".3f"), flush=True)


if __name__ == "__main__":
    main()
