"""The multi-GPU exchanges' blind parts (`graph500.kernels.gpu.requests`): the widths each rank of a pair computes
alone must agree, on any number of ranks and blocks of unequal size. Arithmetic only: runs without a GPU."""

import numpy as np
import pytest

from graph500.kernels.gpu.requests import WIDTH_GRAIN, WIDTH_MARGIN, blind_widths, predicted_widths


@pytest.mark.parametrize("block_counts", [[4096, 4096], [3000, 2900, 2900], [70000, 65536, 200000, 5000]])
def test_each_pair_agrees_on_its_wide_width(block_counts):
    """Every rank computes its pairs' widths from its own counts of the last exchange (sent to each rank, received
    from each): rank r's width to o is o's width from r, covers the requests of the last exchange scaled to the new
    bound (times the margin) unless the receiver's block is smaller, is at least the fixed part's, and no rank sends
    to itself."""
    size = len(block_counts)
    generator = np.random.default_rng(size)
    last_bound, bound, fixed = 1_000_000, 1_700_000, 8
    # requests[r][o]: what r sent o in the last exchange (at most o's block; none to itself)
    requests = [[int(generator.integers(0, count)) if peer != rank else 0 for peer, count in enumerate(block_counts)]
                for rank in range(size)]
    widths = []
    for rank in range(size):
        shares = [requests[rank][peer] / last_bound for peer in range(size)] + \
                 [requests[peer][rank] / last_bound for peer in range(size)]
        predicted = predicted_widths(shares, bound, fixed, WIDTH_MARGIN)
        widths.append(blind_widths(rank, block_counts, predicted[:size], predicted[size:]))
    for rank, (sent, received) in enumerate(widths):
        assert sent[rank] == received[rank] == 0
        for peer in range(size):
            if peer == rank:
                continue
            assert sent[peer] == widths[peer][1][rank]
            assert min(fixed, block_counts[peer]) <= sent[peer] <= block_counts[peer]
            scaled = requests[rank][peer] * bound / last_bound * WIDTH_MARGIN
            assert sent[peer] >= min(scaled, block_counts[peer])
            assert sent[peer] in (fixed, block_counts[peer]) or sent[peer] % WIDTH_GRAIN == 0


def test_predicted_widths_stay_within_the_bound_and_above_the_fixed_part():
    """A share of nothing keeps the fixed part; a share of everything never passes the bound; a width is a whole
    number of grains."""
    assert predicted_widths([0.0, 1.0, 0.05], 10_000, 64, 1.25) == [64, 10_000, WIDTH_GRAIN]
    assert predicted_widths([0.05], 1_000_000, 64, 1.25) == [-(-62_500 // WIDTH_GRAIN) * WIDTH_GRAIN]
