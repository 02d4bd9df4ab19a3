"""graph500.energy: RAPL against a fake powercap tree (wrap-around included),
NVML mocked at the pynvml API boundary, windows and the energy-loop protocol
under a fake clock, the run's energy record, and a real NVML reading on a GPU."""

import importlib.util
import os
import sys
import types

import pytest

from graph500 import energy
from graph500.energy import (EnergyRun, EnergyWindow, MeterUnavailable, measure_idle_power,
                             measure_repeated, open_meters, open_nvml_meters, open_rapl_meters)
from graph500.errors import Graph500Error
from graph500.run_report import PassResult
from support import needs_mpi, run_ranks

RAPL_RANGE_UJ = 262143328850  # max_energy_range_uj of many Intel server CPUs


# ---------------------------------------------------------------- fakes

def make_zone(root, zone, domain, energy_uj, max_range_uj=RAPL_RANGE_UJ):
    path = root / zone
    path.mkdir(parents=True)
    (path / "name").write_text(domain + "\n")
    (path / "energy_uj").write_text(f"{energy_uj}\n")
    (path / "max_energy_range_uj").write_text(f"{max_range_uj}\n")
    return path


def set_counter(zone, energy_uj):
    (zone / "energy_uj").write_text(f"{energy_uj}\n")


@pytest.fixture
def powercap(tmp_path):
    """Two packages with core, uncore and dram subzones, a psys zone and an MMIO duplicate."""
    root = tmp_path / "powercap"
    zones = {
        "package-0": make_zone(root, "intel-rapl:0", "package-0", 1_000_000),
        "dram-0": make_zone(root, "intel-rapl:0:2", "dram", 2_000_000),
        "package-1": make_zone(root, "intel-rapl:1", "package-1", RAPL_RANGE_UJ - 500_000),
    }
    make_zone(root, "intel-rapl:0:0", "core", 5)
    make_zone(root, "intel-rapl:0:1", "uncore", 5)
    make_zone(root, "intel-rapl:2", "psys", 5)
    make_zone(root, "intel-rapl-mmio:0", "package-0", 5)
    (root / "intel-rapl").mkdir()  # the control type directory
    return root, zones


class FakeTime:
    """Stands in for the ``time`` module inside graph500.energy: a clock that sleep() advances."""

    def __init__(self, on_sleep=None):
        self.now = 100.0
        self.on_sleep = on_sleep

    def perf_counter(self):
        return self.now

    def sleep(self, seconds):
        self.now += seconds
        if self.on_sleep:
            self.on_sleep(seconds)


class FakeMeter:
    """A meter whose counter (joules) tests move by hand."""

    def __init__(self, name, joules=0.0):
        self.name = name
        self.counter = joules

    def read(self):
        return self.counter

    def joules(self, first, last):
        return last - first


class FakeNVMLError(Exception):
    pass


def fake_pynvml(energy_mj, names=None, bus_ids=None, init_error=None, energy_error=None):
    """A pynvml stand-in over GPUs whose counters are ``energy_mj`` (a list tests may change)."""
    names = names or [f"NVIDIA H100 80GB HBM3 #{i}" for i in range(len(energy_mj))]
    bus_ids = bus_ids or [f"00000000:{0x18 + i:02X}:00.0" for i in range(len(energy_mj))]

    def init():
        if init_error:
            raise FakeNVMLError(init_error)

    def total_energy(handle):
        if energy_error:
            raise FakeNVMLError(energy_error)
        return energy_mj[handle]

    return types.SimpleNamespace(
        NVMLError=FakeNVMLError,
        nvmlInit=init,
        nvmlDeviceGetCount=lambda: len(energy_mj),
        nvmlDeviceGetHandleByIndex=lambda index: index,
        nvmlDeviceGetHandleByPciBusId=lambda bus_id: bus_ids.index(bus_id),
        nvmlDeviceGetName=lambda handle: names[handle],
        nvmlDeviceGetTotalEnergyConsumption=total_energy,
    )


@pytest.fixture
def no_pynvml(monkeypatch):
    monkeypatch.setitem(sys.modules, "pynvml", None)  # `import pynvml` raises ImportError


# ---------------------------------------------------------------- RAPL

def test_rapl_reads_package_and_dram_domains_only(powercap):
    root, _ = powercap
    names = [meter.name for meter in open_rapl_meters(str(root))]
    assert names == ["RAPL intel-rapl:0 (package-0)", "RAPL intel-rapl:0:2 (dram)",
                     "RAPL intel-rapl:1 (package-1)"]


def test_rapl_window_sums_domains_across_a_wrap(powercap):
    root, zones = powercap
    meters = open_rapl_meters(str(root))
    window = EnergyWindow(meters).start()
    set_counter(zones["package-0"], 1_000_000 + 30_000_000)         # +30 J
    set_counter(zones["dram-0"], 2_000_000 + 4_000_000)             # +4 J
    set_counter(zones["package-1"], 1_499_999)  # wrapped: 500,000 to the top, 1 to zero, 1,499,999 after
    window.sample()
    assert window.meter_joules == pytest.approx([30.0, 4.0, 2.0])
    assert window.joules == pytest.approx(36.0)


def test_rapl_window_survives_several_wraps_sampled_in_between(tmp_path):
    zone = make_zone(tmp_path, "intel-rapl:0", "package-0", 900, max_range_uj=999)
    window = EnergyWindow(open_rapl_meters(str(tmp_path))).start()
    for reading in (400, 100, 950):  # +500, +700, +850 microjoules: two wraps in all
        set_counter(zone, reading)
        window.sample()
    assert window.joules == pytest.approx(2050e-6)


def test_rapl_absent_tree(tmp_path):
    with pytest.raises(MeterUnavailable, match="no RAPL zones under"):
        open_rapl_meters(str(tmp_path / "missing"))


def test_rapl_without_package_or_dram(tmp_path):
    make_zone(tmp_path, "intel-rapl:0", "psys", 1)
    with pytest.raises(MeterUnavailable, match="no package or dram RAPL domain"):
        open_rapl_meters(str(tmp_path))


def test_rapl_counter_readable_by_root_only(powercap, monkeypatch):
    root, _ = powercap

    def guarded_open(path, *args, **kwargs):
        if str(path).endswith("energy_uj"):
            raise PermissionError(13, "Permission denied", str(path))
        return open(path, *args, **kwargs)

    monkeypatch.setattr(energy, "open", guarded_open, raising=False)
    with pytest.raises(MeterUnavailable, match=r"permission denied reading .*intel-rapl:0/energy_uj"):
        open_rapl_meters(str(root))


def test_rapl_unreadable_counter(tmp_path):
    zone = make_zone(tmp_path, "intel-rapl:0", "package-0", 1)
    os.remove(zone / "energy_uj")
    (zone / "energy_uj").mkdir()
    with pytest.raises(MeterUnavailable, match="cannot read .*energy_uj: Is a directory"):
        open_rapl_meters(str(tmp_path))


# ---------------------------------------------------------------- NVML

def test_nvml_meters_count_millijoules_per_gpu(monkeypatch):
    counters = [5_000_000, 7_000_000]
    monkeypatch.setitem(sys.modules, "pynvml", fake_pynvml(counters, names=[b"NVIDIA H100", "NVIDIA A100"]))
    meters = open_nvml_meters()
    assert [meter.name for meter in meters] == ["NVML GPU 0 (NVIDIA H100)", "NVML GPU 1 (NVIDIA A100)"]
    window = EnergyWindow(meters).start()
    counters[0] += 12_500  # 12.5 J
    counters[1] += 250     # 0.25 J
    window.sample()
    assert window.meter_joules == pytest.approx([12.5, 0.25])


def test_nvml_meters_of_chosen_gpus(monkeypatch):
    monkeypatch.setitem(sys.modules, "pynvml", fake_pynvml([1, 2, 3]))
    meters = open_nvml_meters(gpus=["00000000:19:00.0"])
    assert [meter.name for meter in meters] == ["NVML GPU 00000000:19:00.0 (NVIDIA H100 80GB HBM3 #1)"]
    assert meters[0].read() == 2


@pytest.mark.parametrize("kwargs, reason", [
    ({"init_error": "Driver Not Loaded"}, "NVML: Driver Not Loaded"),
    ({"energy_error": "Not Supported"}, "NVML: Not Supported"),
])
def test_nvml_errors_become_reasons(monkeypatch, kwargs, reason):
    monkeypatch.setitem(sys.modules, "pynvml", fake_pynvml([1], **kwargs))
    with pytest.raises(MeterUnavailable, match=reason):
        open_nvml_meters()


def test_nvml_without_gpus(monkeypatch):
    monkeypatch.setitem(sys.modules, "pynvml", fake_pynvml([]))
    with pytest.raises(MeterUnavailable, match="NVML sees no GPU"):
        open_nvml_meters()


def test_nvml_not_installed(no_pynvml):
    with pytest.raises(MeterUnavailable, match="nvidia-ml-py is not installed"):
        open_nvml_meters()


# ---------------------------------------------------------------- choosing meters

def test_auto_without_any_meter_gives_reasons(tmp_path, no_pynvml):
    meters, unavailable = open_meters("auto", powercap_root=str(tmp_path))
    assert meters == []
    assert unavailable == [
        "nvml not available: nvidia-ml-py is not installed (pip install 'graph500[gpu]')",
        f"rapl not available: no RAPL zones under {tmp_path} (no powercap driver: a VM, "
        f"a container, or a CPU without RAPL)",
    ]


def test_auto_takes_every_readable_kind(powercap, monkeypatch):
    root, _ = powercap
    monkeypatch.setitem(sys.modules, "pynvml", fake_pynvml([1]))
    meters, unavailable = open_meters("auto", powercap_root=str(root))
    assert [meter.name.split()[0] for meter in meters] == ["NVML", "RAPL", "RAPL", "RAPL"]
    assert unavailable == []


def test_auto_with_rapl_only(powercap, no_pynvml):
    root, _ = powercap
    meters, unavailable = open_meters("auto", powercap_root=str(root))
    assert len(meters) == 3 and len(unavailable) == 1 and unavailable[0].startswith("nvml not available")


def test_named_kind_reads_only_that_kind(powercap, monkeypatch):
    root, _ = powercap
    monkeypatch.setitem(sys.modules, "pynvml", fake_pynvml([1]))
    meters, unavailable = open_meters("rapl", powercap_root=str(root))
    assert [meter.name.split()[0] for meter in meters] == ["RAPL"] * 3 and unavailable == []


def test_named_kind_not_available_is_an_error(tmp_path, no_pynvml):
    with pytest.raises(Graph500Error, match="^--energy nvml: nvml not available: nvidia-ml-py"):
        open_meters("nvml", powercap_root=str(tmp_path))
    with pytest.raises(Graph500Error, match="^--energy rapl: rapl not available: no RAPL zones"):
        open_meters("rapl", powercap_root=str(tmp_path))


def test_off_and_unknown_choices(tmp_path):
    assert open_meters("off", powercap_root=str(tmp_path)) == ([], [])
    with pytest.raises(Graph500Error, match="--energy must be one of auto, nvml, rapl, off"):
        open_meters("watts")


# ---------------------------------------------------------------- protocol

@pytest.fixture
def clock(monkeypatch):
    fake = FakeTime()
    monkeypatch.setattr(energy, "time", fake)
    return fake


def test_idle_power_over_a_rapl_tree(powercap, clock):
    root, zones = powercap
    meters = open_rapl_meters(str(root))

    def idle_draw(seconds):  # 40 W package 0, 5 W its DRAM, 35 W package 1 (which wraps)
        set_counter(zones["package-0"], 1_000_000 + int(40e6 * seconds))
        set_counter(zones["dram-0"], 2_000_000 + int(5e6 * seconds))
        set_counter(zones["package-1"], int(35e6 * seconds) - 500_000 - 1)

    clock.on_sleep = idle_draw
    assert measure_idle_power(meters, 2.0) == pytest.approx(80.0)


def test_repeated_pass_runs_until_the_window_is_long_enough(clock):
    meter = FakeMeter("fake")
    passes = []

    def one_pass():  # 0.3 s at 250 W
        passes.append(clock.now)
        clock.now += 0.3
        meter.counter += 75.0

    measured = measure_repeated([meter], one_pass, 1.0)
    assert measured.repetitions == 4 == len(passes)
    assert measured.seconds == pytest.approx(1.2)
    assert measured.joules == pytest.approx(300.0)
    assert measured.mean_power == pytest.approx(250.0)
    assert measured.meter_joules == {"fake": pytest.approx(300.0)}


def test_repeated_pass_runs_at_least_once(clock):
    meter = FakeMeter("fake")

    def one_pass():
        clock.now += 0.5
        meter.counter += 10.0

    measured = measure_repeated([meter], one_pass, 0.0)
    assert (measured.repetitions, measured.joules, measured.mean_power) == (1, 10.0, 20.0)


def test_energy_run_record(clock, monkeypatch):
    meters = [FakeMeter("GPU"), FakeMeter("CPU")]
    monkeypatch.setattr(energy, "open_meters", lambda choice, **kwargs: (meters, ["rapl not available: x"]))
    run = EnergyRun("auto", 2.0)

    def idle(seconds):
        meters[0].counter += 60.0 * seconds
        meters[1].counter += 20.0 * seconds

    clock.on_sleep = idle
    run.measure_idle(seconds=3.0)

    def bfs_pass():  # 0.5 s at 300 W + 100 W
        clock.now += 0.5
        meters[0].counter += 150.0
        meters[1].counter += 50.0

    run.measure_pass("bfs", bfs_pass)
    # times / nedges = 0.1 and 0.2 s per edge: harmonic-mean TEPS = 1 / 0.15
    entry = run.record({"bfs": PassResult([1.0, 2.0], [10, 10], None)})
    assert entry["choice"] == "auto" and entry["meters"] == ["GPU", "CPU"]
    assert entry["unavailable"] == ["rapl not available: x"]
    assert (entry["loop_seconds"], entry["idle_seconds"]) == (2.0, 3.0)
    assert entry["idle_power_W"] == pytest.approx(80.0)
    bfs = entry["bfs"]
    assert (bfs["repetitions"], bfs["seconds"], bfs["joules"]) == (4, 2.0, 800.0)
    assert bfs["mean_power_W"] == pytest.approx(400.0)
    assert bfs["TEPS_per_W"] == pytest.approx((1 / 0.15) / 400.0)
    assert bfs["meter_joules"] == {"GPU": 600.0, "CPU": 200.0}
    assert entry["sssp"] is None


def test_energy_run_without_meters_measures_nothing(tmp_path, no_pynvml):
    run = EnergyRun("auto", 10.0, powercap_root=str(tmp_path))
    run.measure_idle()
    run.measure_pass("bfs", lambda: pytest.fail("no pass should run without meters"))
    entry = run.record({"bfs": PassResult([1.0], [1], None)})
    assert entry["meters"] == [] and entry["bfs"] is None and entry["idle_power_W"] is None
    assert [reason.split(":")[0] for reason in entry["unavailable"]] == ["nvml not available",
                                                                         "rapl not available"]


def test_energy_run_off_and_bad_loop():
    assert EnergyRun("off", 0).record({}) is None
    with pytest.raises(Graph500Error, match="--energy-loop must be at least 0 seconds, got -1"):
        EnergyRun("off", -1)


# ---------------------------------------------------------------- a real GPU

def _nvml_gpu_present():
    return importlib.util.find_spec("pynvml") is not None and os.path.exists("/dev/nvidiactl")


@pytest.mark.gpu
@pytest.mark.skipif(not _nvml_gpu_present(), reason="needs nvidia-ml-py and an NVIDIA GPU")
def test_real_nvml_idle_power():
    meters = open_nvml_meters()
    watts = measure_idle_power(meters[:1], 2.0)
    assert 5.0 < watts < 1500.0, f"{meters[0].name}: {watts} W"


# ---------------------------------------------------------------- several ranks

ENERGY_ON_RANKS = """
import socket, sys, time
from graph500 import energy
from graph500.comm import world

comm = world()
assert comm.size == 2
run = energy.EnergyRun("auto", 0.3, powercap_root=sys.argv[1], comm=comm)
host = socket.gethostname()
# RAPL is host-wide: the host's first rank alone reads it, its meters named after the host.
assert [meter.name.startswith(host + ": RAPL") for meter in run.meters] == ([True] * 3 if comm.rank == 0 else [])
assert len(run.meter_names) == 3 and all(name.startswith(host + ": ") for name in run.meter_names)

class Meter:  # a meter of this rank's own: 10 J a pass on rank 0, 30 J on rank 1
    name = f"own meter of rank {comm.rank}"
    counter = 0.0
    def read(self):
        return self.counter
    def joules(self, first, last):
        return last - first

own = Meter()
passes = []
def one_pass():  # rank 1 is three times as fast: the ranks must still agree on the repetitions
    time.sleep(0.1 if comm.rank == 0 else 0.03)
    own.counter += 10.0 * (1 + 2 * comm.rank)
    passes.append(1)
measured = energy.measure_repeated([own], one_pass, 0.3, comm)
repetitions = comm.allgather_object(len(passes))
assert repetitions[0] == repetitions[1] == measured.repetitions >= 3, repetitions
assert measured.joules == 40.0 * measured.repetitions
assert sorted(measured.meter_joules) == ["own meter of rank 0", "own meter of rank 1"]
assert measured.seconds >= 0.3
print("ok", comm.rank)
"""


@needs_mpi
def test_energy_on_two_ranks_reads_each_meter_once_and_agrees_on_repetitions(powercap, tmp_path):
    root, _ = powercap
    script = tmp_path / "energy_ranks.py"
    script.write_text(ENERGY_ON_RANKS)
    result = run_ranks(2, script, root, timeout=120)
    assert result.returncode == 0, result.stderr
    assert result.stdout.count("ok") == 2
