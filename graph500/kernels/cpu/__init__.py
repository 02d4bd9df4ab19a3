"""CPU kernels (Numba). Importing this package registers every CPU kernel."""

from graph500.kernels.cpu import bfs_top_down, sssp_dijkstra  # noqa: F401  (registration)
