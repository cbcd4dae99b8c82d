"""The overview's match ticks, one per bin: the distinct bins of the hits (matched_bins) are numpy's unique
ones, whether the hits come in time order (a search's: one pass) or not (a sort)."""

from __future__ import annotations

import numpy as np
import pytest

from fxscope.app.timeline.overview import matched_bins


@pytest.mark.parametrize("ordered", [True, False])
def test_the_distinct_bins_are_numpys_unique_ones(ordered: bool) -> None:
    rng = np.random.default_rng(4)
    for n in (0, 1, 2, 5, 4001, 100_000):
        bins = np.floor(rng.normal(0, 2000, n))  # (negative bins too, and many repeats)
        if ordered:
            bins = np.sort(bins)
        np.testing.assert_array_equal(matched_bins(bins), np.unique(bins))
    np.testing.assert_array_equal(matched_bins(np.array([3.0, 3.0, 2.0, 2.0, 5.0])), [2.0, 3.0, 5.0])
    np.testing.assert_array_equal(matched_bins(np.full(7, 4.0)), [4.0])


def test_the_overview_ticks_a_bin_once_for_many_hits_in_time_order(qtbot, sched_model, shown_timeline) -> None:
    strip = shown_timeline(sched_model).overview
    m = sched_model
    ts = np.sort(np.random.default_rng(2).integers(m.start_ns, m.end_ns, 50_000))
    strip.show_matches(ts)
    xs, _ys = strip.overview_ticks.getData()
    span = max(m.end_ns - m.start_ns, 1)
    expected = np.unique(np.floor((ts - m.start_ns).astype(np.float64) / 1e9 / (span / 1e9) * 4 * strip.BINS))
    assert len(xs) == 2 * len(expected) and len(expected) < len(ts)
