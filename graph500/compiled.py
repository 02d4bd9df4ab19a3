"""Compiled helpers that the kernels and the validators share: Numba's `prefetch`, and `cuda_kernel`, which
compiles CUDA C++ sources through CuPy.

`prefetch(array, index)` asks for the cache line of ``array[index]`` without
waiting for it (LLVM's ``llvm.prefetch``: a read, high temporal locality, the
data cache). A loop that reads an array at random asks for the entry it will
read some iterations later, so the misses overlap instead of following one
another. A prefetch never faults, so ``index`` is not checked; it does
nothing where it is not compiled.
"""

import functools

from llvmlite import ir
from numba.core import cgutils, types
from numba.extending import intrinsic

CUDA_COMPILE_OPTIONS = ("--std=c++17",)


@intrinsic
def prefetch(typingctx, array, index):
    """Ask for the cache line of ``array[index]`` (along the first axis) without waiting for it."""
    def codegen(context, builder, signature, args):
        array_type, index_type = signature.args
        view = context.make_array(array_type)(context, builder, args[0])
        position = context.cast(builder, args[1], index_type, types.intp)
        pointer = cgutils.get_item_pointer(context, builder, array_type, view, [position])
        byte_pointer, int32 = ir.IntType(8).as_pointer(), ir.IntType(32)
        function = cgutils.get_or_insert_function(
            builder.module, ir.FunctionType(ir.VoidType(), [byte_pointer, int32, int32, int32]), "llvm.prefetch.p0i8")
        builder.call(function, [builder.bitcast(pointer, byte_pointer), int32(0), int32(3), int32(1)])
        return context.get_dummy_value()
    return types.void(array, index), codegen


@functools.lru_cache(maxsize=None)
def cuda_module(sources, name_expressions=()):
    """The CUDA C++ made of the files ``sources`` (paths, in order), compiled once per process by NVRTC
    (``cupy.RawModule``, C++17, for the current device; CuPy keeps the binaries in its on-disk cache between
    processes); the template instances to compile are named in ``name_expressions``."""
    import cupy

    code = "".join(source.read_text() for source in sources)
    return cupy.RawModule(code=code, options=CUDA_COMPILE_OPTIONS, name_expressions=name_expressions or None)


@functools.lru_cache(maxsize=None)
def cuda_kernel(sources, kernel_name, name_expressions=()):
    """A kernel of `cuda_module` ``(sources, name_expressions)`` by its (C or template-instance) name."""
    return cuda_module(tuple(sources), tuple(name_expressions)).get_function(kernel_name)
