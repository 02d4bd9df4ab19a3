"""Kernels 2 (BFS) and 3 (SSSP), registered by name, and the interface they share.

A kernel is a class built once per graph and then asked for one search at a time::

    kernel = KernelClass(graph, **tunables)   # precomputation: charged to construction_time
    parents = kernel.search(root)             # BFS: parent array, -1 for unreached
    parents, distances = kernel.search(root)  # SSSP: parents and float32 distances

The class attributes ``name``, ``kind`` ("bfs" or "sssp") and ``backend``
("cpu" or "gpu") say what it is; `register` files it in the registry so that
``graph500 run --bfs NAME --sssp NAME`` can choose it. A kernel may keep a
per-level ``trace`` (a list of dicts) of its last search. Kernels never import
the harness or the validators.

Distributed kernels (class attribute ``distributed = True``) search a graph
split over the ranks of a run (`graph500.kernels.graph.PartitionedGraph`):
every rank builds the kernel on its part and calls ``search(root)`` with the
same root (the calls are collective), and each gets back the parents (and
distances) of the vertices it owns. Given a whole `CSRGraph` they search it
as the one part of a one-rank run. A run of several ranks takes only
distributed kernels; `register(distributed_default=True)` makes one the
default there.
"""

import importlib

_REGISTRY = {}
_DEFAULTS = {}  # (kind, backend, distributed) -> name
_BACKEND_MODULES = {
    "cpu": ("graph500.kernels.cpu",),
    "gpu": ("graph500.kernels.gpu",),
}


def register(default=False, distributed_default=False):
    """Class decorator: file the kernel under (kind, backend, name).

    ``default`` makes it the backend's default for one-process runs,
    ``distributed_default`` for runs of several ranks.
    """

    def decorate(kernel_class):
        key = (kernel_class.kind, kernel_class.backend)
        _REGISTRY.setdefault(key, {})[kernel_class.name] = kernel_class
        if default:
            _DEFAULTS[key + (False,)] = kernel_class.name
        if distributed_default:
            _DEFAULTS[key + (True,)] = kernel_class.name
        return kernel_class

    return decorate


def _load(backend):
    for module in _BACKEND_MODULES[backend]:
        importlib.import_module(module)


def is_distributed(kernel_class):
    """Whether the kernel searches a graph split over several ranks."""
    return getattr(kernel_class, "distributed", False)


def available(kind, backend, distributed=False):
    """Names of the registered kernels of a kind for a backend, the default first (``distributed``: those
    that run on several ranks)."""
    _load(backend)
    kernels = _REGISTRY.get((kind, backend), {})
    names = sorted(name for name, kernel in kernels.items() if is_distributed(kernel) or not distributed)
    default = _DEFAULTS.get((kind, backend, distributed))
    return [default] + [name for name in names if name != default] if default else names


def default_name(kind, backend, distributed=False):
    _load(backend)
    return _DEFAULTS[(kind, backend, distributed)]


def get(kind, backend, name=None, distributed=False):
    """The kernel class registered as ``name`` (the default when None); KeyError names the choices.

    ``distributed``: the run has several ranks, so only distributed kernels qualify.
    """
    _load(backend)
    kernels = _REGISTRY.get((kind, backend), {})
    name = name or _DEFAULTS.get((kind, backend, distributed))
    choices = ", ".join(available(kind, backend, distributed))
    if name not in kernels:
        raise KeyError(f"no {kind} kernel {name!r} for backend {backend}; choose from {choices}")
    if distributed and not is_distributed(kernels[name]):
        raise KeyError(f"the {kind} kernel {name!r} runs in one process only; with several ranks choose from {choices}")
    return kernels[name]
