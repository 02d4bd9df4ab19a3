"""``graph500 report``: run records turned into tables, plots and pages, in the manner of the Graph500 lists.

    graph500 report RECORD... [--format markdown|html|csv|latex] [--all]
                    [--baseline RECORD] [--plots DIR] [--output PATH]

Each RECORD is a JSON run record (schema ``graph500-run/1``, see
`graph500.run_report`) or a directory, which stands for its ``*.json`` files in
name order (record names sort by date).

A configuration is what the lists rank: backend, device model, ranks (MPI
processes; one GPU each on the GPU backend), kernels and edgefactor. The
report opens with a summary, one row per configuration: its largest SCALE
and there the BFS and SSSP GTEPS (harmonic means, three significant
figures) and GTEPS/W, and the run it comes from; best BFS first within each
backend. The runs follow, by default the newest record of each
configuration and SCALE (``--all``: every record), numbered in that order:
device (shortened to its model and memory), ranks, kernels, SCALE, GTEPS
with their harmonic standard deviation, GTEPS/W, construction time, device
memory peak, validation and date; a column that is the same on every row is
stated once above the table. ``--baseline`` adds the ratio of each run's
TEPS and TEPS/W to the baseline run's.

Formats: ``markdown`` is a whole document (summary, runs, where each run was
measured, the plots when ``--plots`` is given), ``html`` one self-contained
page with the plots first (embedded as base64 PNG), then the same tables,
sized for a laptop screen and for print; ``csv`` and ``latex`` the runs with
every field (CSV with full-precision numbers); `graph500.pages` makes them
(this module reads the records and runs the command).  The document goes to
``--output`` (written atomically) or to stdout; ``--plots DIR`` writes the
PNG files of `graph500.plots` there.  ``results/README.md`` and
``results/index.html`` are made by ``results/make.sh``.
"""

import dataclasses
import datetime
import json
import os
import re
import sys

from graph500 import pages, plots, run_report
from graph500.errors import Graph500Error

FORMATS = ("markdown", "html", "csv", "latex")


# ---------------------------------------------------------------- records

@dataclasses.dataclass
class PassSummary:
    """What the report shows of one pass of a run."""

    harmonic_mean: float
    harmonic_stddev: float
    teps_per_watt: float
    search_teps: list
    trace: list


@dataclasses.dataclass
class Run:
    """One run record, reduced to what the report shows; ``number`` is its table row."""

    number: int
    source: str
    created: datetime.datetime
    machine: dict
    device: str
    backend: str
    bfs_kernel: str
    sssp_kernel: str
    scale: int
    edgefactor: int
    ranks: int
    construction_time: float
    device_memory_peak: float  # bytes (GPU runs that measured it), else None
    validation: str
    energy_meters: str
    meters: list
    passes: dict

    @property
    def label(self):
        return f"#{self.number}"

    def kernel(self, kind):
        """The kernel of pass ``kind`` (``bfs`` or ``sssp``)."""
        return self.bfs_kernel if kind == "bfs" else self.sssp_kernel

    @property
    def device_model(self):
        """The device, shortened to its model and memory: ``H100 80GB HBM3``, ``H200 (140 GiB)``, ``AMD EPYC, 2
        threads`` (the ranks are a column of their own)."""
        return device_model(self.device)

    @property
    def kernels(self):
        """Both kernels, without the prefixes the backend and the ranks already say (``gpu-``, ``distributed-``)."""
        return " / ".join(_short_kernel(name, self.backend) for name in (self.bfs_kernel, self.sssp_kernel))

    @property
    def configuration(self):
        """What the lists rank: backend, device model, ranks, kernels and edgefactor."""
        return (self.backend, self.device_model, self.ranks, self.bfs_kernel, self.sssp_kernel, self.edgefactor)


def device_model(device):
    """A record's device string shortened to the model (and memory, where the string gives it)."""
    several = re.match(r"\d+ ranks x 1 GPU: (.*)", device)
    if several:  # "2 ranks x 1 GPU: NVIDIA H200 (0000:00:06.0), ...": the models, without their bus ids
        models = sorted({re.sub(r"\s*\([^)]*\)$", "", part.strip()) for part in several.group(1).split(",")})
        return " + ".join(_without_vendor(model) for model in models)
    parts = [part.strip() for part in device.split(",")]
    if len(parts) == 1 and device.startswith("NVIDIA "):  # the model alone
        return _without_vendor(device)
    if re.search(r"\bGiB\b", parts[1] if len(parts) > 1 else ""):  # a GPU: model, memory, capability, SMs
        model = _without_vendor(parts[0])
        return model if re.search(r"\d+\s*GB\b", model) else f"{model} ({parts[1]})"
    threads = re.fullmatch(r"(?:\d+ ranks x )?(\d+) Numba threads", parts[1]) if len(parts) > 1 else None
    if threads:  # "AMD EPYC, 2 Numba threads", "AMD EPYC, 2 ranks x 1 Numba threads": the threads of a rank
        count = int(threads.group(1))
        return f"{parts[0]}, {count} thread{'s' if count > 1 else ''}"
    return device


def _without_vendor(model):
    return re.sub(r"^NVIDIA\s+", "", model)


def _short_kernel(name, backend):
    for prefix in (f"{backend}-", "distributed-"):
        name = name[len(prefix):] if name.startswith(prefix) else name
    return name


def record_paths(arguments):
    """The record files named by ``arguments``; a directory gives its ``*.json`` in name order."""
    paths = []
    for argument in arguments:
        if os.path.isdir(argument):
            paths += sorted(os.path.join(argument, name) for name in os.listdir(argument)
                            if name.endswith(".json"))
        else:
            paths.append(argument)
    if not paths:
        raise Graph500Error(f"no run records in {', '.join(arguments)}")
    return paths


def load_record(path):
    """The record in ``path``; a missing, unreadable or foreign file is a Graph500Error."""
    try:
        with open(path, encoding="utf-8") as f:
            record = json.load(f)
    except OSError as error:
        raise Graph500Error(f"cannot read record {path}: {error.strerror}") from None
    except (UnicodeDecodeError, json.JSONDecodeError) as error:
        raise Graph500Error(f"{path} is not a JSON run record: {error}") from None
    schema = record.get("schema") if isinstance(record, dict) else None
    if schema != run_report.SCHEMA:
        raise Graph500Error(f"{path} is not a run record: schema {schema!r}, expected {run_report.SCHEMA!r}")
    return record


def _lookup(record, source, dotted):
    """``record[a][b]...`` for ``dotted`` ``"a.b..."``; a missing key is a Graph500Error."""
    value = record
    for key in dotted.split("."):
        if not isinstance(value, dict) or key not in value:
            raise Graph500Error(f"{source}: the record has no {dotted}")
        value = value[key]
    return value


def _search_teps(record, source, kind):
    """nedge / time of every search of a pass that has a measurable time."""
    times = _lookup(record, source, f"{kind}.times")
    nedges = _lookup(record, source, f"{kind}.nedges")
    if len(times) != len(nedges):
        raise Graph500Error(f"{source}: {kind} has {len(times)} times but {len(nedges)} nedges")
    return [nedge / seconds for seconds, nedge in zip(times, nedges) if seconds > 0]


def _checked_trace(trace, source, kind):
    """The pass's per-level trace, checked for shape; None when the run was not traced."""
    if trace is None:
        return None
    keys = {"direction", "frontier", "edges", "seconds"}
    if not (isinstance(trace, list) and all(
            isinstance(levels, list) and all(isinstance(level, dict) and keys <= level.keys()
                                             for level in levels) for levels in trace)):
        raise Graph500Error(f"{source}: {kind}.trace is not a list of searches, each a list of "
                            f"levels with {', '.join(sorted(keys))}")
    return trace


def _pass_summary(record, source, kind):
    """A `PassSummary` of pass ``kind``; None when the run did not have that pass."""
    if record.get(kind) is None:
        return None
    energy = (record.get("energy") or {}).get(kind) or {}
    return PassSummary(
        harmonic_mean=_lookup(record, source, f"statistics.{kind}.TEPS.harmonic_mean"),
        harmonic_stddev=_lookup(record, source, f"statistics.{kind}.TEPS.harmonic_stddev"),
        teps_per_watt=energy.get("TEPS_per_W"),
        search_teps=_search_teps(record, source, kind),
        trace=_checked_trace(record[kind].get("trace"), source, kind),
    )


def _validation(record):
    """``passed`` when every pass that ran was validated, else ``skipped``."""
    validated = [record[kind].get("validate_times") is not None for kind in pages.PASSES if record.get(kind)]
    return "passed" if all(validated) else "skipped"


def _energy_meters(record):
    """The meters summed, or why there were none."""
    energy = record.get("energy")
    if energy is None:
        return "not measured"
    return " + ".join(energy.get("meters", [])) or "; ".join(energy.get("unavailable", [])) or "none"


def _run(record, source, number):
    """The `Run` of a record whose fields have the shapes the schema gives them."""
    extensions = record.get("extensions") or {}
    passes = {kind: _pass_summary(record, source, kind) for kind in pages.PASSES}
    if passes["bfs"] is None:
        raise Graph500Error(f"{source}: the record has no bfs pass")
    return Run(
        number=number,
        source=os.path.basename(source),
        created=datetime.datetime.fromisoformat(_lookup(record, source, "created")),
        machine=record.get("machine") or {},
        device=extensions.get("device", "unknown"),
        backend=extensions.get("backend", "unknown"),
        bfs_kernel=extensions.get("bfs_kernel", "unknown"),
        sssp_kernel=extensions.get("sssp_kernel", "none"),
        scale=int(_lookup(record, source, "config.scale")),
        edgefactor=int(_lookup(record, source, "config.edgefactor")),
        ranks=int(record.get("num_mpi_processes", 1)),
        construction_time=float(_lookup(record, source, "construction_time")),
        device_memory_peak=_optional_number(extensions.get("device_memory_peak_bytes")),
        validation=_validation(record),
        energy_meters=_energy_meters(record),
        meters=list((record.get("energy") or {}).get("meters") or []),
        passes=passes,
    )


def _optional_number(value):
    """A record's optional numeric field as a float, or None where the run did not measure it."""
    return None if value is None else float(value)


def run_from_record(record, source, number):
    """The `Run` of a loaded record; a field missing or of the wrong shape is a Graph500Error."""
    try:
        return _run(record, source, number)
    except (TypeError, ValueError, AttributeError) as error:
        raise Graph500Error(f"{source}: malformed record ({error})") from None


def load_runs(paths):
    """The `Run` of each record file, numbered from 1 in the given order."""
    return [run_from_record(load_record(path), path, number)
            for number, path in enumerate(paths, start=1)]


# ---------------------------------------------------------------- the command

def add_report_parser(subparsers):
    """Add the ``report`` command to the CLI's subparsers."""
    parser = subparsers.add_parser("report", help="tables, plots and pages from JSON run records",
                                   description=__doc__.split("\n\n")[0])
    parser.add_argument("records", nargs="+", metavar="RECORD",
                        help="JSON run record, or a directory of them")
    parser.add_argument("--format", default="markdown", choices=FORMATS, help="output format (default markdown)")
    parser.add_argument("--all", action="store_true",
                        help="every record (default: the newest of each configuration and SCALE)")
    parser.add_argument("--baseline", metavar="RECORD", help="add ratio columns against this run")
    parser.add_argument("--plots", metavar="DIR", help="write PNG plots to DIR (needs matplotlib)")
    parser.add_argument("--output", metavar="PATH", help="write the report to PATH (default stdout)")
    return parser


def _figures(args, runs):
    """The plots the command needs: for ``--plots``, and for an html page when matplotlib is there."""
    if args.plots or (args.format == "html" and plots.available()):
        return plots.figures(runs)
    if args.format == "html":
        print(f"graph500: no plots in the page: {plots.MISSING_MESSAGE}", file=sys.stderr)
    return []


def _write_plots(directory, figures):
    for figure in figures:
        path = os.path.join(directory, figure.filename)
        run_report.write_atomic(path, figure.png)
        print(f"graph500: wrote {path}", file=sys.stderr)


def _figure_link(args):
    """How the markdown page refers to a figure: relative to the page's directory."""
    page_directory = os.path.dirname(os.path.abspath(args.output or "page"))
    return lambda figure: os.path.relpath(os.path.join(args.plots, figure.filename), page_directory)


def render_document(args, runs, shown, baseline, figures):
    """The report text in ``args.format``: of the ``shown`` runs, ``runs`` being every record read."""
    if args.format == "csv":
        return pages.render_csv(pages.table_rows(shown, baseline))
    if args.format == "latex":
        return pages.render_latex(pages.table_rows(shown, baseline))
    if args.format == "html":
        return pages.html_document(runs, shown, figures, baseline)
    return pages.markdown_document(runs, shown, figures, baseline, _figure_link(args))


def report_command(args):
    """``graph500 report``: load the records, write plots and the document. Returns 0."""
    runs = load_runs(record_paths(args.records))
    shown = pages.shown_runs(runs, args.all)
    baseline = run_from_record(load_record(args.baseline), args.baseline, 0) if args.baseline else None
    figures = _figures(args, shown)
    if args.plots:
        _write_plots(args.plots, figures)
    document = render_document(args, runs, shown, baseline, figures)
    if args.output:
        run_report.write_atomic(args.output, document)
        print(f"graph500: wrote {args.output}", file=sys.stderr)
    else:
        sys.stdout.write(document)
    return 0
