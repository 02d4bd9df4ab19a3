"""graph500.stats against statistics worked out by hand (spec section 6)."""

import pytest

from graph500.stats import quartile_indices, summary, teps_summary

KEYS = ["min", "firstquartile", "median", "thirdquartile", "max", "mean", "stddev"]
TEPS_KEYS = ["min", "firstquartile", "median", "thirdquartile", "max",
             "harmonic_mean", "harmonic_stddev"]


@pytest.mark.parametrize("n, expected", [
    # n=1: every index is 0
    (1, ((0, 0), (0, 0), (0, 0))),
    # n=2: q1 (1//4, 2//4) = (0, 0); median (1//2, 2//2) = (0, 1); q3 (1-0, 1-0)
    (2, ((0, 0), (0, 1), (1, 1))),
    (3, ((0, 0), (1, 1), (2, 2))),
    # n=4: q1 (3//4, 4//4) = (0, 1); median (1, 2); q3 (3-0, 3-1) = (3, 2)
    (4, ((0, 1), (1, 2), (3, 2))),
    # n=5 (odd): q1 (4//4, 5//4) = (1, 1); median (2, 2); q3 (4-1, 4-1) = (3, 3)
    (5, ((1, 1), (2, 2), (3, 3))),
    # n=6: q1 (5//4, 6//4) = (1, 1); median (5//2, 6//2) = (2, 3); q3 (5-1, 5-1)
    (6, ((1, 1), (2, 3), (4, 4))),
    (7, ((1, 1), (3, 3), (5, 5))),
    # n=8: q1 (7//4, 8//4) = (1, 2); median (3, 4); q3 (7-1, 7-2) = (6, 5)
    (8, ((1, 2), (3, 4), (6, 5))),
    # n=64 (the benchmark): q1 (63//4, 64//4) = (15, 16); median (31, 32); q3 (63-15, 63-16)
    (64, ((15, 16), (31, 32), (48, 47))),
])
def test_quartile_indices(n, expected):
    assert quartile_indices(n) == expected


def test_summary_n4():
    s = summary([4, 1, 3, 2])  # sorted 1 2 3 4
    assert list(s) == KEYS
    assert s == {
        "min": 1.0,
        "firstquartile": 1.5,   # (x[0] + x[1]) / 2 = (1 + 2) / 2
        "median": 2.5,          # (x[1] + x[2]) / 2 = (2 + 3) / 2
        "thirdquartile": 3.5,   # (x[3] + x[2]) / 2 = (4 + 3) / 2
        "max": 4.0,
        "mean": 2.5,            # 10 / 4
        "stddev": 1.2909944487358056,  # sqrt((2.25 + .25 + .25 + 2.25) / 3) = sqrt(5/3)
    }


def test_summary_n5_odd():
    s = summary([10, 2, 8, 4, 6])  # sorted 2 4 6 8 10
    assert s == {
        "min": 2.0,
        "firstquartile": 4.0,   # x[1] twice
        "median": 6.0,          # x[2] twice
        "thirdquartile": 8.0,   # x[3] twice
        "max": 10.0,
        "mean": 6.0,            # 30 / 5
        "stddev": 3.1622776601683795,  # sqrt((16 + 4 + 0 + 4 + 16) / 4) = sqrt(10)
    }


def test_summary_n6_quartiles_not_interpolated():
    s = summary([50, 0, 40, 10, 30, 20])  # sorted 0 10 20 30 40 50
    assert s["firstquartile"] == 10.0   # x[1] twice (not 12.5 as numpy's percentile)
    assert s["median"] == 25.0          # (x[2] + x[3]) / 2
    assert s["thirdquartile"] == 40.0   # x[4] twice


def test_summary_n8_even():
    s = summary([5, 3, 8, 1, 7, 2, 6, 4])  # sorted 1..8
    assert s == {
        "min": 1.0,
        "firstquartile": 2.5,   # (x[1] + x[2]) / 2 = (2 + 3) / 2
        "median": 4.5,          # (x[3] + x[4]) / 2 = (4 + 5) / 2
        "thirdquartile": 6.5,   # (x[6] + x[5]) / 2 = (7 + 6) / 2
        "max": 8.0,
        "mean": 4.5,            # 36 / 8
        # deviations +-0.5, +-1.5, +-2.5, +-3.5: 2 * (0.25 + 2.25 + 6.25 + 12.25) = 42; 42 / 7 = 6
        "stddev": 2.449489742783178,   # sqrt(6)
    }


def test_summary_single_sample():
    s = summary([7])
    assert s == {k: 7.0 for k in KEYS[:-1]} | {"stddev": 0.0}


def test_summary_returns_python_floats():
    import numpy as np
    s = summary(np.array([3, 1, 2], dtype=np.int64))
    assert all(type(v) is float for v in s.values())


def test_summary_empty_raises():
    with pytest.raises(ValueError):
        summary([])


def test_summary_fixture_nedge_numbers():
    # s9_ef4 fixture: 63 searches saw 2025 edges and one saw 1:
    # mean = (63 * 2025 + 1) / 64 = 127576 / 64 = 1993.375
    # sum of squares = 63 * 31.625^2 + 1992.375^2 = 4032567; / 63 = 64009 = 253^2
    s = summary([2025] * 40 + [1] + [2025] * 23)
    assert s["mean"] == 1993.375
    assert s["stddev"] == 253.0
    assert s["min"] == 1.0 and s["firstquartile"] == 2025.0


def test_teps_summary_n4():
    times = [2, 1, 4, 2]
    nedges = [4, 4, 4, 2]
    # s = time / nedge = 0.5, 0.25, 1, 1; sorted 0.25 0.5 1 1
    # quartiles of s: q1 = (0.25 + 0.5)/2 = 0.375, median = (0.5 + 1)/2 = 0.75, q3 = 1
    # mean(s) = 2.75 / 4 = 0.6875
    # stddev(s): squares .03515625 + .19140625 + .09765625 + .09765625 = .421875; /3 = .140625
    #            -> 0.375
    t = teps_summary(times, nedges)
    assert list(t) == TEPS_KEYS
    assert t["min"] == 1.0                        # 1 / max(s) = 1 / 1
    assert t["firstquartile"] == 1.0              # 1 / q3(s) = 1 / 1
    assert t["median"] == 1.3333333333333333      # 1 / 0.75
    assert t["thirdquartile"] == 2.6666666666666665  # 1 / 0.375
    assert t["max"] == 4.0                        # 1 / 0.25
    assert t["harmonic_mean"] == 1.4545454545454546  # 1 / 0.6875
    # 0.375 / (0.6875^2 * sqrt(3)) = 0.375 / (0.47265625 * 1.7320508...)
    assert t["harmonic_stddev"] == pytest.approx(0.45806302348928984, rel=1e-14)


def test_teps_summary_n5():
    # s = 1/100, 1/200, 1/400, 1/50, 1/100 -> sorted .0025 .005 .01 .01 .02
    times = [1, 1, 1, 1, 2]
    nedges = [100, 200, 400, 50, 200]
    t = teps_summary(times, nedges)
    assert t["min"] == pytest.approx(50.0)             # 1 / 0.02
    assert t["firstquartile"] == pytest.approx(100.0)  # 1 / x[3] = 1 / 0.01
    assert t["median"] == pytest.approx(100.0)         # 1 / x[2]
    assert t["thirdquartile"] == pytest.approx(200.0)  # 1 / x[1] = 1 / 0.005
    assert t["max"] == pytest.approx(400.0)            # 1 / 0.0025
    # mean(s) = (0.01 + 0.005 + 0.0025 + 0.02 + 0.01) / 5 = 0.0475 / 5 = 0.0095
    assert t["harmonic_mean"] == pytest.approx(1 / 0.0095, rel=1e-13)  # 105.263...
    # deviations .0005 -.0045 -.007 .0105 .0005 -> squares (1e-8 units)
    # 25 + 2025 + 4900 + 11025 + 25 = 18000e-8; / 4 = 4.5e-5; stddev = sqrt(4.5e-5)
    # harmonic_stddev = sqrt(4.5e-5) / (0.0095^2 * sqrt(4)) = 0.00670820 / 0.0001805
    assert t["harmonic_stddev"] == pytest.approx(37.164564722988196, rel=1e-12)


def test_teps_summary_single_search():
    t = teps_summary([0.5], [1000])
    assert t["harmonic_stddev"] == 0.0
    assert t["harmonic_mean"] == 2000.0
    assert t["min"] == t["max"] == t["median"] == 2000.0


def test_teps_summary_length_mismatch():
    with pytest.raises(ValueError):
        teps_summary([1.0, 2.0], [10])
