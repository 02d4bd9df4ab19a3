"""``graph500 report``: run records turned into tables, plots and pages.

    graph500 report RECORD... [--format markdown|html|csv|latex]
                    [--baseline RECORD] [--plots DIR] [--output PATH]

Each RECORD is a JSON run record (schema ``graph500-run/1``, see
`graph500.report`) or a directory, which stands for its ``*.json`` files in
name order (record names sort by date).  The table has one row per run:
machine and device, backend, kernels, SCALE, edgefactor, the harmonic-mean
TEPS of BFS and SSSP with their harmonic standard deviation, TEPS per watt,
construction time, validation status and date.  ``--baseline`` adds the
ratio of each run's TEPS and TEPS/W to the baseline run's.

Formats: ``markdown`` is a whole document (the table, where each run was
measured, the plots when ``--plots`` is given), ``html`` one self-contained
page with the same content and its plots embedded as base64 PNG, ``csv`` and
``latex`` the table alone (CSV with full-precision numbers).  The document goes
to ``--output`` (written atomically) or to stdout; ``--plots DIR`` writes the
PNG files of `graph500.plots` there.  ``results/README.md`` is made by::

    graph500 report results/ --plots results/plots --output results/README.md
"""

import base64
import csv
import dataclasses
import datetime
import html
import io
import json
import os
import sys

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
    construction_time: float
    device_memory_peak: float  # bytes (GPU runs that measured it), else None
    validation: str
    energy_meters: str
    passes: dict

    @property
    def label(self):
        return f"#{self.number}"

    def kernel(self, kind):
        """The kernel of pass ``kind`` (``bfs`` or ``sssp``)."""
        return self.bfs_kernel if kind == "bfs" else self.sssp_kernel


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
        construction_time=float(_lookup(record, source, "construction_time")),
        device_memory_peak=_optional_number(extensions.get("device_memory_peak_bytes")),
        validation=_validation(record),
        energy_meters=_energy_meters(record),
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


def measured_on_rows(runs):
    """Where each run was measured: record file, machine, platform, CPUs, device, meters."""
    return [[run.number, run.source, run.machine.get("hostname", "unknown"),
             run.machine.get("platform", "unknown"), str(run.machine.get("cpu_count", "?")),
             run.device, run.energy_meters] for run in runs]


MEASURED_ON_HEADERS = ["#", "record", "machine", "platform", "CPUs", "device", "energy meters"]


# ---------------------------------------------------------------- documents

TITLE = "Graph500 results"


def _introduction(runs, baseline):
    """The paragraph above the table."""
    text = (f"Generated by `graph500 report` from {len(runs)} run record(s); edit the records, "
            f"not this page. TEPS are harmonic means over the searches with their harmonic "
            f"standard deviation (Graph500 v3 statistics); TEPS/W divides them by the mean power "
            f"of the GreenGraph500-style energy loop; {MISSING} marks a value the run did not measure.")
    if baseline is not None:
        text += (f" Ratios are against {baseline.source} ({baseline.backend}, "
                 f"{baseline.bfs_kernel} / {baseline.sssp_kernel}, SCALE {baseline.scale}, "
                 f"on {baseline.device}).")
    return text


def markdown_document(runs, rows, figures, baseline, link):
    """The markdown document; ``link(figure)`` is the path the page shows each figure from."""
    parts = [f"# {TITLE}\n", _introduction(runs, baseline) + "\n", render_table(rows, "markdown"),
             "## Where each run was measured\n",
             tabulate(measured_on_rows(runs), headers=MEASURED_ON_HEADERS, tablefmt="github",
                      disable_numparse=True) + "\n"]
    if figures:
        parts.append("## Plots\n")
        parts += [f"![{figure.title}]({link(figure)})\n" for figure in figures]
    return "\n".join(parts)


HTML_STYLE = """
body { font-family: sans-serif; margin: 2em; color: #222; }
table { border-collapse: collapse; margin: 1em 0; font-size: 0.9em; }
th, td { border: 1px solid #bbb; padding: 0.25em 0.5em; text-align: left; white-space: nowrap; }
th { background: #eee; }
figure { margin: 1.5em 0; }
figure img { max-width: 100%; border: 1px solid #ddd; }
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


def html_document(runs, rows, figures, baseline):
    """One self-contained HTML page: table, where each run was measured, embedded plots."""
    body = [f"<h1>{TITLE}</h1>", _html_paragraph(_introduction(runs, baseline)),
            render_table(rows, "html"), "<h2>Where each run was measured</h2>",
            tabulate(measured_on_rows(runs), headers=MEASURED_ON_HEADERS, tablefmt="html",
                     disable_numparse=True)]
    if figures:
        body += ["<h2>Plots</h2>"] + [_html_figure(figure) for figure in figures]
    return ("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
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


def render_document(args, runs, baseline, figures):
    """The report text in ``args.format``."""
    rows = table_rows(runs, baseline)
    if args.format == "csv":
        return render_csv(rows)
    if args.format == "latex":
        return render_table(rows, "latex")
    if args.format == "html":
        return html_document(runs, rows, figures, baseline)
    return markdown_document(runs, rows, figures, baseline, _figure_link(args))


def report_command(args):
    """``graph500 report``: load the records, write plots and the document. Returns 0."""
    runs = load_runs(record_paths(args.records))
    baseline = run_from_record(load_record(args.baseline), args.baseline, 0) if args.baseline else None
    figures = _figures(args, runs)
    if args.plots:
        _write_plots(args.plots, figures)
    document = render_document(args, runs, baseline, figures)
    if args.output:
        report.write_atomic(args.output, document)
        print(f"graph500: wrote {args.output}", file=sys.stderr)
    else:
        sys.stdout.write(document)
    return 0
