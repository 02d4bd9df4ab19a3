"""Kernel settings as the benchmark scripts take them on the command line (no CuPy, no Numba here).

A setting is ``default`` (the kernel's own tunables) or ``name=value,...``:
integers, then floats, then words (``switch_rule=hub-share``); 0/1 for
switches. ``gpu.py``, ``gpu_variants.py``, ``gpu_sssp_trace.py`` and
``cpu_variants.py`` read their variants with it.
"""


def kernel_options(setting):
    """A kernel's keyword arguments from a setting (see the module's notes)."""
    if setting == "default":
        return {}
    return {name: _number_or_word(value) for name, value in (item.split("=") for item in setting.split(","))}


def _number_or_word(value):
    for convert in (int, float):
        try:
            return convert(value)
        except ValueError:
            continue
    return value
