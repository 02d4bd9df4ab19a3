"""graph500 report (graph500.publish, graph500.plots): records in tmp dirs,
table formats, ratios against a baseline computed by hand, bad input, plots,
the HTML page's structure, and the page in a real headless Chromium."""

import argparse
import base64
import csv
import html.parser
import io
import shutil
import subprocess
import sys

import numpy as np
import pytest

from graph500 import cli, pages, plots, publish, run_report
from graph500.errors import Graph500Error
from graph500.run_report import PassResult

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


# ---------------------------------------------------------------- synthetic records

def energy_entry(bfs, sssp, bfs_watts, sssp_watts):
    """An `EnergyRun.record`-shaped entry for passes measured at the given mean powers."""
    def measured(result, watts):
        teps = run_report.teps_summary(result.times, result.nedges)["harmonic_mean"]
        return {"joules": 10.0 * watts, "seconds": 10.0, "repetitions": 20, "mean_power_W": watts,
                "TEPS_per_W": teps / watts, "meter_joules": {"NVML GPU 0 (NVIDIA H100 80GB HBM3)": 10.0 * watts}}
    return {"choice": "auto", "meters": ["NVML GPU 0 (NVIDIA H100 80GB HBM3)"],
            "unavailable": ["rapl not available: no RAPL zones under /sys/class/powercap"],
            "loop_seconds": 10.0, "idle_seconds": 3.0, "idle_power_W": 72.5,
            "bfs": measured(bfs, bfs_watts), "sssp": measured(sssp, sssp_watts)}


def make_record(*, scale=16, backend="cpu", device="CPU, 2 Numba threads", seconds_per_edge=2.5e-7,
                watts=None, hour=9, validated=True, trace=False, seed=0):
    """A run record as the harness writes it: 64 searches of a Kronecker-like graph.

    Every BFS search takes ``seconds_per_edge`` per edge and every SSSP search
    four times as long, so the harmonic-mean TEPS are exactly
    ``1 / seconds_per_edge`` and a quarter of that.
    """
    rng = np.random.default_rng(seed)
    nedges = rng.integers(15 << scale, 16 << scale, 64)
    validate = rng.uniform(0.01, 0.03, 64).tolist() if validated else None
    bfs = PassResult((nedges * seconds_per_edge).tolist(), nedges.tolist(), validate)
    sssp = PassResult((nedges * seconds_per_edge * 4).tolist(), nedges.tolist(), validate)
    extensions = {"backend": backend, "device": device, "bfs_kernel": f"{backend}_top_down",
                  "sssp_kernel": f"{backend}_dijkstra", "generator": "kronecker (reference)",
                  "validation": "passed" if validated else "skipped (results are not official)"}
    if backend == "gpu":
        extensions["device_memory_peak_bytes"] = 25 << (scale + 4)  # 25 bytes a tuple
    record = run_report.run_record(
        config={"scale": scale, "edgefactor": 16, "backend": backend}, roots=list(range(64)),
        seeds=[2, 3], graph_generation=0.05 * scale, construction_time=0.01 * scale, bfs=bfs,
        sssp=sssp, extensions=extensions, energy=energy_entry(bfs, sssp, *watts) if watts else None)
    record["created"] = f"2026-11-01T{hour:02d}:15:00+00:00"
    if trace:
        record["bfs"]["trace"] = [trace_levels(rng, scale) for _ in range(8)]
    return record


def trace_levels(rng, scale):
    """One direction-optimising search: top-down, two bottom-up levels, top-down again."""
    sizes = [1, 2 ** (scale // 3), 2 ** (scale - 4), 2 ** (scale - 2), 2 ** (scale - 5), 2 ** (scale // 2), 4]
    return [{"direction": "bottom-up" if depth in (3, 4) else "top-down",
             "frontier": int(size * rng.uniform(0.6, 1.4)),
             "edges": int(size * 16 * rng.uniform(0.6, 1.4)), "seconds": 1e-4 * (depth + 1)}
            for depth, size in enumerate(sizes)]


def write(path, record):
    run_report.write_json_atomic(path, record)
    return str(path)


@pytest.fixture
def records(tmp_path):
    """Three CPU runs without energy and three GPU runs with it; the largest GPU run is traced."""
    directory = tmp_path / "results"
    paths = []
    for number, scale in enumerate((14, 16, 18)):
        paths.append(write(directory / f"20261101T0{number}1500Z-cpu-scale{scale}.json",
                           make_record(scale=scale, hour=number, seed=number)))
    for number, scale in enumerate((14, 16, 18)):
        paths.append(write(directory / f"20261101T1{number}1500Z-gpu-scale{scale}.json",
                           make_record(scale=scale, backend="gpu", device="NVIDIA H100 80GB HBM3",
                                       seconds_per_edge=1e-9, watts=(400.0, 350.0), hour=10 + number,
                                       trace=scale == 18, seed=10 + number)))
    return directory, paths


def parse(argv):
    parser = argparse.ArgumentParser(prog="graph500")
    publish.add_report_parser(parser.add_subparsers(dest="command"))
    return parser.parse_args(["report", *argv])


def run_command(argv, capsys):
    assert publish.report_command(parse(argv)) == 0
    return capsys.readouterr()


needs_matplotlib = pytest.mark.skipif(not plots.available(), reason="needs matplotlib (the plot extra)")


# ---------------------------------------------------------------- records and bad input

def test_directory_stands_for_its_records_in_name_order(records):
    directory, paths = records
    (directory / "README.md").write_text("not a record")
    assert publish.record_paths([str(directory)]) == sorted(paths)


def test_runs_read_from_records(records):
    _, paths = records
    runs = publish.load_runs(paths)
    assert [run.number for run in runs] == [1, 2, 3, 4, 5, 6]
    gpu = runs[3]
    assert (gpu.backend, gpu.device, gpu.scale, gpu.edgefactor) == ("gpu", "NVIDIA H100 80GB HBM3", 14, 16)
    assert gpu.passes["bfs"].harmonic_mean == pytest.approx(1e9)
    assert gpu.passes["sssp"].harmonic_mean == pytest.approx(2.5e8)
    assert gpu.passes["bfs"].teps_per_watt == pytest.approx(1e9 / 400.0)
    assert len(gpu.passes["bfs"].search_teps) == 64
    assert runs[0].passes["bfs"].teps_per_watt is None and runs[0].energy_meters == "not measured"
    assert runs[5].passes["bfs"].trace is not None and runs[4].passes["bfs"].trace is None


@pytest.mark.parametrize("content, message", [
    (None, "cannot read record {path}: No such file or directory"),
    ("{\"schema\": \"graph500-run/1\",", "{path} is not a JSON run record: Expecting"),
    (b"\xff\xfe\x00", "{path} is not a JSON run record: 'utf-8' codec can't decode"),
    ("[1, 2]", "{path} is not a run record: schema None, expected 'graph500-run/1'"),
    ("{\"schema\": \"graph500-run/9\"}", "{path} is not a run record: schema 'graph500-run/9'"),
])
def test_bad_record_files(tmp_path, content, message):
    path = tmp_path / "run.json"
    if isinstance(content, bytes):
        path.write_bytes(content)
    elif content is not None:
        path.write_text(content)
    with pytest.raises(Graph500Error) as error:
        publish.report_command(parse([str(path)]))
    assert str(error.value).startswith(message.format(path=path))
    assert "\n" not in str(error.value)


@pytest.mark.parametrize("damage, field", [
    (lambda r: r["config"].pop("scale"), "config.scale"),
    (lambda r: r["statistics"]["bfs"]["TEPS"].pop("harmonic_mean"), "statistics.bfs.TEPS.harmonic_mean"),
    (lambda r: r["bfs"].pop("nedges"), "bfs.nedges"),
    (lambda r: r.pop("created"), "created"),
])
def test_record_missing_a_field(tmp_path, damage, field):
    record = make_record()
    damage(record)
    path = write(tmp_path / "run.json", record)
    with pytest.raises(Graph500Error, match=f"^{path}: the record has no {field}$"):
        publish.load_runs([path])


@pytest.mark.parametrize("damage, reason", [
    (lambda r: r["config"].update(scale="sixteen"), "invalid literal for int"),
    (lambda r: r.update(created="yesterday"), "Invalid isoformat string: 'yesterday'"),
    (lambda r: r.update(extensions="gpu"), "'str' object has no attribute 'get'"),
    (lambda r: r.update(sssp=[1, 2]), "the record has no sssp.times"),
    (lambda r: r["bfs"].update(times="fast"), "times but"),
])
def test_record_with_a_malformed_field(tmp_path, damage, reason):
    record = make_record()
    damage(record)
    path = write(tmp_path / "run.json", record)
    with pytest.raises(Graph500Error, match=f"^{path}: ") as error:
        publish.load_runs([path])
    assert reason in str(error.value) and "\n" not in str(error.value)


def test_record_with_a_malformed_trace(tmp_path):
    record = make_record()
    record["bfs"]["trace"] = [[{"direction": "top-down", "frontier": 1}]]
    path = write(tmp_path / "run.json", record)
    with pytest.raises(Graph500Error, match="bfs.trace is not a list of searches"):
        publish.load_runs([path])


def test_empty_directory(tmp_path):
    with pytest.raises(Graph500Error, match="^no run records in "):
        publish.report_command(parse([str(tmp_path)]))


def test_missing_baseline(records, tmp_path):
    _, paths = records
    with pytest.raises(Graph500Error, match="cannot read record .*nothere.json"):
        publish.report_command(parse([*paths, "--baseline", str(tmp_path / "nothere.json")]))


@pytest.mark.skipif("report" not in cli.COMMANDS, reason="graph500 report is not wired into the CLI yet")
def test_cli_bad_record_is_one_line_on_stderr(tmp_path):
    result = subprocess.run([sys.executable, "-m", "graph500", "report", str(tmp_path / "none.json")],
                            capture_output=True, text=True)
    assert result.returncode == 2
    assert result.stderr == f"graph500: cannot read record {tmp_path / 'none.json'}: No such file or directory\n"


# ---------------------------------------------------------------- tables

def csv_rows(text):
    return list(csv.DictReader(io.StringIO(text)))


def test_csv_values(records, capsys):
    _, paths = records
    rows = csv_rows(run_command([*paths, "--format", "csv"], capsys).out)
    assert len(rows) == 6
    gpu, cpu = rows[0], rows[3]  # the faster configuration first, then by SCALE
    assert [row["scale"] for row in rows] == ["14", "16", "18"] * 2
    assert (cpu["run"], cpu["machine"], cpu["device"], cpu["backend"], cpu["ranks"]) == (
        "4", run_report.machine_info()["hostname"], "CPU, 2 Numba threads", "cpu", "1")
    assert cpu["kernels"] == "cpu_top_down / cpu_dijkstra"
    assert (cpu["scale"], cpu["edgefactor"], cpu["validation"]) == ("14", "16", "passed")
    assert float(cpu["bfs_teps"]) == pytest.approx(4e6) and float(cpu["sssp_teps"]) == pytest.approx(1e6)
    assert float(cpu["bfs_teps_hstddev"]) == pytest.approx(0.0, abs=1e-3)
    assert cpu["bfs_teps_per_w"] == "" and cpu["sssp_teps_per_w"] == ""
    assert float(cpu["construction_s"]) == pytest.approx(0.14)
    assert cpu["date"] == "2026-11-01 00:15"
    assert float(gpu["bfs_teps_per_w"]) == pytest.approx(1e9 / 400.0)
    assert float(gpu["sssp_teps_per_w"]) == pytest.approx(2.5e8 / 350.0)
    assert cpu["device_memory_peak_gib"] == "" and float(gpu["device_memory_peak_gib"]) == 25 * 2**18 / 2**30
    assert "bfs_teps_vs_baseline" not in gpu


def test_ratios_against_a_baseline(tmp_path, capsys):
    # By hand: the baseline does 4e6 BFS TEPS (2.5e-7 s/edge) and 1e6 SSSP TEPS at 100 W and
    # 50 W; the other run 1e9 and 2.5e8 TEPS at 400 W and 250 W.  BFS: 1e9 / 4e6 = 250;
    # SSSP: 2.5e8 / 1e6 = 250; BFS TEPS/W: (1e9 / 400) / (4e6 / 100) = 62.5;
    # SSSP TEPS/W: (2.5e8 / 250) / (1e6 / 50) = 50.
    base = write(tmp_path / "base.json", make_record(watts=(100.0, 50.0)))
    fast = write(tmp_path / "fast.json", make_record(seconds_per_edge=1e-9, watts=(400.0, 250.0)))
    rows = csv_rows(run_command([base, fast, "--baseline", base, "--format", "csv", "--all"], capsys).out)
    ratios = [[float(row[f"{key}_vs_baseline"]) for key in pages.RATIO_KEYS] for row in rows]
    assert ratios[0] == pytest.approx([1.0, 1.0, 1.0, 1.0])
    assert ratios[1] == pytest.approx([250.0, 250.0, 62.5, 50.0])


def test_ratio_without_energy_is_empty(records, capsys):
    _, paths = records
    rows = csv_rows(run_command([*paths, "--baseline", paths[0], "--format", "csv"], capsys).out)
    assert float(rows[1]["bfs_teps_vs_baseline"]) == pytest.approx(1e9 / 4e6)  # the GPU run at SCALE 16
    assert rows[1]["bfs_teps_per_w_vs_baseline"] == ""


def table_after(lines, heading):
    """The markdown table (header and rows of stripped cells) that follows ``heading``."""
    start = lines.index(heading)
    rows = [line for line in lines[start:] if line.startswith("|")]
    table = []
    for line in rows:
        if line.startswith("|---"):
            continue
        if table and lines.index(line, start) > lines.index(rows[0], start) + len(table) + 1:
            break
        table.append([cell.strip() for cell in line.strip("|").split("|")])
    return table


def test_markdown_document(records, capsys):
    _, paths = records
    text = run_command([*paths, "--baseline", paths[0]], capsys).out
    lines = text.splitlines()
    assert lines[0] == "# Graph500 results"
    assert [line for line in lines if line.startswith("## ")] == ["## Summary", "## Runs",
                                                                  "## Where each run was measured"]
    assert max(len(line) for line in lines) <= 160
    summary = table_after(lines, "## Summary")
    assert summary[0] == ["backend", "device", "ranks", "kernels (BFS / SSSP)", "SCALE", "BFS GTEPS", "SSSP GTEPS",
                          "BFS GTEPS/W", "SSSP GTEPS/W", "run"]
    assert summary[1:] == [["gpu", "H100 80GB HBM3", "1", "gpu_top_down / gpu_dijkstra", "18", "1.00", "0.250",
                            "0.00250", "0.000714", "#3"],
                           ["cpu", "CPU, 2 threads", "1", "cpu_top_down / cpu_dijkstra", "18", "0.00400", "0.00100",
                            pages.MISSING, pages.MISSING, "#6"]]
    assert (f"On every row: machine {run_report.machine_info()['hostname']}; ranks 1; edgefactor 16; validation passed."
            in " ".join(text.split()))
    runs = table_after(lines, "## Runs")
    assert runs[0] == ["#", "backend", "device", "kernels", "SCALE", "BFS GTEPS", "SSSP GTEPS", "BFS GTEPS/W",
                       "SSSP GTEPS/W", "build s", "GiB", "date", "BFS x", "SSSP x", "BFS/W x", "SSSP/W x"]
    assert runs[3][:5] == ["3", "gpu", "H100 80GB HBM3", "gpu_top_down / gpu_dijkstra", "18"]
    assert runs[3][5:7] == ["1.00 ± 0", "0.250 ± 0"]  # every search alike
    assert runs[3][7:9] == ["0.00250", "0.000714"] and runs[3][-4:] == ["250", "250", pages.MISSING,
                                                                         pages.MISSING]
    assert runs[4][-4:] == ["1", "1", pages.MISSING, pages.MISSING]  # the baseline itself
    prose = " ".join(text.split())  # paragraphs are wrapped
    assert f"Ratios (x) are against {paths[0].rsplit('/', 1)[1]}" in prose
    assert "NVML, 1 meter" in text
    assert "## Plots" not in text


def test_summary_takes_each_configuration_newest_at_its_largest_scale(tmp_path, capsys):
    """Repeated configurations: the summary keeps one row each (the newest run at the largest SCALE), the runs
    table the newest of each configuration and SCALE, ``--all`` every record."""
    h200 = "NVIDIA H200, 140 GiB, compute capability 90, 132 SMs"
    paths = [write(tmp_path / f"{name}.json", record) for name, record in (
        ("a-cpu-14", make_record(scale=14, hour=1)),
        ("b-cpu-16", make_record(scale=16, hour=2, seconds_per_edge=2e-7)),
        ("c-cpu-16-again", make_record(scale=16, hour=5, seconds_per_edge=4e-7)),
        ("d-h200-16", make_record(scale=16, backend="gpu", device=h200, seconds_per_edge=2e-9, hour=3)),
        ("e-h100-14", make_record(scale=14, backend="gpu", device="NVIDIA H100 80GB HBM3, 79 GiB", hour=4,
                                  seconds_per_edge=1e-9)))]
    runs = publish.load_runs(paths)
    shown = pages.shown_runs(runs)
    assert [run.source for run in shown] == ["e-h100-14.json", "d-h200-16.json", "a-cpu-14.json",
                                             "c-cpu-16-again.json"]
    assert [run.number for run in shown] == [1, 2, 3, 4]
    assert [run.source for run in pages.summary_runs(shown)] == ["e-h100-14.json", "d-h200-16.json",
                                                                   "c-cpu-16-again.json"]
    headers, cells = pages.summary_table(shown)
    assert [row[headers.index("device")] for row in cells] == ["H100 80GB HBM3", "H200 (140 GiB)", "CPU, 2 threads"]
    assert [row[headers.index("BFS GTEPS")] for row in cells] == ["1.00", "0.500", "0.00250"]
    assert [row[headers.index("run")] for row in cells] == ["#1", "#2", "#4"]
    every = pages.shown_runs(runs, every_record=True)
    assert [run.source for run in every] == ["e-h100-14.json", "d-h200-16.json", "a-cpu-14.json",
                                             "b-cpu-16.json", "c-cpu-16-again.json"]
    text = run_command([*paths, "--all"], capsys).out
    assert "5 record(s)" in text and "| 4 | cpu | CPU, 2 threads | cpu_top_down / cpu_dijkstra | 16 | 0.00500 ± 0 |" in text
    assert "4 of 5 records (`--all`: every record)" in " ".join(run_command(paths, capsys).out.split())


def test_gteps_keep_three_significant_figures():
    assert [pages.gteps(value) for value in (6.0267e11, 5.13835e10, 3.0e10, 8.168e7, 99.96e9, 1.2346e12)] == \
        ["603", "51.4", "30.0", "0.0817", "100", "1235"]
    assert pages.gteps(None) == pages.MISSING


@pytest.mark.parametrize("device, model", [
    ("NVIDIA H100 80GB HBM3, 79 GiB, compute capability 90, 132 SMs", "H100 80GB HBM3"),
    ("NVIDIA H200, 140 GiB, compute capability 90, 132 SMs", "H200 (140 GiB)"),
    ("2 ranks x 1 GPU: NVIDIA H200 (0000:00:06.0), NVIDIA H200 (0000:00:07.0)", "H200"),
    ("AMD EPYC, 2 Numba threads", "AMD EPYC, 2 threads"),
    ("AMD EPYC, 16 ranks x 1 Numba threads", "AMD EPYC, 1 thread"),
    ("NVIDIA H100 80GB HBM3", "H100 80GB HBM3"),
    ("unknown", "unknown"),
])
def test_device_model(device, model):
    assert publish.device_model(device) == model


def test_latex_table(records, capsys):
    _, paths = records
    text = run_command([*paths, "--format", "latex"], capsys).out
    assert text.startswith("\\begin{tabular}") and text.rstrip().endswith("\\end{tabular}")
    assert "\\toprule" in text and "cpu\\_top\\_down" in text
    assert text.count("\\\\") == 1 + 6  # header and one line per run


def test_output_file_is_written_atomically(records, tmp_path, capsys):
    _, paths = records
    output = tmp_path / "out" / "table.csv"
    streams = run_command([*paths, "--format", "csv", "--output", str(output)], capsys)
    assert streams.out == ""
    assert streams.err == f"graph500: wrote {output}\n"
    assert len(csv_rows(output.read_text())) == 6
    assert [p.name for p in output.parent.iterdir()] == ["table.csv"]


# ---------------------------------------------------------------- plots

@needs_matplotlib
def test_plots_written(records, tmp_path, capsys):
    _, paths = records
    directory = tmp_path / "plots"
    output = tmp_path / "page" / "README.md"
    run_command([*paths, "--plots", str(directory), "--output", str(output)], capsys)
    names = sorted(p.name for p in directory.iterdir())
    assert names == ["frontier_run3.png", "teps_distribution.png", "teps_vs_scale.png"]
    assert all((directory / name).read_bytes().startswith(PNG_SIGNATURE) for name in names)
    text = output.read_text()
    assert "](../plots/teps_vs_scale.png)" in text and "](../plots/frontier_run3.png)" in text


@needs_matplotlib
def test_no_frontier_plot_without_a_trace(records, tmp_path, capsys):
    _, paths = records
    run_command([*paths[:5], "--plots", str(tmp_path / "plots")], capsys)
    assert sorted(p.name for p in (tmp_path / "plots").iterdir()) == ["teps_distribution.png", "teps_vs_scale.png"]


def test_plots_without_matplotlib(records, tmp_path, monkeypatch):
    _, paths = records
    monkeypatch.setitem(sys.modules, "matplotlib", None)
    with pytest.raises(Graph500Error, match=r"^plots need matplotlib: pip install 'graph500\[plot\]'$"):
        publish.report_command(parse([*paths, "--plots", str(tmp_path / "plots")]))


def test_teps_against_scale_draws_one_line_per_configuration(tmp_path):
    """One line per configuration (two devices here), through the newest run at each SCALE."""
    paths = [write(tmp_path / f"{number}.json", record) for number, record in enumerate((
        make_record(scale=14, hour=1), make_record(scale=16, hour=2), make_record(scale=16, hour=6, seed=3),
        make_record(scale=14, backend="gpu", device="NVIDIA H100 80GB HBM3, 79 GiB", hour=3)))]
    runs = publish.load_runs(paths)
    series = plots._series(runs, "bfs")
    assert len(series) == 2
    cpu = next(members for key, members in series.items() if key[0] == "cpu")
    assert [(run.scale, run.source) for run in cpu] == [(14, "0.json"), (16, "2.json")]


# ---------------------------------------------------------------- HTML

class PageStructure(html.parser.HTMLParser):
    """Tables (rows of cells), images, headings and external references of a page."""

    def __init__(self):
        super().__init__()
        self.tables, self.images, self.headings, self.external = [], [], [], []
        self.doctype = None
        self._cell = None

    def handle_decl(self, decl):
        self.doctype = decl

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        if tag == "table":
            self.tables.append([])
        elif tag == "tr":
            self.tables[-1].append([])
        elif tag in ("td", "th", "h1", "h2"):
            self._cell = ""
        elif tag == "img":
            self.images.append(attrs)
        for name in ("src", "href"):
            if name in attrs and not attrs[name].startswith("data:"):
                self.external.append(attrs[name])

    def handle_data(self, data):
        if self._cell is not None:
            self._cell += data

    def handle_endtag(self, tag):
        if tag in ("td", "th"):
            self.tables[-1][-1].append(self._cell.strip())
            self._cell = None
        elif tag in ("h1", "h2"):
            self.headings.append(self._cell.strip())
            self._cell = None


def page_structure(text):
    page = PageStructure()
    page.feed(text)
    return page


@needs_matplotlib
def test_html_page_structure(records, tmp_path, capsys):
    _, paths = records
    output = tmp_path / "run_report.html"
    run_command([*paths, "--format", "html", "--baseline", paths[3], "--output", str(output)], capsys)
    page = page_structure(output.read_text())
    assert page.doctype == "DOCTYPE html"
    assert page.headings == ["Graph500 results", "Plots", "Summary", "Runs", "Where each run was measured"]
    summary, results, measured = page.tables
    runs = pages.shown_runs(publish.load_runs(paths))
    assert summary[0] == [title for title, _ in pages.SUMMARY_COLUMNS if title != "edgefactor"]
    assert [row[:2] + row[4:6] for row in summary[1:]] == [["gpu", "H100 80GB HBM3", "18", "1.00"],
                                                           ["cpu", "CPU, 2 threads", "18", "0.00400"]]
    assert results[0][:4] == ["#", "backend", "device", "kernels"]
    assert [row[0] for row in results[1:]] == ["1", "2", "3", "4", "5", "6"]
    assert results[1][-4:] == ["1", "1", "1", "1"]  # paths[3]: the GPU run at SCALE 14, the first row
    assert [row[1] for row in measured[1:]] == [run.source for run in runs]
    assert [row[3] for row in measured[1:]] == ["NVIDIA H100 80GB HBM3"] * 3 + ["CPU, 2 Numba threads"] * 3
    assert len(page.images) == 3 and page.external == []
    for image in page.images:
        assert image["src"].startswith("data:image/png;base64,") and image["alt"]
        assert base64.b64decode(image["src"].split(",", 1)[1]).startswith(PNG_SIGNATURE)


def test_html_page_without_matplotlib_has_no_plots(records, tmp_path, monkeypatch, capsys):
    _, paths = records
    monkeypatch.setattr(plots, "available", lambda: False)
    output = tmp_path / "run_report.html"
    streams = run_command([*paths, "--format", "html", "--output", str(output)], capsys)
    assert "no plots in the page: plots need matplotlib" in streams.err
    page = page_structure(output.read_text())
    assert page.images == [] and "Plots" not in page.headings and len(page.tables) == 3


def colourful_fraction(png_path):
    """The fraction of a screenshot's pixels that are clearly coloured (not grey)."""
    import matplotlib.image

    pixels = matplotlib.image.imread(png_path)[..., :3]
    return float(((pixels.max(axis=2) - pixels.min(axis=2)) > 0.3).mean())


@needs_matplotlib
@pytest.mark.skipif(shutil.which("chromium") is None, reason="needs chromium (apt-get install chromium)")
@pytest.mark.parametrize("with_plots", [True, False])
def test_html_page_in_headless_chromium(records, tmp_path, capsys, monkeypatch, with_plots):
    _, paths = records
    monkeypatch.setattr(plots, "available", lambda: with_plots)
    page, screenshot = tmp_path / "run_report.html", tmp_path / "screenshot.png"
    run_command([*paths, "--format", "html", "--output", str(page)], capsys)
    subprocess.run(["chromium", "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
                    f"--screenshot={screenshot}", "--window-size=1400,2600", page.as_uri()],
                   capture_output=True, timeout=120, check=True)
    # Tables and text are black on white and grey: only the plots' lines, boxes and points are coloured.
    fraction = colourful_fraction(screenshot)
    assert (fraction > 0.001) == with_plots, fraction


@needs_matplotlib
@pytest.mark.skipif(shutil.which("chromium") is None, reason="needs chromium (apt-get install chromium)")
def test_html_page_fits_a_laptop_screen_in_headless_chromium(records, tmp_path, capsys):
    """At 1280 x 800 the page needs no horizontal scroll bar: its scroll width, read by a script Chromium runs,
    is at most the window's."""
    _, paths = records
    page = tmp_path / "run_report.html"
    run_command([*paths, "--format", "html", "--baseline", paths[0], "--output", str(page)], capsys)
    probe = tmp_path / "probe.html"
    probe.write_text(page.read_text().replace(
        "</body>", "<script>document.title = 'width ' + document.documentElement.scrollWidth;</script></body>"))
    result = subprocess.run(["chromium", "--headless", "--no-sandbox", "--disable-gpu", "--window-size=1280,800",
                             "--dump-dom", probe.as_uri()], capture_output=True, text=True, timeout=120, check=True)
    width = int(result.stdout.split("<title>width ", 1)[1].split("<", 1)[0])
    assert 0 < width <= 1280, width
