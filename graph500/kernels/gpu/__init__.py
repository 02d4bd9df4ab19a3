"""GPU kernels (CUDA C++ through cupy.RawModule). Importing this package registers every GPU kernel."""
