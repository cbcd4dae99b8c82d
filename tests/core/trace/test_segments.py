"""Scans over runs of equal keys (core/trace/segments.py): the binary-search run finder the model's tracks use."""

from __future__ import annotations

import numpy as np

from fxscope.core.trace.segments import segment_starts, sorted_run_starts


def test_sorted_run_starts_is_segment_starts_of_sorted_keys() -> None:
    """The runs of a sorted column found by binary searches are those a comparison of every row finds, with
    few runs and with more than ``max_runs`` (the whole-column comparison then)."""
    rng = np.random.default_rng(3)
    for runs in (1, 2, 17, 300):
        keys = np.sort(rng.integers(-5, runs, 5000)).astype(np.int16)
        assert sorted_run_starts(keys).tolist() == segment_starts(keys).tolist()
        assert sorted_run_starts(keys, max_runs=3).tolist() == segment_starts(keys).tolist()
    assert sorted_run_starts(np.zeros(0, np.int32)).tolist() == []
