"""The backend contract (graph500.kernels.backend): every backend class conforms, with no GPU needed (the
classes are checked, not instances), and a class that breaks the contract is named with what it lacks."""

import sys

import pytest

from graph500.distributed import DistributedBackend
from graph500.kernels.backend import Backend, DistributedContract, missing_members
from graph500.kernels.cpu.backend import CPUBackend
from graph500.kernels.gpu.backend import GPUBackend
from graph500.kernels.gpu.distributed_backend import DistributedGPUBackend


@pytest.mark.parametrize("backend_class", [CPUBackend, GPUBackend, DistributedBackend, DistributedGPUBackend],
                         ids=lambda cls: cls.__name__)
def test_every_backend_conforms(backend_class):
    assert missing_members(backend_class, Backend) == []
    if getattr(backend_class, "distributed", False):
        assert missing_members(backend_class, DistributedContract) == []


def test_backends_say_which_they_are():
    assert (CPUBackend.name, GPUBackend.name, DistributedBackend.name, DistributedGPUBackend.name) == \
        ("cpu", "gpu", "cpu", "gpu")
    assert DistributedBackend.distributed and DistributedGPUBackend.distributed
    assert not getattr(CPUBackend, "distributed", False) and not getattr(GPUBackend, "distributed", False)


def test_a_class_that_breaks_the_contract_is_named():
    class Partial(CPUBackend):
        timed = None  # not a method

        def build(self, src, dst, num_vertices):  # a parameter short
            return None

    assert missing_members(Partial) == ["build(self, src, dst, num_vertices)", "timed"]
    assert missing_members(CPUBackend, DistributedContract) == ["distributed", "one_rank", "blocks"]


@pytest.mark.parametrize("validator_first, steps", [
    (True, ["generation", "kernel 1", "validation set-up", "bfs set-up", "bfs pass", "sssp set-up", "sssp pass"]),
    (False, ["generation", "kernel 1", "bfs set-up", "validation set-up", "bfs pass", "sssp set-up", "sssp pass"]),
])
def test_the_harness_names_each_step_to_the_backend_as_it_begins(monkeypatch, validator_first, steps):
    import io

    from graph500 import harness

    named = []
    monkeypatch.setattr(CPUBackend, "memory_step", lambda self, name: named.append(name))
    monkeypatch.setattr(CPUBackend, "validator_first", validator_first)
    config = harness.RunConfig(scale=8, num_roots=4, progress=False, energy="off")
    assert harness.run(config, stdout=io.StringIO()) == 0
    assert named == steps


class _FakePool:
    """CuPy's memory pool as `runtime.PoolHighWater` reads it: bytes in use, and held (in use and cached)."""

    def __init__(self):
        self.used, self.cached = 0, 0

    def malloc(self, size):
        taken = min(size, self.cached)
        self.cached -= taken
        self.used += size
        return size

    def free(self, size):
        self.used -= size
        self.cached += size

    def used_bytes(self):
        return self.used

    def total_bytes(self):
        return self.used + self.cached

    def free_all_blocks(self):
        self.cached = 0


def test_the_pools_high_water_counts_each_steps_arrays_in_use(monkeypatch):
    from types import SimpleNamespace

    from graph500.kernels.gpu import runtime

    pool = _FakePool()
    fake = SimpleNamespace(get_default_memory_pool=lambda: pool, cuda=SimpleNamespace(set_allocator=lambda f: None))
    monkeypatch.setattr(runtime, "cupy", fake)
    pool.malloc(100)  # in use before the measurement starts
    pool.free(100)  # cached: given back by start
    high_water = runtime.PoolHighWater()
    high_water.start()
    assert (high_water.peak_bytes, high_water.step_peaks) == (0, {})
    high_water._malloc(30)  # before any step: the high-water mark only
    high_water.step("kernel 1")
    high_water._malloc(50)
    pool.free(50)
    high_water.step("bfs pass")  # 30 in use as it begins; the cached 50 serve the next allocation
    high_water._malloc(20)
    high_water._malloc(10)
    high_water.step("kernel 1")  # a step named again keeps its most
    assert high_water.step_peaks == {"kernel 1": 80, "bfs pass": 60}
    assert high_water.peak_bytes == 80  # held: the 50 freed stayed cached
    assert high_water.step_fields() == {"device_arrays_bytes_kernel_1": 80, "device_arrays_bytes_bfs_pass": 60}
    assert high_water.step_fields(lambda used: 2 * used)["device_arrays_bytes_kernel_1"] == 160  # over the ranks


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the high-water mark's reset is Linux's")
def test_each_step_keeps_the_resident_peak_reached_while_it_ran():
    import numpy as np

    from graph500.harness import ResidentSteps, peak_resident_bytes

    resident = ResidentSteps()
    assert resident.measured
    resident.step("large")
    large = np.ones(2**25)  # 256 MiB, touched
    del large
    resident.step("small")
    small = np.ones(2**20)
    del small
    peaks = resident.finish()
    assert list(peaks) == ["large", "small"]
    assert peaks["large"] > peaks["small"] + 200 * 2**20  # the reset between them forgot the large array
    assert resident.peak() >= peaks["large"] and resident.peak() >= peak_resident_bytes()


def test_without_the_high_water_marks_reset_no_step_is_measured(tmp_path):
    from graph500.harness import ResidentSteps, peak_resident_bytes

    resident = ResidentSteps(status=tmp_path / "status", clear_refs=tmp_path / "clear_refs")  # neither exists
    resident.step("kernel 1")
    assert not resident.measured and resident.finish() == {}
    assert resident.peak() == peak_resident_bytes()
