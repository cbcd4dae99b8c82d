"""A box picture's fills from the compiled loop (slice_kernels.box_rects) must be exactly the numpy path's:
the same colours in the same order, the same rectangles (merged where touching, clipped) to the last bit,
on made-up boxes that take every branch and on every box track of a real trace at many zooms."""

from __future__ import annotations

import numpy as np
import pytest

from fxscope.app.timeline.box_fills import colour_fills, colour_fills_numpy
from fxscope.app.timeline.box_track import BoxPicture, BoxTrackItem
from fxscope.core.trace import compiled

pytestmark = pytest.mark.skipif(compiled.slice_kernels is None, reason="the compiled loops are not built")


def _same(a: list, b: list) -> None:
    assert [c for c, _ in a] == [c for c, _ in b]
    for (_, ra), (_, rb) in zip(a, b, strict=True):
        assert ra.shape == rb.shape
        assert np.array_equal(ra, rb)


def _boxes(rng, n: int, rows: int, colours: int, shuffle: bool):
    """Boxes row by row, left to right (as the model gives them), some touching, some wider than the
    window or reaching far outside it; shuffled when asked (then every colour group is sorted first)."""
    row = np.sort(rng.integers(0, rows, n))
    left = np.empty(n)
    for r in range(rows):
        on = row == r
        left[on] = np.sort(rng.uniform(-20.0, 2000.0, on.sum()))
    width = np.where(rng.random(n) < 0.7, rng.uniform(1.0, 1.6, n), rng.uniform(1.0, 300.0, n))
    width[rng.random(n) < 0.02] = 5e7  # past the clip bound
    top = row * 16.0
    colour = rng.integers(-1, colours, n).astype(np.int64)
    if shuffle:
        order = rng.permutation(n)
        left, top, width, colour = left[order], top[order], width[order], colour[order]
    return left, top, width, colour


@pytest.mark.parametrize("seed", range(40))
def test_compiled_fills_are_the_numpy_fills(seed: int) -> None:
    rng = np.random.default_rng(seed)
    n = int(rng.choice([0, 1, 5, 31, 32, 33, 200, 3000]))
    for rows, colours, shuffle in ((1, 1, False), (1, 3, False), (6, 1, False), (6, 12, False), (6, 12, True),
                                   (40, 2, True)):  # fmt: skip
        left, top, width, colour = _boxes(rng, n, rows, colours, shuffle)
        height = 13.76
        _same(colour_fills(left, top, width, colour, height),
              colour_fills_numpy(left, top, width, colour, height) if n else [])  # fmt: skip


def test_compiled_fills_keep_far_and_equal_boxes_as_numpy_does() -> None:
    """Boxes at the clip bounds, equal positions (stable order), a row whose boxes all touch."""
    n = 64
    left = np.r_[np.full(16, -10.0), np.full(16, 1e9), np.arange(32) * 1.0]
    top = np.r_[np.zeros(32), np.full(32, 16.0)]
    width = np.r_[np.full(16, 1.0), np.full(16, 5e8), np.full(32, 1.5)]
    colour = np.r_[np.zeros(n // 2, np.int64), np.full(n // 2, 3, np.int64)]
    for c in (colour, colour[::-1].copy(), np.zeros(n, np.int64)):
        _same(colour_fills(left, top, width, c, 10.0), colour_fills_numpy(left, top, width, c, 10.0))


def test_compiled_fills_on_every_box_track_at_many_zooms(qtbot, sched_model, shown_timeline) -> None:
    timeline = shown_timeline(sched_model)
    qtbot.wait(10)
    items = [lane.item for lane in timeline.lanes() if isinstance(lane.item, BoxTrackItem)]
    assert items
    span = sched_model.end_ns - sched_model.start_ns
    compared = 0
    for zoom in (1, 3, 10, 40, 200, 2000):
        t0 = sched_model.start_ns + span // 5
        t1 = t0 + max(span // zoom, 1000)
        sx = 1800 / ((t1 - t0) / 1e9)
        for item in items:
            p = BoxPicture(t0, t1, sx, 1.0, *item.boxes(t0, t1, 1e9 / sx))
            p.build(item._colours_of(p.names), item.origin, item.MERGED_IN_GREY)
            if not len(p.rows):
                continue
            colours = item._colours_of(p.names)
            if item.MERGED_IN_GREY:
                colours[p.count > 1] = -1
            _same(p.fills, colour_fills_numpy(p.left, p.top, p.width, colours, p.height))
            compared += len(p.rows)
    assert compared > 1000


@pytest.mark.parametrize("seed", range(30))
def test_compiled_match_outlines_are_the_numpy_ones(seed: int) -> None:
    """outline_fill_rects by slice_kernels.match_outlines and by numpy: the same solid and ring rectangles
    for boxes from a fraction of a pixel to hundreds wide (touching runs of solid rings: merged), rows at
    fractional heights (solid rings of unequal heights: not merged), fractional translations."""
    from fxscope.app.timeline.lane_item import outline_fill_rects, outline_fill_rects_numpy

    rng = np.random.default_rng(seed)
    n = int(rng.choice([0, 1, 2, 31, 40, 500, 4000]))
    rows = int(rng.choice([1, 3]))
    left, top, width, _ = _boxes(rng, n, rows, 1, shuffle=bool(rng.random() < 0.3))
    width = np.where(rng.random(n) < 0.6, rng.uniform(0.2, 2.5, n), width)
    top = top + (rng.uniform(0, 1, n) if rng.random() < 0.3 else 0.0)
    h, tx, ty = float(rng.choice([6.0, 13.76, 0.5])), float(rng.uniform(-500, 500)), float(rng.uniform(-5, 300))
    got = outline_fill_rects(left, top, width, h, tx, ty)
    want = outline_fill_rects_numpy(left, top, width, h, tx, ty)
    for g, w in zip(got, want, strict=True):
        assert g.shape == w.shape and np.array_equal(g, w)


@pytest.mark.parametrize("seed", range(20))
def test_compiled_box_geometry_is_the_numpy_geometry(seed: int) -> None:
    """box_geometry by slice_kernels.box_geometry and by numpy: the same pixels to the last bit, the same
    grey boxes and label candidates, for boxes before, inside and far past a window (clipped), windows that
    start before the trace's origin or far after it, times near 2**63 (taken modulo 2**64 from the origin)."""
    from fxscope.app.timeline.box_fills import box_geometry, box_geometry_numpy

    rng = np.random.default_rng(seed)
    n = int(rng.choice([0, 1, 7, 500, 5000]))
    origin = int(rng.choice([0, 10**9, (1 << 63) - 10**12]))
    span = int(rng.choice([10**6, 10**9, 10**12]))
    start = origin + rng.integers(0, span, n)
    end = start + rng.choice([0, 1, 10**3, 10**6, 10**10], n)
    end = np.minimum(end, (1 << 63) - 1)
    row = rng.integers(0, 9, n).astype(rng.choice([np.int64, np.uint16]))
    count = np.where(rng.random(n) < 0.5, 1, rng.integers(2, 9, n)).astype(np.int64)
    since = origin + int(rng.integers(-span // 3, span))
    since = min(since, (1 << 63) - 1)
    sx = float(rng.choice([1e-3, 1.9, 1800.0, 3.3e6]))
    right_edge = float(rng.uniform(100.0, 4000.0))
    for grey in (False, True):
        colours = rng.integers(0, 16, n).astype(np.int64)
        a_colours, b_colours = colours.copy(), colours.copy()
        got = box_geometry(start, end, row, count, a_colours, since, origin, sx, 16.0 * 1.25, right_edge, grey)
        want = box_geometry_numpy(start, end, row, count, b_colours, since, origin, sx, 16.0 * 1.25, right_edge, grey)
        for g, w in zip(got, want, strict=True):
            assert g.dtype == w.dtype and g.shape == w.shape and np.array_equal(g, w)
        assert np.array_equal(a_colours, b_colours)


def test_instant_marks_are_merged_as_numpy_merges_them(qtbot, sched_model, shown_timeline, monkeypatch) -> None:
    """A thread's instant marks (touching ones merged: the compiled loop of a box picture's fills, one colour)
    are the rectangles of the numpy merge, on every thread of a real trace at zooms where marks are one per
    pixel, thousands and few."""
    from fxscope.app.timeline.slice_track import SliceTrackItem

    timeline = shown_timeline(sched_model)
    qtbot.wait(10)
    items = [lane.item for lane in timeline.lanes() if isinstance(lane.item, SliceTrackItem)]
    span = sched_model.end_ns - sched_model.start_ns
    kernels, merged = compiled.slice_kernels, 0
    for zoom in (1, 3, 10, 100, 3000):
        t0 = sched_model.start_ns + span // 7
        t1 = t0 + max(span // zoom, 1000)
        sx = 1800 / ((t1 - t0) / 1e9)
        for item in items:
            p = BoxPicture(t0, t1, sx, 1.0, *item.boxes(t0, t1, 1e9 / sx))
            got = item._instant_rects(p)
            monkeypatch.setattr(compiled, "slice_kernels", None)
            want = item._instant_rects(p)
            monkeypatch.setattr(compiled, "slice_kernels", kernels)
            assert got.shape == want.shape and np.array_equal(got, want)
            merged += int(np.count_nonzero(got[:, 2] > 3.0)) if len(got) else 0
    assert merged  # (touching marks were merged somewhere)


def test_compiled_fills_clip_nan_and_infinite_boxes_as_numpy_does() -> None:
    """A corrupt trace's boxes at NaN or infinite pixels: clipped as rect_buffer clips them (NaN to -1e6,
    infinities to the bounds), in runs long enough to be merged and short ones."""
    rng = np.random.default_rng(4)
    for n in (5, 40, 300):
        left = np.sort(rng.uniform(-20.0, 2000.0, n))
        width = rng.uniform(1.0, 3.0, n)
        left[rng.random(n) < 0.1] = np.inf
        width[rng.random(n) < 0.1] = np.nan
        left[rng.random(n) < 0.05] = -np.inf
        top = np.zeros(n)
        for colour in (np.zeros(n, np.int64), rng.integers(0, 3, n).astype(np.int64)):
            _same(colour_fills(left, top, width, colour, 10.0), colour_fills_numpy(left, top, width, colour, 10.0))
