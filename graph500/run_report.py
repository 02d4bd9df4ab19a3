"""The run report: the reference's text block, our extensions, and a JSON record.

Text layout (section 7 of the reference specification, checked byte for byte
against ``tests/data/reference-v3/*.stats``): one ``name: value`` a line; the
name and its colon are left-justified in 32 columns so the value starts at
column 33.  Times and TEPS use C's ``%g``, nedge statistics ``%.11g``, the
integer parameters ``%d``.  The two harmonic means carry a ``!  `` marker that
takes the last three of the 32 columns.  Pass prefixes are ``"bfs  "`` (two
spaces) and ``"sssp "``; the seven nedge lines have none.

Every line is described by a triple ``(name, value, kind)`` and rendered by
`render_lines`; ``kind`` is one of:

* ``"int"``   -- ``%d`` (SCALE, edgefactor, NBFS, num_mpi_processes)
* ``"g"``     -- ``%g`` (times, TEPS, validation times)
* ``"nedge"`` -- ``%.11g``
* ``"hmean"`` -- ``%g`` behind the ``!  `` marker (harmonic_mean_TEPS)
* ``"str"``   -- the value as it is

Python's ``%`` formatting of ``%d``, ``%g`` and ``%.11g`` gives the same text
as C's ``printf`` for finite values.

Blocks end with a newline after their last line: write them with
``sys.stdout.write(block)`` (or ``print(block, end="")``).

After the official block come our own blocks, each under a ``#`` comment
line: `energy_block` (GreenGraph500-style ``bfs  energy_J``,
``bfs  mean_power_W``, ``bfs  TEPS_per_W``, the same for sssp, the meters
summed and the idle power) and `extensions_block`.

JSON run record, schema ``graph500-run/1``
------------------------------------------
One file per run (`record_filename` names it so that names sort by date),
written atomically (`write_json_atomic`).  Keys, in this order:

* ``schema`` -- ``"graph500-run/1"``; ``created`` -- UTC ISO 8601 time.
* ``config`` -- the run's parameters; ``seeds``; ``roots`` -- the search keys.
* ``machine`` -- `machine_info`: hostname, platform, CPUs, library versions.
* ``graph_generation``, ``construction_time`` -- seconds.
* ``num_mpi_processes`` -- the run's ranks (1 without an MPI launcher); a
  run of several ranks also says its ``hosts``, ``threads_per_rank`` and
  ``mpi_library`` in ``extensions``.
* ``bfs``, ``sssp`` -- per-search ``times``, ``nedges``, ``validate_times``
  (None when validation was skipped); None for a pass that did not run.  A
  traced run adds ``trace``: per search, a list of per-level dicts with
  ``direction``, ``frontier``, ``edges`` and ``seconds``.
* ``statistics`` -- per pass the `summary` of times, nedges and validation
  times and the `teps_summary`.
* ``extensions`` -- the extensions block's fields (``backend``, ``device``,
  ``bfs_kernel``, ``sssp_kernel``, ``validation``, ...).
* ``energy`` -- `graph500.energy.EnergyRun.record`: None for ``--energy off``.

The version changes only when an existing key changes its meaning or shape.
Keys added later (``energy``, ``bfs.trace``, ``num_mpi_processes``) keep ``/1``: readers treat a
missing one as "not measured" and ignore keys they do not know.
"""

import dataclasses
import datetime
import importlib
import importlib.util
import json
import os
import platform
import socket
import sys
import tempfile

import numpy as np

from graph500.stats import summary, teps_summary

NAME_WIDTH = 32
HMEAN_MARK = "!  "
INVALID_RUN_LINE = "No results printed for invalid run."
EXTENSIONS_HEADER = "# graph500 extensions (not part of the reference report)"
ENERGY_HEADER = "# energy, GreenGraph500 style (not part of the reference report)"
SCHEMA = "graph500-run/1"

BFS_PREFIX = "bfs  "
SSSP_PREFIX = "sssp "
ORDER_STATS = ("min", "firstquartile", "median", "thirdquartile", "max")


@dataclasses.dataclass
class PassResult:
    """One pass (BFS or SSSP) over all roots: per-search values, in root order.

    ``validate_times`` is None when validation was skipped; ``trace`` is None
    unless the run was traced (then per search, a list of per-level dicts).
    """

    times: list
    nedges: list
    validate_times: list = None
    trace: list = None


# ---------------------------------------------------------------- text lines

def format_value(value, kind):
    """The text of one value, as the reference's printf would write it."""
    if kind == "int":
        return "%d" % int(value)
    if kind in ("g", "hmean"):
        return "%g" % float(value)
    if kind == "nedge":
        return "%.11g" % float(value)
    if kind == "str":
        return str(value)
    raise ValueError(f"unknown line kind {kind!r}")


def format_line(name, value, kind):
    """One ``name: value`` line (no newline), value at column 33."""
    label = name + ":"
    mark = HMEAN_MARK if kind == "hmean" else " "
    width = NAME_WIDTH - len(mark)
    return label.ljust(width) + mark + format_value(value, kind)


def render_lines(lines):
    """Render ``(name, value, kind)`` triples, one line each, newline-terminated."""
    return "".join(format_line(name, value, kind) + "\n" for name, value, kind in lines)


def _field(obj, name):
    """Attribute ``name`` of a PassResult-like object, or key ``name`` of a dict."""
    return obj[name] if isinstance(obj, dict) else getattr(obj, name)


def _summary_lines(prefix, suffix, stats):
    """The seven ``min .. stddev`` lines of a `summary` dict."""
    return [(f"{prefix}{key}_{suffix}", value, "g") for key, value in stats.items()]


def _teps_lines(prefix, stats):
    """The seven TEPS lines of a `teps_summary` dict."""
    lines = [(f"{prefix}{key}_TEPS", stats[key], "g") for key in ORDER_STATS]
    lines.append((f"{prefix}harmonic_mean_TEPS", stats["harmonic_mean"], "hmean"))
    lines.append((f"{prefix}harmonic_stddev_TEPS", stats["harmonic_stddev"], "g"))
    return lines


def official_lines(*, scale, edgefactor, nbfs, graph_generation, num_mpi_processes,
                   construction_time, bfs, sssp=None):
    """The reference report as ``(name, value, kind)`` triples, in its order.

    ``bfs`` (required) and ``sssp`` (None for a BFS-only run) are PassResult
    objects or dicts with ``times``, ``nedges`` and ``validate_times``; a pass
    whose ``validate_times`` is None gets no ``_validate`` lines.  The nedge
    lines come from the BFS pass.
    """
    passes = [(BFS_PREFIX, bfs)] + ([(SSSP_PREFIX, sssp)] if sssp is not None else [])
    lines = [
        ("SCALE", scale, "int"),
        ("edgefactor", edgefactor, "int"),
        ("NBFS", nbfs, "int"),
        ("graph_generation", graph_generation, "g"),
        ("num_mpi_processes", num_mpi_processes, "int"),
        ("construction_time", construction_time, "g"),
    ]
    for prefix, result in passes:
        lines += _summary_lines(prefix, "time", summary(_field(result, "times")))
    nedge = summary(_field(bfs, "nedges"))
    lines += [(f"{key}_nedge", value, "nedge") for key, value in nedge.items()]
    for prefix, result in passes:
        lines += _teps_lines(prefix, teps_summary(_field(result, "times"), _field(result, "nedges")))
    for prefix, result in passes:
        validate = _field(result, "validate_times")
        if validate is not None:
            lines += _summary_lines(prefix, "validate", summary(validate))
    return lines


def official_block(*, scale, edgefactor, nbfs, graph_generation, num_mpi_processes,
                   construction_time, bfs, sssp=None):
    """The reference's report block as text (see `official_lines`)."""
    return render_lines(official_lines(
        scale=scale, edgefactor=edgefactor, nbfs=nbfs, graph_generation=graph_generation,
        num_mpi_processes=num_mpi_processes, construction_time=construction_time,
        bfs=bfs, sssp=sssp))


def _extension_kind(value):
    """Line kind of an extension value: ints %d, floats %g, anything else as is."""
    if isinstance(value, (bool, np.bool_, str)):
        return "str"
    if isinstance(value, (int, np.integer)):
        return "int"
    if isinstance(value, (float, np.floating)):
        return "g"
    return "str"


def extensions_block(fields):
    """Our own fields, after the official block, under a marker comment line.

    Same layout as the reference lines.  Strings (and anything not a number)
    are printed as they are, integers with ``%d``, floats with ``%g``.
    Returns ``""`` when ``fields`` is empty.
    """
    if not fields:
        return ""
    lines = [(name, value, _extension_kind(value)) for name, value in fields.items()]
    return EXTENSIONS_HEADER + "\n" + render_lines(lines)


def _energy_pass_lines(prefix, measured):
    """The lines of one pass's energy window (see `graph500.energy.EnergyRun.record`)."""
    return [
        (f"{prefix}energy_J", measured["joules"], "g"),
        (f"{prefix}mean_power_W", measured["mean_power_W"], "g"),
        (f"{prefix}TEPS_per_W", measured["TEPS_per_W"], "g"),
        (f"{prefix}energy_seconds", measured["seconds"], "g"),
        (f"{prefix}energy_repetitions", measured["repetitions"], "int"),
    ]


def energy_lines(energy):
    """The energy block as ``(name, value, kind)`` triples; none for ``energy`` None (off).

    ``energy`` is the record's ``energy`` entry: per measured pass its energy,
    mean power, TEPS per watt, window and repetitions, then the meters summed
    (``none`` when no meter could be read), the idle power, and one
    ``energy_unavailable`` line per meter kind that could not be read.
    """
    if energy is None:
        return []
    lines = []
    for prefix, kind in ((BFS_PREFIX, "bfs"), (SSSP_PREFIX, "sssp")):
        if energy.get(kind):
            lines += _energy_pass_lines(prefix, energy[kind])
    lines.append(("energy_meters", " + ".join(energy["meters"]) or "none", "str"))
    if energy["idle_power_W"] is not None:
        lines.append(("idle_power_W", energy["idle_power_W"], "g"))
    lines += [("energy_unavailable", reason, "str") for reason in energy["unavailable"]]
    return lines


def energy_block(energy):
    """The energy block under its comment line; ``""`` for ``energy`` None."""
    lines = energy_lines(energy)
    return ENERGY_HEADER + "\n" + render_lines(lines) if lines else ""


# ---------------------------------------------------------------- JSON record

def json_default(obj):
    """``json`` hook: numpy scalars and arrays and dataclasses to Python types."""
    if isinstance(obj, np.ndarray):
        return obj.tolist()
    if isinstance(obj, np.generic):
        return obj.item()
    if dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        return dataclasses.asdict(obj)
    raise TypeError(f"object of type {type(obj).__name__} is not JSON serializable")


def _new_file_mode():
    """The mode ``open()`` gives a new file: 0o666 less the process's umask."""
    umask = os.umask(0o022)
    os.umask(umask)
    return 0o666 & ~umask


def write_atomic(path, data):
    """Write ``data`` (str as UTF-8, or bytes) to ``path`` atomically.

    A temporary file beside ``path`` is written, flushed to disk and renamed
    over ``path`` (os.replace); any error removes the temporary file and
    leaves ``path`` as it was.  Parent directories are created.  The file
    gets the mode a plain ``open()`` would give it (mkstemp's is 0o600).
    """
    if isinstance(data, str):
        data = data.encode("utf-8")
    path = os.fspath(path)
    directory = os.path.dirname(os.path.abspath(path))
    os.makedirs(directory, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=directory, prefix="." + os.path.basename(path) + ".",
                               suffix=".tmp")
    try:
        os.chmod(tmp, _new_file_mode())
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except FileNotFoundError:
            pass
        raise


def unwritable_reason(path):
    """None when `write_atomic` can write ``path``, else a one-line reason (checked before a long run).

    ``path`` must not be a directory; its nearest existing ancestor must be a
    directory in which a file can be made (a temporary one, removed at once:
    nothing is created, no parent directory either)."""
    path = os.path.abspath(os.fspath(path))
    if os.path.isdir(path):
        return f"{path} is a directory"
    directory = os.path.dirname(path)
    while not os.path.exists(directory):
        directory = os.path.dirname(directory)
    if not os.path.isdir(directory):
        return f"cannot write {path}: {directory} is not a directory"
    try:
        fd, probe = tempfile.mkstemp(dir=directory, prefix=".graph500-probe.", suffix=".tmp")
    except OSError as error:
        return f"cannot write {path}: no file can be made in {directory} ({error.strerror or error})"
    os.close(fd)
    os.unlink(probe)
    return None


def write_json_atomic(path, obj):
    """Write ``obj`` as JSON to ``path`` atomically (see `write_atomic`).

    The text is produced before any file is touched, so an object JSON cannot
    encode leaves ``path`` as it was.
    """
    write_atomic(path, json.dumps(obj, indent=2, sort_keys=False, default=json_default) + "\n")


def _filename_part(text):
    """``text`` with anything but letters, digits, ``.``, ``_`` and ``-`` made ``_``."""
    return "".join(c if c.isalnum() or c in "._-" else "_" for c in str(text))


def record_filename(record):
    """``<UTC time>-<backend>-scale<SCALE>.json``: names that sort by date.

    For example ``20261101T093005Z-gpu-scale22.json``.
    """
    created = datetime.datetime.fromisoformat(record["created"]).astimezone(datetime.timezone.utc)
    backend = record.get("extensions", {}).get("backend", "run")
    return (f"{created:%Y%m%dT%H%M%SZ}-{_filename_part(backend)}-"
            f"scale{int(record['config']['scale'])}.json")


def _module_version(name):
    """``module.__version__`` or None when the module cannot be imported."""
    try:
        return getattr(importlib.import_module(name), "__version__", None)
    except Exception:  # absent, or broken (e.g. CuPy without a CUDA driver)
        return None


def machine_info():
    """Where the run happened: host, platform, Python, CPUs, library versions."""
    info = {
        "hostname": socket.gethostname(),
        "platform": platform.platform(),
        "machine": platform.machine(),
        "python": sys.version.split()[0],
        "cpu_count": os.cpu_count(),
        "numpy": np.__version__,
        "numba": _module_version("numba"),
    }
    if importlib.util.find_spec("cupy") is not None:
        info["cupy"] = _module_version("cupy")
    return info


def _plain_list(values):
    """A list of Python numbers (or None) from any sequence or array."""
    return None if values is None else np.asarray(values).tolist()


def _pass_record(result):
    """Every per-root value of one pass, or None for a pass that did not run."""
    if result is None:
        return None
    record = {key: _plain_list(_field(result, key)) for key in ("times", "nedges", "validate_times")}
    trace = result.get("trace") if isinstance(result, dict) else getattr(result, "trace", None)
    if trace is not None:
        record["trace"] = trace
    return record


def _pass_statistics(result):
    """summary/teps_summary dicts of one pass (validate None when skipped)."""
    if result is None:
        return None
    validate = _field(result, "validate_times")
    return {
        "time": summary(_field(result, "times")),
        "nedge": summary(_field(result, "nedges")),
        "TEPS": teps_summary(_field(result, "times"), _field(result, "nedges")),
        "validate": None if validate is None else summary(validate),
    }


def run_record(*, config, roots, graph_generation, construction_time, bfs, sssp=None,
               extensions=None, seeds=None, energy=None, num_mpi_processes=1):
    """The JSON record of one run (schema ``graph500-run/1``, see the module docstring).

    ``seeds`` defaults to ``config["seeds"]`` when present.  ``bfs``/``sssp``
    are PassResult-like or None; each pass keeps all its per-root values and
    ``statistics`` holds their `summary`/`teps_summary` dicts.  ``energy`` is
    `graph500.energy.EnergyRun.record`'s entry (None: not measured).
    """
    config = dict(config)
    if seeds is None:
        seeds = config.get("seeds")
    return {
        "schema": SCHEMA,
        "created": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        "config": config,
        "seeds": _plain_list(seeds),
        "roots": _plain_list(roots),
        "machine": machine_info(),
        "graph_generation": float(graph_generation),
        "construction_time": float(construction_time),
        "num_mpi_processes": int(num_mpi_processes),
        "bfs": _pass_record(bfs),
        "sssp": _pass_record(sssp),
        "statistics": {"bfs": _pass_statistics(bfs), "sssp": _pass_statistics(sssp)},
        "extensions": dict(extensions or {}),
        "energy": energy,
    }
