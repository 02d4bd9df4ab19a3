"""``graph500 plan``: the memory a run needs per rank, per host and per GPU, by phase, without running anything.

    graph500 plan --scale S [--edgefactor E] [--ranks P] [--ranks-per-host R] [--backend cpu|gpu]
                  [--host-memory GIB] [--gpu-memory GIB] [--mpi-library openmpi|mpich] [--json]

The figures are the models the runs' own memory checks use: one process on CPUs
`graph500.kernels.cpu.backend.memory_phases`, P ranks `graph500.distributed.memory_phases` (host bytes of a
rank at kernel 1's peak and at the searches', with the MPI library's own for the other ranks of its host:
``--mpi-library``, by default the one mpi4py uses here); one GPU `graph500.kernels.gpu.backend.device_memory_plan` (device
bytes of kernel 1, the BFS pass and the SSSP pass, each with one kernel and validation, the CUDA context beside
them) and its pinned edge list, one GPU a rank `graph500.kernels.gpu.distributed_backend.device_phases` and
`memory_needs` (and NCCL's buffers beside the context). A host holds ``--ranks-per-host`` ranks (default all: one
host). With ``--host-memory`` (and on GPUs ``--gpu-memory``), the largest SCALE whose plan fits is given too (a GPU
run pins at most 90% of a host's memory). ``--json`` prints one JSON object with ``bytes_per_rank``,
``bytes_per_host`` and, on GPUs, ``bytes_per_gpu`` (integers), and the phases; on several CPU ranks
``mpi_library`` and ``mpi_peer_bytes`` (its own bytes a rank counts for the other ranks of its host); on several ranks
``whole_graph_bytes``, the part of a rank's (a GPU's) peak held for all N vertices, which more ranks do not
shrink, and on several GPUs ``kernel1_on_device_bytes``, the free memory a GPU needs for kernel 1 to keep the tuples
it receives on it (else they go to pinned host memory and kernel 1 reads them over the bus); on GPUs
``validation_on_device_bytes``, the free memory a GPU needs for the validator to keep its tuples on it (else its
passes read them from pinned host memory over the bus, every tree).
"""

import importlib.util
import json
import subprocess
import sys

from graph500 import distributed
from graph500.errors import Graph500Error
from graph500.kernels.cpu import backend as cpu_backend
from graph500.partition import VertexBlocks

MAX_SCALE = 47
GIB = 2**30


def memory_plan(scale, edgefactor=16, ranks=1, ranks_per_host=None, backend="cpu", mpi_library=None):
    """The plan of a run as a dict (see the module's docstring); Graph500Error where the run cannot be made.
    ``mpi_library`` ("openmpi", "mpich" or None: none counted): whose own memory CPU ranks count."""
    if not 1 <= scale <= MAX_SCALE:
        raise Graph500Error(f"--scale must be from 1 to {MAX_SCALE}, got {scale}")
    if edgefactor < 1 or ranks < 1 or (ranks_per_host is not None and ranks_per_host < 1):
        raise Graph500Error("--edgefactor, --ranks and --ranks-per-host must be at least 1")
    VertexBlocks(1 << scale, ranks)  # an impossible partition is refused as a run refuses it
    ranks_per_host = ranks if ranks_per_host is None else min(ranks_per_host, ranks)
    plan = {"scale": scale, "edgefactor": edgefactor, "ranks": ranks, "ranks_per_host": ranks_per_host,
            "hosts": -(-ranks // ranks_per_host), "backend": backend}
    if backend == "cpu":
        phases = (cpu_backend.memory_phases(scale, edgefactor) if ranks == 1
                  else distributed.memory_phases(scale, edgefactor, ranks, ranks_per_host, mpi_library))
        if ranks > 1:
            plan.update(mpi_library=mpi_library,
                        mpi_peer_bytes=distributed.mpi_peer_bytes(mpi_library, ranks_per_host))
        per_rank = max(phases.values())
        whole_graph = distributed.whole_graph_bytes(scale)
        plan.update(phases_on="host", phases=phases)
    else:
        from graph500.kernels.gpu import backend as gpu_backend  # CuPy's import: only for the GPUs' plans
        from graph500.kernels.gpu import distributed_backend as gpu_distributed
        context = gpu_distributed.context_bytes(ranks)
        phases = (gpu_backend.device_memory_plan(scale, edgefactor) if ranks == 1
                  else gpu_distributed.device_phases(scale, edgefactor, ranks))
        per_rank = (gpu_backend.host_memory_bytes(scale, edgefactor) if ranks == 1
                    else gpu_distributed.memory_needs(scale, edgefactor, ranks)[0])
        whole_graph = gpu_distributed.whole_graph_bytes(scale)
        plan.update(phases_on="gpu", phases=phases, context=context, bytes_per_gpu=int(max(phases.values()) + context))
        if ranks > 1:  # where kernel 1 keeps the tuples a GPU receives on it (else in host memory: slower)
            plan["kernel1_on_device_bytes"] = int(gpu_distributed.kernel1_on_device_bytes(scale, edgefactor, ranks))
        plan["validation_on_device_bytes"] = int(  # where the validator keeps its tuples on the GPU (else: slower)
            gpu_backend.validation_on_device_bytes(scale, edgefactor) if ranks == 1
            else gpu_distributed.validation_on_device_bytes(scale, edgefactor, ranks))
    if ranks > 1:  # what more ranks do not shrink
        plan["whole_graph_bytes"] = int(whole_graph)
    plan["bytes_per_rank"] = int(per_rank)
    plan["bytes_per_host"] = int(per_rank * ranks_per_host)
    plan["phases"] = {name: int(value) for name, value in plan["phases"].items()}
    return plan


def largest_scale(edgefactor, ranks, ranks_per_host, backend, host_memory, gpu_memory, mpi_library=None):
    """The largest SCALE whose plan fits ``host_memory`` bytes a host and (GPUs) ``gpu_memory`` a GPU (None: not
    bounded); 0: none. A GPU run pins its host memory, at most `gpu.backend.PINNABLE_SHARE` of it, as its own check
    allows."""
    if backend == "gpu" and host_memory is not None:
        from graph500.kernels.gpu.backend import PINNABLE_SHARE
        host_memory = int(host_memory * PINNABLE_SHARE)
    largest = 0
    for scale in range(1, MAX_SCALE + 1):
        try:
            plan = memory_plan(scale, edgefactor, ranks, ranks_per_host, backend, mpi_library)
        except Graph500Error:  # too small a graph for this many ranks
            continue
        if (host_memory is not None and plan["bytes_per_host"] > host_memory) or \
                (gpu_memory is not None and plan.get("bytes_per_gpu", 0) > gpu_memory):
            break
        largest = scale
    return largest


def fits_here(largest):
    """A memory refusal's close: the largest SCALE that fits (`largest_scale`; 0: none)."""
    return f"(the largest SCALE that fits here is {largest or 'none'})"


def plan_text(plan):
    """The plan as lines for a reader."""
    where = "a GPU" if plan["phases_on"] == "gpu" else "a rank"
    context = "CUDA context" + (" and NCCL" if plan["ranks"] > 1 else "")
    width = 2 + max(len(name) for name in list(plan["phases"]) + [context])
    lines = [f"SCALE {plan['scale']}, edgefactor {plan['edgefactor']}, {plan['backend']} backend, {plan['ranks']} "
             f"rank(s), {plan['ranks_per_host']} a host ({plan['hosts']} host(s))",
             f"{'phase':<{width}}GiB {where}"]
    lines += [f"{name:<{width}}{value / GIB:.2f}" for name, value in plan["phases"].items()]
    if "bytes_per_gpu" in plan:
        lines.append(f"{context:<{width}}{plan['context'] / GIB:.2f}")
        lines.append(f"a GPU: {plan['bytes_per_gpu'] / GIB:.2f} GiB at its peak; a rank: "
                     f"{plan['bytes_per_rank'] / GIB:.2f} GiB of pinned host memory")
    else:
        lines.append(f"a rank: {plan['bytes_per_rank'] / GIB:.2f} GiB at its peak, of which the runtime (Python, "
                     f"NumPy, Numba) {cpu_backend.RUNTIME_BYTES / GIB:.2f} GiB")
    if "whole_graph_bytes" in plan:
        lines.append(f"of which held for all N vertices on every {'GPU' if 'bytes_per_gpu' in plan else 'rank'} "
                     f"(more ranks do not shrink it): {plan['whole_graph_bytes'] / GIB:.2f} GiB")
    if plan["phases_on"] == "host" and plan["ranks"] > 1:
        if plan["mpi_library"] == "openmpi":
            lines.append(f"of which the MPI library's own for the other ranks of its host: "
                         f"{plan['mpi_peer_bytes'] / GIB:.2f} GiB (Open MPI, as measured with UCX)")
        else:
            lines.append(("the MPI library's own memory: MPICH's, within the runtime's" if plan["mpi_library"]
                          else "the MPI library's own memory: no library named, none counted")
                         + " (Open MPI ranks hold more: --mpi-library openmpi)")
    if "kernel1_on_device_bytes" in plan:
        lines.append(f"kernel 1 keeps the tuples a GPU receives on it where the GPU has "
                     f"{plan['kernel1_on_device_bytes'] / GIB:.2f} GiB (context and NCCL counted), else in pinned "
                     f"host memory, read over the bus (several times slower)")
    if "validation_on_device_bytes" in plan:
        lines.append(f"the validator keeps its tuples on the GPU where it has "
                     f"{plan['validation_on_device_bytes'] / GIB:.2f} GiB, else reads them from pinned host memory "
                     f"over the bus every tree (about half as fast)")
    lines.append(f"a host: {plan['bytes_per_host'] / GIB:.2f} GiB")
    return lines


def add_plan_parser(subparsers):
    """Add the ``plan`` command to the CLI's subparsers."""
    parser = subparsers.add_parser("plan", help="the memory a run needs per rank, host and GPU, without running it",
                                   description=__doc__.split("\n\n")[0])
    parser.add_argument("--scale", type=int, required=True, help="log2 of the number of vertices")
    parser.add_argument("--edgefactor", type=int, default=16, help="edge tuples per vertex (default 16)")
    parser.add_argument("--ranks", type=int, default=1, help="MPI ranks (default 1; on GPUs one GPU a rank)")
    parser.add_argument("--ranks-per-host", type=int, help="ranks on one host (default: all of them)")
    parser.add_argument("--backend", default="cpu", choices=("cpu", "gpu"), help="cpu (default) or gpu")
    parser.add_argument("--host-memory", type=float, metavar="GIB", help="memory of a host: say the largest SCALE")
    parser.add_argument("--gpu-memory", type=float, metavar="GIB", help="memory of a GPU: the largest SCALE fits "
                                                                        "it too (with --host-memory)")
    parser.add_argument("--mpi-library", choices=distributed.MPI_LIBRARIES,
                        help="the MPI library of CPU ranks, whose own memory they count (default: the one mpi4py "
                             "uses here, else none counted)")
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    return parser


def local_mpi_library():
    """The MPI library mpi4py uses here ("openmpi", "mpich" or None), asked in a child process: importing mpi4py's
    MPI here would initialize MPI in this process."""
    if importlib.util.find_spec("mpi4py") is None:
        return None
    ask = "import mpi4py; mpi4py.rc.initialize = False; from mpi4py import MPI; print(MPI.Get_library_version())"
    try:
        answer = subprocess.run([sys.executable, "-c", ask], capture_output=True, text=True, timeout=60)
    except (OSError, subprocess.TimeoutExpired):
        return None
    return distributed.mpi_library_kind(answer.stdout) if answer.returncode == 0 else None


def plan_command(args):
    """``graph500 plan``: print the plan (and the largest SCALE that fits). Returns 0."""
    gpu_memory = None if args.gpu_memory is None else int(args.gpu_memory * GIB)
    library = args.mpi_library
    if library is None and args.backend == "cpu" and args.ranks > 1:
        library = local_mpi_library()
    plan = memory_plan(args.scale, args.edgefactor, args.ranks, args.ranks_per_host, args.backend, library)
    if args.host_memory is not None:
        plan["largest_scale"] = largest_scale(args.edgefactor, args.ranks, args.ranks_per_host, args.backend,
                                              int(args.host_memory * GIB), gpu_memory, library)
    if args.json:
        sys.stdout.write(json.dumps(plan) + "\n")
        return 0
    lines = plan_text(plan)
    if "largest_scale" in plan:
        memory = f"{args.host_memory:g} GiB a host" + (f" and {args.gpu_memory:g} GiB a GPU" if gpu_memory else "")
        lines.append(f"largest SCALE that fits {memory}: {plan['largest_scale'] or 'none'}")
    print("\n".join(lines))
    return 0
