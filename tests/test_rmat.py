"""The experimental R-MAT generator (graph500.generators.rmat)."""

import numpy as np
import pytest

from graph500.generators.rmat import generate_rmat


def max_degree(src, dst, num_vertices):
    return np.bincount(np.concatenate([src, dst]), minlength=num_vertices).max()


@pytest.mark.parametrize("scale, edgefactor", [(1, 1), (5, 3), (10, 16)])
def test_shapes_dtypes_and_label_range(scale, edgefactor):
    src, dst, weights = generate_rmat(scale, edgefactor, seed=1)
    num_edges = edgefactor << scale
    assert src.shape == dst.shape == weights.shape == (num_edges,)
    assert src.dtype == dst.dtype == np.int64 and weights.dtype == np.float32
    assert 0 <= min(src.min(), dst.min()) and max(src.max(), dst.max()) < 1 << scale
    assert 0.0 <= weights.min() and weights.max() < 1.0


def test_labels_cover_the_vertex_range():
    src, dst, _ = generate_rmat(8, 16, a=0.25, b=0.25, c=0.25, seed=2)
    assert len(np.unique(np.concatenate([src, dst]))) > 250  # uniform: nearly all of 256 labels


def test_unweighted_gives_none():
    assert generate_rmat(4, 2, weights=False)[2] is None


@pytest.mark.parametrize("options", [
    {}, {"permute_vertices": False}, {"shuffle_edges": False}, {"a": 0.45, "b": 0.15, "c": 0.15, "d": 0.25},
])
def test_same_seed_same_graph_other_seed_other_graph(options):
    first = generate_rmat(8, 4, seed=7, **options)
    again = generate_rmat(8, 4, seed=7, **options)
    other = generate_rmat(8, 4, seed=8, **options)
    for x, y in zip(first, again):
        np.testing.assert_array_equal(x, y)
    assert not np.array_equal(first[0], other[0])


def test_large_a_skews_degrees():
    num_vertices = 1 << 10
    skewed = generate_rmat(10, 8, a=0.9, b=0.05, c=0.05, seed=3)
    uniform = generate_rmat(10, 8, a=0.25, b=0.25, c=0.25, seed=3)
    assert max_degree(*skewed[:2], num_vertices) > 20 * max_degree(*uniform[:2], num_vertices)


def test_without_permutation_vertex_zero_is_the_hub():
    src, dst, _ = generate_rmat(10, 8, a=0.9, b=0.05, c=0.05, permute_vertices=False, seed=4)
    degrees = np.bincount(np.concatenate([src, dst]), minlength=1 << 10)
    assert degrees.argmax() == 0


def test_quadrant_frequencies_follow_the_probabilities():
    # scale 1: the label bits are the quadrant itself
    src, dst, _ = generate_rmat(1, 50000, a=0.5, b=0.3, c=0.15, permute_vertices=False, seed=5)
    quadrant_counts = np.bincount(2 * src + dst, minlength=4) / len(src)
    np.testing.assert_allclose(quadrant_counts, [0.5, 0.3, 0.15, 0.05], atol=0.01)


@pytest.mark.parametrize("args, kwargs, message", [
    ((0, 16), {}, "scale"),
    ((41, 16), {}, "scale"),
    ((2.5, 16), {}, "scale"),
    ((10, 0), {}, "edgefactor"),
    ((10, 1.5), {}, "edgefactor"),
    ((10, 16), {"a": 1.2, "b": 0.0, "c": 0.0, "d": 0.0}, "probability a"),
    ((10, 16), {"b": -0.1}, "probability b"),
    ((10, 16), {"a": 0.6, "b": 0.3, "c": 0.3}, "sum to 1"),
    ((10, 16), {"d": 0.1}, "sum to 1"),
])
def test_bad_parameters_raise(args, kwargs, message):
    with pytest.raises(ValueError, match=message):
        generate_rmat(*args, **kwargs)
