"""lane_boxes (the boxes of a lane-stacked span track: a process's async spans, a query's debug track) zoomed
in past its pyramid's finest level: the spans narrower than a pixel merged per pixel, as a thread's slices
are, against a plain reference; the wider ones themselves; every span of the window counted once."""

from __future__ import annotations

import numpy as np
import pytest

from fxscope.core.trace import lod
from fxscope.core.trace.lane_boxes import lane_boxes
from fxscope.core.trace.lod import SlicePyramid


def _lanes(seed: int) -> tuple[np.ndarray, np.ndarray, list[tuple[int, int]], SlicePyramid]:
    """Three lanes of non-overlapping spans sorted by (lane, start), ~30 ns apart, most a few ns long, some
    hundreds of ns, and their pyramid (as core/sql/debug_track.py makes it)."""
    rng = np.random.default_rng(seed)
    starts, ends, lanes = [], [], []
    for lane in range(3):
        gap = rng.integers(5, 40, 60_000)
        dur = np.where(rng.random(60_000) < 0.02, rng.integers(100, 600, 60_000), rng.integers(0, 5, 60_000))
        start = 1_000_000_000 + np.cumsum(gap + np.roll(dur, 1))
        starts.append(start)
        ends.append(start + dur)
        lanes.append(np.full(len(start), lane, np.int32))
    start, end, lane = (np.concatenate(x).astype(t) for x, t in ((starts, np.int64), (ends, np.int64),
                                                                   (lanes, np.int32)))  # fmt: skip
    bounds = np.searchsorted(lane, np.arange(4))
    ranges = list(zip(bounds[:-1].tolist(), bounds[1:].tolist(), strict=True))
    # (the spans in the first 1/32 of the trace, as a trace's async spans often cover part of it: the finest
    # level's buckets, 2**16 of the whole trace, each hold ~20 spans of a lane)
    origin, span = int(start.min()), 32 * int(end.max() - start.min())
    return start, end, ranges, SlicePyramid(start, end - start, lane, 3, origin, span)


def _merged_reference(start, end, windows, t0: int, bucket: float) -> set[tuple[int, ...]]:
    """Each lane's window merged per pixel as TraceModel.visible's numpy loop merges a depth: the spans
    shorter than ``bucket`` grouped by floor((start - t0) / bucket), a group one box of its first longest
    span and their count over its bucket; the wider spans themselves."""
    boxes = set()
    for lane, (a, b) in enumerate(windows):
        r = np.arange(a, b)
        wide = (end[r] - start[r]) >= bucket
        for row in r[wide].tolist():
            boxes.add((row, lane, 1, int(start[row]), int(end[row])))
        narrow = r[~wide]
        if not len(narrow):
            continue
        keys = np.floor((start[narrow] - t0) / bucket).astype(np.int64)  # (ascending: a lane's spans by start)
        for group, key in zip(np.split(narrow, np.flatnonzero(np.diff(keys)) + 1), np.unique(keys).tolist(),
                              strict=True):  # fmt: skip
            longest = int(group[np.argmax(end[group] - start[group])])
            lo = t0 + key * bucket
            boxes.add((longest, lane, len(group), int(lo), int(lo + bucket)))
    return boxes


@pytest.mark.parametrize("loops", ["compiled", "numpy"])
def test_spans_past_the_finest_level_are_merged_per_pixel(loops: str, monkeypatch) -> None:
    if loops == "numpy":  # (without the compiled loop every span of the window is a box, as before)
        monkeypatch.setattr(lod.compiled, "slice_kernels", None)
    elif lod.compiled.slice_kernels is None:
        pytest.fail("the compiled loops are not built (pip install -e . builds them)")
    start, end, ranges, pyramid = _lanes(3)
    finest = 1 << pyramid.levels[0].shift
    rng = np.random.default_rng(4)
    merged = boxes = spans = 0
    for ns_per_px in (finest * 0.9, finest / 3, 7.0):
        assert pyramid.level_for(ns_per_px) is None
        for _ in range(5):
            width = int(ns_per_px * 1920)
            t0 = int(start[0]) + int(rng.integers(-width // 8, max(int(end.max() - start[0]) - width, 1)))
            rows, lane, count, st, en = lane_boxes(pyramid, 0, ranges, start, end, t0, t0 + width, ns_per_px)
            windows = []  # each lane's spans overlapping the window, found the plain way
            for lo, hi in ranges:
                hit = np.flatnonzero((end[lo:hi] > t0) & (start[lo:hi] < t0 + width)) + lo
                windows.append((int(hit[0]), int(hit[-1]) + 1) if len(hit) else (lo, lo))
            got = set(zip(rows.tolist(), lane.tolist(), count.tolist(), st.tolist(), en.tolist(), strict=True))
            assert len(got) == len(rows)
            if loops == "compiled":
                assert got == _merged_reference(start, end, windows, t0, max(ns_per_px, 1.0))
            else:
                assert got == {(r, k, 1, int(start[r]), int(end[r])) for k, (a, b) in enumerate(windows)
                               for r in range(a, b)}  # fmt: skip
            assert int(count.sum()) == sum(b - a for a, b in windows)  # every span counted once
            assert rows.dtype == lane.dtype == np.int64
            merged += int(np.count_nonzero(count > 1))
            boxes += len(rows)
            spans += int(count.sum())
    if loops == "compiled":  # (a pixel just past the finest level holds ~20 spans of a lane)
        assert merged > 10_000 and boxes < 0.5 * spans, (merged, boxes, spans)
