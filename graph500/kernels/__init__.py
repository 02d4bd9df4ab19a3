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
"""

import importlib

_REGISTRY = {}
_DEFAULTS = {}
_BACKEND_MODULES = {
    "cpu": ("graph500.kernels.cpu",),
    "gpu": ("graph500.kernels.gpu",),
}


def register(default=False):
    """Class decorator: file the kernel under (kind, backend, name); ``default`` makes it the backend's default."""

    def decorate(kernel_class):
        key = (kernel_class.kind, kernel_class.backend)
        _REGISTRY.setdefault(key, {})[kernel_class.name] = kernel_class
        if default:
            _DEFAULTS[key] = kernel_class.name
        return kernel_class

    return decorate


def _load(backend):
    for module in _BACKEND_MODULES[backend]:
        importlib.import_module(module)


def available(kind, backend):
    """Names of the registered kernels of a kind for a backend, the default first."""
    _load(backend)
    names = sorted(_REGISTRY.get((kind, backend), {}))
    default = _DEFAULTS.get((kind, backend))
    return [default] + [name for name in names if name != default] if default else names


def default_name(kind, backend):
    _load(backend)
    return _DEFAULTS[(kind, backend)]


def get(kind, backend, name=None):
    """The kernel class registered as ``name`` (the default when None); KeyError names the choices."""
    _load(backend)
    kernels = _REGISTRY.get((kind, backend), {})
    name = name or _DEFAULTS.get((kind, backend))
    if name not in kernels:
        raise KeyError(f"no {kind} kernel {name!r} for backend {backend}; choose from {', '.join(available(kind, backend))}")
    return kernels[name]
