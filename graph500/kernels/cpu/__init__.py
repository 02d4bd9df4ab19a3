"""CPU kernels (Numba). Importing this package registers every CPU kernel."""

from graph500.kernels.cpu import (  # noqa: F401  (registration)
    bfs_bottom_up, bfs_direction_optimizing, bfs_distributed, bfs_numa_bottom_up, bfs_top_down,
    sssp_delta_stepping, sssp_dijkstra, sssp_distributed,
)
