"""Validators for BFS and SSSP results made by any program (Graph500 v3, spec section 9).

Independent of every kernel of this package: they read only the input tuples
and the result arrays, which may be NumPy or CuPy arrays.

    vg = ValidationGraph.from_edges(src, dst, num_vertices, weights=None)  # once per graph
    nedge = validate_bfs(vg, root, parents)
    nedge = validate_sssp(vg, root, parents, distances)

Each returns nedge (spec section 5) or raises `graph500.errors.ValidationError`
naming the broken rule; `bfs` and `sssp` list the rules.

A result split over the P ranks of a run (each rank holding the parents and
distances of the vertices it owns) is validated by the same two functions
given a `DistributedValidationGraph` (collective calls, the same nedge or
ValidationError on every rank; see `distributed`):

    vg = DistributedValidationGraph.from_edges(comm, blocks, src, dst, num_vertices, weights=None)
    nedge = validate_bfs(vg, root, local_parents)
    nedge = validate_sssp(vg, root, local_parents, local_distances)
"""

from . import bfs as _bfs
from . import distributed as _distributed
from . import sssp as _sssp
from .common import ValidationGraph
from .distributed import DistributedValidationGraph

__all__ = ["DistributedValidationGraph", "ValidationGraph", "validate_bfs", "validate_sssp"]


def validate_bfs(vg, root, parents, *, engine="auto"):
    """Check a BFS tree from `root`; return nedge or raise ValidationError (see `bfs.validate_bfs`).

    With a `DistributedValidationGraph`, `parents` is this rank's part and the call is collective
    (`distributed.validate_bfs`).
    """
    if isinstance(vg, DistributedValidationGraph):
        return _distributed.validate_bfs(vg, root, parents, engine=engine)
    return _bfs.validate_bfs(vg, root, parents, engine=engine)


def validate_sssp(vg, root, parents, distances, *, engine="auto"):
    """Check a shortest-path tree from `root`; return nedge or raise ValidationError (see
    `sssp.validate_sssp`).

    With a `DistributedValidationGraph`, `parents` and `distances` are this rank's parts and the call is
    collective (`distributed.validate_sssp`).
    """
    if isinstance(vg, DistributedValidationGraph):
        return _distributed.validate_sssp(vg, root, parents, distances, engine=engine)
    return _sssp.validate_sssp(vg, root, parents, distances, engine=engine)
