"""Strong and weak scaling of ``mpiexec -n P graph500 run`` on one host, optionally beside the reference program.

    python benchmarks/mpi_scaling.py [--mode strong|weak|both] [--ranks 1,2,4,8,16]
        [--scale 24 | --scales 22,24] [--base-scale 20] [--roots K] [--no-sssp]
        [--skip-validation] [--mpiexec "mpiexec --allow-run-as-root --oversubscribe"]
        [--reference PATH [--reference-ranks 4,8,16] [--repeats N]]
        [--output results.json] [--timeout SECONDS] [--core-bound]

Every run is a whole ``graph500 run`` (generation, kernel 1, every search
validated unless ``--skip-validation``) started as
``MPIEXEC -n P env NUMBA_NUM_THREADS=T python -m graph500 run ... --energy off``;
P = 1 goes through the same launcher. The numbers come from the run's JSON
record (``statistics.<pass>.TEPS.harmonic_mean``, ``construction_time``,
``graph_generation``, and when validated the median of every tree's
validation time, ``<pass>.validate_times``: the wait that grows with P, see
``graph500/validators/distributed.py``). A run that fails or times out is
shown with its error line and the others go on.

Strong scaling: one graph (``--scale``, default 24; ``--scales`` for several),
P ranks x T = cores // P Numba threads each, so every P uses the whole host.
  eff = TEPS(P) / TEPS(1) at the same SCALE. Because the cores are the same
  for every P, 1.00 means that splitting the run into P ranks costs nothing
  against one process threading over all cores; it is *not* speedup / P (the
  P = 1 run already has every core).

Weak scaling: SCALE = ``--base-scale`` (default 20) + log2 P, so the graph per
rank stays the size of the P = 1 graph, and every rank has the same T =
cores // max(P) threads (``--weak-threads``), so resources grow with P as the
graph does (on 16 cores with P up to 16: one thread a rank, P cores in use).
  eff = (TEPS(P) / P) / (TEPS(1) / 1), the Graph500 convention: TEPS(P) from
  the P-rank run of the larger graph, TEPS(1) from the 1-rank run of the base
  graph. 1.00 is perfect weak scaling. (Algebraically this is TEPS(P) /
  (P x TEPS(1)); what matters is that TEPS(1) is the base graph's.)

``--repeats N`` runs N rounds, each running every configuration once, in
order: a drift of the shared host (the one-thread P = 1 run moved 1.9x
between leases of one afternoon on the 16-core host) then hits every P
alike. A row's TEPS is the median of its runs; its efficiency is each
round's own (its P-rank run against the P = 1 run of the same round),
median and [min-max] over the rounds.

With ``--reference PATH`` (the reference's ``graph500_reference_bfs_sssp``,
see ``benchmarks/build_reference.sh``) each configuration runs a pair each
round, ours then the reference's (``MPIEXEC -n P PATH SCALE EDGEFACTOR``),
interleaved so that a drift of the machine hits both alike. The table gives
the median of each side and ``ours/ref``: the median over the pairs of the
per-pair ratio, with [min-max] over the pairs when there are several. Read
with care:
* the reference always does 64 search keys (seeds 2 and 3, fixed in its
  main.c); ours does ``--roots`` K, the first K of the same 64 keys;
* the reference is one thread per rank: with P ranks it uses P cores, while
  ours uses P x T. In weak mode (T = 1 on a host with max(P) cores) the two use
  the same cores; in strong mode only the P = cores row is core for core;
* the reference needs P to be a power of two and always runs SSSP too (the
  BFS-only binary ``graph500_reference_bfs`` may be given with ``--no-sssp``);
* ``--skip-validation`` sets SKIP_VALIDATION=1 for the reference too.
The reference on few ranks and a large graph takes hours: ``--reference-ranks``
limits the P at which it runs.

``--core-bound`` (weak mode) adds, under the table, the ceiling that the
host itself puts on weak scaling: `benchmarks/core_speeds.py`'s lockstep
bound on as many cores as the largest P uses (a level of the BFS waits for
its slowest rank, and a virtual machine's cores run equal work at unequal
speeds).

``--output PATH`` writes every run's raw numbers (and command line) as JSON,
rewritten after each run so that an interrupted sweep keeps what it measured.
Progress goes to stderr, the tables to stdout.

Before the runs the script asks the launcher, for each P, how many CPUs a rank
may use (``sched_getaffinity`` in P probe processes) and warns, and marks the
rows, where that is fewer than the threads a rank gets. Open MPI binds each
rank to one core (P <= 2) or one socket by default: give it
``--mpiexec "mpiexec --bind-to none"`` (as root also ``--allow-run-as-root``,
and ``--oversubscribe`` where P exceeds the slots it counts). MPICH's Hydra
binds nothing by default.
"""

import argparse
import json
import math
import os
import re
import shlex
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time

from tabulate import tabulate

import core_speeds  # benchmarks/core_speeds.py, beside this script

REFERENCE_KEYS = 64
CORE_BOUND_ROUNDS = 2  # --core-bound: rounds of every core busy at once
CORE_BOUND_ITERATIONS = 12_000_000  # steps of its loop (about 2 s a core on the 16-core host)
NUMBER = r"([-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?|nan|inf)"
REFERENCE_FIELDS = {
    "bfs": re.compile(r"^bfs  harmonic_mean_TEPS:\s+!\s+" + NUMBER + r"\s*$", re.M),
    "sssp": re.compile(r"^sssp harmonic_mean_TEPS:\s+!\s+" + NUMBER + r"\s*$", re.M),
    "construction_time": re.compile(r"^construction_time:\s+" + NUMBER + r"\s*$", re.M),
    "graph_generation": re.compile(r"^graph_generation:\s+" + NUMBER + r"\s*$", re.M),
    "num_mpi_processes": re.compile(r"^num_mpi_processes:\s+(\d+)\s*$", re.M),
}


def host_cores():
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)


def int_list(text):
    try:
        values = [int(part) for part in text.split(",") if part.strip()]
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a comma-separated list of integers: {text!r}")
    if not values or min(values) < 1:
        raise argparse.ArgumentTypeError(f"need positive integers: {text!r}")
    return values


def error_line(text):
    """The last meaningful line of a run's output (progress-bar carriage returns dropped)."""
    lines = [line.rsplit("\r", 1)[-1].strip() for line in text.splitlines()]
    lines = [line for line in lines if line]
    for line in reversed(lines):
        if re.search(r"error|fault|fail|abort|invalid|killed|refus|not enough|memory", line, re.I):
            return line[:300]
    return lines[-1][:300] if lines else "(no output)"


def launch(command, environment, timeout):
    """Run ``command`` in its own process group; (returncode or None on timeout, stdout, stderr, seconds)."""
    start = time.perf_counter()
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                               env=environment, start_new_session=True)
    try:
        stdout, stderr = process.communicate(timeout=timeout)
        return process.returncode, stdout, stderr, time.perf_counter() - start
    except subprocess.TimeoutExpired:
        for sig in (signal.SIGTERM, signal.SIGKILL):  # the launcher and every rank it started
            try:
                os.killpg(process.pid, sig)
            except ProcessLookupError:
                break
            try:
                stdout, stderr = process.communicate(timeout=10)
                break
            except subprocess.TimeoutExpired:
                continue
        else:
            stdout, stderr = "", ""
        return None, stdout or "", stderr or "", time.perf_counter() - start


def run_ours(args, scale, ranks, threads):
    """One ``graph500 run`` on ``ranks`` ranks; a dict of its numbers (``error`` set when it failed)."""
    with tempfile.TemporaryDirectory(prefix="mpi-scaling-") as folder:
        record_path = os.path.join(folder, "run.json")
        command = [*args.launcher, "-n", str(ranks), "env", f"NUMBA_NUM_THREADS={threads}",
                   sys.executable, "-m", "graph500", "run", "--scale", str(scale),
                   "--edgefactor", str(args.edgefactor), "--roots", str(args.roots),
                   "--energy", "off", "--no-progress", "--json", record_path]
        if args.no_sssp:
            command.append("--no-sssp")
        if args.skip_validation:
            command.append("--skip-validation")
        environment = dict(os.environ, NUMBA_NUM_THREADS=str(threads))
        code, stdout, stderr, seconds = launch(command, environment, args.timeout)
        result = {"program": "ours", "scale": scale, "ranks": ranks, "threads_per_rank": threads,
                  "command": shlex.join(command), "wall_seconds": seconds, "error": None}
        if code is None:
            result["error"] = f"timed out after {args.timeout:g} s"
        elif code != 0:
            result["error"] = f"exit {code}: {error_line(stderr or stdout)}"
        elif not os.path.exists(record_path):
            result["error"] = f"no JSON record: {error_line(stderr or stdout)}"
        if result["error"]:
            return result
        with open(record_path) as handle:
            record = json.load(handle)
    stats = record.get("statistics") or {}
    extensions = record.get("extensions") or {}
    result.update({
        "bfs": ((stats.get("bfs") or {}).get("TEPS") or {}).get("harmonic_mean"),
        "sssp": ((stats.get("sssp") or {}).get("TEPS") or {}).get("harmonic_mean"),
        "construction_time": record.get("construction_time"),
        "graph_generation": record.get("graph_generation"),
        "num_mpi_processes": record.get("num_mpi_processes"),
        "validation": extensions.get("validation"),
        "mpi_library": extensions.get("mpi_library"),
        "reported_threads_per_rank": extensions.get("threads_per_rank"),
        "num_roots": len(record.get("roots") or []),
        # seconds a tree of the run's validation (BFS and SSSP trees together), median
        "validation_seconds": median(seconds for kind in ("bfs", "sssp")
                                     for seconds in (record.get(kind) or {}).get("validate_times") or []),
    })
    if result["num_mpi_processes"] != ranks:
        result["error"] = (f"the run reports num_mpi_processes {result['num_mpi_processes']}, not {ranks}: "
                           "the launcher's MPI is not the one mpi4py was built for")
    elif not args.skip_validation and result["validation"] != "passed":
        result["error"] = f"validation: {result['validation']}"
    return result


def run_reference(args, scale, ranks):
    """One run of the reference binary on ``ranks`` ranks; a dict of its numbers."""
    command = [*args.launcher, "-n", str(ranks), args.reference, str(scale), str(args.edgefactor)]
    environment = dict(os.environ)
    environment.pop("SKIP_BFS", None)
    if args.skip_validation:
        environment["SKIP_VALIDATION"] = "1"
    else:
        environment.pop("SKIP_VALIDATION", None)
    code, stdout, stderr, seconds = launch(command, environment, args.timeout)
    result = {"program": "reference", "scale": scale, "ranks": ranks, "threads_per_rank": 1,
              "command": shlex.join(command), "wall_seconds": seconds, "error": None,
              "num_roots": REFERENCE_KEYS}
    for name, pattern in REFERENCE_FIELDS.items():
        matches = pattern.findall(stdout)
        result[name] = (int if name == "num_mpi_processes" else float)(matches[-1]) if matches else None
    if code is None:
        result["error"] = f"timed out after {args.timeout:g} s"
    elif code != 0:
        result["error"] = f"exit {code}: {error_line(stderr + stdout)}"
    elif result["bfs"] is None:
        result["error"] = f"no report: {error_line(stdout + stderr)}"
    elif result["num_mpi_processes"] != ranks:
        result["error"] = f"the reference reports num_mpi_processes {result['num_mpi_processes']}, not {ranks}"
    return result


def probe_affinity(args, ranks):
    """The fewest CPUs any rank may run on when the launcher starts ``ranks`` ranks (None if the probe fails)."""
    code = "import os; os.write(1, b'cpus %d\\n' % len(os.sched_getaffinity(0)))"  # one write: no interleaving
    command = [*args.launcher, "-n", str(ranks), sys.executable, "-c", code]
    returncode, stdout, _, _ = launch(command, dict(os.environ), 120)
    counts = [int(value) for value in re.findall(r"^cpus (\d+)$", stdout, re.M)]
    return min(counts) if returncode == 0 and len(counts) == ranks else None


def median(values):
    values = [value for value in values if value is not None]
    return statistics.median(values) if values else None


def ratio_cell(pairs, kind):
    """``median [min-max]`` of ours/ref over the pairs where both sides have a number."""
    ratios = [ours[kind] / ref[kind] for ours, ref in pairs
              if not ours["error"] and not ref["error"] and ours.get(kind) and ref.get(kind)]
    if not ratios:
        return None, None, "-"
    return statistics.median(ratios), (min(ratios), max(ratios)), spread_text(ratios)


def spread_text(values):
    """``median [min-max]`` of ``values`` (the median alone for one value, ``-`` for none)."""
    if not values:
        return "-"
    middle = f"{statistics.median(values):.2f}"
    return middle if len(values) == 1 else f"{middle} [{min(values):.2f}-{max(values):.2f}]"


def number(value, spec=".3g"):
    return "-" if value is None else format(value, spec)


def configurations(args, cores):
    """(mode, scale, ranks, threads per rank) in the order they run."""
    out = []
    if args.mode in ("strong", "both"):
        for scale in args.scales:
            for ranks in args.ranks:
                out.append(("strong", scale, ranks, max(1, cores // ranks)))
    if args.mode in ("weak", "both"):
        threads = args.weak_threads or max(1, cores // max(args.ranks))
        for ranks in args.ranks:
            out.append(("weak", args.base_scale + int(math.log2(ranks)), ranks, threads))
    return out


def with_reference(args, ranks):
    """Whether the reference runs beside ours at ``ranks``."""
    return bool(args.reference) and (args.reference_ranks is None or ranks in args.reference_ranks)


def write_output(path, payload):
    if not path:
        return
    folder = os.path.dirname(os.path.abspath(path))
    handle, temporary = tempfile.mkstemp(dir=folder, prefix=".mpi-scaling-", suffix=".json")
    with os.fdopen(handle, "w") as stream:
        json.dump(payload, stream, indent=1)
        stream.write("\n")
    os.replace(temporary, path)


def weak_core_bound(busy_cores):
    """The line of `core_speeds` for the first ``busy_cores`` cores this process may use: what a computation in
    lockstep on that many cores keeps of one core's speed alone, before communicating (weak mode's ceiling)."""
    cores = sorted(os.sched_getaffinity(0))[:busy_cores]
    alone, together = core_speeds.measure(cores, CORE_BOUND_ROUNDS, CORE_BOUND_ITERATIONS)
    return (f"{len(cores)} cores, one integer loop pinned to each (benchmarks/core_speeds.py), "
            f"{core_speeds.bound_line(alone, together)}")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--mode", choices=("strong", "weak", "both"), default="both")
    parser.add_argument("--ranks", type=int_list, default=[1, 2, 4, 8, 16],
                        help="numbers of MPI ranks, comma-separated (default 1,2,4,8,16)")
    parser.add_argument("--scale", type=int, default=24, help="strong scaling's SCALE (default 24)")
    parser.add_argument("--scales", type=int_list, help="several strong-scaling SCALEs, comma-separated")
    parser.add_argument("--base-scale", type=int, default=20,
                        help="weak scaling's SCALE at P = 1; P ranks run base + log2 P (default 20)")
    parser.add_argument("--edgefactor", type=int, default=16)
    parser.add_argument("--roots", type=int, default=64, help="search keys of our runs (the reference: 64)")
    parser.add_argument("--no-sssp", action="store_true", help="BFS only (our runs)")
    parser.add_argument("--skip-validation", action="store_true",
                        help="no validation, ours and the reference's (results not official)")
    parser.add_argument("--cores", type=int, default=host_cores(),
                        help="cores shared out as threads (default: this process's CPUs, %(default)s)")
    parser.add_argument("--weak-threads", type=int, help="threads per rank in weak mode (default cores // max P)")
    parser.add_argument("--mpiexec", default="mpiexec", help='launcher command (default "mpiexec")')
    parser.add_argument("--reference", metavar="PATH", help="the reference's graph500_reference_bfs_sssp binary")
    parser.add_argument("--reference-ranks", type=int_list,
                        help="run the reference only at these P (default: every P)")
    parser.add_argument("--repeats", type=int, default=1,
                        help="rounds: every configuration runs once a round (with --reference, a pair)")
    parser.add_argument("--output", metavar="PATH", help="write every run's raw numbers as JSON")
    parser.add_argument("--timeout", type=float, default=3600.0, help="seconds per run (default 3600)")
    parser.add_argument("--core-bound", action="store_true",
                        help="weak mode: also print the lockstep bound of benchmarks/core_speeds.py on the cores "
                             "the largest P uses")
    args = parser.parse_args()
    args.scales = args.scales or [args.scale]
    args.launcher = shlex.split(args.mpiexec)
    if not args.launcher or shutil.which(args.launcher[0]) is None:
        parser.error(f"--mpiexec {args.mpiexec!r}: no such program")
    args.launcher[0] = shutil.which(args.launcher[0])  # as this process sees PATH (pyenv puts its own bin first)
    if any(ranks & (ranks - 1) for ranks in args.ranks) and args.mode != "strong":
        parser.error("weak scaling needs every P to be a power of two (SCALE = base + log2 P)")
    if args.reference:
        args.reference = os.path.abspath(args.reference)
        if not os.access(args.reference, os.X_OK):
            parser.error(f"--reference {args.reference}: not an executable file")
    if args.repeats < 1:
        parser.error("--repeats must be at least 1")

    cores = args.cores
    plan = configurations(args, cores)
    oversubscribed = [(ranks, threads) for _, _, ranks, threads in plan if ranks * threads > cores]
    print(f"# {cores} cores; launcher: {shlex.join(args.launcher)}; ours: {args.roots} search keys, "
          f"{'BFS only' if args.no_sssp else 'BFS and SSSP'}, "
          f"{'validation skipped' if args.skip_validation else 'every search validated'}", file=sys.stderr)
    if oversubscribed:
        print(f"# warning: P x threads exceeds the {cores} cores for (P, threads) = "
              f"{sorted(set(oversubscribed))}: those runs are oversubscribed", file=sys.stderr)

    # Open MPI binds each rank to a core (P <= 2) or a socket by default: the threads would share it.
    affinity = {ranks: probe_affinity(args, ranks) for ranks in sorted({ranks for _, _, ranks, _ in plan})}
    print("# CPUs a rank may use, per P: " + ", ".join(f"P={ranks}: {number(count, 'd')}"
                                                     for ranks, count in affinity.items()), file=sys.stderr)
    bound = sorted({(ranks, threads, affinity[ranks]) for _, _, ranks, threads in plan
                    if affinity[ranks] is not None and affinity[ranks] < threads})
    for ranks, threads, count in bound:
        print(f"# warning: with P={ranks} the launcher lets a rank use {count} CPU(s) but it gets {threads} "
              "threads (Open MPI: add --bind-to none to --mpiexec)", file=sys.stderr)

    runs, rows = [], []
    payload = {"arguments": {key: value for key, value in vars(args).items() if key != "launcher"},
               "cores": cores, "cpus_per_rank": affinity, "runs": runs, "configurations": rows}
    # Round after round, every configuration once (its reference run right after ours): a drift of the shared
    # host then hits every P alike, and each round's efficiency compares runs of the same minutes.
    ours_runs = {configuration: [] for configuration in plan}
    pairs = {configuration: [] for configuration in plan}
    for repeat in range(args.repeats):
        for configuration in plan:
            mode, scale, ranks, threads = configuration
            sides = [("ours", lambda: run_ours(args, scale, ranks, threads))]
            if with_reference(args, ranks):
                sides.append(("reference", lambda: run_reference(args, scale, ranks)))
            pair = {}
            for side, function in sides:
                print(f"{mode} SCALE {scale} P {ranks}{f' x {threads} threads' if side == 'ours' else ''} "
                      f"{side} #{repeat + 1} ...", end=" ", file=sys.stderr, flush=True)
                result = function()
                result.update(mode=mode, repeat=repeat)
                runs.append(result)
                pair[side] = result
                if result["error"]:
                    print(f"FAILED ({result['wall_seconds']:.0f} s): {result['error']}", file=sys.stderr)
                else:
                    print(f"bfs {number(result['bfs'])} sssp {number(result['sssp'])} TEPS "
                          f"({result['wall_seconds']:.0f} s)", file=sys.stderr)
                write_output(args.output, payload)
            ours_runs[configuration].append(pair["ours"])
            if "reference" in pair:
                pairs[configuration].append((pair["ours"], pair["reference"]))

    for configuration in plan:
        mode, scale, ranks, threads = configuration
        good = [run for run in ours_runs[configuration] if not run["error"]]
        row = {"mode": mode, "scale": scale, "ranks": ranks, "threads_per_rank": threads,
               "cpus_per_rank": affinity[ranks], "runs": len(ours_runs[configuration]),
               "failed": len(ours_runs[configuration]) - len(good),
               "error": next((run["error"] for run in ours_runs[configuration] if run["error"]), None)}
        for kind in ("bfs", "sssp", "construction_time", "graph_generation", "validation_seconds"):
            row[kind] = median(run.get(kind) for run in good)
        if with_reference(args, ranks):
            reference_runs = [reference for _, reference in pairs[configuration]]
            row["reference_error"] = next((run["error"] for run in reference_runs if run["error"]), None)
            for kind in ("bfs", "sssp"):
                row[f"reference_{kind}"] = median(run.get(kind) for run in reference_runs if not run["error"])
                row[f"ratio_{kind}"], row[f"ratio_{kind}_range"], row[f"ratio_{kind}_text"] = ratio_cell(
                    pairs[configuration], kind)
        # Efficiency per round against the P = 1 run of the same series and round (strong: same SCALE; weak:
        # the base SCALE), then its median and spread over the rounds.
        base = next((other for other in plan if other[0] == mode and other[2] == 1
                     and (mode == "weak" or other[1] == scale)), None)
        for kind in ("bfs", "sssp"):
            values = []
            for repeat, run in enumerate(ours_runs[configuration]):
                base_run = ours_runs[base][repeat] if base else None
                if base_run and not run["error"] and not base_run["error"] and run.get(kind) and base_run.get(kind):
                    values.append(run[kind] / base_run[kind] / (ranks if mode == "weak" else 1))
            row[f"efficiency_{kind}"] = median(values)
            row[f"efficiency_{kind}_text"] = spread_text(values)
        rows.append(row)
    write_output(args.output, payload)

    show_sssp = not args.no_sssp
    for mode in ("strong", "weak"):
        mode_rows = [row for row in rows if row["mode"] == mode]
        if not mode_rows:
            continue
        headers = ["SCALE", "P", "thr/rank", "BFS TEPS", "BFS eff"]
        if show_sssp:
            headers += ["SSSP TEPS", "SSSP eff"]
        headers += ["construction s", "generation s"] + ([] if args.skip_validation else ["validation s/tree"])
        if args.reference:
            headers += ["ref BFS TEPS", "BFS ours/ref"]
            if show_sssp:
                headers += ["ref SSSP TEPS", "SSSP ours/ref"]
        headers.append("status")
        table = []
        for row in mode_rows:
            line = [row["scale"], row["ranks"], row["threads_per_rank"], number(row["bfs"]), row["efficiency_bfs_text"]]
            if show_sssp:
                line += [number(row["sssp"]), row["efficiency_sssp_text"]]
            line += [number(row["construction_time"], ".3g"), number(row["graph_generation"], ".3g")]
            if not args.skip_validation:
                line.append(number(row["validation_seconds"], ".3g"))
            if args.reference:
                present = "reference_bfs" in row
                line += [number(row.get("reference_bfs")) if present else "not run",
                         row.get("ratio_bfs_text", "-")]
                if show_sssp:
                    line += [number(row.get("reference_sssp")) if present else "not run",
                             row.get("ratio_sssp_text", "-")]
            status = "ok" if not row["error"] else f"FAILED {row['failed']}/{row['runs']}: {row['error']}"
            if row["cpus_per_rank"] is not None and row["cpus_per_rank"] < row["threads_per_rank"]:
                status += f" (ranks bound to {row['cpus_per_rank']} CPU(s))"
            if row.get("reference_error"):
                status += f"; reference: {row['reference_error']}"
            line.append(status)
            table.append(line)
        if mode == "strong":
            title = (f"Strong scaling: P ranks x (cores {cores} // P) threads on one graph; "
                     "eff = TEPS(P) / TEPS(1), same cores for every P (1.00 = no cost of distribution)")
        else:
            title = (f"Weak scaling: SCALE = {args.base_scale} + log2 P, {mode_rows[0]['threads_per_rank']} "
                     "thread(s) per rank; eff = (TEPS(P) / P) / TEPS(1 rank, base SCALE) (1.00 = perfect)")
        print(f"\n{title}")
        print(f"TEPS: harmonic mean over {args.roots} search keys (ours), median of {args.repeats} run(s); eff: "
              f"median over the {args.repeats} round(s) of each round's own efficiency [min-max]")
        if args.reference:
            print(f"reference: {REFERENCE_KEYS} search keys always, 1 thread per rank (P cores); "
                  f"ours/ref = median over {args.repeats} interleaved pair(s) [min-max]")
        print(tabulate(table, headers=headers, disable_numparse=True))
        if mode == "weak" and args.core_bound:
            print(weak_core_bound(max(row["ranks"] * row["threads_per_rank"] for row in mode_rows)))
    if args.output:
        print(f"\nraw numbers: {args.output}")
    return 0 if all(not row["error"] for row in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
