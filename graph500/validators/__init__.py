"""Validators for BFS and SSSP results made by any program (Graph500 v3, spec section 9).

Independent of every kernel of this package: they read only the input tuples
and the result arrays, which may be NumPy or CuPy arrays.

    vg = ValidationGraph.from_edges(src, dst, num_vertices, weights=None)  # once per graph
    nedge = validate_bfs(vg, root, parents)
    nedge = validate_sssp(vg, root, parents, distances)

Each returns nedge (spec section 5) or raises `graph500.errors.ValidationError`
naming the broken rule; `bfs` and `sssp` list the rules.
"""

from .bfs import validate_bfs
from .common import ValidationGraph
from .sssp import validate_sssp

__all__ = ["ValidationGraph", "validate_bfs", "validate_sssp"]
