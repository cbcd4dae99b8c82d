"""The running max of the slice lanes' ends (:meth:`fxscope.core.trace.model._Lanes.end_max_of`), scanned a batch
of rows at a time and kept at every BLOCK-th row (:class:`fxscope.core.trace.lane_end_max.LaneEndMax`): its kept
values are each lane's own running max there, whatever the batch size (lanes cut by a batch's start carry their
maximum over), and its binary search finds what the search of the whole running max finds."""

from __future__ import annotations

import numpy as np
import pytest

import fxscope.core.trace.model as model_module
from fxscope.core.synthetic_trace import generate_trace
from fxscope.core.trace.lane_end_max import BLOCK, LaneEndMax
from fxscope.core.trace.model import TraceModel
from fxscope.formats.fxt.reader import read_fxt_bytes


@pytest.mark.parametrize("batch", [1, 7, 1000, 1 << 18])
def test_lane_end_maxima_equal_each_lanes_running_max(monkeypatch, batch: int) -> None:
    model = TraceModel(read_fxt_bytes(generate_trace(20_000, seed=2, extra_threads=30)))
    monkeypatch.setattr(model_module, "LANE_ENDS_BATCH", batch)
    lanes = model.lanes.get()
    got = lanes.end_max_of
    s = model.slices
    lanes_seen = 0
    for t, per_depth in lanes.by_depth.items():
        assert len(got[t]) == len(per_depth)
        for rows, end_max in zip(per_depth, got[t], strict=True):
            ends = s.ts[rows] + s.dur[rows]
            assert end_max.dtype == np.int64
            _check_lane(end_max, np.maximum.accumulate(ends) if len(ends) else ends)
            lanes_seen += len(rows) > batch
    assert len(lanes.rows) > 5000 and (batch >= 1000 or lanes_seen > 10)


@pytest.mark.parametrize("batch", [1, 3, 64, 1 << 18])
def test_batched_scan_on_unordered_ends(monkeypatch, batch: int) -> None:
    """Ends that fall within a lane (overlapping slices of a corrupt trace, huge and negative values): the
    maximum carried over a batch's start is the lane's, never another lane's."""
    rng = np.random.default_rng(batch)
    n = 5000
    ts = rng.integers(-(1 << 61), 1 << 61, n)
    dur = rng.integers(0, 1 << 40, n)
    rows = rng.permutation(n).astype(np.int32)
    starts = np.r_[0, np.sort(rng.choice(np.arange(1, n), 60, replace=False))]
    lanes = object.__new__(model_module._Lanes)
    lanes._slices = type("S", (), {"ts": ts, "dur": dur})()
    lanes.rows, lanes.starts = rows, starts
    bounds = np.r_[starts, n].tolist()
    lanes._bounds = {0: [(bounds[k], bounds[k + 1]) for k in range(len(starts))]}
    monkeypatch.setattr(model_module, "LANE_ENDS_BATCH", batch)
    got = lanes._build_end_max()[0]
    for (a, b), end_max in zip(lanes._bounds[0], got, strict=True):
        _check_lane(end_max, np.maximum.accumulate(ts[rows[a:b]] + dur[rows[a:b]]))


def _check_lane(got: LaneEndMax, want: np.ndarray) -> None:
    """The kept values are the running max at each block's last row (and the lane's last); the search of
    any value, either side, finds what the search of the whole running max finds."""
    n = len(want)
    assert len(got) == n and np.array_equal(np.asarray(got), want)
    keep = np.minimum(np.arange(BLOCK - 1, n + BLOCK - 1, BLOCK), n - 1) if n else np.zeros(0, np.int64)
    assert got.coarse.tolist() == want[keep].tolist()
    probes = np.r_[want, want - 1, want + 1, np.iinfo(np.int64).min, np.iinfo(np.int64).max - 1] if n else [0]
    for v in np.unique(probes).tolist():
        for side in ("left", "right"):
            assert np.searchsorted(got, v, side) == np.searchsorted(want, v, side), (v, side)
            assert np.searchsorted(got, np.int64(v), side) == np.searchsorted(want, v, side)
    for v in np.unique(probes)[::7].astype(np.float64).tolist():  # (a frame's window may be in float ns)
        for side in ("left", "right"):
            assert np.searchsorted(got, v + 0.5, side) == np.searchsorted(want, v + 0.5, side)
