"""Summary statistics of a benchmark pass, exactly as the Graph500 v3 reference.

Section 6 of the reference specification fixes every number in the report:

* ``mean`` is the plain average; ``stddev`` uses the divisor ``n - 1``.
* After sorting ``x[0..n-1]`` ascending, with integer division ``//``::

      min           = x[0]
      firstquartile = (x[(n-1)//4] + x[n//4]) / 2
      median        = (x[(n-1)//2] + x[n//2]) / 2
      thirdquartile = (x[n-1-(n-1)//4] + x[n-1-n//4]) / 2
      max           = x[n-1]

  For odd ``n`` the two indices of the median coincide; for even ``n`` they
  are the two middle elements.  The quartiles follow the same pattern.

* The TEPS statistics are computed on the seconds-per-edge values
  ``s_i = time_i / nedge_i`` and then inverted, which swaps the ends:
  ``min_TEPS = 1/max(s)``, ``firstquartile_TEPS = 1/thirdquartile(s)``,
  ``median_TEPS = 1/median(s)``, ``thirdquartile_TEPS = 1/firstquartile(s)``,
  ``max_TEPS = 1/min(s)``, ``harmonic_mean_TEPS = 1/mean(s)`` and
  ``harmonic_stddev_TEPS = stddev(s) / (mean(s)**2 * sqrt(n - 1))``.

Sums are accumulated in sample order, one element after the other (a
sequential ``cumsum``, like a C ``for`` loop), rather than with numpy's
pairwise ``sum``, so the last bits do not depend on numpy's blocking.

With a single sample the ``n - 1`` divisor is zero: this module then reports
``stddev`` (and ``harmonic_stddev``) as ``0.0`` instead of dividing by zero.
Empty inputs raise ``ValueError``.  All returned values are Python floats.
"""

import math

import numpy as np

SUMMARY_KEYS = ("min", "firstquartile", "median", "thirdquartile", "max", "mean", "stddev")
TEPS_KEYS = ("min", "firstquartile", "median", "thirdquartile", "max",
             "harmonic_mean", "harmonic_stddev")


def _as_samples(samples):
    """Return the samples as a 1-D float64 array; reject an empty input."""
    x = np.asarray(samples, dtype=np.float64).ravel()
    if x.size == 0:
        raise ValueError("statistics need at least one sample")
    return x


def _sequential_sum(x):
    """Sum in index order (left to right), as a C loop over the array would."""
    return float(np.cumsum(x)[-1])


def _mean(x):
    return _sequential_sum(x) / x.size


def _stddev(x, mean):
    """Sample standard deviation, divisor n - 1; 0.0 when n == 1."""
    n = x.size
    if n < 2:
        return 0.0
    dev = x - mean
    return math.sqrt(_sequential_sum(dev * dev) / (n - 1))


def quartile_indices(n):
    """The pairs of sorted-array indices averaged for the three quartiles.

    Returns ``((i1, j1), (i2, j2), (i3, j3))`` for the first quartile, the
    median and the third quartile of ``n`` sorted samples.
    """
    if n < 1:
        raise ValueError("statistics need at least one sample")
    return (((n - 1) // 4, n // 4),
            ((n - 1) // 2, n // 2),
            (n - 1 - (n - 1) // 4, n - 1 - n // 4))


def _order_stats(x):
    """min, firstquartile, median, thirdquartile, max of the samples x."""
    s = np.sort(x)
    n = s.size
    q1, q2, q3 = ((float(s[i]) + float(s[j])) / 2 for i, j in quartile_indices(n))
    return float(s[0]), q1, q2, q3, float(s[n - 1])


def summary(samples):
    """Reference statistics of ``samples`` (any sequence of numbers, n >= 1).

    Returns a dict with keys, in this order: ``min, firstquartile, median,
    thirdquartile, max, mean, stddev``.  ``stddev`` has divisor ``n - 1`` and
    is ``0.0`` for a single sample.
    """
    x = _as_samples(samples)
    mean = _mean(x)
    values = _order_stats(x) + (mean, _stddev(x, mean))
    return dict(zip(SUMMARY_KEYS, values))


def seconds_per_edge(times, nedges):
    """The per-search values s_i = time_i / nedge_i that TEPS statistics use.

    A zero time gives 0 s/edge (infinite TEPS) and a zero nedge gives an
    infinite or NaN value, without a division warning.
    """
    t = _as_samples(times)
    e = np.asarray(nedges, dtype=np.float64).ravel()
    if e.shape != t.shape:
        raise ValueError(f"{t.size} times but {e.size} nedge values")
    with np.errstate(divide="ignore", invalid="ignore"):
        return t / e


def _inverse(v):
    """1/v as a Python float: 1/0 is inf, 1/inf is 0 (no exception)."""
    with np.errstate(divide="ignore", invalid="ignore"):
        return float(np.float64(1.0) / np.float64(v))


def teps_summary(times, nedges):
    """Reference TEPS statistics of one pass from per-search times and nedges.

    Returns a dict with keys, in this order: ``min, firstquartile, median,
    thirdquartile, max, harmonic_mean, harmonic_stddev`` (edges per second).
    ``harmonic_stddev`` is ``stddev(s) / (mean(s)**2 * sqrt(n - 1))`` with
    ``s = time / nedge``, and ``0.0`` for a single search.
    """
    s = seconds_per_edge(times, nedges)
    smin, sq1, smed, sq3, smax = _order_stats(s)
    mean = _mean(s)
    n = s.size
    if n < 2:
        hstd = 0.0
    else:
        with np.errstate(divide="ignore", invalid="ignore"):
            hstd = float(np.float64(_stddev(s, mean)) / (np.float64(mean) ** 2 * math.sqrt(n - 1)))
    values = (_inverse(smax), _inverse(sq3), _inverse(smed), _inverse(sq1),
              _inverse(smin), _inverse(mean), hstd)
    return dict(zip(TEPS_KEYS, values))
