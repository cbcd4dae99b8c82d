"""Log-scale duration histograms (the Analysis tab's, and the Compare tab's A-over-B pair) against a
brute-force binning: every positive duration in the bin whose [lo, hi) holds it, zero lengths apart."""

from __future__ import annotations

import math

import numpy as np
import pytest

from fxscope.core.analysis.stats import duration_histogram, shared_histograms


def _brute(durations, edges) -> tuple[list[int], int]:
    counts = [0] * (len(edges) - 1)
    zero = 0
    for d in durations:
        if d <= 0:
            zero += 1
            continue
        i = max(k for k in range(len(edges) - 1) if edges[k] <= d or k == 0)
        counts[min(i, len(counts) - 1)] += 1
    return counts, zero


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_histogram_matches_brute_force(seed):
    rng = np.random.default_rng(seed)
    d = np.concatenate([np.exp(rng.uniform(0, 18, 3000)).astype(np.int64), np.zeros(7, np.int64)])
    h = duration_histogram(d)
    assert math.log10(h.edges[0]) == pytest.approx(math.floor(math.log10(d[d > 0].min())))
    assert h.edges[-1] > d.max() and h.edges[0] <= d[d > 0].min()
    counts, zero = _brute(d.tolist(), h.edges.tolist())
    assert h.counts.tolist() == counts and h.zero == zero == 7
    assert int(h.counts.sum()) == int((d > 0).sum())


def test_shared_histograms_cover_both_on_one_scale():
    rng = np.random.default_rng(5)
    a = rng.integers(1_000, 50_000, 500)  # microseconds
    b = rng.integers(2_000_000, 90_000_000, 300)  # milliseconds: a slower B
    ha, hb = shared_histograms(a, b)
    assert ha.edges is hb.edges or np.array_equal(ha.edges, hb.edges)
    assert ha.edges[0] <= a.min() and hb.edges[-1] > b.max()
    for d, h in ((a, ha), (b, hb)):
        assert h.counts.tolist() == _brute(d.tolist(), h.edges.tolist())[0]
    # A alone would be binned on its own decades; shared, its bars sit left of B's
    assert np.flatnonzero(ha.counts).max() < np.flatnonzero(hb.counts).min()
    assert len(duration_histogram(a).counts) < len(ha.counts)


def test_shared_histograms_of_nothing():
    ha, hb = shared_histograms(np.zeros(0, np.int64), np.array([0, 0]))
    assert not ha.counts.any() and not hb.counts.any() and hb.zero == 2
    ha, hb = shared_histograms(np.zeros(0, np.int64), np.array([5, 50]))
    assert not ha.counts.any() and hb.counts.sum() == 2
