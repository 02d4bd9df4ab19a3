"""graph500.run_report: byte-exact layout against the reference's .stats fixtures,
field order, extension block, JSON record and atomic writes."""

import json
import os
from pathlib import Path

import numpy as np
import pytest

from graph500 import run_report
from graph500.run_report import (INVALID_RUN_LINE, PassResult, extensions_block, format_line,
                             machine_info, official_block, official_lines, render_lines,
                             run_record, write_json_atomic)
from graph500.stats import summary, teps_summary

DATA = Path(__file__).parent / "data" / "reference-v3"
FIXTURES = sorted(DATA.glob("*.stats"))
INT_FIELDS = {"SCALE", "edgefactor", "NBFS", "num_mpi_processes"}


def parse_stats(path):
    """The fixture as (name, value, kind) triples, kind guessed from the name."""
    triples = []
    for line in path.read_text().splitlines():
        name, rest = line.split(":", 1)
        rest = rest.strip()
        if name in INT_FIELDS:
            triples.append((name, int(rest), "int"))
        elif name.endswith("_nedge"):
            triples.append((name, float(rest), "nedge"))
        elif rest.startswith("!"):
            triples.append((name, float(rest[1:]), "hmean"))
        else:
            triples.append((name, float(rest), "g"))
    return triples


def synthetic_pass(n=64, seed=0, validate=True):
    rng = np.random.default_rng(seed)
    return PassResult(times=rng.uniform(1e-4, 2e-3, n).tolist(),
                      nedges=rng.integers(1, 5000, n).tolist(),
                      validate_times=rng.uniform(1e-4, 2e-3, n).tolist() if validate else None)


def test_fixtures_present():
    assert len(FIXTURES) >= 4


@pytest.mark.parametrize("path", FIXTURES, ids=lambda p: p.stem)
def test_layout_matches_fixture_exactly(path):
    assert render_lines(parse_stats(path)) == path.read_text()


@pytest.mark.parametrize("path", FIXTURES, ids=lambda p: p.stem)
def test_official_block_field_order(path):
    expected = [name for name, _, _ in parse_stats(path)]
    lines = official_lines(scale=10, edgefactor=16, nbfs=64, graph_generation=0.1,
                           num_mpi_processes=1, construction_time=0.2,
                           bfs=synthetic_pass(seed=1), sssp=synthetic_pass(seed=2))
    assert [name for name, _, _ in lines] == expected
    block = official_block(scale=10, edgefactor=16, nbfs=64, graph_generation=0.1,
                           num_mpi_processes=1, construction_time=0.2,
                           bfs=synthetic_pass(seed=1), sssp=synthetic_pass(seed=2))
    assert [line.split(":")[0] for line in block.splitlines()] == expected


@pytest.mark.parametrize("path", FIXTURES, ids=lambda p: p.stem)
def test_official_block_exact_lines(path):
    """Parameters and nedge lines are exact in the fixtures: reproduce them."""
    fixture = {name: value for name, value, _ in parse_stats(path)}
    text_lines = path.read_text().splitlines()
    if fixture["min_nedge"] == fixture["max_nedge"]:
        nedges = [int(fixture["min_nedge"])] * 64
    else:  # s9_ef4: one root saw a single edge, the 63 others 2025
        assert (fixture["min_nedge"], fixture["max_nedge"]) == (1, 2025)
        nedges = [2025] * 10 + [1] + [2025] * 53
    times = [1e-3] * 64
    block = official_block(
        scale=fixture["SCALE"], edgefactor=fixture["edgefactor"], nbfs=fixture["NBFS"],
        graph_generation=fixture["graph_generation"],
        num_mpi_processes=fixture["num_mpi_processes"],
        construction_time=fixture["construction_time"],
        bfs=PassResult(times, nedges, times), sssp=PassResult(times, nedges, times))
    produced = block.splitlines()
    for i, line in enumerate(text_lines):
        name = line.split(":")[0]
        if name in INT_FIELDS or name.endswith("_nedge") or name in (
                "graph_generation", "construction_time"):
            assert produced[i] == line


def test_harmonic_mean_marker_column():
    line = format_line("bfs  harmonic_mean_TEPS", 4.38523e7, "hmean")
    assert line == "bfs  harmonic_mean_TEPS:     !  4.38523e+07"
    assert line.index("!") == 29 and line.index("4") == 32


def test_value_column_and_formats():
    assert format_line("SCALE", 10, "int") == "SCALE:" + " " * 26 + "10"
    assert format_line("bfs  min_time", 0.000333512, "g") == "bfs  min_time:" + " " * 18 + "0.000333512"
    assert format_line("mean_nedge", 1993.375, "nedge") == "mean_nedge:" + " " * 21 + "1993.375"
    # %.11g keeps 11 significant digits where %g would keep 6
    assert format_line("mean_nedge", 123456.789, "nedge").endswith(" 123456.789")
    assert format_line("x", 123456.789, "g").endswith(" 123457")
    assert format_line("x", 4.02188e-05, "g").endswith(" 4.02188e-05")


def test_bfs_only_and_no_validation():
    lines = official_lines(scale=9, edgefactor=4, nbfs=64, graph_generation=1.0,
                           num_mpi_processes=1, construction_time=1.0,
                           bfs=synthetic_pass(validate=False))
    names = [name for name, _, _ in lines]
    assert not any(n.startswith("sssp") for n in names)
    assert not any(n.endswith("_validate") for n in names)
    assert len(names) == 6 + 7 + 7 + 7


def test_sssp_without_validation_keeps_bfs_validation():
    lines = official_lines(scale=9, edgefactor=4, nbfs=64, graph_generation=1.0,
                           num_mpi_processes=1, construction_time=1.0,
                           bfs=synthetic_pass(), sssp=synthetic_pass(validate=False))
    validate = [name for name, _, _ in lines if name.endswith("_validate")]
    assert validate and all(n.startswith("bfs  ") for n in validate)


def test_pass_as_dict_and_values():
    p = synthetic_pass(seed=3)
    as_dict = {"times": p.times, "nedges": p.nedges, "validate_times": p.validate_times}
    kwargs = dict(scale=9, edgefactor=4, nbfs=64, graph_generation=1.0,
                  num_mpi_processes=1, construction_time=1.0)
    assert official_block(bfs=p, **kwargs) == official_block(bfs=as_dict, **kwargs)
    values = {name: value for name, value, _ in official_lines(bfs=p, **kwargs)}
    t = teps_summary(p.times, p.nedges)
    assert values["bfs  harmonic_mean_TEPS"] == t["harmonic_mean"]
    assert values["bfs  min_TEPS"] == t["min"]
    assert values["bfs  stddev_validate"] == summary(p.validate_times)["stddev"]


def test_invalid_run_line():
    assert INVALID_RUN_LINE == "No results printed for invalid run."


def test_extensions_block():
    text = extensions_block({"kernel": "numba-cpu", "threads": np.int64(16),
                             "peak_memory_gib": 1.5, "validated": True})
    lines = text.splitlines()
    assert lines[0] == "# graph500 extensions (not part of the reference report)"
    assert lines[1] == "kernel:" + " " * 25 + "numba-cpu"
    assert lines[2] == "threads:" + " " * 24 + "16"
    assert lines[3] == "peak_memory_gib:" + " " * 16 + "1.5"
    assert lines[4] == "validated:" + " " * 22 + "True"
    assert text.endswith("\n")
    assert extensions_block({}) == ""


def test_long_extension_name_keeps_a_space():
    line = format_line("a_very_long_extension_field_name_x", 1.0, "g")
    assert line == "a_very_long_extension_field_name_x: 1"


# ---------------------------------------------------------------- JSON

def test_write_json_atomic_roundtrip(tmp_path):
    path = tmp_path / "sub" / "dir" / "run.json"
    obj = {"a": np.int64(3), "b": np.float32(0.5), "c": np.arange(3),
           "d": PassResult([1.0], [2], None), "z": 1}
    write_json_atomic(path, obj)
    assert json.loads(path.read_text()) == {
        "a": 3, "b": 0.5, "c": [0, 1, 2],
        "d": {"times": [1.0], "nedges": [2], "validate_times": None, "trace": None}, "z": 1}
    assert list(json.loads(path.read_text())) == ["a", "b", "c", "d", "z"]
    assert os.listdir(path.parent) == ["run.json"]


def test_write_json_atomic_unserialisable_keeps_old_file(tmp_path):
    path = tmp_path / "run.json"
    write_json_atomic(path, {"old": True})
    before = path.read_bytes()
    with pytest.raises(TypeError):
        write_json_atomic(path, {"new": object()})
    assert path.read_bytes() == before
    assert os.listdir(tmp_path) == ["run.json"]


def test_write_json_atomic_failure_while_writing_removes_temp(tmp_path, monkeypatch):
    path = tmp_path / "run.json"
    write_json_atomic(path, {"old": 1})
    before = path.read_bytes()

    def broken_replace(src, dst):
        raise OSError("disk gone")

    monkeypatch.setattr(run_report.os, "replace", broken_replace)
    with pytest.raises(OSError):
        write_json_atomic(path, {"new": 2})
    assert path.read_bytes() == before
    assert os.listdir(tmp_path) == ["run.json"]


def test_machine_info():
    info = machine_info()
    for key in ("hostname", "platform", "python", "cpu_count", "numpy", "numba"):
        assert key in info
    json.dumps(info)


def test_run_record(tmp_path):
    bfs, sssp = synthetic_pass(seed=4), synthetic_pass(seed=5, validate=False)
    rec = run_record(config={"scale": 10, "edgefactor": 16, "seeds": [2, 3]},
                     roots=np.arange(64, dtype=np.int64), graph_generation=0.5,
                     construction_time=0.25, bfs=bfs, sssp=sssp,
                     extensions={"kernel": "numba-cpu"})
    assert list(rec)[:10] == ["schema", "created", "config", "seeds", "roots", "machine",
                              "graph_generation", "construction_time", "num_mpi_processes", "bfs"]
    assert rec["num_mpi_processes"] == 1
    assert rec["schema"] == "graph500-run/1"
    assert rec["created"].endswith("+00:00")
    assert rec["seeds"] == [2, 3]
    assert rec["roots"] == list(range(64))
    assert rec["bfs"]["times"] == bfs.times and rec["bfs"]["nedges"] == bfs.nedges
    assert rec["bfs"]["validate_times"] == bfs.validate_times
    assert rec["sssp"]["validate_times"] is None
    st = rec["statistics"]
    assert st["bfs"]["time"] == summary(bfs.times)
    assert st["bfs"]["nedge"] == summary(bfs.nedges)
    assert st["bfs"]["TEPS"] == teps_summary(bfs.times, bfs.nedges)
    assert st["bfs"]["validate"] == summary(bfs.validate_times)
    assert st["sssp"]["validate"] is None
    assert rec["extensions"] == {"kernel": "numba-cpu"}
    path = tmp_path / "r.json"
    write_json_atomic(path, rec)
    assert json.loads(path.read_text())["statistics"]["bfs"]["time"] == st["bfs"]["time"]


def test_run_record_bfs_only():
    rec = run_record(config={}, roots=[1, 2], graph_generation=1, construction_time=1,
                     bfs=PassResult([1.0, 2.0], [10, 20], [0.1, 0.2]), seeds=(1, 1))
    assert rec["sssp"] is None and rec["statistics"]["sssp"] is None
    assert rec["seeds"] == [1, 1]


# ---------------------------------------------------------------- energy block

ENERGY = {
    "choice": "auto", "meters": ["NVML GPU 0 (NVIDIA H100 80GB HBM3)", "RAPL intel-rapl:0 (package-0)"],
    "unavailable": [], "loop_seconds": 10.0, "idle_seconds": 3.0, "idle_power_W": 120.5,
    "bfs": {"joules": 4012.5, "seconds": 10.03, "repetitions": 57, "mean_power_W": 400.0,
            "TEPS_per_W": 2.5e7, "meter_joules": {}},
    "sssp": None,
}


def test_energy_block_exact_text():
    assert run_report.energy_block(ENERGY) == (
        "# energy, GreenGraph500 style (not part of the reference report)\n"
        "bfs  energy_J:                  4012.5\n"
        "bfs  mean_power_W:              400\n"
        "bfs  TEPS_per_W:                2.5e+07\n"
        "bfs  energy_seconds:            10.03\n"
        "bfs  energy_repetitions:        57\n"
        "energy_meters:                  NVML GPU 0 (NVIDIA H100 80GB HBM3) + RAPL intel-rapl:0 (package-0)\n"
        "idle_power_W:                   120.5\n")


def test_energy_block_without_meters_says_why():
    energy = {**ENERGY, "meters": [], "idle_power_W": None, "bfs": None,
              "unavailable": ["nvml not available: NVML: Driver Not Loaded",
                              "rapl not available: no RAPL zones under /sys/class/powercap"]}
    assert run_report.energy_block(energy).splitlines()[1:] == [
        "energy_meters:                  none",
        "energy_unavailable:             nvml not available: NVML: Driver Not Loaded",
        "energy_unavailable:             rapl not available: no RAPL zones under /sys/class/powercap"]


def test_energy_block_off():
    assert run_report.energy_block(None) == "" and run_report.energy_lines(None) == []


def test_run_record_keeps_energy():
    rec = run_record(config={}, roots=[1], graph_generation=1, construction_time=1,
                     bfs=PassResult([1.0], [10], None), energy=ENERGY)
    assert list(rec)[-2:] == ["extensions", "energy"] and rec["energy"] == ENERGY
    assert rec["schema"] == "graph500-run/1"
    assert run_record(config={}, roots=[1], graph_generation=1, construction_time=1,
                      bfs=PassResult([1.0], [10], None))["energy"] is None


# ---------------------------------------------------------------- files

def test_write_atomic_bytes_and_text_with_a_plain_file_mode(tmp_path):
    umask = os.umask(0o027)
    try:
        run_report.write_atomic(tmp_path / "a.png", b"\x89PNG")
        run_report.write_atomic(tmp_path / "b.md", "é\n")
    finally:
        os.umask(umask)
    assert (tmp_path / "a.png").read_bytes() == b"\x89PNG"
    assert (tmp_path / "b.md").read_bytes() == "é\n".encode("utf-8")
    assert {oct((tmp_path / name).stat().st_mode & 0o777) for name in ("a.png", "b.md")} == {oct(0o640)}


def test_record_filename_sorts_by_date():
    names = [run_report.record_filename({"created": created, "config": {"scale": 22},
                                     "extensions": {"backend": backend}})
             for created, backend in (("2026-11-01T09:30:05+00:00", "gpu"),
                                      ("2026-11-01T10:30:05+01:00", "cpu"),
                                      ("2026-10-31T23:59:59+00:00", "c/p u"))]
    assert names == ["20261101T093005Z-gpu-scale22.json", "20261101T093005Z-cpu-scale22.json",
                     "20261031T235959Z-c_p_u-scale22.json"]
    assert sorted(names)[0] == names[2]
