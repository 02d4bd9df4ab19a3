"""The communicator: the few collective operations a run needs, behind one small interface.

A run is P processes (ranks) that share the work; one process is the case
P = 1. Everything that crosses ranks goes through a `Communicator`, so the
algorithms never know what carries the data:

- `SelfCommunicator`: one process (P = 1). Every collective is the identity
  or a copy; nothing is imported. A run started without ``mpiexec`` (or
  without mpi4py) uses it, and is exactly the single-process run.
- `MPICommunicator`: mpi4py on host (NumPy) buffers, for ranks started by
  ``mpiexec -n P`` under any MPI (MPICH, Open MPI, Intel MPI).
- `NCCLCommunicator`: the same methods on CuPy (device) buffers through
  NCCL (CuPy's bindings), one GPU per rank (`select_device`), its unique id
  broadcast by mpi4py; Python objects, barriers and aborts go through the
  `MPICommunicator` it is built on. NCCL has no bitwise OR: ``"or"`` is the
  maximum, on boolean or uint8 arrays only. NVLink multicast (NVLS) is kept
  off (``NCCL_NVLS_ENABLE=0``, set here unless the environment sets it).
  NCCL's set-up is the communicator's, not a timed step's: its connections
  are made when it is created (``NCCL_RUNTIME_CONNECT=0``, unless the
  environment sets it; NCCL otherwise makes them at their first use, such as
  the first captured level of a search kernel's set-up), and one small
  exchange and allreduce then load NCCL's device code (a rank's first
  transfer otherwise waits about a second for it, inside kernel 1).

The operations (all collective: every rank calls them in the same order):

- ``barrier(sleep=False)``; ``sleep``: wait in short sleeps, not spinning
  (a long wait, as for rank 0's warm-up, leaves the cores to those working)
- ``allreduce(array, op, out=None)``: element-wise ``"sum"``, ``"max"``,
  ``"min"`` or ``"or"`` of a NumPy array (or a Python number) over the
  ranks; every rank gets the result, in ``out`` (an array of the same
  length and type) where given.
- ``allgather(array)``: the ranks' 1-D arrays (lengths may differ)
  concatenated in rank order, on every rank.
- ``alltoallv(arrays, send_counts, receive_counts=None, out=None,
  send_displacements=None, receive_displacements=None)``: personalised
  exchange of a tuple of 1-D arrays grouped by destination rank; returns the
  received arrays (grouped by source rank) and counts. Known receive counts
  skip their exchange; ``out`` (and ``receive_displacements``) receive in
  place, for callers that exchange often.
- ``group()``: a context manager whose exchanges may travel together (NCCL:
  one group of sends and receives; elsewhere one after another).
- ``gathered_array(counts, dtype)``: a `GatheredArray`: ``local`` (this
  rank's part, which it writes) and ``whole`` (every rank's parts in rank
  order after the collective ``publish()``). Through MPI on one host,
  ``whole`` is an MPI-3 shared window (one copy a host, ``publish()`` a
  barrier; it lives until the collective ``free()``, which host arrays
  have); through NCCL one array on each GPU; otherwise an allgather.
- ``bcast(value, root)``, ``allgather_object(value)``: small Python objects.
- ``abort(message, status)``: print one line (none for an empty message) and end
  every rank (MPI_Abort) with the exit status.

`slowest(comm, step)` times a collective step from a barrier until the
slowest rank is done. `world()` returns the communicator of this process: MPI's world when the
process was started by an MPI launcher with more than one rank, else
`SelfCommunicator`.
"""

import contextlib
import importlib
import multiprocessing
import os
import socket
import sys
import time

import numpy as np

from graph500.errors import Graph500Error

REDUCTIONS = ("sum", "max", "min", "or")
SLEEP_SECONDS = 0.001  # a sleeping barrier's poll
# Seconds a failing rank waits between its one line and MPI_Abort: without it MPICH's launcher lost the line
# in 3 of 40 aborts on the 2-core development machine (the job torn down before it forwarded the rank's stderr).
ABORT_GRACE = 0.5

# The world size as MPI launchers tell the processes they start: MPICH's Hydra and Intel MPI (PMI_SIZE),
# Open MPI (OMPI_COMM_WORLD_SIZE).
_LAUNCHER_SIZE_VARIABLES = ("PMI_SIZE", "OMPI_COMM_WORLD_SIZE")


class GatheredArray:
    """Every rank's part of one array (see the module's ``gathered_array``): write ``local``, ``publish()``,
    read ``whole``. This one gathers with ``comm.allgather``; ``xp``: the array module of the communicator's
    buffers (NumPy, or CuPy for NCCL)."""

    def __init__(self, comm, counts, dtype, xp=np):
        self._comm = comm
        self.shared = comm.size == 1  # every rank reads and writes one ``whole`` (here: the one rank)
        self.whole = xp.zeros(int(np.sum(counts)), dtype=dtype)
        first = int(np.sum(counts[:comm.rank]))
        self.local = xp.zeros(int(counts[comm.rank]), dtype=dtype) if comm.size > 1 else \
            self.whole[first:first + int(counts[comm.rank])]

    def publish(self):
        if self._comm.size > 1:
            self.whole = self._comm.allgather(self.local)  # the gathered array itself: no second copy

    def free(self):
        self.local = self.whole = None


class DeviceGatheredArray:
    """A `GatheredArray` on one GPU per rank (`NCCLCommunicator`): ``local`` is this rank's part of ``whole``
    itself, and ``publish()`` sends it to every other rank and receives theirs in place (no MPI, no new array)."""

    def __init__(self, comm, counts, dtype):
        import cupy

        self._comm = comm
        counts = np.asarray(counts, dtype=np.int64)
        self.whole = cupy.zeros(int(counts.sum()), dtype=dtype)
        first = int(counts[:comm.rank].sum())
        self.local = self.whole[first:first + int(counts[comm.rank])]
        self._transfers = comm.allgather_parts(self.whole, counts)  # prepared once: the layout is fixed

    def publish(self):
        self._comm.transfers(*self._transfers)

    def free(self):
        self.local = self.whole = self._transfers = None


class SharedGatheredArray:
    """A `GatheredArray` in memory shared by every rank of one host: an MPI-3 shared window, allocated whole
    by the first rank (so that it is one contiguous array), each rank's ``local`` a view of its part. ``shared``:
    every rank reads and writes that one ``whole``; a rank's writes reach the others at ``publish()``."""

    shared = True

    def __init__(self, mpi, comm, counts, dtype):
        dtype = np.dtype(dtype)
        total = int(np.sum(counts))
        self._comm = comm
        self._window = mpi.Win.Allocate_shared(total * dtype.itemsize if comm.Get_rank() == 0 else 0,
                                               dtype.itemsize, comm=comm)
        self._window.Lock_all(mpi.MODE_NOCHECK)  # one passive epoch for the window's life: Sync needs one
        memory, _ = self._window.Shared_query(0)
        self.whole = np.frombuffer(memory, dtype=dtype, count=total)
        first = int(np.sum(counts[:comm.Get_rank()]))
        self.local = self.whole[first:first + int(counts[comm.Get_rank()])]
        self.local[:] = 0
        self.publish()

    def publish(self):
        """Every rank's writes to its ``local`` visible to all: memory synchronisation around a barrier."""
        self._window.Sync()
        self._comm.Barrier()
        self._window.Sync()

    def free(self):
        """Give the window back (collective over the host's ranks; MPI never frees it otherwise): ``local`` and
        ``whole``, views of it, go first and must not be held elsewhere."""
        self.local = self.whole = None
        self._window.Unlock_all()
        self._window.Free()


class SelfCommunicator:
    """One process: P = 1. Collectives return their input (arrays as copies where the caller may write).

    ``xp``: the array module of its gathered arrays (NumPy; CuPy for a device communicator's one-rank case);
    the other collectives take NumPy and CuPy arrays alike.
    """

    rank = 0
    size = 1

    def __init__(self, xp=np):
        self._xp_name = xp.__name__  # the name, so that the communicator pickles (warm-up workers)

    def barrier(self, sleep=False):
        pass

    def allreduce(self, value, op="sum", out=None):
        _check_op(op)
        if out is not None:
            out[...] = value
            return out
        return value.copy() if hasattr(value, "copy") else value

    def allgather(self, array):
        return array.copy()

    def alltoallv(self, arrays, send_counts, receive_counts=None, out=None, send_displacements=None,
                  receive_displacements=None):
        counts = np.asarray(send_counts, dtype=np.int64).copy()
        begin = 0 if send_displacements is None else int(send_displacements[0])
        at = _receive_offset(receive_displacements, out)
        return _received(tuple(array[begin:] for array in arrays), out, int(counts.sum()), at), counts

    def group(self):
        return contextlib.nullcontext()

    def bcast(self, value, root=0):
        return value

    def allgather_object(self, value):
        return [value]

    def gathered_array(self, counts, dtype):
        return GatheredArray(self, counts, dtype, xp=importlib.import_module(self._xp_name))

    def abort(self, message, status=1):
        if message:
            print(message, file=sys.stderr, flush=True)
        os._exit(status)

    def describe(self):
        return {"num_mpi_processes": 1, "hosts": [socket.gethostname()], "mpi_library": None}


class MPICommunicator:
    """mpi4py's world communicator on NumPy buffers."""

    def __init__(self, comm=None):
        from mpi4py import MPI

        self._mpi = MPI
        self._comm = comm if comm is not None else MPI.COMM_WORLD
        self.rank = self._comm.Get_rank()
        self.size = self._comm.Get_size()
        self._ops = {"sum": MPI.SUM, "max": MPI.MAX, "min": MPI.MIN, "or": MPI.LOR}
        self._host_comm = None  # the ranks sharing this host's memory, when that is all of them (gathered_array)

    def barrier(self, sleep=False):
        if not sleep:
            self._comm.Barrier()
            return
        request = self._comm.Ibarrier()
        while not request.Test():
            time.sleep(SLEEP_SECONDS)

    def allreduce(self, value, op="sum", out=None):
        _check_op(op)
        if not isinstance(value, np.ndarray):
            return self._comm.allreduce(value, op=self._ops[op])
        send = np.ascontiguousarray(value)
        if op == "or" and send.dtype == np.bool_:
            received = np.empty_like(send) if out is None else out
            self._comm.Allreduce(send.view(np.uint8), received.view(np.uint8), op=self._mpi.BOR)
            return received
        received = np.empty_like(send) if out is None else out
        self._comm.Allreduce(send, received, op=self._ops[op])
        return received

    def allgather(self, array):
        send = np.ascontiguousarray(array)
        counts = np.empty(self.size, dtype=np.int64)
        self._comm.Allgather(np.array([send.shape[0]], dtype=np.int64), counts)
        received = np.empty(int(counts.sum()), dtype=send.dtype)
        self._comm.Allgatherv(send, [received, counts])
        return received

    def alltoallv(self, arrays, send_counts, receive_counts=None, out=None, send_displacements=None,
                  receive_displacements=None):
        """``arrays``: 1-D arrays of one length, ``send_counts[r]`` items for rank r, from
        ``send_displacements[r]`` when given, else one after another. Returns the received arrays (grouped by
        source rank) and the received counts. ``receive_counts``: what the caller knows it receives (the ranks
        then skip exchanging counts). ``out``: arrays (one per array sent, long enough) that receive in place:
        the received arrays are their first items, or, with ``receive_displacements``, rank r's items start at
        ``receive_displacements[r]`` and the received arrays run from 0 to the end of the last part."""
        send_counts = np.ascontiguousarray(send_counts, dtype=np.int64)
        if receive_counts is None:
            receive_counts = np.empty_like(send_counts)
            self._comm.Alltoall(send_counts, receive_counts)
        receive_counts = np.ascontiguousarray(receive_counts, dtype=np.int64)
        send_displacements = _displacements(send_counts) if send_displacements is None else \
            np.ascontiguousarray(send_displacements, dtype=np.int64)
        _receive_offset(receive_displacements, out)
        receive_displacements, total = _placement(receive_counts, receive_displacements)
        received = []
        for index, array in enumerate(arrays):
            send = np.ascontiguousarray(array)
            into = np.empty(total, dtype=send.dtype) if out is None else out[index][:total]
            self._comm.Alltoallv([send, send_counts, send_displacements, self._mpi_type(send)],
                                 [into, receive_counts, receive_displacements, self._mpi_type(into)])
            received.append(into)
        return tuple(received), receive_counts

    def group(self):
        return contextlib.nullcontext()

    def _mpi_type(self, array):
        return self._mpi._typedict[array.dtype.char]

    def bcast(self, value, root=0):
        return self._comm.bcast(value, root=root)

    def allgather_object(self, value):
        return self._comm.allgather(value)

    def gathered_array(self, counts, dtype):
        if self._host_comm is None:
            host_comm = self._comm.Split_type(self._mpi.COMM_TYPE_SHARED)
            self._host_comm = host_comm if host_comm.Get_size() == self.size else False
        if self._host_comm:
            try:
                return SharedGatheredArray(self._mpi, self._host_comm, counts, dtype)
            except self._mpi.Exception:  # an MPI without shared windows here: every rank gets its own copy
                self._host_comm = False
        return GatheredArray(self, counts, dtype)

    def abort(self, message, status=1):
        if message:
            print(message, file=sys.stderr, flush=True)
        time.sleep(ABORT_GRACE)  # the launcher forwards the line before MPI_Abort tears the job down
        self._comm.Abort(status)

    def describe(self):
        hosts = self.allgather_object(socket.gethostname())
        return {"num_mpi_processes": self.size, "hosts": sorted(set(hosts)),
                "mpi_library": " ".join(self._mpi.Get_library_version().splitlines()[0].split())}


WARM_UP_ITEMS = 1 << 18  # words a rank sends each peer when an `NCCLCommunicator` is made (1 MiB)


class NCCLCommunicator:
    """Collectives on CuPy arrays through NCCL, one GPU per rank, over an `MPICommunicator` of the same ranks.

    Every array method takes and returns CuPy arrays on this rank's GPU and
    enqueues its transfers on CuPy's current stream; Python numbers and
    objects go through MPI. ``allgather`` and ``alltoallv`` are grouped
    point-to-point sends and receives (NCCL has no variable-count
    collectives); their counts travel through MPI first.
    """

    def __init__(self, host):
        os.environ.setdefault("NCCL_NVLS_ENABLE", "0")
        os.environ.setdefault("NCCL_RUNTIME_CONNECT", "0")
        import cupy
        from cupy.cuda import nccl

        self._cupy, self._nccl = cupy, nccl
        self.host = host
        self.rank, self.size = host.rank, host.size
        self.device = select_device(host)
        unique_id = host.bcast(nccl.get_unique_id() if host.rank == 0 else None)
        self._comm = nccl.NcclCommunicator(self.size, unique_id, self.rank)
        self._ops = {"sum": nccl.NCCL_SUM, "max": nccl.NCCL_MAX, "min": nccl.NCCL_MIN, "or": nccl.NCCL_MAX}
        self._types = {np.dtype(np.int8): nccl.NCCL_INT8, np.dtype(np.uint8): nccl.NCCL_UINT8,
                       np.dtype(np.bool_): nccl.NCCL_UINT8, np.dtype(np.int32): nccl.NCCL_INT32,
                       np.dtype(np.uint32): nccl.NCCL_UINT32, np.dtype(np.int64): nccl.NCCL_INT64,
                       np.dtype(np.uint64): nccl.NCCL_UINT64, np.dtype(np.float32): nccl.NCCL_FLOAT32,
                       np.dtype(np.float64): nccl.NCCL_FLOAT64}  # the arrays' types, looked up on every transfer
        self._warm_up()

    def _warm_up(self):
        """One exchange with every peer and one allreduce, waited for: NCCL's device code loaded and its
        transfers set up here, not in the first timed step that calls NCCL."""
        cupy = self._cupy
        send = cupy.zeros(self.size * WARM_UP_ITEMS, dtype=np.uint32)
        counts = np.full(self.size, WARM_UP_ITEMS, dtype=np.int64)
        self.alltoallv((send,), counts, counts)
        self.allreduce(send[:1], "sum")
        cupy.cuda.get_current_stream().synchronize()

    def _type(self, array):
        try:
            return self._types[array.dtype]
        except KeyError:
            raise TypeError(f"NCCL carries no {array.dtype} arrays") from None

    def _stream(self):
        return self._cupy.cuda.get_current_stream().ptr

    def barrier(self, sleep=False):
        """Every rank's device work queued so far is done, then an MPI barrier."""
        self._cupy.cuda.get_current_stream().synchronize()
        self.host.barrier(sleep)

    def allreduce(self, value, op="sum", out=None):
        _check_op(op)
        if not isinstance(value, self._cupy.ndarray):
            return self.host.allreduce(value, op, out)
        if op == "or" and value.dtype not in (np.bool_, np.uint8):
            raise TypeError(f"NCCL has no bitwise OR: 'or' takes bool or uint8 arrays, not {value.dtype}")
        send = self._cupy.ascontiguousarray(value)
        received = self._cupy.empty_like(send) if out is None else out
        self._comm.allReduce(send.data.ptr, received.data.ptr, send.size, self._type(send), self._ops[op],
                             self._stream())
        return received

    def allgather(self, array):
        send = self._cupy.ascontiguousarray(array)
        counts = np.asarray(self.host.allgather_object(int(send.shape[0])), dtype=np.int64)
        received = self._cupy.empty(int(counts.sum()), dtype=send.dtype)
        self._exchange([send], np.zeros(self.size, dtype=np.int64), [received],
                       np.full(self.size, send.shape[0], dtype=np.int64), counts)
        return received

    def alltoallv(self, arrays, send_counts, receive_counts=None, out=None, send_displacements=None,
                  receive_displacements=None):
        send_counts = np.asarray(self._cupy.asnumpy(send_counts), dtype=np.int64)
        if receive_counts is None:
            _, receive_counts = self.host.alltoallv((), send_counts)  # the counts alone, through MPI
        receive_counts = np.asarray(receive_counts, dtype=np.int64)
        if not arrays:
            return (), receive_counts
        if send_displacements is None:
            send_displacements = _displacements(send_counts)
        _receive_offset(receive_displacements, out)
        receive_displacements, total = _placement(receive_counts, receive_displacements)
        sends = [self._cupy.ascontiguousarray(array) for array in arrays]
        received = [self._cupy.empty(total, dtype=send.dtype) if out is None else out[index][:total]
                    for index, send in enumerate(sends)]
        self._exchange(sends, send_displacements, received, send_counts, receive_counts, receive_displacements)
        return tuple(received), receive_counts

    def group(self):
        """The NCCL calls made inside as one group (groups nest: the outermost end launches them)."""
        return _NCCLGroup(self._nccl)

    def part(self, array, begin, count, peer):
        """``(pointer, count, NCCL type, peer)`` of ``array[begin:begin + count]`` (a contiguous CuPy array) for
        `transfers`, by address arithmetic (no array made)."""
        return array.data.ptr + int(begin) * array.itemsize, int(count), self._type(array), peer

    def transfers(self, sends, receives):
        """Enqueue point-to-point transfers as one NCCL group: ``sends`` and ``receives`` are `part` tuples
        (those of 0 items are left out). The exchanges' common step, and a caller's that prepares its parts
        once (a fixed layout, `DeviceGatheredArray`, `graph500.kernels.gpu.requests`): a few NCCL calls and no
        array made per exchange."""
        stream = self._stream()
        send, receive = self._comm.send, self._comm.recv
        self._nccl.groupStart()
        for pointer, count, kind, peer in sends:
            if count:
                send(pointer, count, kind, peer, stream)
        for pointer, count, kind, peer in receives:
            if count:
                receive(pointer, count, kind, peer, stream)
        self._nccl.groupEnd()

    def _exchange(self, sends, send_displacements, outs, send_counts, receive_counts, receive_displacements=None):
        """For each array, send ``sends[a][send_displacements[r]:][:send_counts[r]]`` to rank r and receive rank
        r's part into ``outs[a]`` at its displacement (``receive_displacements``, else one after another): every
        array's transfers in one NCCL group."""
        if receive_displacements is None:
            receive_displacements = _displacements(receive_counts)
        rank = self.rank
        mine, at, begin = int(receive_counts[rank]), int(receive_displacements[rank]), int(send_displacements[rank])
        sent, received = [], []
        for send, out in zip(sends, outs):
            if mine and self.part(out, at, mine, rank)[0] != self.part(send, begin, mine, rank)[0]:
                out[at:at + mine] = send[begin:begin + mine]  # (not where it is in place already)
            for peer in range(self.size):
                if peer != rank:
                    sent.append(self.part(send, send_displacements[peer], send_counts[peer], peer))
                    received.append(self.part(out, receive_displacements[peer], receive_counts[peer], peer))
        self.transfers(sent, received)

    def bcast(self, value, root=0):
        return self.host.bcast(value, root)

    def allgather_object(self, value):
        return self.host.allgather_object(value)

    def gathered_array(self, counts, dtype):
        return DeviceGatheredArray(self, counts, dtype)

    def allgather_parts(self, whole, counts, displacements=None):
        """``(sends, receives)``: the `transfers` that send every rank's part of ``whole`` (``counts[r]`` items
        from rank r at ``displacements[r]``, by default one after another in rank order; this rank's written in
        place) to every other rank and receive theirs in place (the counts known, so nothing goes through MPI),
        prepared once for a fixed layout (`DeviceGatheredArray`) or per call (`requests.OwnerRequests`)."""
        counts = np.asarray(counts, dtype=np.int64)
        if displacements is None:
            displacements = _displacements(counts)
        mine, count = int(displacements[self.rank]), int(counts[self.rank])
        peers = [peer for peer in range(self.size) if peer != self.rank]
        return ([self.part(whole, mine, count, peer) for peer in peers],
                [self.part(whole, displacements[peer], counts[peer], peer) for peer in peers])

    def abort(self, message, status=1):
        try:
            self._comm.abort()  # no rank may wait forever on a transfer this rank will not make
        finally:
            self.host.abort(message, status)

    def describe(self):
        version = self._nccl.get_version()  # major * 10000 + minor * 100 + patch
        return {**self.host.describe(), "nccl": f"{version // 10000}.{version // 100 % 100}.{version % 100}"}


def host_placement(comm):
    """``(local_rank, ranks_on_host)``: this rank's place among the ranks of its host, and their number
    (collective)."""
    hosts = comm.allgather_object(socket.gethostname())
    host = hosts[comm.rank]
    return hosts[:comm.rank].count(host), hosts.count(host)


def select_device(host):
    """Make this rank's GPU current and return its id: the rank among those on its host, modulo the GPUs
    this process sees (``CUDA_VISIBLE_DEVICES`` narrows them per rank where a site prefers that)."""
    import cupy

    local_rank, _ = host_placement(host)
    device_id = local_rank % cupy.cuda.runtime.getDeviceCount()
    cupy.cuda.Device(device_id).use()
    return device_id


def slowest(comm, step):
    """``(result, seconds)`` of ``step()`` called on every rank: from a barrier until the slowest rank is done,
    the same seconds on every rank."""
    comm.barrier()
    start = time.perf_counter()
    result = step()
    comm.barrier()
    return result, comm.allreduce(time.perf_counter() - start, "max")


def _check_op(op):
    if op not in REDUCTIONS:
        raise ValueError(f"op must be one of {REDUCTIONS}, not {op!r}")


def _received(arrays, out, total, at=0):
    """A one-rank exchange's result: copies of the ``total`` first items of ``arrays``, or those copied into
    ``out`` from ``at``."""
    if out is None:
        return tuple(array[:total].copy() for array in arrays)
    for array, into in zip(arrays, out):
        into[at:at + total] = array[:total]
    return tuple(into[:at + total] for into in out)


def _receive_offset(receive_displacements, out):
    """This rank's first received item in ``out`` (a one-rank exchange's receive displacement)."""
    if receive_displacements is None:
        return 0
    if out is None:
        raise ValueError("receive_displacements place the received items in out: pass out")
    return int(receive_displacements[0])


def _placement(receive_counts, receive_displacements):
    """``(displacements, length)``: where each rank's received items start and how far the received arrays
    run (the parts one after another where no displacements are given)."""
    if receive_displacements is None:
        return _displacements(receive_counts), int(receive_counts.sum())
    displacements = np.asarray(receive_displacements, dtype=np.int64)
    return displacements, int(np.max(displacements + receive_counts, initial=0))


class _NCCLGroup:
    def __init__(self, nccl):
        self._nccl = nccl

    def __enter__(self):
        self._nccl.groupStart()

    def __exit__(self, *exc):
        self._nccl.groupEnd()


def _displacements(counts):
    displacements = np.zeros_like(counts)
    np.cumsum(counts[:-1], out=displacements[1:])
    return displacements


def launched_by_mpi():
    """Whether an MPI launcher (mpiexec, mpirun, srun) started this process with more than one rank.

    A process that a rank started through multiprocessing (the warm-up's workers, `graph500.warm_up`)
    inherits the launcher's variables but not its connection to it: it is no rank. Initialising MPI there
    failed ("PMIU_write error ... Bad file descriptor") and its abort could take the rank down with it
    (MPICH, where a spawned worker re-imports a script that calls `world` at its top level; such a worker
    is named before it imports, so the name tells it even then).
    """
    if multiprocessing.current_process().name != "MainProcess" or multiprocessing.parent_process() is not None:
        return False
    return _launcher_size() > 1


def _launcher_size():
    """The number of ranks the launcher's variables say it started (0 where none is set)."""
    return max((int(os.environ[name]) for name in _LAUNCHER_SIZE_VARIABLES if os.environ.get(name, "").isdigit()),
               default=0)


def world():
    """This process's communicator: MPI's world under an MPI launcher with P > 1, else `SelfCommunicator`.

    Raises Graph500Error when started by a launcher with several ranks but
    mpi4py is missing, or MPI sees a world of one (mpi4py built against
    another MPI than the launcher's): every rank would otherwise run the
    whole benchmark alone.
    """
    if not launched_by_mpi():
        return SelfCommunicator()
    try:
        communicator = MPICommunicator()
    except ImportError:
        raise Graph500Error("started by an MPI launcher with several ranks, but mpi4py is not installed: "
                            "pip install 'graph500[mpi]'") from None
    if communicator.size == 1:
        raise Graph500Error(f"the launcher started {_launcher_size()} ranks, but MPI sees this process alone: "
                            f"mpi4py uses another MPI than this launcher's ({communicator.describe()['mpi_library']}); "
                            "use the launcher of the MPI that mpi4py was built with, or rebuild mpi4py with the "
                            "site's mpicc")
    return communicator
