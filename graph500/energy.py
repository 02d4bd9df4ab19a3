"""Energy meters and the GreenGraph500-style energy protocol.

Meters
------
A meter is anything with a ``name``, a ``read()`` that returns its raw counter,
and a ``joules(first, last)`` that turns two readings into the joules spent
between them.  Two kinds exist:

* `NvmlMeter`: one GPU's total-energy counter from NVML (nvidia-ml-py's
  ``nvmlDeviceGetTotalEnergyConsumption``), in millijoules since the driver
  loaded.  Volta and newer GPUs have it.
* `RaplMeter`: one RAPL domain of ``/sys/class/powercap/intel-rapl:*``, a CPU
  package (``package-N``) or its memory (``dram``).  Core, uncore and psys
  domains are not read: core and uncore are inside the package and psys
  overlaps everything.  ``energy_uj`` counts microjoules in
  ``[0, max_energy_range_uj]`` and then starts again at zero; a window
  handles that one wrap per reading.  Since Linux 5.10 the counters are
  readable by root only.

`open_meters` opens the meters of ``--energy auto|nvml|rapl|off`` and says, for
each kind it could not open, ``"<kind> not available: <reason>"``.

Protocol (GreenGraph500, after the reference's ``ENERGYLOOP_BFS`` builds)
-------------------------------------------------------------------------
Energy is measured over searches only, never over generation, construction
or validation.  One search lasts milliseconds, shorter than an energy
counter's update period, so `measure_repeated` runs the pass's searches again
and again (no validation, nothing else) until the window is at least
``--energy-loop`` seconds long.  The window's joules over its seconds is the
pass's mean power, and ``TEPS_per_W`` is the pass's harmonic-mean TEPS (from
the timed, validated pass) over that mean power.  The idle power, measured
over `IDLE_SECONDS` before the run starts, is reported beside it; it is not
subtracted.

`EnergyRun` strings these steps together for the harness and produces the
``energy`` entry of the JSON run record (see `EnergyRun.record`).

Several ranks (``mpiexec -n P``): every meter is read by one rank only. A
host-wide meter (a RAPL domain; NVML's GPUs when the run does not name its
own) by the first rank of its host, a rank's own GPUs (a GPU rank's device)
by that rank. The ranks repeat the pass together until the shortest of their
windows reaches the loop's length (one agreed decision per repetition: the
searches are collective), and the joules of all ranks are summed over the
longest window; meter names carry their host.
"""

import dataclasses
import glob
import os
import socket
import time

from graph500.comm import SelfCommunicator, host_placement
from graph500.errors import Graph500Error
from graph500.stats import teps_summary

CHOICES = ("auto", "nvml", "rapl", "off")
POWERCAP_ROOT = "/sys/class/powercap"
RAPL_DOMAINS = ("package", "dram")
IDLE_SECONDS = 3.0


class MeterUnavailable(Exception):
    """A kind of meter cannot be read on this machine; the message says why."""


# ---------------------------------------------------------------- RAPL

def _read_sysfs(path):
    """The stripped text of a sysfs file; unreadable files raise MeterUnavailable."""
    try:
        with open(path) as f:
            return f.read().strip()
    except PermissionError:
        raise MeterUnavailable(f"permission denied reading {path} (RAPL counters are root-only "
                               f"since Linux 5.10)") from None
    except OSError as error:
        raise MeterUnavailable(f"cannot read {path}: {error.strerror}") from None


class RaplMeter:
    """One RAPL domain of the powercap tree; counts microjoules with wrap-around."""

    def __init__(self, zone):
        self.counter_path = os.path.join(zone, "energy_uj")
        self.counter_period = int(_read_sysfs(os.path.join(zone, "max_energy_range_uj"))) + 1
        domain = _read_sysfs(os.path.join(zone, "name"))
        self.name = f"RAPL {os.path.basename(zone)} ({domain})"

    def read(self):
        """The counter now, in microjoules."""
        return int(_read_sysfs(self.counter_path))

    def joules(self, first, last):
        """Joules between two readings; a reading below the first means the counter wrapped once."""
        return ((last - first) % self.counter_period) / 1e6


def _rapl_zones(root):
    """Zones of ``root`` whose domain is a package or DRAM, in name order."""
    zones = sorted(glob.glob(os.path.join(root, "intel-rapl:*")))
    if not zones:
        raise MeterUnavailable(f"no RAPL zones under {root} (no powercap driver: a VM, "
                               f"a container, or a CPU without RAPL)")
    return [zone for zone in zones
            if _read_sysfs(os.path.join(zone, "name")).startswith(RAPL_DOMAINS)]


def open_rapl_meters(root=POWERCAP_ROOT):
    """A readable `RaplMeter` per package and DRAM domain under ``root``."""
    meters = [RaplMeter(zone) for zone in _rapl_zones(root)]
    if not meters:
        raise MeterUnavailable(f"no package or dram RAPL domain under {root}")
    for meter in meters:
        meter.read()
    return meters


# ---------------------------------------------------------------- NVML

def _text(value):
    """NVML strings are bytes in old nvidia-ml-py releases and str in new ones."""
    return value.decode() if isinstance(value, bytes) else value


class NvmlMeter:
    """One GPU's NVML total-energy counter (millijoules since the driver loaded)."""

    def __init__(self, nvml, handle, label):
        self._nvml = nvml
        self._handle = handle
        self.name = f"NVML GPU {label} ({_text(nvml.nvmlDeviceGetName(handle))})"

    def read(self):
        """The counter now, in millijoules."""
        return self._nvml.nvmlDeviceGetTotalEnergyConsumption(self._handle)

    def joules(self, first, last):
        """Joules between two readings."""
        return (last - first) / 1e3


def _nvml_handles(nvml, gpus):
    """(label, handle) of every GPU NVML sees, or of the GPUs with the given PCI bus ids."""
    if gpus is None:
        return [(index, nvml.nvmlDeviceGetHandleByIndex(index))
                for index in range(nvml.nvmlDeviceGetCount())]
    return [(bus_id, nvml.nvmlDeviceGetHandleByPciBusId(bus_id)) for bus_id in gpus]


def open_nvml_meters(gpus=None):
    """A readable `NvmlMeter` per GPU: all GPUs, or those whose PCI bus ids ``gpus`` lists."""
    try:
        import pynvml
    except ImportError:
        raise MeterUnavailable("nvidia-ml-py is not installed (pip install 'graph500[gpu]')") from None
    try:
        pynvml.nvmlInit()
        meters = [NvmlMeter(pynvml, handle, label) for label, handle in _nvml_handles(pynvml, gpus)]
        for meter in meters:
            meter.read()
    except pynvml.NVMLError as error:
        raise MeterUnavailable(f"NVML: {error}") from None
    if not meters:
        raise MeterUnavailable("NVML sees no GPU")
    return meters


# ---------------------------------------------------------------- choosing

def open_meters(choice, *, gpus=None, powercap_root=POWERCAP_ROOT):
    """The meters of ``--energy choice`` and the reasons the others cannot be read.

    Returns ``(meters, unavailable)``: ``unavailable`` holds one
    ``"<kind> not available: <reason>"`` per kind that ``auto`` tried and could
    not open.  ``nvml`` or ``rapl`` asked for by name and not readable is a
    Graph500Error; ``off`` gives no meters and no reasons.  ``gpus`` limits
    NVML to those PCI bus ids (None: every GPU).
    """
    if choice not in CHOICES:
        raise Graph500Error(f"--energy must be one of {', '.join(CHOICES)}, got {choice!r}")
    if choice == "off":
        return [], []
    openers = {"nvml": lambda: open_nvml_meters(gpus), "rapl": lambda: open_rapl_meters(powercap_root)}
    kinds = openers if choice == "auto" else (choice,)
    meters, unavailable = [], []
    for kind in kinds:
        try:
            meters += openers[kind]()
        except MeterUnavailable as reason:
            unavailable.append(f"{kind} not available: {reason}")
    if choice != "auto" and not meters:
        raise Graph500Error(f"--energy {choice}: {unavailable[0]}")
    return meters, unavailable


# ---------------------------------------------------------------- windows

class EnergyWindow:
    """Joules the meters count from `start` to the latest `sample`, and the seconds between.

    Each `sample` adds the joules since the previous one, so a RAPL counter may
    wrap once between two samples however long the window is.  As a context
    manager it starts on entry and samples on exit.
    """

    def __init__(self, meters):
        self.meters = list(meters)
        self.meter_joules = [0.0] * len(self.meters)
        self.seconds = 0.0

    def start(self):
        self._readings = [meter.read() for meter in self.meters]
        self._started = time.perf_counter()
        return self

    def sample(self):
        """Account for the energy since the previous sample; returns the window's joules."""
        self.seconds = time.perf_counter() - self._started
        readings = [meter.read() for meter in self.meters]
        for i, (meter, first, last) in enumerate(zip(self.meters, self._readings, readings)):
            self.meter_joules[i] += meter.joules(first, last)
        self._readings = readings
        return self.joules

    @property
    def joules(self):
        return sum(self.meter_joules)

    @property
    def mean_power(self):
        """Watts: the window's joules over its seconds."""
        return self.joules / self.seconds

    __enter__ = start

    def __exit__(self, *exc_info):
        self.sample()


def measure_idle_power(meters, seconds):
    """Mean watts of the meters over ``seconds`` of doing nothing."""
    with EnergyWindow(meters) as window:
        time.sleep(seconds)
    return window.mean_power


@dataclasses.dataclass
class EnergyMeasurement:
    """The window of a repeated pass: energy, length, repetitions and mean power."""

    joules: float
    seconds: float
    repetitions: int
    mean_power: float
    meter_joules: dict


def measure_repeated(meters, one_pass, min_seconds, comm=None):
    """Run ``one_pass()`` at least once and until the window lasts ``min_seconds``.

    With a communicator of several ranks (collective): every rank repeats
    until the shortest window lasts ``min_seconds``; the joules are the sum
    over the ranks' meters, the seconds the longest window.
    """
    comm = comm or SelfCommunicator()
    repetitions = 0
    with EnergyWindow(meters) as window:
        while repetitions == 0 or comm.allreduce(window.seconds, "min") < min_seconds:
            one_pass()
            repetitions += 1
            window.sample()
    joules, seconds = comm.allreduce(window.joules, "sum"), comm.allreduce(window.seconds, "max")
    meter_joules = {}
    for part in comm.allgather_object([(meter.name, joules) for meter, joules in zip(window.meters,
                                                                                    window.meter_joules)]):
        meter_joules.update(part)
    return EnergyMeasurement(joules=joules, seconds=seconds, repetitions=repetitions, mean_power=joules / seconds,
                             meter_joules=meter_joules)


# ---------------------------------------------------------------- the run

class EnergyRun:
    """The energy side of one benchmark run: meters, idle power, one window per pass.

    Without meters (``off``, or ``auto`` where none is readable) every
    measurement is skipped and `record` says why.
    """

    def __init__(self, choice, loop_seconds, *, gpus=None, powercap_root=POWERCAP_ROOT, comm=None):
        """Open the meters (collective with a communicator of several ranks: see the module docstring; a
        meter asked for by name that some rank cannot read is refused on every rank alike).

        ``gpus``: the PCI bus ids of the GPUs this process runs on (None: the
        run uses no GPU of its own, and every GPU is a host-wide meter).
        """
        if loop_seconds < 0:
            raise Graph500Error(f"--energy-loop must be at least 0 seconds, got {loop_seconds:g}")
        self.choice = choice
        self.loop_seconds = float(loop_seconds)
        self.comm = comm or SelfCommunicator()
        try:
            meters, unavailable = open_meters(choice, gpus=gpus, powercap_root=powercap_root)
            problem = None
        except Graph500Error as error:
            meters, unavailable, problem = [], [], str(error)
        if self.comm.size > 1:  # every rank raises the lowest failing rank's error (their hosts may differ)
            problems = self.comm.allgather_object(problem)
            rank, problem = next(((rank, text) for rank, text in enumerate(problems) if text), (0, None))
            if problem and rank:
                problem = f"rank {rank}: {problem}"
        if problem:
            raise Graph500Error(problem)
        if self.comm.size > 1:
            meters = self._read_here(meters, host_wide_gpus=gpus is None)
        self.meters = meters
        reports = self.comm.allgather_object(([meter.name for meter in meters], unavailable))
        self.meter_names = [name for names, _ in reports for name in names]
        self.unavailable = list(dict.fromkeys(reason for _, reasons in reports for reason in reasons))
        self.idle_seconds = None
        self.idle_power = None
        self.passes = {}

    def _read_here(self, meters, host_wide_gpus):
        """The meters this rank reads, named after its host: host-wide ones on the host's first rank only."""
        local_rank, _ = host_placement(self.comm)
        kept = [meter for meter in meters if local_rank == 0 or not (isinstance(meter, RaplMeter) or host_wide_gpus)]
        host = socket.gethostname()
        for meter in kept:
            meter.name = f"{host}: {meter.name}"
        return kept

    def measure_idle(self, seconds=IDLE_SECONDS):
        """The idle power before the run, summed over the ranks (nothing without meters; collective)."""
        if self.meter_names:
            self.comm.barrier()
            self.idle_seconds = seconds
            self.idle_power = self.comm.allreduce(measure_idle_power(self.meters, seconds), "sum")

    def measure_pass(self, kind, one_pass):
        """Repeat ``one_pass`` (the searches of a pass, nothing else) over the energy loop (collective)."""
        if self.meter_names:
            self.passes[kind] = measure_repeated(self.meters, one_pass, self.loop_seconds, self.comm)

    def _pass_record(self, measurement, result):
        harmonic_mean = teps_summary(result.times, result.nedges)["harmonic_mean"]
        return {
            "joules": measurement.joules,
            "seconds": measurement.seconds,
            "repetitions": measurement.repetitions,
            "mean_power_W": measurement.mean_power,
            "TEPS_per_W": harmonic_mean / measurement.mean_power,
            "meter_joules": measurement.meter_joules,
        }

    def record(self, results):
        """The run record's ``energy`` entry; ``results`` maps pass names to PassResults.

        None for ``--energy off``.  Otherwise a dict with ``choice``,
        ``meters`` (names of the meters summed), ``unavailable``,
        ``loop_seconds``, ``idle_seconds``, ``idle_power_W`` and, per pass
        measured (``bfs``, ``sssp``), ``joules``, ``seconds``,
        ``repetitions``, ``mean_power_W``, ``TEPS_per_W`` and
        ``meter_joules``; a pass not measured is None.
        """
        if self.choice == "off":
            return None
        entry = {
            "choice": self.choice,
            "meters": list(self.meter_names),
            "unavailable": list(self.unavailable),
            "loop_seconds": self.loop_seconds,
            "idle_seconds": self.idle_seconds,
            "idle_power_W": self.idle_power,
        }
        for kind in ("bfs", "sssp"):
            measured = kind in self.passes and kind in results
            entry[kind] = self._pass_record(self.passes[kind], results[kind]) if measured else None
        return entry
