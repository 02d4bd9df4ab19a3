"""The reference's random stream: a multiple recursive generator (MRG) modulo 2^31 - 1.

The Graph500 reference draws every random number from one linear recurrence of
order five (L'Ecuyer's MRG with multipliers x = 107374182 and y = 104480):

    z_new = (x * z1 + y * z5) mod p,   p = 2^31 - 1,

after which the state (z1..z5) shifts by one place. As a matrix acting on the
column vector (z1..z5) one step is ``A`` (first row ``(x, 0, 0, 0, y)``, the
rest a shifted identity), so skipping ``e`` steps is ``A^e`` — and because
powers of ``A`` commute, any exact way of forming ``A^e`` gives the same state.

This module keeps the powers ``A^(2^k)`` for k = 0..191 (the reference skips by
exponents of up to 192 bits) as ``uint64`` matrices, computed once with
Python's exact integers. The Numba generators use them two ways:

* ``skip``: a matrix-vector product per set bit of the exponent;
* ``step forward``: edge ``e + 1``'s stream starts ``2^64`` steps after edge
  ``e``'s, so a thread that owns a range of edges multiplies its state by
  ``A^(2^64)`` once per edge instead of skipping from the seed each time.

Arithmetic modulo the Mersenne prime p uses the shift-and-add reduction
(``a mod p == (a & p) + (a >> 31)`` folded twice), so nothing divides.
"""

import numba
import numpy as np

MODULUS = 2**31 - 1
MULTIPLIER_X = 107374182
MULTIPLIER_Y = 104480
SKIP_BITS = 192  # exponents are hi * 2^128 + mid * 2^64 + lo

_P = np.uint64(MODULUS)
_X = np.uint64(MULTIPLIER_X)
_Y = np.uint64(MULTIPLIER_Y)
_SHIFT31 = np.uint64(31)


def _matmul_mod(a, b):
    return [[sum(a[i][k] * b[k][j] for k in range(5)) % MODULUS for j in range(5)] for i in range(5)]


def _power_table():
    step = [[0] * 5 for _ in range(5)]
    step[0][0], step[0][4] = MULTIPLIER_X, MULTIPLIER_Y
    for i in range(1, 5):
        step[i][i - 1] = 1
    table = np.empty((SKIP_BITS, 5, 5), dtype=np.uint64)
    for k in range(SKIP_BITS):
        table[k] = step
        step = _matmul_mod(step, step)
    return table


POWERS_OF_A = _power_table()
"""``POWERS_OF_A[k]`` is the matrix ``A^(2^k)`` modulo p, ``uint64``, k = 0..191."""

EDGE_STRIDE_POWERS = POWERS_OF_A[64:128].copy()
"""``EDGE_STRIDE_POWERS[k] = (A^(2^64))^(2^k)``: the skip from one edge's stream to a later one's."""


def edge_skip_matrix(edges):
    """The matrix ``(A^(2^64))^edges`` that moves a state ``edges`` edge streams ahead."""
    matrix = [[int(i == j) for j in range(5)] for i in range(5)]
    for bit in range(64):
        if edges >> bit & 1:
            matrix = _matmul_mod(matrix, EDGE_STRIDE_POWERS[bit].tolist())
    return np.array(matrix, dtype=np.uint64)


def seed_state(seed1, seed2):
    """The reference's state (z1..z5) for two 64-bit user seeds, as a ``uint64`` array."""
    for seed in (seed1, seed2):
        if not 0 <= seed < 2**64:
            raise ValueError(f"seed {seed} is not an unsigned 64-bit integer")
    state = [
        (seed1 & 0x3FFFFFFF) + 1,
        ((seed1 >> 30) & 0x3FFFFFFF) + 1,
        (seed2 & 0x3FFFFFFF) + 1,
        ((seed2 >> 30) & 0x3FFFFFFF) + 1,
        ((seed2 >> 60) << 4) + (seed1 >> 60) + 1,
    ]
    return np.array(state, dtype=np.uint64)


def skip(state, exponent):
    """Return ``A^exponent * state`` for an exponent of up to 192 bits (a Python int)."""
    if not 0 <= exponent < 2**SKIP_BITS:
        raise ValueError(f"skip exponent {exponent} does not fit in {SKIP_BITS} bits")
    result = np.array(state, dtype=np.uint64)
    for bit in range(SKIP_BITS):
        if exponent >> bit & 1:
            result = matvec_mod(POWERS_OF_A[bit], result)
    return result


@numba.njit(inline="always", cache=True)
def reduce_mod(value):
    """``value mod (2^31 - 1)`` for any uint64 ``value``, by Mersenne folding."""
    value = (value & _P) + (value >> _SHIFT31)
    value = (value & _P) + (value >> _SHIFT31)
    if value >= _P:
        value -= _P
    return value


@numba.njit(cache=True)
def matvec_mod(matrix, state):
    """``matrix @ state`` modulo p for a 5x5 uint64 matrix and a 5-vector of residues."""
    out = np.empty(5, dtype=np.uint64)
    for i in range(5):
        acc = np.uint64(0)
        for j in range(5):
            acc += reduce_mod(matrix[i, j] * state[j])
        out[i] = reduce_mod(acc)
    return out


@numba.njit(inline="always", cache=True)
def next_value(z1, z5):
    """One MRG step's new element from the newest (z1) and oldest (z5) state words."""
    return reduce_mod(_X * z1 + _Y * z5)


def draw(state, count):
    """Plain stepping: return ``(values, new_state)`` after ``count`` draws (tests and roots)."""
    z = [int(v) for v in state]
    values = []
    for _ in range(count):
        new = (MULTIPLIER_X * z[0] + MULTIPLIER_Y * z[4]) % MODULUS
        z = [new] + z[:4]
        values.append(new)
    return values, np.array(z, dtype=np.uint64)
