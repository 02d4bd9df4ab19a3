"""Compiling and launching this package's CUDA C++ kernels through CuPy.

Every ``NAME.cu`` file beside this module, preceded by ``common.cuh``, is
compiled once per process by NVRTC (``cupy.RawModule``, C++17, for the current device's architecture; CuPy
keeps the binaries in its on-disk kernel cache between processes). Kernels are
launched on CuPy's current stream, so CUDA events recorded on that stream time
them.

Also here: launch sizes (a persistent grid fills every multiprocessor),
scalar argument types (CuPy passes Python ints as 64-bit, so every scalar is
given its C type explicitly), `DeviceCounters`, a small block of 64-bit
device counters that kernels add to and the host reads back in one copy,
`host_mapped_empty`, CuPy arrays whose memory is pinned host memory that
kernels read and write in place over the bus (the run's edge list lives
there, out of device memory), `ReleasableHostArray`, such an array pinned a
granule at a time, and `PoolHighWater`, the most device memory CuPy's pool
held.
"""

import ctypes
import functools
import mmap
import pathlib

import numpy as np

from graph500.compiled import cuda_kernel
from graph500.errors import Graph500Error
from graph500.kernels.backend import step_field

try:
    import cupy
except ImportError:  # the package imports without CuPy; nothing here runs then
    cupy = None

SOURCE_DIR = pathlib.Path(__file__).parent
COMMON_HEADER = SOURCE_DIR / "common.cuh"  # put in front of every source (so CuPy's cache key covers it)
RESIDENT_THREADS_PER_SM = 2048  # Hopper, Ampere: the most threads a multiprocessor holds
REGISTERS_PER_SM = 65536
REGISTER_UNIT = 256  # registers are allocated per warp in multiples of this
NULL = np.uint64(0)  # a null pointer argument: pointers are passed as 8-byte values
REGISTER_MAPPED = 2  # cudaHostRegisterMapped
HOST_POINTER_FOR_REGISTERED_MEMORY = 91  # cudaDevAttrCanUseHostPointerForRegisteredMem


@functools.lru_cache(maxsize=None)  # a lookup by names: searches ask for their kernels every level
def kernel(source_name, kernel_name, name_expressions=()):
    """A kernel of ``SOURCE_NAME.cu`` (after ``common.cuh``) by its (C or template-instance) name; template
    instances to compile are named in ``name_expressions`` (`graph500.compiled.cuda_kernel`)."""
    return cuda_kernel((COMMON_HEADER, SOURCE_DIR / f"{source_name}.cu"), kernel_name, tuple(name_expressions))


@functools.lru_cache(maxsize=None)
def multiprocessor_count():
    return cupy.cuda.Device().attributes["MultiProcessorCount"]


def blocks_for(items, items_per_block):
    """Blocks to cover ``items`` (at least one)."""
    return max(1, -(-int(items) // items_per_block))


def persistent_blocks(compiled_kernel, threads_per_block, items=None):
    """A grid of as many blocks of ``compiled_kernel`` as the device holds at once.

    Fewer when ``items`` (one per thread) need fewer. Residency is bounded by
    threads and registers per multiprocessor (registers are allocated per warp
    in units of ``REGISTER_UNIT``).
    """
    blocks = _resident_blocks(compiled_kernel, threads_per_block)
    return blocks if items is None else min(blocks, blocks_for(items, threads_per_block))


@functools.lru_cache(maxsize=None)
def _resident_blocks(compiled_kernel, threads_per_block):
    """The blocks of ``compiled_kernel`` the device holds at once (asked of the driver once: a launch's host time)."""
    warps = threads_per_block // 32
    registers_per_warp = -(-compiled_kernel.num_regs * 32 // REGISTER_UNIT) * REGISTER_UNIT
    per_sm = min(RESIDENT_THREADS_PER_SM // threads_per_block, REGISTERS_PER_SM // (registers_per_warp * warps))
    return multiprocessor_count() * max(1, per_sm)


def i32(value):
    return np.int32(value)


def i64(value):
    return np.int64(value)


def u32(value):
    return np.uint32(value)


def u64(value):
    return np.uint64(value)


def pointer_or_null(array):
    """A kernel's pointer argument for an optional array: the array, or the null pointer for None."""
    return NULL if array is None else array


def host_mapped_empty(count, dtype):
    """A CuPy array of ``count`` items of ``dtype`` in pinned host memory, mapped into the device's address space.

    With unified addressing (every 64-bit CUDA platform) pinned host memory
    has one address on host and device: kernels and CuPy operations read and
    write it in place over the bus (about 50 GB/s on a PCIe 5 H100), and it
    takes no device memory. Pinning costs 0.35-0.4 s a GiB (an H200 host; a `ReleasableHostArray` half that).
    """
    return _host_mapped(count, dtype)[1]


def host_mapped_copy(array):
    """``array`` (NumPy or CuPy, 1-D) copied into a `host_mapped_empty` array."""
    host_view, device_view = _host_mapped(array.shape[0], array.dtype)
    if isinstance(array, np.ndarray):
        host_view[:] = array
    else:
        device_view[:] = array
    return device_view


def _host_mapped(count, dtype):
    """``(NumPy view, CuPy view)`` of one new pinned host buffer of ``count`` items.

    A buffer the driver cannot pin is a Graph500Error naming its size.
    """
    dtype = np.dtype(dtype)
    nbytes = max(1, count * dtype.itemsize)
    try:
        pinned = cupy.cuda.alloc_pinned_memory(nbytes)
    except cupy.cuda.runtime.CUDARuntimeError as error:
        raise Graph500Error(f"cannot pin {nbytes / 2**30:.1f} GiB of host memory for the edge list ({error})") \
            from None
    memory = cupy.cuda.memory.UnownedMemory(pinned.ptr, nbytes, pinned, cupy.cuda.Device().id)
    device_view = cupy.ndarray((count,), dtype=dtype, memptr=cupy.cuda.memory.MemoryPointer(memory, 0))
    return np.frombuffer(pinned, dtype=dtype, count=count), device_view


class ReleasableHostArray:
    """A 1-D CuPy array in host memory mapped into the device's address space (one address on host and device, as
    `host_mapped_empty`'s), pinned a granule of ``granule_items`` items at a time.

    `release` unpins granules and gives their pages back to the operating
    system (reading them then gives zeros); `pin` pins granules again. An
    array written or read front to back thus holds only the part in use:
    kernel 1's exchange on several GPUs gives back its slice of the tuples as
    it sends them and pins the tuples it receives as they arrive. The memory
    is a private anonymous mapping registered with ``cudaHostRegister`` a
    granule at a time, which gives it the same address on the device (where
    the device says so: every 64-bit platform with unified addressing).
    Kernels read and write across granules; a copy (``cudaMemcpy``, as CuPy's
    assignment of an array) must stay within one, as the driver sees each
    granule as an allocation of its own: `write` copies granule by granule.
    """

    def __init__(self, count, dtype, granule_items, pinned=True):
        dtype = np.dtype(dtype)
        self._granule_items = granule_items
        granule_bytes = granule_items * dtype.itemsize
        if granule_bytes % mmap.PAGESIZE:
            raise ValueError(f"a granule of {granule_items} items of {dtype} is not whole pages")
        device = cupy.cuda.Device()
        if not cupy.cuda.runtime.deviceGetAttribute(HOST_POINTER_FOR_REGISTERED_MEMORY, device.id):
            raise Graph500Error("this GPU cannot use registered host memory at its host address")
        self._count = count
        self._pages = _RegisteredPages(max(1, count * dtype.itemsize), granule_bytes)
        if pinned:
            self.pin(0, count)
        memory = cupy.cuda.memory.UnownedMemory(self._pages.address, self._pages.nbytes, self._pages, device.id)
        self.array = cupy.ndarray((count,), dtype=dtype, memptr=cupy.cuda.memory.MemoryPointer(memory, 0))

    def _granules(self, begin, end, whole):
        """The granules of items [begin, end): those it touches, or (``whole``) those it covers."""
        end = min(end, self._count)
        if whole:
            last = len(self._pages.pinned) if end == self._count else end // self._granule_items
            return range(-(-begin // self._granule_items), last)
        return range(begin // self._granule_items, -(-end // self._granule_items))

    def pin(self, begin, end):
        """Pin every granule that items [begin, end) touch (a Graph500Error naming the size where the driver
        cannot)."""
        for granule in self._granules(begin, end, whole=False):
            self._pages.pin(granule)

    def release(self, begin, end):
        """Unpin the granules that items [begin, end) cover and give their pages back (once the device's work
        is done)."""
        granules = [granule for granule in self._granules(begin, end, whole=True) if self._pages.pinned[granule]]
        if granules:
            cupy.cuda.runtime.deviceSynchronize()
        for granule in granules:
            self._pages.release(granule)

    def write(self, begin, values):
        """``array[begin:begin + len(values)] = values`` (a CuPy array), its granules pinned first, copied
        granule by granule."""
        end = begin + values.shape[0]
        self.pin(begin, end)
        at = begin
        while at < end:
            stop = min(end, (at // self._granule_items + 1) * self._granule_items)
            self.array[at:stop] = values[at - begin:stop - begin]
            at = stop

    def released(self):
        """Whether a granule is not pinned."""
        return not all(self._pages.pinned)

    def pinned_bytes(self):
        return sum(self._pages.span(granule)[1] for granule, pinned in enumerate(self._pages.pinned) if pinned)


class _RegisteredPages:
    """The memory of a `ReleasableHostArray` (its arrays' owner): a private anonymous mapping (transparent huge
    pages asked for) and which granules of it are registered with CUDA; unregistered and unmapped when no array
    uses it."""

    def __init__(self, nbytes, granule_bytes):
        self.nbytes, self._granule_bytes = nbytes, granule_bytes
        self._mapping = mmap.mmap(-1, -(-nbytes // mmap.PAGESIZE) * mmap.PAGESIZE,
                                  flags=mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS)
        if hasattr(mmap, "MADV_HUGEPAGE"):
            self._mapping.madvise(mmap.MADV_HUGEPAGE)
        self._export = ctypes.c_char.from_buffer(self._mapping)  # the mapping's address (closed only without it)
        self.address = ctypes.addressof(self._export)
        self.pinned = [False] * -(-nbytes // granule_bytes)

    def span(self, granule):
        """``(offset, bytes)`` of a granule in the mapping."""
        start = granule * self._granule_bytes
        return start, min(self._granule_bytes, len(self._mapping) - start)

    def pin(self, granule):
        if self.pinned[granule]:
            return
        start, length = self.span(granule)
        try:
            cupy.cuda.runtime.hostRegister(self.address + start, length, REGISTER_MAPPED)
        except cupy.cuda.runtime.CUDARuntimeError as error:
            pinned = sum(self.pinned) * self._granule_bytes
            raise Graph500Error(f"cannot pin {length / 2**30:.2f} GiB more of host memory ({error}; "
                                f"{pinned / 2**30:.1f} GiB of this array pinned)") from None
        self.pinned[granule] = True

    def release(self, granule):
        start, length = self.span(granule)
        cupy.cuda.runtime.hostUnregister(self.address + start)
        self._mapping.madvise(mmap.MADV_DONTNEED, start, length)
        self.pinned[granule] = False

    def __del__(self):
        try:
            if any(self.pinned):
                cupy.cuda.runtime.deviceSynchronize()  # work queued before the arrays went may still use it
            for granule, pinned in enumerate(self.pinned):
                if pinned:
                    cupy.cuda.runtime.hostUnregister(self.address + self.span(granule)[0])
            del self._export
            self._mapping.close()
        except Exception:  # at the interpreter's exit CUDA may be gone: the process's end unpins and unmaps
            pass


class PoolHighWater:
    """The most bytes CuPy's default memory pool has held since `start`, by wrapping its allocator; and the most
    its arrays have used in each step a run names (`step`).

    The pool keeps freed blocks for reuse, so what it holds (``total_bytes``)
    is the device memory CuPy has taken from the driver; its maximum is the
    run's high-water mark apart from the CUDA context and loaded modules.
    What its arrays use (``used_bytes``) is what the memory plan's phases
    count: ``step_peaks`` keeps its maximum per step.
    """

    def __init__(self):
        self.pool = cupy.get_default_memory_pool()
        self.peak_bytes = self.pool.total_bytes()
        self.step_peaks = {}
        self._step = None

    def start(self):
        """Measure from now, from what is in use (the pool's cached free blocks are given back first)."""
        self.pool.free_all_blocks()
        self.peak_bytes = self.pool.total_bytes()
        self.step_peaks, self._step = {}, None
        cupy.cuda.set_allocator(self._malloc)

    def step(self, name):
        """Count what the arrays use from now towards step ``name`` (the arrays alive now to begin with)."""
        self._step = name
        self.step_peaks[name] = max(self.step_peaks.get(name, 0), self.pool.used_bytes())

    def step_fields(self, over_ranks=None):
        """The steps' peaks as a record's fields, ``device_arrays_bytes_<step>`` (``bfs pass`` ->
        ``device_arrays_bytes_bfs_pass``); ``over_ranks``: a rank's peak -> the largest rank's (collective)."""
        return {step_field("device_arrays_bytes_", name): over_ranks(used) if over_ranks else used
                for name, used in self.step_peaks.items()}

    def _malloc(self, size):
        pointer = self.pool.malloc(size)
        held = self.pool.total_bytes()
        if held > self.peak_bytes:
            self.peak_bytes = held
        if self._step is not None:
            used = self.pool.used_bytes()
            if used > self.step_peaks[self._step]:
                self.step_peaks[self._step] = used
        return pointer


class DeviceCounters:
    """``count`` uint64 counters on the device, reset and read back asynchronously on the current stream.

    ``read()`` is the one device-to-host copy (into pinned memory) and
    synchronisation that a level-synchronous search makes per level.
    """

    def __init__(self, count):
        self.device = cupy.zeros(count, dtype=np.uint64)
        self._nbytes = self.device.nbytes
        self._pinned = cupy.cuda.alloc_pinned_memory(self._nbytes)
        self.host = np.frombuffer(self._pinned, dtype=np.uint64, count=count)

    def reset(self, count=None):
        """Zero the first ``count`` counters (all by default)."""
        nbytes = self._nbytes if count is None else 8 * count
        stream = cupy.cuda.get_current_stream()
        cupy.cuda.runtime.memsetAsync(self.device.data.ptr, 0, nbytes, stream.ptr)

    def read(self):
        """The counters as a host uint64 array (valid until the next read)."""
        stream = cupy.cuda.get_current_stream()
        cupy.cuda.runtime.memcpyAsync(self.host.ctypes.data, self.device.data.ptr, self._nbytes,
                                      cupy.cuda.runtime.memcpyDeviceToHost, stream.ptr)
        stream.synchronize()
        return self.host


class PhaseTimer:
    """Device seconds per named phase of a search, from CUDA events; does nothing unless enabled.

    ``start(name)`` ends the phase in progress (if any) and begins ``name``;
    ``totals()`` ends the last phase, waits for it, and sums the phases by name.
    """

    def __init__(self, enabled):
        self.enabled = enabled
        self._phases = []

    def start(self, name):
        if self.enabled:
            event = cupy.cuda.Event()
            event.record()
            self._phases.append((name, event))

    @property
    def current(self):
        """The phase in progress (None before the first, or when disabled)."""
        return self._phases[-1][0] if self._phases else None

    def totals(self):
        if not self.enabled:
            return {}
        end = cupy.cuda.Event()
        end.record()
        end.synchronize()
        seconds = {}
        for (name, begin), (_, finish) in zip(self._phases, self._phases[1:] + [(None, end)]):
            seconds[name] = seconds.get(name, 0.0) + cupy.cuda.get_elapsed_time(begin, finish) / 1e3
        return seconds


def captured(steps):
    """CUDA graphs of ``steps`` (callables that enqueue a fixed sequence of work), captured on a stream of their
    own and launched on the search's."""
    cupy.cuda.get_current_stream().synchronize()
    stream = cupy.cuda.Stream(non_blocking=True)
    graphs = []
    with stream:
        for step in steps:
            stream.begin_capture()
            step()
            graphs.append(stream.end_capture())
    return graphs
