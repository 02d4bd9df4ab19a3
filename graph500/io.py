"""Files: the reference's edge, weight and root files, ``.npy`` arrays, and tree files.

Reference formats (spec section 10):

* ``NAME``: M records of 12 bytes, little-endian: uint32 low 32 bits of v0,
  uint32 low 32 bits of v1, uint32 whose low 16 bits are bits 32..47 of v0 and
  whose high 16 bits are bits 32..47 of v1 (each read back as signed 16 bits).
* ``NAME.weights``: M little-endian float32 weights, same order.
* ``NAME.roots``: the search keys, one a line.

``npy`` format writes ``NAME.src.npy``, ``NAME.dst.npy``, ``NAME.weights.npy``
and ``NAME.roots.npy``.

Every writer goes through `atomic_output`: data lands in a temporary file
beside the target and is renamed over it only when complete, so an error or an
interrupt never leaves a half-written file. Every reader turns malformed input
(missing, truncated, wrong length, unparsable) into a one-line `Graph500Error`.
"""

import contextlib
import os
import tempfile

import numpy as np

from graph500.errors import Graph500Error

EDGE_RECORD_BYTES = 12
_RECORD = np.dtype([("v0_low", "<u4"), ("v1_low", "<u4"), ("high", "<u4")])


def directory_of(path):
    """The directory a file at ``path`` goes in (created if missing)."""
    directory = os.path.dirname(os.path.abspath(path))
    os.makedirs(directory, exist_ok=True)
    return directory


@contextlib.contextmanager
def atomic_output(path, mode="wb"):
    """Open a temporary file beside ``path``; rename it over ``path`` only on success."""
    directory = directory_of(path)
    fd, temporary = tempfile.mkstemp(prefix=f".{os.path.basename(path)}.", suffix=".part", dir=directory)
    try:
        with os.fdopen(fd, mode) as handle:
            yield handle
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(temporary, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(temporary)
        raise


def pack_edges(src, dst):
    """The reference's 12-byte records for two int64 label arrays."""
    records = np.empty(len(src), dtype=_RECORD)
    src = np.asarray(src, dtype=np.int64)
    dst = np.asarray(dst, dtype=np.int64)
    records["v0_low"] = src & 0xFFFFFFFF
    records["v1_low"] = dst & 0xFFFFFFFF
    records["high"] = ((src >> 32) & 0xFFFF) | (((dst >> 32) & 0xFFFF) << 16)
    return records


def unpack_edges(records):
    """``(src, dst)`` int64 arrays from the reference's 12-byte records."""
    high = records["high"]
    src = records["v0_low"].astype(np.int64) | ((high & 0xFFFF).astype(np.uint16).view(np.int16).astype(np.int64) << 32)
    dst = records["v1_low"].astype(np.int64) | ((high >> 16).astype(np.uint16).view(np.int16).astype(np.int64) << 32)
    return src, dst


def _read_bytes(path, item_bytes, what):
    try:
        size = os.path.getsize(path)
    except OSError as error:
        raise Graph500Error(f"cannot read {what} file {path}: {error.strerror}") from None
    if size % item_bytes:
        raise Graph500Error(f"{what} file {path} is truncated: {size} bytes is not a multiple of {item_bytes}")
    return size // item_bytes


def read_reference_edges(path):
    """``(src, dst)`` from a reference edge file."""
    count = _read_bytes(path, EDGE_RECORD_BYTES, "edge")
    return unpack_edges(np.fromfile(path, dtype=_RECORD, count=count))


def read_reference_weights(path, expected_count):
    """float32 weights from a reference weight file, which must hold ``expected_count`` values."""
    count = _read_bytes(path, 4, "weight")
    if count != expected_count:
        raise Graph500Error(f"weight file {path} holds {count} weights for {expected_count} edges")
    return np.fromfile(path, dtype="<f4", count=count)


def read_vector(path, dtype, what):
    """A 1-D array from ``.npy`` or text (one value a line): parents, distances, roots."""
    try:
        if str(path).endswith(".npy"):
            values = np.load(path, allow_pickle=False)
        else:
            values = np.loadtxt(path, dtype=dtype, ndmin=1, comments="#")
    except OSError as error:
        raise Graph500Error(f"cannot read {what} file {path}: {error.strerror or error}") from None
    except ValueError as error:
        raise Graph500Error(f"{what} file {path} is not readable as {np.dtype(dtype).name} values: {error}") from None
    if values.ndim != 1:
        raise Graph500Error(f"{what} file {path} holds a {values.ndim}-D array; expected one value per vertex")
    if np.dtype(dtype).kind == "i" and values.dtype.kind not in "iu":
        raise Graph500Error(f"{what} file {path} holds {values.dtype.name} values; expected integers")
    return values.astype(dtype, copy=False)


class EdgeFileWriter:
    """Streams a graph to files chunk by chunk; nothing appears at the target paths until `finish`.

    ``reference`` format streams the 12-byte records and the weights straight
    into temporary files; ``npy`` gathers the chunks and saves whole arrays.
    Use as a context manager: leaving it with an error removes every temporary.
    """

    def __init__(self, path, file_format):
        if file_format not in ("reference", "npy"):
            raise Graph500Error(f"unknown format {file_format!r}; use reference or npy")
        self.path = path
        self.file_format = file_format
        self._stack = contextlib.ExitStack()
        self._chunks = {"src": [], "dst": [], "weights": []}

    def __enter__(self):
        if self.file_format == "reference":
            self._edges = self._stack.enter_context(atomic_output(self.path))
            self._weights = self._stack.enter_context(atomic_output(self.path + ".weights"))
        return self

    def write(self, src, dst, weights):
        if self.file_format == "reference":
            self._edges.write(pack_edges(src, dst).tobytes())
            self._weights.write(np.asarray(weights, dtype="<f4").tobytes())
        else:
            for name, values in zip(("src", "dst", "weights"), (src, dst, weights)):
                self._chunks[name].append(values)

    def finish(self, roots):
        """Write the roots and, for npy, the arrays (each atomically)."""
        if self.file_format == "reference":
            with atomic_output(self.path + ".roots", "w") as handle:
                handle.write("".join(f"{int(root)}\n" for root in roots))
            return
        for name, chunks in self._chunks.items():
            with atomic_output(f"{self.path}.{name}.npy") as handle:
                np.save(handle, np.concatenate(chunks))
        with atomic_output(f"{self.path}.roots.npy") as handle:
            np.save(handle, np.asarray(roots, dtype=np.int64))

    def __exit__(self, *exc):
        return self._stack.__exit__(*exc)


def read_edges(path):
    """``(src, dst, weights_or_None)`` from a reference file (``PATH``) or npy files (``PATH.src.npy``)."""
    if os.path.exists(path + ".src.npy"):
        src = read_vector(path + ".src.npy", np.int64, "edge source")
        dst = read_vector(path + ".dst.npy", np.int64, "edge target")
        if len(src) != len(dst):
            raise Graph500Error(f"{path}.src.npy and {path}.dst.npy differ in length")
        weights = read_vector(path + ".weights.npy", np.float32, "weight") if os.path.exists(path + ".weights.npy") else None
        return src, dst, weights
    src, dst = read_reference_edges(path)
    weights = read_reference_weights(path + ".weights", len(src)) if os.path.exists(path + ".weights") else None
    return src, dst, weights
