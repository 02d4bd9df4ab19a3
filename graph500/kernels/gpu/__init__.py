"""GPU kernels (CUDA C++ through cupy.RawModule). Importing this package registers every GPU kernel.

The modules import without CuPy (so that the registry can list the kernels
anywhere); building or running a kernel needs CuPy and a CUDA device.
"""

from graph500.kernels.gpu import bfs, bfs_distributed, sssp, sssp_distributed  # noqa: F401  (registration)
