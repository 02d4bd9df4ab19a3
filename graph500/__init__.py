"""graph500: the Graph500 benchmark (v3), reference-exact and fast, on CPUs and NVIDIA GPUs."""

__version__ = "0.1.0"
