"""Counter tracks zoomed out: each pixel shows exactly the min..max of the samples in force during it (no
value the counter did not have there), and extreme or negative-only counters draw on a scale that holds
zero."""

from __future__ import annotations

import logging
import math

import numpy as np
import pytest

from fxscope.app.timeline.tracks import ROW_FILL, ROW_HEIGHT, CounterTrackItem
from fxscope.core.trace import compiled
from fxscope.core.trace.model import TraceModel
from fxscope.formats.fxt.args import ArgType as A
from fxscope.formats.fxt.columns import EventKind as K
from fxscope.formats.fxt.reader import read_fxt, read_fxt_bytes
from fxscope.formats.fxt.writer import FxtWriter
from fxscope.resources import DEMO_TRACE


def brute_force(ts: np.ndarray, v: np.ndarray, t0: int, t1: int, bucket: float) -> list:
    """(min, max) of the samples in force during each pixel of [t0, t1), one pixel at a time."""
    rel = (ts - t0).tolist()
    out = []
    k = 0
    while k * bucket < t1 - t0:
        a, b = k * bucket, (k + 1) * bucket
        vals = [x for r, x in zip(rel, v.tolist(), strict=True) if a < r < b and r < t1 - t0]
        before = [x for r, x in zip(rel, v.tolist(), strict=True) if r <= a]
        vals += before[-1:]
        out.append((min(vals), max(vals)) if vals else None)
        k += 1
    return out


def frame_of(tab, item):
    """(t0, t1, sx, dx, base, full) of the item's next paint, as its draw() computes them."""
    vb = tab.timeline.plot.getViewBox()
    (x0, x1), (y0, y1) = vb.viewRange()
    sx = vb.width() / (x1 - x0)
    sy = vb.height() / (y1 - y0)
    dx, dy = -x0 * sx, -y0 * sy
    o = item.origin
    t0, t1 = o + int(x0 * 1e9), o + int(x1 * 1e9) + 1
    base = (item.y0 + item.rows * ROW_HEIGHT * ROW_FILL) * sy + dy
    return t0, t1, sx, dx, base, item.rows * ROW_HEIGHT * ROW_FILL * sy


def test_zoomed_out_demo_counter_draws_exactly_the_values_in_force(qtbot, trace_tab) -> None:
    model = TraceModel(read_fxt(DEMO_TRACE))
    tab = trace_tab(model, 1200, 700)
    lane = next(lane for lane in tab.timeline.lanes() if lane.key[0] == "counter" and lane.label == "memory:ratio:1")
    item = lane.item
    s = item.series
    tab.timeline.set_range_ns(model.start_ns, model.end_ns)
    qtbot.wait(5)
    t0, t1, sx, dx, base, full = frame_of(tab, item)
    bucket = 1e9 / sx
    assert bucket > 1000  # zoomed out: many samples a pixel
    left, _width, y_max, y_min, _zero = item.bands(t0, t1, sx, dx, base, full)
    expected = brute_force(s.ts, s.value, t0, t1, bucket)
    # every pixel's drawn band is the brute-force min..max (pixel k at left of t0 + k * bucket)
    # (a pixel's first nanosecond; the pixel of the first sample from the sample on)
    pixel_t = np.maximum(np.int64(t0) + np.ceil(np.arange(len(expected)) * bucket).astype(np.int64), s.ts[0])
    x_of = item.px(pixel_t, sx, dx)
    entry = np.searchsorted(left, x_of + 1e-6, "right") - 1
    checked = 0
    for k, want in enumerate(expected):
        if want is None:  # before the first sample: nothing drawn over the pixel
            assert item.px(np.int64(t0) + int((k + 1) * bucket), sx, dx) <= left[0] + 1e-6
            continue
        i = entry[k]
        lo_y, hi_y = item.value_y(np.array(want), base, full)
        assert abs(y_min[i] - lo_y) < 1e-6 and abs(y_max[i] - hi_y) < 1e-6, k
        checked += 1
    assert checked > 500


def _counter_model(values: list[float], spacing_ns: int = 1_000) -> TraceModel:
    w = FxtWriter()
    w.initialization(1_000_000_000)
    for i, v in enumerate(values):
        w.event(K.COUNTER, 1_000 + i * spacing_ns, (1, 2), "c", "big", [("v", A.INT64, int(v))], data=0)
    return TraceModel(read_fxt_bytes(w.getvalue()))


def test_extreme_and_negative_only_counters_draw(qtbot, trace_tab, caplog) -> None:
    for values in ([-4.6e18, -4.6e18], [-4.6e18, -4.6e18 + 1, -1e18], [4.6e18, -4.6e18, 0], [-50, -20, -80, -30]):
        model = _counter_model(values)
        tab = trace_tab(model, 900, 500)
        item = next(lane.item for lane in tab.timeline.lanes() if isinstance(lane.item, CounterTrackItem))
        with caplog.at_level(logging.WARNING, logger="fxscope.timeline"):
            qtbot.wait(10)
            tab.grab()
        assert not [r for r in caplog.records if "could not draw" in r.getMessage()], values
        assert item.last_drawn > 0, (values, frame_of(tab, item), tab.timeline.plot.getViewBox().viewRange())
        t0, t1, sx, dx, base, full = frame_of(tab, item)
        _left, _width, y_max, y_min, zero = item.bands(t0, t1, sx, dx, base, full)
        assert np.isfinite(y_max).all() and np.isfinite(y_min).all()
        assert base - full - 1e-6 <= y_max.min() and y_min.max() <= base + 1e-6  # on the lane
        if max(values) < 0:  # negative-only: hangs below the zero line at the top, not a hairline
            assert abs(zero - (base - full)) < 1e-6
            assert (y_min - zero).max() > 0.8 * full
        tab.close()


def test_counter_values_read_in_engineering_units(qtbot, trace_tab) -> None:
    from fxscope.core.trace.details import counter_row

    model = TraceModel(read_fxt(DEMO_TRACE))
    tab = trace_tab(model)
    index = next(i for i, s in enumerate(model.counters.series) if s.label == "memory:heap:1")
    sample = int(np.flatnonzero(model.counters.series[index].value == 8388608)[0])
    tab.timeline.select_item("counter", counter_row(index, sample))
    text = tab.details.toPlainText()
    assert "Value\n8.389 M (8388608)\n" in text and "e+06" not in text
    assert "e+0" not in tab.timeline.describe("counter", counter_row(index, sample))
    assert " us" not in text


def _band_rows_expected(item, picture, k: int, bucket: float) -> set[int] | None:
    """The picture rows (indices into its pixel array) whose centres lie in the band of grid pixel ``k``,
    the time (start + k * bucket, start + (k + 1) * bucket]: the min..max of the samples in force during
    it (the last at or before its start and those inside), at least a pixel high; None before any sample."""
    rel = item.series.ts - item.origin
    a, b = k * bucket, (k + 1) * bucket
    before = np.flatnonzero(rel <= a)
    vals = item.series.value[(rel > a) & (rel < b)].tolist() + item.series.value[before[-1:]].tolist()
    if not vals:
        return None
    y_hi, y_lo = item.value_y(np.array([max(vals), min(vals)]), picture.full, picture.full)
    top, bottom = y_hi, max(y_lo, y_hi + 1.0)
    rows = picture.pixels.shape[0]
    return {r for r in range(rows) if top <= r + picture.y_top + 0.5 < bottom}


def test_a_pan_draws_what_a_cold_frame_draws_and_each_pixel_is_exact(qtbot, trace_tab) -> None:
    """The picture a counter keeps between frames is on a pixel grid anchored to the trace start: after
    pans either way (strips added to it, not a new picture), its pixels are those of a picture built cold
    for the new view, and every pixel column's band is the brute-force min..max of its grid pixel."""
    rng = np.random.default_rng(7)
    walk = np.cumsum(rng.integers(-1000, 1001, 20_000)) + rng.choice([0, 0, 0, 60_000], 20_000)  # (spikes)
    model = _counter_model(walk.tolist(), spacing_ns=3)  # (a few ns a sample: pixels of ~14.5 ns, not whole ns)
    tab = trace_tab(model, 1200, 700)
    timeline = tab.timeline
    lane = next(lane for lane in timeline.lanes() if lane.key[0] == "counter")
    timeline.pin(lane.key)  # (on top of the view: drawn whatever the scroll)
    item = lane.item
    span = model.end_ns - model.start_ns
    timeline.set_range_ns(model.start_ns + span // 4, model.start_ns + span // 2)
    tab.grab()
    first = item._picture
    assert first is not None and first.pixels is not None  # zoomed out: many entries, an image
    for step in (0.3, -0.1, -0.6, 0.45):
        timeline.pan(step)
        tab.grab()
    kept = item._picture
    assert kept is first and kept.k0 < first.k1 - 200  # extended both ways, the same picture
    t0, t1, sx, _dx, _base, _full = frame_of(tab, item)
    bucket = 1e9 / sx
    item.invalidate()
    cold = item.picture(t0, t1, sx, kept.sy)
    assert cold is not kept and kept.k0 <= cold.k0 and cold.k1 <= kept.k1
    a = cold.k0 - kept.k0
    assert np.array_equal(cold.pixels, kept.pixels[:, a : a + cold.pixels.shape[1]])
    checked = 0
    for c in range(0, cold.pixels.shape[1], 7):
        want = _band_rows_expected(item, cold, cold.k0 + c, bucket)
        band = set(np.flatnonzero(cold.pixels[:, c] & 2).tolist())
        if want is None:
            assert not band
            continue
        assert band == want, c
        checked += 1
    assert checked > 100
    # the image drawn is those pixels in the track's colours (the area light, the band dark)
    colours = [0, item._fill.color().rgba(), item._min_fill.color().rgba(), item._min_fill.color().rgba()]
    for c in range(0, kept.pixels.shape[1], 97):
        got = [kept.image.pixel(kept.c0 + c, r) for r in range(kept.pixels.shape[0])]
        assert got == [colours[v] for v in kept.pixels[:, c].tolist()], c
        assert got == kept.colours[:, c].tolist()


@pytest.mark.skipif(compiled.slice_kernels is None, reason="the compiled loops are not built")
def test_compiled_area_pixels_are_numpys() -> None:
    """slice_kernels.area_pixels (the counter picture's pixels in one pass) against the numpy path: random
    entries past either end, bands from fractional and half-pixel edges, NaN values, zero lines inside and
    at either edge of the lane, empty pictures."""
    from fxscope.app.timeline.counter_picture import area_pixels, area_pixels_numpy

    rng = np.random.default_rng(0)
    for t in range(400):
        n, columns, full = int(rng.integers(0, 60)), int(rng.integers(0, 200)), float(rng.uniform(1, 40))
        left = np.sort(rng.uniform(-5, columns + 5, n)).round(int(rng.integers(0, 3)))
        width = rng.uniform(0, 8, n)
        a, b = rng.uniform(-5, full + 5, n), rng.uniform(-5, full + 5, n)
        y_max, y_min = np.minimum(a, b), np.maximum(a, b)
        if t % 3 == 0:
            y_min[rng.random(n) < 0.2] = np.nan
        if t % 5 == 0:
            y_max, y_min = y_max.round(), y_min.round() + 0.5
        zero = float(rng.choice([full, 0.0, full / 2, 3.5]))
        got = area_pixels(left, width, y_max, y_min, zero, full, columns)
        with np.errstate(invalid="ignore"):
            want = area_pixels_numpy(left, width, y_max, y_min, zero, full, columns)
        assert got[0] == want[0]
        np.testing.assert_array_equal(got[1], want[1])


def _series_model(ts: np.ndarray, values: np.ndarray) -> TraceModel:
    """A trace of one counter with samples ``values`` (doubles: NaN allowed) at times ``ts`` (ns, 1 GHz)."""
    w = FxtWriter()
    w.initialization(1_000_000_000)
    for t, v in zip(ts.tolist(), values.tolist(), strict=True):
        w.event(K.COUNTER, t, (1, 2), "c", "s", [("v", A.DOUBLE, v)], data=0)
    return TraceModel(read_fxt_bytes(w.getvalue()))


@pytest.mark.skipif(compiled.slice_kernels is None, reason="the compiled loops are not built")
def test_compiled_strip_is_the_bands_of_the_numpy_path(qtbot) -> None:
    """slice_kernels.counter_strip (a picture's strip in one call) against CounterTrackItem.bands over
    CounterSet.lod, the reference: random series (short, and long enough to read block bounds and fine
    bounds: pixels of a few samples, of 2-8 blocks whose ends read fine blocks, of many blocks; NaN values,
    flat stretches, equal times), traces stamped from 0, hours after boot and near 2**63 ns, zooms from a
    fraction of a nanosecond a pixel to most of the trace, windows before, across and past the samples: the
    same entries to the last bit. Where the window leaves the exact integer case the numpy path answers."""
    from fxscope.core.trace.counters import BOUNDED_FROM

    rng = np.random.default_rng(3)
    compared = 0
    for t in range(40):
        n = int(rng.choice([1, 7, 300, BOUNDED_FROM + 900]))
        origin = int(rng.choice([0, 30 * 3_600 * 10**9, (1 << 63) - 10**13]))
        spacing = int(rng.choice([1, 3, 1000, 10**6]))
        ts = origin + np.sort(rng.integers(0, n * spacing, n)).astype(np.int64)
        values = rng.integers(-1000, 1000, n).astype(np.float64)
        if t % 3 == 0:
            values = np.round(values / 400)  # (runs of equal pixels)
        if t % 4 == 1:
            values[rng.random(n) < 0.01] = np.nan
        model = _series_model(ts, values)
        item = CounterTrackItem(model, 0, 0.0)
        span = max(int(ts[-1] - ts[0]), 1000)
        for _ in range(12):
            ns_per_px = float(rng.choice([0.37, 1.0, 14.5, span / 1900, span / 200, span / 60, span / 25, span / 3]))
            sx = 1e9 / ns_per_px
            reach = min(int(span / ns_per_px), 10**7)
            ka = int(rng.integers(-300, reach + 300))
            kb = ka + int(rng.integers(1, 2500))
            full = float(rng.choice([35.0, 12.6]))
            got = item._strip(ka, kb, sx, full)
            lo, hi = -(1 << 63) + 1, (1 << 63) - 2  # (as _strip keeps the window in int64)
            w0 = min(max(item.origin + math.ceil(ka * (1e9 / sx)), lo), hi)
            w1 = min(max(item.origin + math.ceil(kb * (1e9 / sx)), lo), hi)
            with np.errstate(invalid="ignore"):
                want = item.bands(w0, w1, sx, 0.0, full, full, since=w0, anchor=item.origin)
            if item._compiled_strip(w0, w1, sx, full, kb - ka) is not None:
                compared += 1
            for g, w in zip(got[:4], want[:4], strict=True):
                np.testing.assert_array_equal(g, w)
            assert got[4] == want[4]
    assert compared > 300  # (the compiled call answered: not every window fell back)


@pytest.mark.parametrize("path", ["compiled", "numpy"])
def test_a_picture_grown_by_many_pans_keeps_its_pixels(qtbot, trace_tab, monkeypatch, path: str) -> None:
    """Pans one way then the other add strips to the same picture past the room its buffers had (they grow,
    keeping what they hold): after every pan the picture's pixels and colours over the view are those of a
    picture built cold for it (with the compiled loops, and by numpy alone)."""
    if path == "numpy":
        monkeypatch.setattr(compiled, "slice_kernels", None)
    elif compiled.slice_kernels is None:
        pytest.skip("the compiled loops are not built")
    rng = np.random.default_rng(9)
    walk = np.cumsum(rng.integers(-1000, 1001, 20_000))
    model = _counter_model(walk.tolist(), spacing_ns=3)
    tab = trace_tab(model, 1200, 700)
    timeline = tab.timeline
    lane = next(lane for lane in timeline.lanes() if lane.key[0] == "counter")
    timeline.pin(lane.key)
    item = lane.item
    span = model.end_ns - model.start_ns
    timeline.set_range_ns(model.start_ns + span // 3, model.start_ns + span // 3 + span // 20)
    tab.grab()
    first = item._picture
    assert first is not None and first.pixels is not None
    grown = 0
    for step in [0.3] * 5 + [-0.3] * 9:
        buffer = item._picture._codes
        timeline.pan(step)
        tab.grab()
        kept = item._picture
        grown += kept is first and kept._codes is not buffer
        t0, t1, sx, _dx, _base, _full = frame_of(tab, item)
        ka, kb = item.grid_pixels(t0, t1, sx)
        saved = item._picture
        item._picture = None
        cold = item.picture(t0, t1, sx, kept.sy)
        item._picture = saved
        a, b = ka - kept.k0, ka - cold.k0
        n = kb - ka
        assert np.array_equal(kept.pixels[:, a : a + n], cold.pixels[:, b : b + n]), step
        assert np.array_equal(kept.colours[:, a : a + n], cold.colours[:, b : b + n]), step
    assert grown >= 1  # (the buffers grew at least once under the same picture)
