"""The reference's Kronecker graph generator, bit-exact, parallel over edge ranges.

Graph500 v3 generates ``M = edgefactor * 2^SCALE`` edge tuples. Edge ``ei`` is a
pure function of ``ei`` and the two user seeds: its random stream starts
``ei * 2^64`` steps into the MRG stream (see ``mrg.py``). From there it draws,
SCALE times, a quadrant of the adjacency matrix with probabilities
A = 0.57, B = C = 0.19, D = 0.05 (rejecting draws below ``(2^31-1) mod 10000``
so that ``u mod 10000`` is unbiased), flips the quadrant to keep the raw edge in
the upper triangle while the source and target prefixes are equal
("clip-and-flip"), and halves the block. One more draw gives the edge's
float32 weight. Both endpoints then go through the reference's ``scramble``,
a bijection of the labels built from two multiplications and bit reversals
with constants ``val0`` and ``val1`` drawn from the stream at skip
``50 * 2^128 + 7 * 2^64``.

Parallel structure: the edge range is cut into tasks of ``EDGES_PER_TASK``
consecutive edges; a task skips its state to its first edge once (one matrix
power), then steps it forward by the fixed matrix ``A^(2^64)`` per edge
(25 multiply-reduce operations) instead of skipping from the seed each time,
which is what the reference does. Any edge range can be generated alone and
equals that slice of a full generation (tests check this).

Tunables: ``EDGES_PER_TASK`` (work per Numba task; small enough to balance,
large enough that the skip per task is noise).
"""

import numba
import numpy as np

from graph500.generators import mrg

MAX_SCALE = 47  # the reference's 12-byte edge records hold 48-bit labels
EDGES_PER_TASK = 1 << 16
LANES = 32  # edges generated side by side in one thread; divides EDGES_PER_TASK

_REJECT_BELOW = np.uint32((2**31 - 1) % 10000)  # 3647
_DENOMINATOR = np.uint32(10000)
_P = np.uint64(mrg.MODULUS)
_X = np.uint64(mrg.MULTIPLIER_X)
_Y = np.uint64(mrg.MULTIPLIER_Y)
_SHIFT31 = np.uint64(31)
_WEIGHT_SCALE = 4.65661287524579692e-10  # 1 / (2^31 - 1), as the reference writes it
_SCRAMBLE_MULT0 = np.uint64(0x4519840211493211)
_SCRAMBLE_MULT1 = np.uint64(0x3050852102C843A5)
_U64_MASK = 2**64 - 1


def scramble_constants(seed1, seed2):
    """The reference's ``(val0, val1)``: four draws after skip(50 * 2^128 + 7 * 2^64)."""
    state = mrg.skip(mrg.seed_state(seed1, seed2), 50 * 2**128 + 7 * 2**64)
    (u1, u2, u3, u4), _ = mrg.draw(state, 4)
    val0 = (u1 * 0xFFFFFFFF + u2) & _U64_MASK
    val1 = (u3 * 0xFFFFFFFF + u4) & _U64_MASK
    return np.uint64(val0), np.uint64(val1)


def check_parameters(scale, edgefactor, seed1, seed2):
    """Raise ValueError with a one-line reason when the parameters are outside the generator's domain."""
    if not isinstance(scale, (int, np.integer)) or not 1 <= scale <= MAX_SCALE:
        raise ValueError(f"SCALE must be an integer from 1 to {MAX_SCALE}, got {scale}")
    if not isinstance(edgefactor, (int, np.integer)) or edgefactor < 1 or edgefactor << scale >= 2**63:
        raise ValueError(f"edgefactor must be a positive integer with edgefactor * 2^SCALE < 2^63, got {edgefactor}")
    for name, seed in (("seed1", seed1), ("seed2", seed2)):
        if not isinstance(seed, (int, np.integer)) or not 0 <= seed < 2**64:
            raise ValueError(f"{name} must be an integer from 0 to 2^64 - 1, got {seed}")


def generate_edges(scale, edgefactor=16, seed1=2, seed2=3, start=0, stop=None, out=None):
    """Generate edges ``start`` to ``stop`` (default: all ``edgefactor * 2^scale``).

    Returns ``(src, dst, weights)``: two int64 arrays of vertex labels and a
    float32 array of weights, identical to the reference's for those indices.
    ``out`` may give the three arrays to fill (each ``stop - start`` long).
    """
    check_parameters(scale, edgefactor, seed1, seed2)
    num_edges = edgefactor << scale
    stop = num_edges if stop is None else stop
    if not 0 <= start <= stop <= num_edges:
        raise ValueError(f"edge range [{start}, {stop}) is outside [0, {num_edges})")
    count = stop - start
    if out is None:
        out = (np.empty(count, dtype=np.int64), np.empty(count, dtype=np.int64), np.empty(count, dtype=np.float32))
    src, dst, weights = out
    if not len(src) == len(dst) == len(weights) == count:
        raise ValueError(f"output arrays must hold {count} edges")
    val0, val1 = scramble_constants(seed1, seed2)
    _generate_range(
        np.int64(start), np.int64(scale), mrg.seed_state(seed1, seed2), mrg.EDGE_STRIDE_POWERS,
        _LANES_STRIDE, val0, val1, src, dst, weights,
    )
    return src, dst, weights


@numba.njit(inline="always", cache=True)
def _bitreverse64(value):
    value = ((value >> np.uint64(1)) & np.uint64(0x5555555555555555)) | ((value & np.uint64(0x5555555555555555)) << np.uint64(1))
    value = ((value >> np.uint64(2)) & np.uint64(0x3333333333333333)) | ((value & np.uint64(0x3333333333333333)) << np.uint64(2))
    value = ((value >> np.uint64(4)) & np.uint64(0x0F0F0F0F0F0F0F0F)) | ((value & np.uint64(0x0F0F0F0F0F0F0F0F)) << np.uint64(4))
    value = ((value >> np.uint64(8)) & np.uint64(0x00FF00FF00FF00FF)) | ((value & np.uint64(0x00FF00FF00FF00FF)) << np.uint64(8))
    value = ((value >> np.uint64(16)) & np.uint64(0x0000FFFF0000FFFF)) | ((value & np.uint64(0x0000FFFF0000FFFF)) << np.uint64(16))
    return (value >> np.uint64(32)) | (value << np.uint64(32))


@numba.njit(inline="always", cache=True)
def scramble(vertex, scale, val0, val1):
    """The reference's label scramble: a bijection of [0, 2^scale)."""
    shift = np.uint64(64 - scale)
    value = np.uint64(vertex) + (val0 + val1)
    value *= val0 | _SCRAMBLE_MULT0
    value = _bitreverse64(value) >> shift
    value *= val1 | _SCRAMBLE_MULT1
    value = _bitreverse64(value) >> shift
    return np.int64(value)


@numba.njit(cache=True)
def edge_start_state(first_edge, seed, stride_powers):
    """The MRG state at which edge ``first_edge``'s stream starts: (A^(2^64))^first_edge * seed."""
    state = seed.copy()
    remaining = first_edge
    bit = 0
    while remaining:
        if remaining & 1:
            state = mrg.matvec_mod(stride_powers[bit], state)
        remaining >>= 1
        bit += 1
    return state


@numba.njit(inline="always", cache=True)
def _mrg_step(newest, oldest):
    """One MRG draw from the newest (z1) and oldest (z5) words, both below 2^31 (uint32)."""
    value = _X * np.uint64(newest) + _Y * np.uint64(oldest)  # < 2^59
    value = (value & _P) + (value >> _SHIFT31)  # < 2p
    return np.uint32(value - _P if value >= _P else value)


@numba.njit(inline="always", cache=True)
def _draw_all_lanes(ring, oldest, draws):
    """Draw once in every lane: the new word replaces the oldest row of the ring.

    Returns True when some lane drew a value that the unbiasing rejects.
    """
    newest = oldest - 1 if oldest > 0 else 4
    rejected = False
    for lane in range(LANES):
        value = _mrg_step(ring[newest, lane], ring[oldest, lane])
        ring[oldest, lane] = value
        draws[lane] = value
        rejected |= value < _REJECT_BELOW
    return rejected


@numba.njit(cache=True)
def _redraw_rejected_lanes(ring, oldest, draws):
    """Draw again in each lane whose draw was rejected (rare: p = 1.7e-6 per draw).

    ``oldest`` is the ring's common oldest row after the last draw. An extra
    draw in one lane shifts that lane's words one place, and writing them back
    in order keeps every lane's oldest word in the common row.
    """
    for lane in range(LANES):
        while draws[lane] < _REJECT_BELOW:
            newest = oldest - 1 if oldest > 0 else 4
            value = _mrg_step(ring[newest, lane], ring[oldest, lane])
            for age in range(4):
                ring[(oldest + age) % 5, lane] = ring[(oldest + age + 1) % 5, lane]
            ring[newest, lane] = value
            draws[lane] = value


@numba.njit(inline="always", cache=True)
def _descend_all_lanes(draws, prefixes_equal, src_prefix, dst_prefix):
    """Append one bit to each lane's source and target from the quadrant its draw picks.

    ``r = draw mod 10000`` picks B = (0,1) below 1900, C = (1,0) below 3800,
    A = (0,0) below 9500 and D = (1,1) above; while a lane's source and target
    prefixes are equal, (1,0) becomes (0,1) (clip-and-flip). Branch-free: the
    quadrant is random, so branches on it would be mispredicted.
    """
    for lane in range(LANES):
        r = np.int32(draws[lane] % _DENOMINATOR)
        in_d = np.int32(r >= 9500)
        src_bit = np.int32(r >= 1900) & (np.int32(r < 3800) | in_d)
        dst_bit = np.int32(r < 1900) | in_d
        flip = prefixes_equal[lane] & src_bit & (1 - dst_bit)
        src_bit ^= flip
        dst_bit ^= flip
        prefixes_equal[lane] &= np.int32(src_bit == dst_bit)
        src_prefix[lane] = (src_prefix[lane] << 1) | src_bit
        dst_prefix[lane] = (dst_prefix[lane] << 1) | dst_bit


@numba.njit(inline="always", cache=True)
def _advance_lanes(matrix, lane_start, scratch):
    """Replace every lane's state column by ``matrix @ column`` modulo p."""
    for row in range(5):
        for lane in range(LANES):
            total = np.uint64(0)
            for col in range(5):
                total += mrg.reduce_mod(matrix[row, col] * lane_start[col, lane])
            scratch[row, lane] = mrg.reduce_mod(total)
    lane_start[:, :] = scratch


@numba.njit(parallel=True, cache=True)
def _generate_range(start, scale, seed, stride_powers, lanes_stride, val0, val1, src, dst, weights):
    """Generate edges ``start .. start + len(src)`` into ``src``, ``dst``, ``weights``.

    Within a task, ``LANES`` consecutive edges are generated side by side, one
    column of a 5-row ring of state words each, so that their independent
    recurrences fill the processor's pipelines (and SIMD lanes) instead of
    waiting on one long dependency chain. After a block every lane's starting
    state jumps ``LANES`` edges ahead through ``lanes_stride``.
    """
    count = src.shape[0]
    num_tasks = (count + EDGES_PER_TASK - 1) // EDGES_PER_TASK
    for task in numba.prange(num_tasks):
        first = task * EDGES_PER_TASK
        last = min(first + EDGES_PER_TASK, count)
        lane_start = np.empty((5, LANES), dtype=np.uint64)
        state = edge_start_state(start + first, seed, stride_powers)
        for lane in range(LANES):
            lane_start[:, lane] = state
            state = mrg.matvec_mod(stride_powers[0], state)
        scratch = np.empty((5, LANES), dtype=np.uint64)
        ring = np.empty((5, LANES), dtype=np.uint32)
        draws = np.empty(LANES, dtype=np.uint32)
        prefixes_equal = np.empty(LANES, dtype=np.int32)
        src_prefix = np.empty(LANES, dtype=np.int64)
        dst_prefix = np.empty(LANES, dtype=np.int64)
        for block in range(first, last, LANES):
            for age in range(5):  # ring row `age` holds z(5 - age): row 0 is the oldest word
                for lane in range(LANES):
                    ring[age, lane] = np.uint32(lane_start[4 - age, lane])
            prefixes_equal[:] = 1
            src_prefix[:] = 0
            dst_prefix[:] = 0
            oldest = 0
            for _ in range(scale):
                rejected = _draw_all_lanes(ring, oldest, draws)
                oldest = oldest + 1 if oldest < 4 else 0
                if rejected:
                    _redraw_rejected_lanes(ring, oldest, draws)
                _descend_all_lanes(draws, prefixes_equal, src_prefix, dst_prefix)
            newest = oldest - 1 if oldest > 0 else 4
            for lane in range(min(LANES, last - block)):
                weight_draw = _mrg_step(ring[newest, lane], ring[oldest, lane])
                weights[block + lane] = np.float32(np.float64(np.float32(weight_draw)) * _WEIGHT_SCALE)
                src[block + lane] = scramble(src_prefix[lane], scale, val0, val1)
                dst[block + lane] = scramble(dst_prefix[lane], scale, val0, val1)
            _advance_lanes(lanes_stride, lane_start, scratch)

_LANES_STRIDE = mrg.edge_skip_matrix(LANES)
