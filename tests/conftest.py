"""What the whole session shares: kernels compiled into Numba's cache in the background; benchmark scripts last.

Every rank of a run compiles the kernels it calls, all ranks at once, so on
a cold cache (a fresh clone) the first runs of two ranks spend about 23 s
compiling the distributed BFS and SSSP on both cores. Instead, while the
first tests compile the one-process kernels in this process, a second
process compiles the distributed ones on the other core, as the warm-up
does (a generation, a search on a small graph, a build, a validation), and the ranks load them from the
cache; then the one-process run's default kernels, for the runs of `graph500` the tests start.
With a warm cache it only loads them (about 2 s). It only saves time:
it is stopped at the end of the session, finished or not, and its failure
fails no test.
"""

import subprocess
import sys

import pytest

from support import REPOSITORY, program_environment

COMPILE_KERNELS = """
from graph500.comm import SelfCommunicator
from graph500.distributed import DistributedBackend
from graph500.kernels.cpu.bfs_distributed import DistributedBFS
from graph500.kernels.cpu.sssp_distributed import DistributedDeltaStepping
from graph500.kernels import get
from graph500.kernels.cpu.backend import CPUBackend
from graph500.warm_up import _build_part, _generate_part, _search_part, _validate_part

backend = DistributedBackend(SelfCommunicator())
_generate_part(backend)  # a rank's slice: uint32 labels
_search_part(backend, DistributedBFS, {})
_search_part(backend, DistributedDeltaStepping, {})
_build_part(backend)
_validate_part(backend)
# then what a one-process run compiles (the runs of `graph500` the tests start load it)
backend = CPUBackend()
_generate_part(backend)
_build_part(backend)
_search_part(backend, get("bfs", "cpu"), {})
_search_part(backend, get("sssp", "cpu"), {})
_validate_part(backend)
"""


@pytest.fixture(scope="session", autouse=True)
def kernels_compiled_in_the_background():
    process = subprocess.Popen([sys.executable, "-c", COMPILE_KERNELS], stdout=subprocess.DEVNULL,
                               stderr=subprocess.DEVNULL, env=program_environment(1), cwd=REPOSITORY)
    yield
    process.terminate()
    process.wait()


def pytest_collection_modifyitems(items):
    """The benchmark scripts' tests run last: the programs they start run many kernels, which by then the other
    tests have put in Numba's on-disk cache, so they load them instead of compiling them again."""
    items.sort(key=lambda item: item.module.__name__ == "test_benchmarks")  # stable: the rest keep their order
