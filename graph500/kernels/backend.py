"""The backend contract: what the harness (`graph500.harness`) and the warm-up ask of a backend.

A backend says how each step of the run protocol runs on its hardware. Four satisfy this contract:
`graph500.kernels.cpu.backend.CPUBackend` (one process, Numba), `graph500.kernels.gpu.backend.GPUBackend`
(one GPU, CuPy), `graph500.distributed.DistributedBackend` (P ranks on CPUs) and
`graph500.kernels.gpu.distributed_backend.DistributedGPUBackend` (P ranks, one GPU each); the distributed
ones satisfy `DistributedContract` too. `missing_members` names what a class lacks (tests/test_backends.py
checks all four, without a GPU: the classes, not instances).
"""

import inspect
from typing import Protocol


class Backend(Protocol):
    """One backend. Every step is collective on the distributed backends (every rank calls it in order)."""

    name: str  # "cpu" or "gpu": the backend of the registry's kernels it runs
    xp: object  # the array module of its arrays (NumPy or CuPy)
    # whether the validator is set up before the BFS (the edge list then freed before any kernel's arrays are made:
    # the CPUs), or after it (the GPUs: the validator's copy of its tuples on the device would sit under the BFS's
    # set-up there)
    validator_first: bool

    def describe(self):
        """Facts for the report's extensions block (device, libraries, memory estimate and peak)."""

    def energy_devices(self):
        """PCI bus ids of the GPUs whose energy the run draws."""

    def check_memory(self, scale, edgefactor):
        """Refuse (Graph500Error), before anything is generated, a run that would not fit."""

    def memory_step(self, name):
        """The run's step ``name`` begins ("generation", "kernel 1", "validation set-up", "bfs set-up", "bfs pass",
        "sssp set-up", "sssp pass"): a backend that measures its memory by step reports the most each used
        (`describe`, fields named by `step_field`)."""

    def kernel_options(self, kernel_class):
        """Constructor options the backend's memory plan sets for ``kernel_class``."""

    def generate(self, scale, edgefactor, seed1, seed2, progress=None):
        """The reference's edge list ``(src, dst, weights)`` (on P ranks: this rank's slice)."""

    def generate_rmat(self, scale, edgefactor, probabilities, seed):
        """An R-MAT edge list, for experiments."""

    def edges_from_host(self, src, dst, weights, num_vertices):
        """Host edge arrays as `generate` returns them (the warm-up's small graphs)."""

    def build(self, src, dst, num_vertices, weights):
        """Kernel 1: the graph the kernels search. It may give the edge list's memory back: the arrays must not be
        read again but by `validation_graph` or `incident_vertices`, which generate them again first."""

    def from_host_csr(self, graph):
        """A host `CSRGraph` as `build` returns graphs (the warm-up's)."""

    def validation_graph(self, src, dst, num_vertices, weights):
        """The validators' graph of the run's tuples."""

    def incident_vertices(self, src, dst, num_vertices):
        """Whether vertices have an edge other than a self-loop (for the search keys), indexed by an int64 array of
        candidates: host booleans of all N vertices, or an object indexed alike (`distributed.IncidentVertices`)."""

    def timed(self, search, root):
        """``(output, seconds)`` of one search."""


class DistributedContract(Backend, Protocol):
    """A backend of P ranks."""

    distributed: bool  # True

    def one_rank(self):
        """This backend on one rank, no collective (the warm-up's)."""

    def blocks(self, num_vertices):
        """The vertex partition over the ranks (Graph500Error where a rank would own none)."""


def step_field(prefix, step):
    """The record field of a run step's measure: ``prefix`` and the step's name in snake case (``bfs set-up`` ->
    ``<prefix>bfs_set_up``)."""
    return prefix + step.replace(" ", "_").replace("-", "_")


def missing_members(cls, contract=Backend):
    """The members of ``contract`` that ``cls`` lacks, or whose parameters differ by name: [] when it conforms."""
    missing = []
    for klass in reversed(contract.__mro__):
        if klass in (object, Protocol) or not getattr(klass, "_is_protocol", False):
            continue
        for name in getattr(klass, "__annotations__", {}):
            if not hasattr(cls, name):
                missing.append(name)
        for name, member in vars(klass).items():
            if name.startswith("_") or not inspect.isfunction(member):
                continue
            if not callable(getattr(cls, name, None)):
                missing.append(name)
            elif list(inspect.signature(getattr(cls, name)).parameters) != list(inspect.signature(member).parameters):
                missing.append(f"{name}{inspect.signature(getattr(cls, name))}")
    return missing
