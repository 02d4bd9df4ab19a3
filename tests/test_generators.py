"""The Kronecker generator and the search keys against the reference, bit for bit.

Three kinds of evidence:
* the reference program's own files (tests/data/reference-v3) for four graphs;
* an independent pure-Python transcription of the spec, one edge at a time,
  checked against the fast generator at large edge indices and SCALEs far
  beyond the fixtures (up to 47);
* internal consistency: any edge range generated alone equals that slice of a
  full generation, and skipping agrees with plain stepping.
"""

import pathlib

import numpy as np
import pytest

from graph500 import io
from graph500.generators import kronecker, mrg
from graph500.generators.roots import incident_vertices, search_keys

DATA = pathlib.Path(__file__).parent / "data" / "reference-v3"
FIXTURES = [
    ("s9_ef4_seed1-1", 9, 4, 1, 1),
    ("s10_ef16_seed2-3", 10, 16, 2, 3),
    ("s11_ef8_seed5-7", 11, 8, 5, 7),
    ("s12_ef16_seed2-3", 12, 16, 2, 3),
]


@pytest.mark.parametrize("name, scale, edgefactor, seed1, seed2", FIXTURES)
def test_edges_weights_and_roots_match_reference_files(name, scale, edgefactor, seed1, seed2):
    src, dst, weights = kronecker.generate_edges(scale, edgefactor, seed1, seed2)
    ref_src, ref_dst = io.read_reference_edges(DATA / f"{name}.edges")
    ref_weights = np.fromfile(DATA / f"{name}.edges.weights", dtype="<f4")
    np.testing.assert_array_equal(src, ref_src)
    np.testing.assert_array_equal(dst, ref_dst)
    assert weights.tobytes() == ref_weights.tobytes()
    roots, complete = search_keys(scale, seed1, seed2, incident_vertices(src, dst, 1 << scale))
    assert complete
    np.testing.assert_array_equal(roots, np.loadtxt(DATA / f"{name}.roots", dtype=np.int64))


def _spec_edge(scale, seed1, seed2, index):
    """Edge ``index`` exactly as spec section 2 states it, with Python integers (slow, independent)."""
    p = 2**31 - 1
    mask = 2**64 - 1

    def draws(state):
        z = list(state)
        while True:
            new = (107374182 * z[0] + 104480 * z[4]) % p
            z = [new] + z[:4]
            yield new

    def power_apply(exponent, state):  # A^exponent * state by square-and-multiply on Python ints
        matrix = [[107374182, 0, 0, 0, 104480]] + [[int(j == i - 1) for j in range(5)] for i in range(1, 5)]
        vector = [int(v) for v in state]
        while exponent:
            if exponent & 1:
                vector = [sum(matrix[i][k] * vector[k] for k in range(5)) % p for i in range(5)]
            matrix = [[sum(matrix[i][k] * matrix[k][j] for k in range(5)) % p for j in range(5)] for i in range(5)]
            exponent >>= 1
        return vector

    seed = [(seed1 & 0x3FFFFFFF) + 1, ((seed1 >> 30) & 0x3FFFFFFF) + 1, (seed2 & 0x3FFFFFFF) + 1,
            ((seed2 >> 30) & 0x3FFFFFFF) + 1, ((seed2 >> 60) << 4) + (seed1 >> 60) + 1]
    u = draws(power_apply(50 * 2**128 + 7 * 2**64, seed))
    u1, u2, u3, u4 = next(u), next(u), next(u), next(u)
    val0, val1 = (u1 * 0xFFFFFFFF + u2) & mask, (u3 * 0xFFFFFFFF + u4) & mask

    def bitreverse(v):
        return int(f"{v:064b}"[::-1], 2)

    def scramble(v):
        v = (v + val0 + val1) & mask
        v = (v * (val0 | 0x4519840211493211)) & mask
        v = bitreverse(v) >> (64 - scale)
        v = (v * (val1 | 0x3050852102C843A5)) & mask
        return bitreverse(v) >> (64 - scale)

    stream = draws(power_apply(index * 2**64, seed))
    src = dst = 0
    half = 2 ** (scale - 1)
    for _ in range(scale):
        value = next(stream)
        while value < 3647:
            value = next(stream)
        r = value % 10000
        bits = (0, 1) if r < 1900 else (1, 0) if r < 3800 else (0, 0) if r < 9500 else (1, 1)
        if src == dst and bits == (1, 0):
            bits = (0, 1)
        src, dst = src + half * bits[0], dst + half * bits[1]
        half //= 2
    weight = np.float32(float(np.float32(next(stream))) * 4.65661287524579692e-10)
    return scramble(src), scramble(dst), weight


@pytest.mark.parametrize("scale, edgefactor, seed1, seed2, index", [
    (20, 16, 2, 3, 16 * 2**20 - 1),
    (30, 16, 2, 3, 12345678901),
    (47, 16, 2**64 - 1, 2**63 + 12345, 16 * 2**47 - 3),
    (33, 4, 0, 0, 2**34 + 7),
])
def test_single_edges_far_out_match_the_spec_transcription(scale, edgefactor, seed1, seed2, index):
    src, dst, weights = kronecker.generate_edges(scale, edgefactor, seed1, seed2, index, index + 1)
    assert (int(src[0]), int(dst[0]), weights[0]) == _spec_edge(scale, seed1, seed2, index)


def test_any_edge_range_equals_the_slice_of_a_full_generation():
    scale, edgefactor = 14, 16  # 262144 edges: several Numba tasks
    full = kronecker.generate_edges(scale, edgefactor, 7, 9)
    rng = np.random.default_rng(0)
    task = kronecker.EDGES_PER_TASK
    ranges = [(0, 1), (1, 18), (task - 5, task + 40), (3 * task + 3, 3 * task + 3), (5000, 190001)]
    ranges += [tuple(sorted(rng.integers(0, edgefactor << scale, 2))) for _ in range(5)]
    for start, stop in ranges:
        part = kronecker.generate_edges(scale, edgefactor, 7, 9, start, stop)
        for whole, piece in zip(full, part):
            np.testing.assert_array_equal(whole[start:stop], piece)


def test_a_ranks_int32_slice_holds_the_int64_labels():
    """`generate_range` with int32 labels (a rank's slice, through int64 chunks) gives the same tuples."""
    from graph500.kernels.cpu.backend import GENERATION_CHUNKS, generate_range

    start, stop = 1234, 1234 + 3 * GENERATION_CHUNKS + 5  # chunks of unequal length
    wide = generate_range(12, 16, 2, 3, start, stop)
    narrow = generate_range(12, 16, 2, 3, start, stop, label_dtype=np.int32)
    assert narrow[0].dtype == narrow[1].dtype == np.int32
    for expected, actual in zip(wide, narrow):
        np.testing.assert_array_equal(expected, actual)


def test_skip_agrees_with_plain_stepping():
    state = mrg.seed_state(2, 3)
    for count in (0, 1, 4, 5, 77, 1000, 4097):
        _, stepped = mrg.draw(state, count)
        np.testing.assert_array_equal(mrg.skip(state, count), stepped)
    # one edge stride is 2^64 steps: skip(e * 2^64) == (A^(2^64))^e, composed from the stride tables
    for edges in (1, 2, 3, 8, 1000, 2**40 + 5):
        np.testing.assert_array_equal(
            mrg.skip(state, edges * 2**64), mrg.matvec_mod(mrg.edge_skip_matrix(edges), state))


def test_scramble_is_a_bijection():
    val0, val1 = kronecker.scramble_constants(2, 3)
    for scale in (1, 5, 12):
        labels = {kronecker.scramble(v, scale, val0, val1) for v in range(1 << scale)}
        assert labels == set(range(1 << scale))


@pytest.mark.parametrize("bad", [
    dict(scale=0), dict(scale=48), dict(edgefactor=0), dict(seed1=-1), dict(seed2=2**64),
    dict(start=5, stop=3), dict(stop=10**9),
])
def test_bad_parameters_raise(bad):
    arguments = dict(scale=4, edgefactor=4, seed1=2, seed2=3) | bad
    with pytest.raises(ValueError):
        kronecker.generate_edges(**arguments)


def test_roots_when_too_few_vertices_have_edges():
    src, dst, _ = kronecker.generate_edges(3, 1, 2, 3)  # 8 vertices, 8 tuples
    has_edge = incident_vertices(src, dst, 8)
    roots, complete = search_keys(3, 2, 3, has_edge)
    assert not complete
    assert len(roots) == 64
    assert set(roots[: int(has_edge.sum())]) <= set(np.flatnonzero(has_edge))
