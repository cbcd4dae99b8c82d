"""A lane of points in time (log records, instants) zoomed out over a large trace: its ticks merged into runs
give the pixels of one tick a pixel, and a lane of far more points than pixels reads one point a pixel."""

from __future__ import annotations

import numpy as np
import pytest
from PySide6.QtGui import QImage

from fxscope.app.timeline import marker_track
from fxscope.app.timeline.marker_track import MarkerTrackItem, first_in_buckets


def _pixels(widget) -> np.ndarray:
    image = widget.grab().toImage().convertToFormat(QImage.Format.Format_ARGB32)
    return np.frombuffer(image.constBits(), np.uint32).reshape(image.height(), image.width()).copy()


@pytest.mark.parametrize("spread", ["dense", "sparse", "runs"])
def test_merged_ticks_are_the_pixels_of_one_tick_a_pixel(qtbot, trace_tab, sched_model, monkeypatch, spread) -> None:
    """A marker lane given thousands of points (dense: most pixels have one; sparse: gaps of one to three
    pixels; runs: bursts and silences), drawn in the window with its ticks merged and one by one: the same
    image, and as many ticks drawn."""
    tab = trace_tab(sched_model, 1200, 700)
    timeline = tab.timeline
    lane = next(lane for lane in timeline.lanes() if isinstance(lane.item, MarkerTrackItem))
    timeline.pin(lane.key)  # (on top of the view: drawn whatever the scroll)
    item = lane.item
    rng = np.random.default_rng({"dense": 1, "sparse": 2, "runs": 3}[spread])
    start, span = sched_model.start_ns, sched_model.end_ns - sched_model.start_ns
    if spread == "dense":
        ts = rng.integers(0, span, 20_000)
    elif spread == "sparse":
        ts = (np.cumsum(rng.integers(1, 5, 300)) * (span / 900)).astype(np.int64)  # (gaps of 1-4 pixels)
    else:
        ts = np.concatenate([c + rng.integers(0, span // 40, 300) for c in rng.integers(0, span, 12)])
    item.ts = start + np.sort(np.clip(ts, 0, span - 1)).astype(np.int64)
    item.point_rows = np.arange(len(item.ts), dtype=np.int64)
    timeline.set_range_ns(sched_model.start_ns, sched_model.end_ns)
    item.update()
    merged = _pixels(timeline)
    drawn = item.last_drawn
    monkeypatch.setattr(marker_track, "merge_touching", lambda x, y, w: (x, y, w))
    item.update()
    one_by_one = _pixels(timeline)
    assert drawn == item.last_drawn > 200
    assert np.array_equal(merged, one_by_one)


def test_far_more_points_than_pixels_read_one_point_a_pixel() -> None:
    """first_in_buckets: with up to four points a pixel every point; past that the first point of each
    pixel-wide bucket that has any, whose pixels are (but for a bucket edge that float rounding puts on the
    other side of a pixel's) the pixels of every point."""
    rng = np.random.default_rng(5)
    origin = 7 * 3600 * 10**9  # (stamped hours after boot)
    ts = origin + np.sort(rng.integers(0, 10**9, 400_000))
    ts = np.concatenate([ts, np.full(50, ts[1000])])  # (equal times)
    ts.sort()
    for t0, t1, width in ((origin, origin + 10**9, 1900), (origin + 12_345_678, origin + 98_765_432, 1333),
                          (origin + 5 * 10**8, origin + 5 * 10**8 + 40_000, 1900)):  # fmt: skip
        a, b = np.searchsorted(ts, [t0, t1])
        ns_per_px = (t1 - t0) / width
        got = first_in_buckets(ts, int(a), int(b), t0, t1, ns_per_px)
        if b - a <= 4 * width:
            assert np.array_equal(got, ts[a:b])
            continue
        assert len(got) <= width + 1 and np.all(np.diff(got) > 0)
        every, first = ({int(k) for k in np.floor((t - t0) / ns_per_px)} for t in (ts[a:b], got))
        assert first <= every and len(every - first) <= 2, len(every - first)
