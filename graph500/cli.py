"""Command-line interface: argument parsing only; the work is done by the harness and friends.

    graph500 run       the benchmark (generate, build, 64 BFS + 64 SSSP, validate, report);
                       ``mpiexec -n P graph500 run`` runs it on P ranks
    graph500 generate  write the reference's graph files (byte-identical to the reference's)
    graph500 validate  check a BFS or SSSP tree made by any program
    graph500 report    tables, plots and pages from run records
    graph500 plan      the memory a run needs per rank, host and GPU, without running it

stdout carries the report (or the validation verdict); progress and messages
go to stderr. Errors are one line on stderr and a non-zero exit status:
1 for an invalid result, 2 for bad input, 130 when interrupted.
"""

import argparse
import shutil
import sys

import numpy as np

from graph500 import energy, harness, io, plan, publish, run_report
from graph500.errors import INTERRUPTED_STATUS, Graph500Error, ValidationError, is_interrupt
from graph500.generators import kronecker, roots as roots_module

GENERATE_CHUNK_EDGES = 1 << 24


def _add_graph_arguments(parser, scale_default):
    parser.add_argument("--scale", type=int, default=scale_default, required=scale_default is None,
                        help="log2 of the number of vertices" + (f" (default {scale_default})" if scale_default else ""))
    parser.add_argument("--edgefactor", type=int, default=16, help="edge tuples per vertex (default 16)")
    parser.add_argument("--seed1", type=int, default=2, help="first 64-bit user seed (default 2, as the reference)")
    parser.add_argument("--seed2", type=int, default=3, help="second 64-bit user seed (default 3, as the reference)")


def _rmat_probabilities(text):
    try:
        values = tuple(float(part) for part in text.split(","))
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected four numbers A,B,C,D, got {text!r}") from None
    if len(values) != 4:
        raise argparse.ArgumentTypeError(f"expected four numbers A,B,C,D, got {text!r}")
    return values


def build_parser():
    parser = argparse.ArgumentParser(prog="graph500", description=__doc__.split("\n\n")[0])
    commands = parser.add_subparsers(dest="command", required=True)

    run = commands.add_parser("run", help="run the benchmark and print the report (on P ranks under mpiexec -n P)")
    _add_graph_arguments(run, 16)
    run.add_argument("--backend", default="cpu", choices=("cpu", "gpu", "auto"), help="where to run (default cpu)")
    run.add_argument("--bfs", metavar="NAME", help="BFS kernel (default: the backend's fastest)")
    run.add_argument("--sssp", metavar="NAME", help="SSSP kernel (default: the backend's fastest)")
    run.add_argument("--no-sssp", action="store_true", help="run kernel 2 (BFS) only")
    run.add_argument("--roots", type=int, default=64, help="number of search keys (default 64, as the spec)")
    run.add_argument("--skip-validation", action="store_true", help="do not validate (results are then not official)")
    run.add_argument("--json", metavar="PATH", help="also write the run's JSON record to PATH")
    run.add_argument("--ignore-memory-plan", action="store_true",
                     help="run where the memory plan (graph500 plan) says it does not fit: the plan is a bound, "
                          "a run that does not fit fails out of memory")
    run.add_argument("--generator", default="kronecker", choices=("kronecker", "rmat"),
                     help="kronecker: the reference's generator (default); rmat: general R-MAT, not official")
    run.add_argument("--rmat", type=_rmat_probabilities, default=(0.57, 0.19, 0.19, 0.05), metavar="A,B,C,D",
                     help="R-MAT quadrant probabilities for --generator rmat")
    run.add_argument("--energy", default="auto", choices=energy.CHOICES,
                     help="energy meters: nvml (GPUs), rapl (CPU packages and DRAM), auto (every readable one, default), off")
    run.add_argument("--energy-loop", type=float, default=10.0, metavar="SECONDS",
                     help="repeat each pass's searches for at least SECONDS while measuring energy (default 10)")
    run.add_argument("--trace", action="store_true",
                     help="print each search's levels (direction, frontier, edges examined, time) on stderr; keep them in --json")
    run.add_argument("--numa-domains", type=int, metavar="N",
                     help="NUMA domains for numa-bottom-up / direction-optimizing (default: what the OS reports)")
    run.add_argument("--progress", action=argparse.BooleanOptionalAction, default=None,
                     help="progress bars on stderr (default: when stderr is a terminal; else a line as each step "
                          "of 10 s or more ends)")

    generate = commands.add_parser("generate", help="write the reference's edge, weight and root files")
    _add_graph_arguments(generate, None)
    generate.add_argument("--output", required=True, metavar="PATH", help="edge file to write (PATH.weights, PATH.roots beside it)")
    generate.add_argument("--format", default="reference", choices=("reference", "npy"), help="file format (default reference)")
    generate.add_argument("--device", default="cpu", choices=("cpu", "gpu"),
                          help="generate on the CPU (Numba) or the GPU (CUDA); the files are identical (default cpu)")

    validate = commands.add_parser("validate", help="validate a BFS or SSSP tree made by any program")
    validate.add_argument("--edges", required=True, metavar="PATH", help="edge file (reference format, or PATH.src.npy/PATH.dst.npy)")
    validate.add_argument("--weights", metavar="PATH", help="weight file (default PATH.weights when --distances is given)")
    validate.add_argument("--scale", type=int, help="SCALE of the graph (default: the parent array's length is N)")
    validate.add_argument("--root", type=int, required=True, help="the search key")
    validate.add_argument("--parents", required=True, metavar="FILE", help="parent array: .npy or text, one value a line, -1 unreached")
    validate.add_argument("--distances", metavar="FILE", help="float32 distances (validates an SSSP tree)")
    publish.add_report_parser(commands)
    plan.add_plan_parser(commands)
    return parser


def command_run(args):
    config = harness.RunConfig(
        scale=args.scale, edgefactor=args.edgefactor, seed1=args.seed1, seed2=args.seed2,
        backend=args.backend, bfs=args.bfs, sssp=args.sssp, run_sssp=not args.no_sssp, num_roots=args.roots,
        validate=not args.skip_validation, json_path=args.json, generator=args.generator,
        rmat_probabilities=args.rmat, progress=args.progress, energy=args.energy, energy_loop=args.energy_loop,
        trace=args.trace, numa_domains=args.numa_domains, memory_check=not args.ignore_memory_plan,
    )
    return harness.run(config)


def _edge_chunk_source(device):
    """A function giving one chunk of edges as host arrays, generated on ``device``."""
    if device == "cpu":
        return kronecker.generate_edges
    reason = harness.gpu_unavailable_reason()
    if reason:
        raise Graph500Error(f"--device gpu: {reason}")
    import cupy

    from graph500.kernels.gpu import generator

    def generate_on_gpu(*arguments):
        return tuple(cupy.asnumpy(values) for values in generator.generate_edges(*arguments))

    return generate_on_gpu


def command_generate(args):
    try:
        kronecker.check_parameters(args.scale, args.edgefactor, args.seed1, args.seed2)
    except ValueError as error:
        raise Graph500Error(str(error)) from None
    num_vertices = 1 << args.scale
    num_tuples = args.edgefactor << args.scale
    unwritable = run_report.unwritable_reason(args.output)
    if unwritable:
        raise Graph500Error(f"--output: {unwritable}")
    needed = num_tuples * (io.EDGE_RECORD_BYTES + 4)
    free = shutil.disk_usage(io.directory_of(args.output)).free
    if needed > free:
        raise Graph500Error(f"the graph needs {needed / 2**30:.1f} GiB on disk; {free / 2**30:.1f} GiB is free")
    chunk_edges = _edge_chunk_source(args.device)
    has_edge = np.zeros(num_vertices, dtype=np.bool_)
    with io.EdgeFileWriter(args.output, args.format) as writer:
        for start in range(0, num_tuples, GENERATE_CHUNK_EDGES):
            stop = min(start + GENERATE_CHUNK_EDGES, num_tuples)
            src, dst, weights = chunk_edges(args.scale, args.edgefactor, args.seed1, args.seed2, start, stop)
            roots_module.mark_incident(src, dst, has_edge)
            writer.write(src, dst, weights)
        roots, _ = roots_module.search_keys(args.scale, args.seed1, args.seed2, has_edge)
        writer.finish(roots)
    print(f"graph500: wrote {num_tuples} edges of a SCALE {args.scale} graph to {args.output}", file=sys.stderr)
    return 0


def command_validate(args):
    from graph500.validators import ValidationGraph, validate_bfs, validate_sssp

    src, dst, weights = io.read_edges(args.edges)
    parents = io.read_vector(args.parents, np.int64, "parents")
    num_vertices = (1 << args.scale) if args.scale is not None else len(parents)
    if args.scale is not None and not 1 <= args.scale <= kronecker.MAX_SCALE:
        raise Graph500Error(f"SCALE must be from 1 to {kronecker.MAX_SCALE}, got {args.scale}")
    labels_max = max(int(src.max(initial=0)), int(dst.max(initial=0)))
    labels_min = min(int(src.min(initial=0)), int(dst.min(initial=0)))
    if labels_min < 0 or labels_max >= num_vertices:
        raise Graph500Error(f"edge file {args.edges} has vertex labels outside [0, {num_vertices}) "
                            f"(min {labels_min}, max {labels_max}); check --scale or the parents' length")
    if not 0 <= args.root < num_vertices:
        raise Graph500Error(f"root {args.root} is outside [0, {num_vertices})")
    if len(parents) != num_vertices:
        raise Graph500Error(f"parents file {args.parents} holds {len(parents)} values for {num_vertices} vertices")
    if args.distances is None:
        graph = ValidationGraph.from_edges(src, dst, num_vertices)
        nedge = validate_bfs(graph, args.root, parents)
        kind = "BFS"
    else:
        distances = io.read_vector(args.distances, np.float32, "distances")
        if len(distances) != num_vertices:
            raise Graph500Error(f"distances file {args.distances} holds {len(distances)} values for {num_vertices} vertices")
        if args.weights:
            weights = io.read_reference_weights(args.weights, len(src))
        if weights is None:
            raise Graph500Error(f"SSSP validation needs weights: no {args.edges}.weights; give --weights PATH")
        graph = ValidationGraph.from_edges(src, dst, num_vertices, weights)
        nedge = validate_sssp(graph, args.root, parents, distances)
        kind = "SSSP"
    print(f"valid {kind} tree from root {args.root}: nedge {nedge}")
    return 0


COMMANDS = {"run": command_run, "generate": command_generate, "validate": command_validate,
            "report": publish.report_command, "plan": plan.plan_command}


def main(argv=None):
    args = build_parser().parse_args(argv)
    try:
        return COMMANDS[args.command](args)
    except ValidationError as error:
        print(f"invalid: {error}")
        return error.exit_code
    except Graph500Error as error:
        print(f"graph500: {error}", file=sys.stderr)
        return error.exit_code
    except (KeyboardInterrupt, SystemError) as error:
        if not is_interrupt(error):
            raise
        print("graph500: interrupted", file=sys.stderr)
        return INTERRUPTED_STATUS
