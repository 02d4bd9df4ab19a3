"""A general R-MAT graph generator for experiments. NOT the reference generator.

Graphs from here are not Graph500 graphs: runs that use them are not
specification runs (the reference's own generator is ``kronecker.py``).

R-MAT: each of the ``M = edgefactor * 2^scale`` edges picks, at each of
``scale`` levels, one quadrant of the adjacency matrix with probabilities
a (top left), b (top right), c (bottom left), d (bottom right), which appends
one bit to its source (bottom: 1) and one to its target (right: 1). A large
``a`` concentrates edges on few vertices (a skewed degree distribution);
a = b = c = d = 0.25 gives uniformly random edges.

Vectorised NumPy over blocks of ``EDGES_PER_BLOCK`` edges (the one tunable),
one level at a time: a uniform draw for every edge, compared with the
cumulative probabilities. Then, optionally, a random permutation
relabels the vertices (so that degree does not follow the label), the edge
list is shuffled, and each edge gets a float32 weight uniform in [0, 1).
Everything comes from ``numpy.random.default_rng(seed)``, so the same
arguments give the same graph.

Memory: 8 bytes per edge for each of src and dst and 4 for weights, plus
the permutations (8 bytes per vertex, 8 per edge) and the shuffled copies.
"""

import numbers

import numpy as np

MAX_SCALE = 40
PROBABILITY_TOLERANCE = 1e-9
EDGES_PER_BLOCK = 1 << 18  # the per-level temporaries of a block stay in cache


def generate_rmat(scale, edgefactor, a=0.57, b=0.19, c=0.19, d=None, seed=0,
                  permute_vertices=True, shuffle_edges=True, weights=True):
    """Generate an R-MAT edge list: ``(src int64, dst int64, weights float32 or None)``.

    ``d`` defaults to ``1 - a - b - c``. Labels lie in ``[0, 2^scale)``.
    Raises ValueError (one line) for parameters outside the generator's domain.
    """
    probabilities = _checked_parameters(scale, edgefactor, a, b, c, d)
    rng = np.random.default_rng(seed)
    src, dst = _quadrant_descent(rng, scale, edgefactor << scale, probabilities)
    if permute_vertices:
        labels = rng.permutation(1 << scale)
        src, dst = labels[src], labels[dst]
    edge_weights = rng.random(src.shape[0], dtype=np.float32) if weights else None
    if shuffle_edges:
        order = rng.permutation(src.shape[0])
        src, dst = src[order], dst[order]
        edge_weights = None if edge_weights is None else edge_weights[order]
    return src, dst, edge_weights


def _checked_parameters(scale, edgefactor, a, b, c, d):
    """The quadrant probabilities ``(a, b, c, d)``, or ValueError."""
    if not isinstance(scale, numbers.Integral) or not 1 <= scale <= MAX_SCALE:
        raise ValueError(f"scale must be an integer from 1 to {MAX_SCALE}, got {scale!r}")
    if not isinstance(edgefactor, numbers.Integral) or edgefactor < 1:
        raise ValueError(f"edgefactor must be an integer >= 1, got {edgefactor!r}")
    if d is None:
        d = max(0.0, 1.0 - a - b - c)  # rounding may leave -1e-17; a sum above 1 fails below
    probabilities = (a, b, c, d)
    for name, p in zip("abcd", probabilities):
        if not isinstance(p, numbers.Real) or not 0.0 <= p <= 1.0:
            raise ValueError(f"probability {name} must lie in [0, 1], got {p!r}")
    if abs(sum(probabilities) - 1.0) > PROBABILITY_TOLERANCE:
        raise ValueError(f"probabilities a + b + c + d must sum to 1, got {sum(probabilities)!r}")
    return probabilities


def _quadrant_descent(rng, scale, num_edges, probabilities):
    """Source and target labels of every edge, made ``EDGES_PER_BLOCK`` edges at a time."""
    src = np.empty(num_edges, dtype=np.int64)
    dst = np.empty(num_edges, dtype=np.int64)
    for begin in range(0, num_edges, EDGES_PER_BLOCK):
        end = min(begin + EDGES_PER_BLOCK, num_edges)
        _descend_block(rng, scale, probabilities, src[begin:end], dst[begin:end])
    return src, dst


def _descend_block(rng, scale, probabilities, src, dst):
    """Fill ``src`` and ``dst``: one quadrant per edge and level, most significant bit first."""
    a, b, c, _ = probabilities
    src[:] = 0
    dst[:] = 0
    for _level in range(scale):
        draw = rng.random(src.shape[0])
        bottom = draw >= a + b  # quadrants c and d
        right = ((draw >= a) & ~bottom) | (draw >= a + b + c)  # quadrants b and d
        src <<= 1
        src |= bottom
        dst <<= 1
        dst |= right
