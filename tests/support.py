"""What several test files share: starting programs on MPI ranks, reading report blocks, the fixtures' parameters.

`run_ranks(P, *argv)` runs ``python argv...`` on P ranks (a script under ``-m mpi4py``) with the launcher
installed beside this interpreter (the mpich wheel's, matching mpi4py's
library) or else the one on PATH, one Numba thread a rank (so P ranks may
oversubscribe a small machine), and the variables Open MPI needs to run as
root with more ranks than cores (MPICH ignores them). `needs_mpi` skips a
test where mpi4py or a launcher is missing. `report_fields` reads a report
block's ``name: value`` lines. `FIXTURES`: the reference fixtures' SCALE,
edgefactor and seeds by name. `numba_threads(count)`: Numba's thread count
for a ``with`` block; `THREADS`: one thread, and two where Numba has them.
`program_environment(threads)`: the environment `run_ranks` gives its
ranks, for other programs the tests start; its OpenMP threads (Numba's
workers) sleep when idle instead of spinning, which on an oversubscribed
machine took the cores from the ranks that had work (2 ranks x 2 threads on
2 cores: 13-27 s instead of 0.7 s for one SSSP test).
"""

import contextlib
import os
import pathlib
import shutil
import subprocess
import sys
import sysconfig

import numba
import pytest

THREADS = sorted({1, min(2, numba.config.NUMBA_NUM_THREADS)})  # Numba thread counts a test runs at
FIXTURES = {
    "s9_ef4_seed1-1": (9, 4, 1, 1),
    "s10_ef16_seed2-3": (10, 16, 2, 3),
    "s11_ef8_seed5-7": (11, 8, 5, 7),
    "s12_ef16_seed2-3": (12, 16, 2, 3),
}
REPOSITORY = pathlib.Path(__file__).resolve().parent.parent
MPIEXEC = shutil.which("mpiexec", path=sysconfig.get_path("scripts")) or shutil.which("mpiexec")
TIMEOUT = 600

try:
    import mpi4py  # noqa: F401
except ImportError:
    mpi4py = None

needs_mpi = pytest.mark.skipif(mpi4py is None or MPIEXEC is None,
                               reason="needs mpi4py and mpiexec (pip install '.[mpi]')")


def program_environment(threads):
    """The environment of a program the tests start: this checkout first on PYTHONPATH, ``threads`` Numba
    threads whose idle OpenMP workers sleep, and what Open MPI needs to run as root with more ranks than cores
    (MPICH ignores it)."""
    environment = dict(os.environ, NUMBA_NUM_THREADS=str(threads), OMP_WAIT_POLICY="passive",
                       OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1",
                       OMPI_MCA_rmaps_base_oversubscribe="1")
    environment.pop("PMI_SIZE", None)  # where pytest itself runs under a launcher
    environment["PYTHONPATH"] = os.pathsep.join(filter(None, [str(REPOSITORY), environment.get("PYTHONPATH")]))
    return environment


def run_ranks(num_ranks, *argv, timeout=TIMEOUT, threads=1):
    """The CompletedProcess (text) of ``python argv...`` on ``num_ranks`` ranks, run from the repository. A script
    runs under ``-m mpi4py``: an exception on one rank aborts them all, where the others would wait in a collective
    until the timeout; ``-m graph500`` runs as it is (its deliberate exits are its own)."""
    launched = [str(item) for item in argv]
    if launched[0] != "-m":
        launched = ["-m", "mpi4py", *launched]
    return subprocess.run([MPIEXEC, "-n", str(num_ranks), sys.executable, *launched],
                          capture_output=True, text=True, timeout=timeout, env=program_environment(threads),
                          cwd=REPOSITORY)


def report_fields(text):
    """``{name: value}`` of a report's ``name: value`` lines (comment lines skipped)."""
    pairs = {}
    for line in text.splitlines():
        if ":" in line and not line.startswith("#"):
            name, value = line.split(":", 1)
            pairs[name.strip()] = value.strip()
    return pairs


@contextlib.contextmanager
def numba_threads(count):
    previous = numba.get_num_threads()
    numba.set_num_threads(count)
    try:
        yield
    finally:
        numba.set_num_threads(previous)
