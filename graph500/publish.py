"""``graph500 report``: run records turned into tables, plots and pages, in the manner of the Graph500 lists.

    graph500 report RECORD... [--format markdown|html|csv|latex] [--all]
                    [--baseline RECORD] [--plots DIR] [--output PATH]

Each RECORD is a JSON run record (schema ``graph500-run/1``, see
`graph500.report`) or a directory, which stands for its ``*.json`` files in
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
every field (CSV with full-precision numbers).  The document goes to
``--output`` (written atomically) or to stdout; ``--plots DIR`` writes the
PNG files of `graph500.plots` there.  ``results/README.md`` and
``results/index.html`` are made by ``results/make.sh``.
"""

import base64
import csv
import dataclasses
import datetime
import html
import io
import json
import os
import re
import sys
import textwrap

from tabulate import tabulate

from graph500 import plots, report
from graph500.errors import Graph500Error

FORMATS = ("markdown", "html", "csv", "latex")
TABLE_FORMATS = {"markdown": "github", "html": "html", "latex": "latex_booktabs"}
PASSES = ("bfs", "sssp")
MISSING = "–"


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
    if schema != report.SCHEMA:
        raise Graph500Error(f"{path} is not a run record: schema {schema!r}, expected {report.SCHEMA!r}")
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
    validated = [record[kind].get("validate_times") is not None for kind in PASSES if record.get(kind)]
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
    passes = {kind: _pass_summary(record, source, kind) for kind in PASSES}
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


def shown_runs(runs, every_record=False):
    """The runs a report shows, numbered from 1 in their order: the newest of each configuration and SCALE (or,
    ``every_record``, all), by configuration in the summary's order, then by SCALE and date."""
    if not every_record:
        newest = {}
        for run in runs:
            key = run.configuration + (run.scale,)
            if key not in newest or run.created >= newest[key].created:
                newest[key] = run
        runs = list(newest.values())
    rank = {run.configuration: position for position, run in enumerate(summary_runs(runs))}
    ordered = sorted(runs, key=lambda run: (rank[run.configuration], run.scale, run.created))
    return [dataclasses.replace(run, number=number) for number, run in enumerate(ordered, start=1)]


def summary_runs(runs):
    """One run per configuration: the newest at its largest SCALE; configurations of a backend by their best
    BFS TEPS there, the backends by their best."""
    best = {}
    for run in runs:
        held = best.get(run.configuration)
        if held is None or (run.scale, run.created) > (held.scale, held.created):
            best[run.configuration] = run
    chosen = list(best.values())
    backend_best = {backend: max(run.passes["bfs"].harmonic_mean for run in chosen if run.backend == backend)
                    for backend in {run.backend for run in chosen}}
    return sorted(chosen, key=lambda run: (-backend_best[run.backend], run.backend, -run.passes["bfs"].harmonic_mean))


# ---------------------------------------------------------------- the table

def _si(value):
    """A number with an SI prefix and four significant digits: ``1.234 G``.

    The prefix is chosen after rounding, so 999999999.9 is ``1 G``, not ``1000 M``.
    """
    for factor, prefix in ((1e12, " T"), (1e9, " G"), (1e6, " M"), (1e3, " k"), (1.0, "")):
        digits = f"{value / factor:.4g}"
        if abs(float(digits)) >= 1.0:
            return digits + prefix
    return f"{value:.4g}"


# (key, title, display format) of each table column, in order.
COLUMNS = (
    ("run", "#", str),
    ("machine", "machine", str),
    ("device", "device", str),
    ("backend", "backend", str),
    ("ranks", "ranks", str),
    ("kernels", "kernels (BFS / SSSP)", str),
    ("scale", "SCALE", str),
    ("edgefactor", "edgefactor", str),
    ("bfs_teps", "BFS TEPS", _si),
    ("bfs_teps_hstddev", "BFS hstddev", _si),
    ("sssp_teps", "SSSP TEPS", _si),
    ("sssp_teps_hstddev", "SSSP hstddev", _si),
    ("bfs_teps_per_w", "BFS TEPS/W", _si),
    ("sssp_teps_per_w", "SSSP TEPS/W", _si),
    ("construction_s", "construction s", "{:.3g}".format),
    ("device_memory_peak_gib", "device memory peak GiB", "{:.1f}".format),
    ("validation", "validation", str),
    ("date", "date (UTC)", str),
)
RATIO_KEYS = ("bfs_teps", "sssp_teps", "bfs_teps_per_w", "sssp_teps_per_w")
RATIO_COLUMNS = tuple((f"{key}_vs_baseline", f"{title} vs baseline", "{:.3g}".format)
                      for key, title, _ in COLUMNS if key in RATIO_KEYS)


def _pass_values(kind, summary):
    """The table values of one pass (None where the run has no such pass or no energy)."""
    return {
        f"{kind}_teps": summary and summary.harmonic_mean,
        f"{kind}_teps_hstddev": summary and summary.harmonic_stddev,
        f"{kind}_teps_per_w": summary and summary.teps_per_watt,
    }


def table_row(run):
    """The raw values of a run's row, keyed as `COLUMNS`."""
    row = {
        "run": run.number,
        "machine": run.machine.get("hostname", "unknown"),
        "device": run.device,
        "backend": run.backend,
        "ranks": run.ranks,
        "kernels": f"{run.bfs_kernel} / {run.sssp_kernel}",
        "scale": run.scale,
        "edgefactor": run.edgefactor,
        "construction_s": run.construction_time,
        "device_memory_peak_gib": None if run.device_memory_peak is None else run.device_memory_peak / 2**30,
        "validation": run.validation,
        "date": f"{run.created.astimezone(datetime.timezone.utc):%Y-%m-%d %H:%M}",
    }
    for kind in PASSES:
        row.update(_pass_values(kind, run.passes[kind]))
    return row


def _ratio(value, base):
    return value / base if value is not None and base else None


def table_rows(runs, baseline=None):
    """One row dict per run; with a `Run` ``baseline``, ratio columns against it."""
    rows = [table_row(run) for run in runs]
    if baseline is not None:
        base = table_row(baseline)
        for row in rows:
            row.update({f"{key}_vs_baseline": _ratio(row[key], base[key]) for key in RATIO_KEYS})
    return rows


def _columns(rows):
    return COLUMNS + (RATIO_COLUMNS if rows and RATIO_COLUMNS[0][0] in rows[0] else ())


def render_csv(rows):
    """The rows as CSV: a header of column keys, numbers at full precision, empty for none."""
    keys = [key for key, _, _ in _columns(rows)]
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(keys)
    writer.writerows([["" if row[key] is None else row[key] for key in keys] for row in rows])
    return out.getvalue()


def render_table(rows, fmt):
    """The rows as a ``markdown``, ``html`` or ``latex`` table (numbers rounded for reading)."""
    columns = _columns(rows)
    cells = [[MISSING if row[key] is None else show(row[key]) for key, _, show in columns]
             for row in rows]
    return tabulate(cells, headers=[title for _, title, _ in columns],
                    tablefmt=TABLE_FORMATS[fmt], disable_numparse=True) + "\n"


def gteps(value):
    """TEPS (or TEPS/W) in units of 10^9 with three significant figures, every digit from 100 on: ``603``,
    ``51.4``, ``0.0817``; `MISSING` for none."""
    if value is None:
        return MISSING
    giga = value / 1e9
    return f"{giga:.0f}" if round(giga, 1) >= 100 else f"{giga:#.3g}".rstrip(".")


def _with_deviation(summary):
    """``mean ± harmonic standard deviation`` in GTEPS (a deviation under 10^-9 of the mean, rounding's, as 0)."""
    if summary is None:
        return MISSING
    deviation = summary.harmonic_stddev if summary.harmonic_stddev > 1e-9 * summary.harmonic_mean else 0.0
    return f"{gteps(summary.harmonic_mean)} ± {gteps(deviation) if deviation else '0'}"


def _teps_per_watt(summary):
    return gteps(summary and summary.teps_per_watt)


# The summary's columns: (title, cell of a run).
SUMMARY_COLUMNS = (
    ("backend", lambda run: run.backend),
    ("device", lambda run: run.device_model),
    ("ranks", lambda run: str(run.ranks)),
    ("kernels (BFS / SSSP)", lambda run: run.kernels),
    ("edgefactor", lambda run: str(run.edgefactor)),
    ("SCALE", lambda run: str(run.scale)),
    ("BFS GTEPS", lambda run: gteps(run.passes["bfs"].harmonic_mean)),
    ("SSSP GTEPS", lambda run: gteps(run.passes["sssp"] and run.passes["sssp"].harmonic_mean)),
    ("BFS GTEPS/W", lambda run: _teps_per_watt(run.passes["bfs"])),
    ("SSSP GTEPS/W", lambda run: _teps_per_watt(run.passes["sssp"])),
    ("run", lambda run: run.label),
)
# The runs' columns in markdown and HTML: (key, title, cell of a run); the first ones are left out, and stated
# above the table, where every row has the same value.
RUN_COLUMNS = (
    ("run", "#", lambda run: str(run.number)),
    ("machine", "machine", lambda run: run.machine.get("hostname", "unknown")),
    ("backend", "backend", lambda run: run.backend),
    ("device", "device", lambda run: run.device_model),
    ("ranks", "ranks", lambda run: str(run.ranks)),
    ("kernels", "kernels", lambda run: run.kernels),
    ("edgefactor", "edgefactor", lambda run: str(run.edgefactor)),
    ("validation", "validation", lambda run: run.validation),
    ("scale", "SCALE", lambda run: str(run.scale)),
    ("bfs", "BFS GTEPS", lambda run: _with_deviation(run.passes["bfs"])),
    ("sssp", "SSSP GTEPS", lambda run: _with_deviation(run.passes["sssp"])),
    ("bfs_w", "BFS GTEPS/W", lambda run: _teps_per_watt(run.passes["bfs"])),
    ("sssp_w", "SSSP GTEPS/W", lambda run: _teps_per_watt(run.passes["sssp"])),
    ("construction", "build s", lambda run: f"{run.construction_time:.3g}"),
    ("memory", "GiB", lambda run: MISSING if run.device_memory_peak is None
     else f"{run.device_memory_peak / 2**30:.1f}"),
    ("date", "date", lambda run: f"{run.created.astimezone(datetime.timezone.utc):%Y-%m-%d}"),
)
ELIDED_WHEN_CONSTANT = ("machine", "backend", "device", "ranks", "kernels", "edgefactor", "validation")
RATIO_TITLES = {"bfs_teps": "BFS x", "sssp_teps": "SSSP x", "bfs_teps_per_w": "BFS/W x", "sssp_teps_per_w": "SSSP/W x"}


def summary_table(runs):
    """``(headers, cells)`` of the summary of ``runs`` (the edgefactor column only where it varies)."""
    chosen = summary_runs(runs)
    columns = [column for column in SUMMARY_COLUMNS
               if column[0] != "edgefactor" or len({run.edgefactor for run in chosen}) > 1]
    return [title for title, _ in columns], [[cell(run) for _, cell in columns] for run in chosen]


def runs_table(runs, baseline=None):
    """``(headers, cells, constants)`` of the runs' table: ``constants`` are the ``(title, value)`` of the
    columns left out because every row has the same value; with a ``baseline``, ratio columns."""
    constants, columns = [], []
    for key, title, cell in RUN_COLUMNS:
        values = {cell(run) for run in runs}
        if key in ELIDED_WHEN_CONSTANT and len(values) == 1 and len(runs) > 1:
            constants.append((title, values.pop()))
        else:
            columns.append((title, cell))
    cells = [[cell(run) for _, cell in columns] for run in runs]
    headers = [title for title, _ in columns]
    if baseline is not None:
        base = table_row(baseline)
        headers += list(RATIO_TITLES.values())
        for row, run in zip(cells, runs):
            values = table_row(run)
            row += [MISSING if ratio is None else f"{ratio:.3g}"
                    for ratio in (_ratio(values[key], base[key]) for key in RATIO_TITLES)]
    return headers, cells, constants


def _meters(run):
    """The run's energy meters in a few words: their kinds and how many (the record names them)."""
    if not run.meters:
        return "not measured" if run.energy_meters == "not measured" else "none"
    kinds = sorted({meter.split(": ")[-1].split(" ")[0] for meter in run.meters})
    return f"{' + '.join(kinds)}, {len(run.meters)} meter{'s' if len(run.meters) > 1 else ''}"


# Where each run was measured: (title, cell of a run); the machine only where it varies (the record has more).
MEASURED_ON_COLUMNS = (
    ("#", lambda run: str(run.number)),
    ("record", lambda run: run.source),
    ("machine", lambda run: run.machine.get("hostname", "unknown")),
    ("CPUs", lambda run: str(run.machine.get("cpu_count", "?"))),
    ("device", lambda run: run.device),
    ("energy", _meters),
)


def measured_on_table(runs):
    """``(headers, cells)`` of where each run was measured."""
    columns = [(title, cell) for title, cell in MEASURED_ON_COLUMNS
               if title != "machine" or len({cell(run) for run in runs}) > 1]
    return [title for title, _ in columns], [[cell(run) for _, cell in columns] for run in runs]


# ---------------------------------------------------------------- documents

TITLE = "Graph500 results"


def _introduction(runs, shown, baseline):
    """The paragraph above the tables."""
    kept = (f"the newest of each configuration and SCALE, {len(shown)} of {len(runs)} records (`--all`: every "
            f"record)" if len(shown) < len(runs) else f"{len(shown)} record(s)")
    order = "by configuration as in the summary, then by SCALE"
    text = (f"Generated by `graph500 report` from run records: {kept}; edit the records, not this page. "
            f"GTEPS are 10^9 traversed edges per second, harmonic means over the searches with their harmonic "
            f"standard deviation (Graph500 v3 statistics); GTEPS/W divides them by the mean power of the "
            f"GreenGraph500-style energy loop; {MISSING} marks a value the run did not measure. The summary gives "
            f"each configuration (backend, device, ranks, kernels) at its largest SCALE, best BFS first within "
            f"each backend; the runs follow, {order} (kernels: BFS / SSSP; build s: the construction time, kernel 1 "
            f"and the kernels' set-up; GiB: the GPU memory's high-water mark).")
    if baseline is not None:
        text += (f" Ratios (x) are against {baseline.source} ({baseline.backend}, "
                 f"{baseline.bfs_kernel} / {baseline.sssp_kernel}, SCALE {baseline.scale}, "
                 f"on {baseline.device}).")
    return text


def markdown_table(headers, cells):
    """A GitHub markdown table without padding, so that its lines are no wider than their cells."""
    lines = ["| " + " | ".join(headers) + " |", "|" + "|".join("---" for _ in headers) + "|"]
    lines += ["| " + " | ".join(str(cell).replace("|", "\\|") for cell in row) + " |" for row in cells]
    return "\n".join(lines) + "\n"


def _constants_text(constants):
    return "On every row: " + "; ".join(f"{title} {value}" for title, value in constants) + "." if constants else ""


def markdown_document(runs, shown, figures, baseline, link):
    """The markdown document; ``link(figure)`` is the path the page shows each figure from."""
    summary_headers, summary_cells = summary_table(shown)
    headers, cells, constants = runs_table(shown, baseline)
    parts = [f"# {TITLE}\n", textwrap.fill(_introduction(runs, shown, baseline), 118) + "\n", "## Summary\n",
             markdown_table(summary_headers, summary_cells),
             "## Runs\n"]
    if constants:
        parts.append(textwrap.fill(_constants_text(constants), 118) + "\n")
    measured_headers, measured_cells = measured_on_table(shown)
    parts += [markdown_table(headers, cells), "## Where each run was measured\n",
              markdown_table(measured_headers, measured_cells)]
    if figures:
        parts.append("## Plots\n")
        parts += [f"![{figure.title}]({link(figure)})\n" for figure in figures]
    return "\n".join(parts)


HTML_STYLE = """
body { font-family: sans-serif; font-size: 14px; margin: 1.5em auto; max-width: 1240px; padding: 0 1em;
       color: #222; }
table { border-collapse: collapse; margin: 0.8em 0; }
th, td { border: 1px solid #bbb; padding: 0.2em 0.45em; text-align: left; vertical-align: top; }
th { background: #eee; }
td { white-space: nowrap; }
table.measured td { white-space: normal; font-size: 0.9em; }
figure { margin: 1em 0; }
figure img { max-width: 100%; height: auto; border: 1px solid #ddd; }
@media print { body { max-width: none; margin: 0; } figure, table { break-inside: avoid; } }
"""


def _html_paragraph(text):
    """``text`` as an HTML paragraph, its `code` spans in <code>."""
    parts = html.escape(text).split("`")
    return "<p>" + "".join(f"<code>{part}</code>" if number % 2 else part
                           for number, part in enumerate(parts)) + "</p>"


def _html_figure(figure):
    data = base64.b64encode(figure.png).decode("ascii")
    return (f'<figure><img alt="{html.escape(figure.title)}" src="data:image/png;base64,{data}">'
            f"<figcaption>{html.escape(figure.title)}</figcaption></figure>")


def _html_table(headers, cells, css_class=None):
    table = tabulate(cells, headers=headers, tablefmt="html", disable_numparse=True)
    return table.replace("<table>", f'<table class="{css_class}">', 1) if css_class else table


def html_document(runs, shown, figures, baseline):
    """One self-contained HTML page: plots, summary, runs, where each run was measured."""
    summary_headers, summary_cells = summary_table(shown)
    headers, cells, constants = runs_table(shown, baseline)
    body = [f"<h1>{TITLE}</h1>", _html_paragraph(_introduction(runs, shown, baseline))]
    if figures:
        body += ["<h2>Plots</h2>"] + [_html_figure(figure) for figure in figures]
    body += ["<h2>Summary</h2>", _html_table(summary_headers, summary_cells), "<h2>Runs</h2>"]
    if constants:
        body.append(_html_paragraph(_constants_text(constants)))
    body += [_html_table(headers, cells), "<h2>Where each run was measured</h2>",
             _html_table(*measured_on_table(shown), "measured")]
    return ("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
            "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
            f"<title>{TITLE}</title>\n<style>{HTML_STYLE}</style>\n</head>\n<body>\n"
            + "\n".join(body) + "\n</body>\n</html>\n")


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
        report.write_atomic(path, figure.png)
        print(f"graph500: wrote {path}", file=sys.stderr)


def _figure_link(args):
    """How the markdown page refers to a figure: relative to the page's directory."""
    page_directory = os.path.dirname(os.path.abspath(args.output or "page"))
    return lambda figure: os.path.relpath(os.path.join(args.plots, figure.filename), page_directory)


def render_document(args, runs, shown, baseline, figures):
    """The report text in ``args.format``: of the ``shown`` runs, ``runs`` being every record read."""
    if args.format == "csv":
        return render_csv(table_rows(shown, baseline))
    if args.format == "latex":
        return render_table(table_rows(shown, baseline), "latex")
    if args.format == "html":
        return html_document(runs, shown, figures, baseline)
    return markdown_document(runs, shown, figures, baseline, _figure_link(args))


def report_command(args):
    """``graph500 report``: load the records, write plots and the document. Returns 0."""
    runs = load_runs(record_paths(args.records))
    shown = shown_runs(runs, args.all)
    baseline = run_from_record(load_record(args.baseline), args.baseline, 0) if args.baseline else None
    figures = _figures(args, shown)
    if args.plots:
        _write_plots(args.plots, figures)
    document = render_document(args, runs, shown, baseline, figures)
    if args.output:
        report.write_atomic(args.output, document)
        print(f"graph500: wrote {args.output}", file=sys.stderr)
    else:
        sys.stdout.write(document)
    return 0
