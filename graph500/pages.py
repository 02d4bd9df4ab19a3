"""The tables and pages of ``graph500 report`` (`graph500.publish`): which runs a report shows, in what order,
and how: the summary in the Graph500 lists' manner, the runs' table, where each run was measured, as markdown
or one self-contained HTML page, and the runs with every field as CSV or LaTeX.

The units: GTEPS (10^9 TEPS) with three significant figures, GTEPS/W; `MISSING` marks a value a run did not
measure. A markdown table is written without padding, so that its lines are no wider than their cells (the
report's fit 160 characters); the HTML page fits a 1280-pixel screen (`HTML_STYLE`).
"""

import base64
import csv
import dataclasses
import datetime
import html
import io
import textwrap

from tabulate import tabulate

MISSING = "–"
PASSES = ("bfs", "sssp")


# ---------------------------------------------------------------- which runs, in what order

def shown_runs(runs, every_record=False):
    """The runs a report shows, numbered from 1 in their order: the newest of each configuration and SCALE (or,
    ``every_record``, all), by configuration in the summary's order, then by SCALE and date."""
    if not every_record:
        runs = list(newest_by(runs, lambda run: run.configuration + (run.scale,)).values())
    rank = {run.configuration: position for position, run in enumerate(summary_runs(runs))}
    ordered = sorted(runs, key=lambda run: (rank[run.configuration], run.scale, run.created))
    return [dataclasses.replace(run, number=number) for number, run in enumerate(ordered, start=1)]


def newest_by(runs, key):
    """``{key(run): the newest run with that key}`` (of runs created alike, the later in ``runs``)."""
    newest = {}
    for run in runs:
        held = newest.get(key(run))
        if held is None or run.created >= held.created:
            newest[key(run)] = run
    return newest


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


def render_latex(rows):
    """The rows as a LaTeX table of every field (numbers rounded for reading)."""
    columns = _columns(rows)
    cells = [[MISSING if row[key] is None else show(row[key]) for key, _, show in columns]
             for row in rows]
    return tabulate(cells, headers=[title for _, title, _ in columns], tablefmt="latex_booktabs",
                    disable_numparse=True) + "\n"


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


