"""The backend contract (graph500.kernels.backend): every backend class conforms, with no GPU needed (the
classes are checked, not instances), and a class that breaks the contract is named with what it lacks."""

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
