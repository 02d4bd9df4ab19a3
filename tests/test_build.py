"""Kernel 1 on the CPU (graph500.kernels.cpu.build) against a plain-Python CSR builder."""

from pathlib import Path

import numpy as np
import pytest

from graph500.kernels.cpu import build
from graph500.kernels.cpu.build import build_csr, build_memory_bytes
from graph500.kernels.graph import neighbor_dtype, simple_csr

FIXTURE = Path(__file__).parent / "data" / "reference-v3" / "s12_ef16_seed2-3.edges"

# Tunables that force many buckets, chunks and radix digits on small graphs, or buckets of more than 2^16 rows
# (32-bit rows in the scratch).
LAYOUTS = {
    "default": {},
    "small-buckets": {"BUCKET_ENTRIES": 64, "CHUNKS_PER_THREAD": 3, "MAX_RADIX_BITS": 3},
    "one-vertex-buckets": {"BUCKET_ENTRIES": 1, "CHUNKS_PER_THREAD": 5, "MAX_RADIX_BITS": 1},
    "wide-buckets": {"BUCKET_ENTRIES": 1 << 24, "MAX_RADIX_BITS": 2},
}


@pytest.fixture(params=list(LAYOUTS))
def layout(request, monkeypatch):
    for name, value in LAYOUTS[request.param].items():
        monkeypatch.setattr(build, name, value)


def test_wide_buckets_keep_32_bit_rows():
    assert build._local_row_dtype(build._bucket_shift(5000, 300)) == np.uint16
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(build, "BUCKET_ENTRIES", LAYOUTS["wide-buckets"]["BUCKET_ENTRIES"])
        assert build._local_row_dtype(build._bucket_shift(5000, 300)) == np.uint32


def reference_csr(src, dst, num_vertices, weights):
    """Offsets, neighbours and weights (or None) built with dicts: the specification of build_csr."""
    rows = [dict() for _ in range(num_vertices)]
    for i, (u, v) in enumerate(zip(src.tolist(), dst.tolist())):
        if u == v:
            continue
        w = 0.0 if weights is None else float(weights[i])
        for row, neighbor in ((u, v), (v, u)):
            rows[row][neighbor] = min(w, rows[row].get(neighbor, np.inf))
    offsets = np.cumsum([0] + [len(row) for row in rows])
    neighbors = [n for row in rows for n in sorted(row)]
    row_weights = [row[n] for row in rows for n in sorted(row)]
    return offsets, np.array(neighbors, dtype=np.int64), None if weights is None else np.array(row_weights, np.float32)


def assert_matches_reference(src, dst, num_vertices, weights, label_dtype=np.int32, builder=build_csr):
    graph = builder(src, dst, num_vertices, weights)
    offsets, neighbors, expected_weights = reference_csr(src, dst, num_vertices, weights)
    assert graph.num_vertices == num_vertices
    assert graph.offsets.dtype == np.int64
    assert graph.neighbors.dtype == label_dtype
    np.testing.assert_array_equal(graph.offsets, offsets)
    np.testing.assert_array_equal(graph.neighbors, neighbors)
    assert graph.num_edges == len(neighbors)
    if weights is None:
        assert graph.weights is None
    else:
        assert graph.weights.dtype == np.float32
        np.testing.assert_array_equal(graph.weights, expected_weights)


def random_tuples(rng, num_vertices, num_tuples, distinct_weights):
    """Tuples with many duplicates and self-loops; weights from a small set, so that ties occur too."""
    src = rng.integers(0, num_vertices, num_tuples)
    dst = rng.integers(0, num_vertices, num_tuples)
    loops = rng.random(num_tuples) < 0.1
    dst[loops] = src[loops]
    weights = rng.integers(0, distinct_weights, num_tuples).astype(np.float32) / distinct_weights
    return src, dst, weights


def read_reference_edges(path):
    """The reference's 12-byte edge records (spec section 10) and their float32 weights."""
    records = np.fromfile(path, dtype="<u4").reshape(-1, 3)
    high = records[:, 2]
    high0 = (high & 0xFFFF).astype(np.uint16).view(np.int16).astype(np.int64)
    high1 = (high >> 16).astype(np.uint16).view(np.int16).astype(np.int64)
    src = records[:, 0].astype(np.int64) | (high0 << 32)
    dst = records[:, 1].astype(np.int64) | (high1 << 32)
    weights = np.fromfile(f"{path}.weights", dtype="<f4")
    return src, dst, weights


@pytest.mark.parametrize("num_vertices, num_tuples, distinct_weights", [
    (2, 40, 3), (8, 300, 5), (50, 2000, 1000), (300, 5000, 2**20), (1000, 300, 7),
])
@pytest.mark.parametrize("weighted", [True, False])
def test_random_graphs(layout, num_vertices, num_tuples, distinct_weights, weighted):
    rng = np.random.default_rng(num_vertices * 1000 + num_tuples)
    src, dst, weights = random_tuples(rng, num_vertices, num_tuples, distinct_weights)
    assert_matches_reference(src, dst, num_vertices, weights if weighted else None)


@pytest.mark.parametrize("weighted", [True, False])
def test_simple_csr_matches_reference(weighted):
    rng = np.random.default_rng(7)
    for num_vertices, num_tuples, distinct_weights in [(1, 3, 2), (8, 300, 5), (300, 5000, 2**20)]:
        src, dst, weights = random_tuples(rng, num_vertices, num_tuples, distinct_weights)
        assert_matches_reference(src, dst, num_vertices, weights if weighted else None, builder=simple_csr)
    src, dst, weights = read_reference_edges(FIXTURE)
    assert_matches_reference(src, dst, 4096, weights if weighted else None, builder=simple_csr)


@pytest.mark.parametrize("weighted", [True, False])
def test_renaming_on_the_way_equals_building_the_renamed_tuples(layout, weighted):
    src, dst, weights = read_reference_edges(FIXTURE)
    weights = weights if weighted else None
    new_label = np.random.default_rng(3).permutation(4096)
    keep = src != dst
    degrees = np.bincount(src[keep], minlength=4096) + np.bincount(dst[keep], minlength=4096)
    seen = []
    renamed = build_csr(src, dst, 4096, weights, rename=lambda tuple_degrees: seen.append(tuple_degrees) or new_label)
    np.testing.assert_array_equal(seen[0], degrees)  # rename is given the tuple degrees
    expected = build_csr(new_label[src], new_label[dst], 4096, weights)
    for name in ("offsets", "neighbors", "weights"):
        np.testing.assert_array_equal(getattr(renamed, name), getattr(expected, name))
    with pytest.raises(ValueError, match="one label per vertex"):
        build_csr(src, dst, 4096, weights, rename=lambda tuple_degrees: new_label[1:])


def test_isolated_vertices(layout):
    src = np.array([0, 3, 3, 9, 99, 5])
    dst = np.array([3, 0, 9, 9, 0, 5])
    weights = np.array([0.5, 0.25, 0.125, 0.0, 0.75, 0.5], dtype=np.float32)
    assert_matches_reference(src, dst, 100, weights)


def test_duplicates_keep_minimum_weight(layout):
    src = np.array([0, 1, 0, 2, 2])
    dst = np.array([1, 0, 1, 1, 1])
    weights = np.array([0.5, 0.25, 0.75, 0.0, 0.5], dtype=np.float32)
    graph = build_csr(src, dst, 3, weights)
    np.testing.assert_array_equal(graph.offsets, [0, 1, 3, 4])
    np.testing.assert_array_equal(graph.neighbors, [1, 0, 2, 1])
    np.testing.assert_array_equal(graph.weights, np.array([0.25, 0.25, 0.0, 0.0], dtype=np.float32))


def test_single_vertex_with_only_self_loops(layout):
    graph = build_csr(np.zeros(5, np.int64), np.zeros(5, np.int64), 1, np.ones(5, np.float32))
    np.testing.assert_array_equal(graph.offsets, [0, 0])
    assert graph.num_edges == 0 and len(graph.weights) == 0


@pytest.mark.parametrize("num_vertices", [1, 2, 5])
@pytest.mark.parametrize("weighted", [True, False])
def test_empty_edge_list(layout, num_vertices, weighted):
    empty = np.zeros(0, dtype=np.int64)
    graph = build_csr(empty, empty, num_vertices, np.zeros(0, np.float32) if weighted else None)
    np.testing.assert_array_equal(graph.offsets, np.zeros(num_vertices + 1))
    assert graph.neighbors.dtype == np.int32 and graph.num_edges == 0
    assert (graph.weights is None) != weighted


@pytest.mark.parametrize("weighted", [True, False])
def test_reference_fixture(layout, weighted):
    src, dst, weights = read_reference_edges(FIXTURE)
    assert len(src) == 16 * 4096 and src.max() < 4096 and dst.max() < 4096
    assert_matches_reference(src, dst, 4096, weights if weighted else None)


@pytest.mark.parametrize("src, dst, weights, message", [
    ([0, 4], [1, 2], None, "outside"),
    ([0, -1], [1, 2], None, "outside"),
    ([0, 1], [1, 2, 3], None, "equal length"),
    ([0, 1], [1, 2], [0.5], "one entry per tuple"),
    ([0, 1], [1, 2], [0.5, -0.5], "negative"),
    ([0, 1], [1, 2], [0.5, -0.0], "negative"),
    ([0, 1], [1, 2], [np.nan, 0.5], "NaN"),
])
def test_bad_input_raises(src, dst, weights, message):
    weights = None if weights is None else np.array(weights, dtype=np.float32)
    with pytest.raises(ValueError, match=message):
        build_csr(np.array(src), np.array(dst), 4, weights)


@pytest.mark.parametrize("weighted", [True, False])
def test_int64_labels(layout, monkeypatch, weighted):
    """The int64 path of graphs above 2^31 vertices, forced on a small graph."""
    monkeypatch.setattr(build, "neighbor_dtype", lambda num_vertices: np.dtype(np.int64))
    src, dst, weights = random_tuples(np.random.default_rng(5), 300, 5000, 100)
    assert_matches_reference(src, dst, 300, weights if weighted else None, label_dtype=np.int64)


def test_weighted_graphs_above_2_to_the_32_vertices_are_refused():
    with pytest.raises(ValueError, match="2\\^32"):
        build_csr(np.array([0]), np.array([1]), 2**32 + 1, np.array([0.5], dtype=np.float32))


def test_neighbor_dtype_switches_above_2_to_the_31():
    assert neighbor_dtype(2**31) == np.int32
    assert neighbor_dtype(2**31 + 1) == np.int64


def test_memory_bound_covers_the_result():
    src, dst, weights = read_reference_edges(FIXTURE)
    graph = build_csr(src, dst, 4096, weights)
    result_bytes = graph.offsets.nbytes + graph.neighbors.nbytes + graph.weights.nbytes
    # keys and rows of every directed entry, plus the result itself
    assert build_memory_bytes(len(src), 4096, True) >= result_bytes + 2 * len(src) * (8 + 4)
    assert build_memory_bytes(len(src), 2**31 + 1, True) > build_memory_bytes(len(src), 2**31, True)


def test_the_planned_figure_lies_between_the_result_and_the_bound():
    """The memory plan's figure (the buckets sorted at once one a thread) holds the result and the keys and rows of
    every entry, and stays under the guaranteed bound, which takes the scratch of every bucket at once."""
    src, dst, weights = read_reference_edges(FIXTURE)
    graph = build_csr(src, dst, 4096, weights)
    result_bytes = graph.offsets.nbytes + graph.neighbors.nbytes + graph.weights.nbytes
    planned = build_memory_bytes(len(src), 4096, True, bound=False)
    assert result_bytes + 2 * len(src) * (8 + 4) <= planned <= build_memory_bytes(len(src), 4096, True)
    large = 1 << 26  # many buckets: the scratch of two a thread is a small part of the keys
    assert build_memory_bytes(large, 1 << 22, True, bound=False) < 0.7 * build_memory_bytes(large, 1 << 22, True)


def test_rows_of_tuples_handed_over_alone_free_them_before_the_rows_are_gathered(monkeypatch):
    import weakref

    rng = np.random.default_rng(5)
    tuples = [rng.integers(0, 1000, 20000).astype(np.uint32), rng.integers(0, 1000, 20000).astype(np.uint32),
              rng.random(20000, dtype=np.float32)]
    src, dst, weights = (array.copy() for array in tuples)
    expected = build.build_rows(src, dst, 1000, weights, 100, 400)
    alive = [weakref.ref(array) for array in tuples]
    seen = []
    gather = build._gather

    def checked_gather(*args):
        seen.append([ref() is not None for ref in alive])
        return gather(*args)

    monkeypatch.setattr(build, "_gather", checked_gather)
    rows = build.build_rows(tuples.pop(0), tuples.pop(0), 1000, tuples.pop(0), 100, 400)
    assert seen == [[False, False, False]]  # the caller kept no reference: gone before the result was made
    for actual, wanted in zip(rows, expected):
        np.testing.assert_array_equal(actual, wanted)
