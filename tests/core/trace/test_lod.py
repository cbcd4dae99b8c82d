"""The level-of-detail pyramid (and the direct merge used zoomed in past it) against the slices themselves: whatever the window and resolution, every
slice at least a pixel long is drawn as itself, every slice in the window is covered by a box of its depth,
boxes stay in the window, and their number is bounded by the pixels, not by the slices."""

from __future__ import annotations

import numpy as np
import pytest

from fxscope.core.synthetic_trace import generate_trace
from fxscope.core.trace import lod
from fxscope.core.trace.lod import LONG_BUCKETS, SlicePyramid
from fxscope.core.trace.model import TraceModel
from fxscope.formats.fxt.reader import read_fxt, read_fxt_bytes
from fxscope.resources import DEMO_TRACE


@pytest.fixture(scope="module", params=["demo", "generated"])
def model(request) -> TraceModel:
    if request.param == "demo":
        return TraceModel(read_fxt(DEMO_TRACE))
    return TraceModel(read_fxt_bytes(generate_trace(200_000, seed=7)))


def test_pyramid_frames_keep_what_the_eye_needs(model: TraceModel) -> None:
    rng = np.random.default_rng(3)
    s = model.slices
    span = model.end_ns - model.start_ns
    checked = 0
    for _ in range(40):
        width = max(int(span * rng.choice([1.0, 0.3, 0.05, 0.01, 1e-4, 1e-5])), 1000)
        t0 = model.start_ns + int(rng.integers(0, max(span - width, 1)))
        t1 = t0 + width
        pixels = int(rng.choice([800, 1920]))
        ns_per_px = width / pixels
        level = model.pyramid.level_for(ns_per_px)
        # the pyramid's bucket, or (zoomed in past it) the pixel the direct merge uses
        bucket = (1 << level.shift) if level is not None else max(ns_per_px, 1.0)
        for track in model.tracks:
            vis = model.visible(track, t0, t1, ns_per_px)
            assert ((vis.end > t0) & (vis.start < t1)).all()
            for d, rows in enumerate(track.by_depth):
                at = vis.depth == d
                assert at.sum() <= 2 * width / bucket + 2 * LONG_BUCKETS + 4  # bounded by pixels
                inside = rows[(s.ts[rows] < t1) & (s.ts[rows] + s.dur[rows] > t0)]
                wide = inside[s.dur[inside] >= bucket]
                pairs = zip(vis.start[at].tolist(), vis.end[at].tolist(), strict=True)
                drawn = dict(zip(vis.rows[at].tolist(), pairs, strict=True))
                for r in wide.tolist():  # a pixel or longer: drawn as itself
                    assert drawn.get(r) == (int(s.ts[r]), int(s.ts[r] + s.dur[r]))
                # every slice in the window is under some box of its depth (within a bucket)
                order = np.argsort(vis.start[at], kind="stable")
                bs, be = vis.start[at][order], np.maximum.accumulate(vis.end[at][order]) if at.any() else []
                p = np.maximum(s.ts[inside], t0)
                k = np.searchsorted(bs, p + bucket, side="right") - 1
                assert (k >= 0).all() and (np.asarray(be)[k] >= p - bucket).all()
                checked += len(inside)
    assert checked > 1000


def _summary_by_hand(ts, dur, lane, origin, shift):
    """One level as a loop over the slices in (lane, start) order: per run of short slices in one bucket,
    the count and the first longest; the long ones per lane with the running max of their ends."""
    entries, long_rows, long_end_max = [], {}, {}
    for row in sorted(range(len(ts)), key=lambda r: (lane[r], ts[r])):
        ln, d = int(lane[row]), int(dur[row])
        if d >= LONG_BUCKETS << shift:
            long_rows.setdefault(ln, []).append(row)
            ends = long_end_max.setdefault(ln, [])
            ends.append(max([int(ts[row]) + d, *ends[-1:]]))
            continue
        bucket = ((int(ts[row]) - origin) % (1 << 64)) >> shift
        if entries and entries[-1][:2] == [ln, bucket]:
            entry = entries[-1]
            entry[2] += 1
            if d > entry[4]:
                entry[3], entry[4] = row, d
        else:
            entries.append([ln, bucket, 1, row, d])
    return entries, long_rows, long_end_max


@pytest.mark.parametrize("batch", [None, 700])
@pytest.mark.parametrize("before_origin", [False, True])
def test_every_level_is_the_summary_of_its_slices(before_origin: bool, batch, monkeypatch, slice_loops) -> None:
    """Coarser levels are built from finer ones (numpy) or in one pass over the slices (the compiled
    loops): the same as summarizing the slices at each level; lanes summarised in batches (``batch``
    slices, whole lanes) give the same levels."""
    if batch is not None:
        monkeypatch.setattr(lod, "BATCH_SLICES", batch)
        monkeypatch.setattr(lod, "COMPILED_CHUNK", batch // 3)  # (several lanes a chunk, and a lane past one)
    rng = np.random.default_rng(5)
    n, lanes, span, origin = 3000, 5, 10**9, 10**6
    ts = rng.integers(origin - (span // 10 if before_origin else 0), origin + span, n)
    dur = (rng.integers(0, span // 20, n) * rng.choice([0, 1e-5, 1e-3, 1.0], n)).astype(np.int64)
    lane = rng.integers(0, lanes, n).astype(np.int32)
    lane[lane == 3] = 2  # a lane without slices
    pyramid = SlicePyramid(ts, dur, lane, lanes, origin, span)
    order = np.lexsort((ts, lane))
    given = SlicePyramid(ts, dur, lane, lanes, origin, span, order=order.astype(np.int32))
    for a, b in zip(pyramid.levels, given.levels, strict=True):  # the caller's order: the same levels
        assert (a.row == b.row).all() and (a.bucket == b.bucket).all() and (a.lane_ptr == b.lane_ptr).all()
    assert len(pyramid.levels) > 3
    _assert_levels_by_hand(pyramid, ts, dur, lane, lanes, origin)


def _assert_levels_by_hand(pyramid: SlicePyramid, ts, dur, lane, lanes: int, origin: int) -> None:
    """Every level of ``pyramid`` is :func:`_summary_by_hand` of the slices at its shift: entries lane by
    lane (bucket, count, first longest row) and each lane's long slices with the running max of their ends."""
    for level in pyramid.levels:
        entries, long_rows, long_end_max = _summary_by_hand(ts, dur, lane, origin, level.shift)
        got = [
            [ln, int(level.bucket[i]), int(level.count[i]), int(level.row[i])]
            for ln in range(lanes)
            for i in range(int(level.lane_ptr[ln]), int(level.lane_ptr[ln + 1]))
        ]
        int32 = lambda b: (b + (1 << 31)) % (1 << 32) - (1 << 31)  # noqa: E731 (the column's type)
        assert got == [[ln, int32(b), c, r] for ln, b, c, r, _d in entries]
        assert {k: v.tolist() for k, v in level.long_rows.items()} == long_rows
        assert {k: v.tolist() for k, v in level.long_end_max.items()} == long_end_max


@pytest.mark.parametrize("seed", range(4))
def test_levels_of_dense_lanes_with_slices_long_at_the_fine_levels(seed: int) -> None:
    """Lanes of slices whose starts ascend (the compiled pass that keeps one open entry a level and merges a
    closed one into the level above), many to a bucket, each slice long at none, some or all of the levels
    (its duration around each level's threshold): a slice long at the finest levels joins or opens a coarser
    entry while finer ones stay open, and the finer ones must then close before it; lanes end with entries
    open at every level. Every level is still the summary of its slices."""
    rng = np.random.default_rng(100 + seed)
    n, lanes, span, origin = 4000, 3, 10**8, 10**6
    lane = np.sort(rng.integers(0, lanes, n)).astype(np.int32)
    ts = np.empty(n, np.int64)
    for ln in range(lanes):  # (each lane's starts in runs of equal and near starts: many a bucket)
        at = lane == ln
        steps = rng.choice([0, 1, 50, 5_000, 200_000], int(at.sum()), p=[0.2, 0.3, 0.3, 0.15, 0.05])
        ts[at] = origin + np.cumsum(steps)
    pyramid = SlicePyramid(ts, np.zeros(n, np.int64), lane, lanes, origin, span)
    shifts = [level.shift for level in pyramid.levels]
    assert len(shifts) > 3
    thresholds = np.array([LONG_BUCKETS << s for s in shifts], np.int64)
    dur = rng.choice(thresholds, n) + rng.integers(-1, 1, n, endpoint=True)  # (just short or long at a level)
    short = rng.random(n) < 0.3
    dur[short] = rng.integers(0, 100, int(short.sum()))  # (short at every level)
    pyramid = SlicePyramid(ts, dur, lane, lanes, origin, span)
    assert [level.shift for level in pyramid.levels] == shifts
    long_at_finest = int((dur >= thresholds[0]).sum())
    assert 0 < long_at_finest < n and int((dur < thresholds[-1]).sum()) > n // 2
    _assert_levels_by_hand(pyramid, ts, dur, lane, lanes, origin)


@pytest.mark.skipif(lod.compiled.slice_kernels is None, reason="the compiled loops are not built")
@pytest.mark.parametrize("chunk", [None, 5_000])
def test_levels_filled_in_one_pass_are_the_counted_ones(chunk, monkeypatch) -> None:
    """The compiled levels filled in one pass into regions of reserved arrays (no counting pass) equal those
    of the counting and filling passes (taken where no such arrays can be mapped): the same rows, buckets,
    counts, lane pointers and long slices, and each level's counts 16 bits wide where they fit, 32 where a
    bucket holds 65,536 slices or more (the coarse levels of a lane of 200,000 slices in 1 ms)."""
    if chunk is not None:
        monkeypatch.setattr(lod, "COMPILED_CHUNK", chunk)  # (lanes over several chunks of the pass)
    rng = np.random.default_rng(11)
    n_dense, n, lanes, span, origin = 200_000, 230_000, 4, 10**9, 10**6
    ts = np.r_[origin + np.sort(rng.integers(0, 10**6, n_dense)), rng.integers(origin, origin + span, n - n_dense)]
    dur = (rng.integers(0, span // 20, n) * rng.choice([0, 1e-5, 1e-3, 1.0], n)).astype(np.int64)
    dur[:n_dense] = 0
    lane = np.r_[np.zeros(n_dense, np.int32), rng.integers(1, lanes, n - n_dense).astype(np.int32)]
    one_pass = SlicePyramid(ts, dur, lane, lanes, origin, span)
    mapped: list[int] = []
    real = lod.reserved_array
    monkeypatch.setattr(lod, "reserved_array", lambda size, dtype: mapped.append(size) or real(size, dtype))
    SlicePyramid(ts, dur, lane, lanes, origin, span)
    assert mapped  # (the one pass was taken)
    monkeypatch.setattr(lod, "reserved_array", lambda size, dtype: None)
    counted = SlicePyramid(ts, dur, lane, lanes, origin, span)
    widths = set()
    for a, b in zip(one_pass.levels, counted.levels, strict=True):
        for name in ("bucket", "row", "count", "lane_ptr"):
            x, y = getattr(a, name), getattr(b, name)
            assert x.dtype == y.dtype and np.array_equal(x, y), name
        widths.add(a.count.dtype)
        assert a.long_rows.keys() == b.long_rows.keys()
        assert all(np.array_equal(a.long_rows[k], b.long_rows[k]) for k in a.long_rows)
        assert all(np.array_equal(a.long_end_max[k], b.long_end_max[k]) for k in a.long_end_max)
    assert widths == {np.dtype(np.uint16), np.dtype(np.int32)}


def test_a_tracks_lanes_in_one_pass_are_each_lanes_boxes(testdata) -> None:
    """``query_lanes`` (a thread's depths read together, as a frame does) gives, lane by lane and in order,
    what each lane gives on its own, long slices included: on a real trace 25 deep, at every level and in
    windows from the whole trace to a few buckets."""
    model = TraceModel(read_fxt(testdata / "fxt" / "richiesams_fxt-python_trace.fxt"))
    pyramid = model.pyramid
    deep = max(model.tracks, key=lambda t: t.max_depth)
    assert deep.max_depth >= 10
    rng = np.random.default_rng(5)
    span = model.end_ns - model.start_ns
    compared = long_seen = 0
    for level in pyramid.levels:
        for _ in range(15):
            width = max(int(span * rng.choice([1.2, 0.5, 0.1, 0.01])), 1 << level.shift)
            t0 = model.start_ns + int(rng.integers(-width // 4, span))
            n = deep.max_depth + 1
            rows, lane, count, start, end = pyramid.query_lanes(level, deep.lane_base, n, t0, t0 + width)
            assert (np.diff(lane) >= 0).all()
            for k in range(n):
                alone = pyramid.query(level, deep.lane_base + k, t0, t0 + width)
                at = lane == k
                for got, want in zip((rows[at], count[at], start[at], end[at]), alone, strict=True):
                    assert np.array_equal(got, want)
                compared += int(at.sum())
                long_seen += len(level.long_rows.get(deep.lane_base + k, ()))
    assert compared > 1000 and long_seen > 0


def _queries_both_ways(pyramid: SlicePyramid, windows, monkeypatch) -> int:
    """Every lane set and window queried by the compiled loop and by numpy: the same boxes, exactly."""
    from fxscope.core.trace import compiled

    kernels = compiled.slice_kernels
    compared = 0
    for level, first, n, t0, t1 in windows:
        got = pyramid.query_lanes(level, first, n, t0, t1)
        monkeypatch.setattr(compiled, "slice_kernels", None)
        want = pyramid.query_lanes(level, first, n, t0, t1)
        monkeypatch.setattr(compiled, "slice_kernels", kernels)
        for g, w in zip(got, want, strict=True):
            assert g.dtype == w.dtype and np.array_equal(g, w)
        compared += len(got[0])
    return compared


@pytest.mark.skipif(lod.compiled.slice_kernels is None, reason="the compiled loops are not built")
def test_the_compiled_query_gives_the_numpy_boxes(testdata, monkeypatch) -> None:
    """slice_kernels.pyramid_query against the numpy path: a real trace's lanes at every level, windows from
    past the whole trace to a bucket; made-up slices before the origin with durations as a difference of
    ends and starts (the async and scheduling pyramids), 16- and 32-bit counts."""
    model = TraceModel(read_fxt(testdata / "fxt" / "richiesams_fxt-python_trace.fxt"))
    rng = np.random.default_rng(11)
    span = model.end_ns - model.start_ns
    windows = []
    for level in model.pyramid.levels:
        for track in model.tracks[:12]:
            for scale in (3.0, 1.0, 0.1, 0.001):
                width = max(int(span * scale), 1 << level.shift)
                t0 = model.start_ns + int(rng.integers(-width, span))
                windows.append((level, track.lane_base, track.max_depth + 1, t0, t0 + width))
    # the coarse levels' queries read their stored boxes (slice_kernels.pyramid_query_boxes), the fine ones'
    # the slices' columns (pyramid_query): both against numpy's boxes from the columns
    assert {level.box is None for level in model.pyramid.levels} == {True, False}
    assert _queries_both_ways(model.pyramid, windows, monkeypatch) > 5000
    n, lanes, origin = 250_000, 6, 10**6
    start = rng.integers(origin - 10**8, origin + 10**9, n)
    end = start + (rng.integers(0, 10**6, n) * rng.choice([0, 1, 100], n))
    lane = np.where(rng.random(n) < 0.8, 0, rng.integers(1, lanes, n)).astype(np.int32)  # lane 0: > 65535
    from fxscope.core.trace.gathered import Difference

    pyramid = SlicePyramid(start, Difference(end, start), lane, lanes, origin, 10**9)
    assert any(level.count.dtype == np.int32 for level in pyramid.levels)  # (a bucket of lane 0's coarsest)
    assert {level.box is None for level in pyramid.levels} == {True, False}
    windows = [(level, first, k, t0, t0 + w) for level in pyramid.levels for first, k in ((0, lanes), (2, 1), (1, 3))
               for t0, w in ((origin - 2 * 10**8, 2 * 10**9), (origin + 10**8, 10**6), (origin, 1 << level.shift))]
    assert _queries_both_ways(pyramid, windows, monkeypatch) > 1000


@pytest.mark.skipif(lod.compiled.slice_kernels is None, reason="the compiled loops are not built")
def test_the_compiled_query_refuses_rows_out_of_range(monkeypatch) -> None:
    """A level whose rows point past the slices (a corrupt pyramid): the compiled loop raises and the numpy
    path answers (here: its IndexError), never a read outside the columns."""
    rng = np.random.default_rng(3)
    ts = np.sort(rng.integers(0, 10**9, 5000))
    pyramid = SlicePyramid(ts, np.full(5000, 10, np.int64), np.zeros(5000, np.int32), 1, 0, 10**9)
    level = pyramid.levels[0]
    level.row[len(level.row) // 2] = 10**6
    with pytest.raises(ValueError, match="row out of range"):
        lod.compiled.slice_kernels.pyramid_query(level.bucket, level.row, level.count, level.count.dtype == np.int32,
                                                 level.lane_ptr, ts, pyramid.dur, None, 0, level.shift, -10, 1 << 30,
                                                 0, 10**9, np.empty((5, len(level.row)), np.int64))  # fmt: skip
    with pytest.raises(IndexError):
        pyramid.query_lanes(level, 0, 1, 0, 10**9)
    boxed = next(level for level in pyramid.levels if level.box is not None)  # (its boxes read, not the slices)
    boxed.row[len(boxed.row) // 2] = 10**6
    with pytest.raises(ValueError, match="row out of range"):
        lod.compiled.slice_kernels.pyramid_query_boxes(boxed.bucket, boxed.row, boxed.box, boxed.box_count,
                                                       boxed.lane_ptr, 5000, -10, 1 << 30, 0, 10**9,
                                                       np.empty((5, len(boxed.row)), np.int64))  # fmt: skip
    with pytest.raises(IndexError):
        pyramid.query_lanes(boxed, 0, 1, 0, 10**9)


def test_long_slices_of_a_query_are_those_overlapping_its_window() -> None:
    """A lane's long slices (their starts read on its first query and kept in the level): every query, after
    many others, gives the bucket entries' boxes then, lane by lane, exactly the long slices that overlap
    its window, in start order (against a search of all of them by hand)."""
    from fxscope.core.trace.gathered import Difference

    rng = np.random.default_rng(8)
    n, lanes, origin, span = 30_000, 4, 10**6, 10**9
    start = np.sort(rng.integers(origin, origin + span, n))
    lane = rng.integers(0, lanes, n).astype(np.int32)
    end = start + rng.choice([10, 10**5, 10**7, 2 * 10**8], n)  # many slices long at every fine level
    pyramid = SlicePyramid(start, Difference(end, start), lane, lanes, origin, span)
    lefts = rng.integers(-span // 4, span, 30)
    widths = rng.choice([span, span // 10, span // 1000], 30)
    windows = [(origin + int(a), int(w)) for a, w in zip(lefts, widths, strict=True)]
    long_seen = 0
    for level in pyramid.levels:
        for _ in range(2):  # (the second time, every lane's starts are kept)
            for t0, w in windows:
                t1 = t0 + w
                got = pyramid.query_lanes(level, 0, lanes, t0, t1)
                limit = (1 << 31) - 1
                lo_key = np.int32(min(max(((t0 - origin) >> level.shift) - LONG_BUCKETS, -limit), limit))
                hi_key = np.int32(min(max((t1 - origin) >> level.shift, -limit), limit))
                parts = [pyramid._entries(level, 0, lanes, t0, t1, lo_key, hi_key)]
                for k in range(lanes):
                    long = level.long_rows.get(k, np.zeros(0, np.int64))
                    hit = long[(start[long] < t1) & (end[long] > t0)]
                    parts.append((hit, np.full(len(hit), k), np.ones(len(hit), np.int64), start[hit], end[hit]))
                    long_seen += len(hit)
                want = [np.concatenate([p[c] for p in parts]) for c in range(5)]
                order = np.argsort(want[1], kind="stable")
                for g, v in zip(got, want, strict=True):
                    assert np.array_equal(g, v[order])
        assert bool(level.long_start) == bool(level.long_rows)
    assert long_seen > 1000


@pytest.mark.skipif(lod.compiled.slice_kernels is None, reason="the compiled loops are not built")
def test_the_compiled_merge_past_the_finest_level_gives_the_numpy_boxes(model: TraceModel, monkeypatch) -> None:
    """TraceModel.visible zoomed in past the pyramid's finest level (slice_kernels.pixel_buckets: one pass a
    depth) against its numpy loop: every track, windows from a pixel of a few ns to the finest level's, at
    the trace's edges and past them, and (the pyramid's levels hidden) zoomed out, where most slices merge;
    the same boxes in the same order and dtypes."""
    rng = np.random.default_rng(21)
    span = model.end_ns - model.start_ns
    finest = 1 << model.pyramid.levels[0].shift
    kernels = lod.compiled.slice_kernels
    compared = merged = 0
    for i in range(40):
        if i < 20:
            ns_per_px = float(rng.choice([0.3, 1.0, 7.5, finest / 3.3, finest * 0.99]))
            assert model.pyramid.level_for(ns_per_px) is None
        else:  # (as if past the finest level: the pyramid answers no level)
            ns_per_px = span / float(rng.choice([1920, 1e4, 1e5]))
            monkeypatch.setattr(model.pyramid, "level_for", lambda ns_per_px: None)
        width = int(ns_per_px * rng.choice([200, 1920, 4000]))
        t0 = model.start_ns + int(rng.integers(-width, span))
        for track in model.tracks:
            got = model.visible(track, t0, t0 + width, ns_per_px)
            monkeypatch.setattr(lod.compiled, "slice_kernels", None)
            want = model.visible(track, t0, t0 + width, ns_per_px)
            monkeypatch.setattr(lod.compiled, "slice_kernels", kernels)
            for name in ("rows", "depth", "count", "start", "end"):
                g, w = getattr(got, name), getattr(want, name)
                assert g.dtype == w.dtype and np.array_equal(g, w), name
            compared += len(got.rows)
            merged += int(np.count_nonzero(got.count > 1))
    assert compared > 300 and merged > 30, (compared, merged)


@pytest.mark.skipif(lod.compiled.slice_kernels is None, reason="the compiled loops are not built")
def test_the_compiled_merge_refuses_rows_and_times_out_of_range() -> None:
    """pixel_buckets on a corrupt table's rows (past the columns) or times whose pixel is past int64: a
    ValueError (the numpy loop then answers), never a read outside the columns; too small an out likewise."""
    kernels = lod.compiled.slice_kernels
    ts = np.arange(0, 10_000, 10, dtype=np.int64)
    dur = np.full(len(ts), 3, np.int64)
    out = np.empty((5, len(ts)), np.int64)
    rows = np.arange(len(ts), dtype=np.int32)
    assert kernels.pixel_buckets(rows, False, ts, dur, None, 0, 100.0, 2, out, 0) == 100  # 10 a pixel
    assert np.array_equal(out[2, :100], np.full(100, 10)) and np.all(out[1, :100] == 2)
    bad = rows.copy()
    bad[500] = len(ts)
    with pytest.raises(ValueError, match="row out of range"):
        kernels.pixel_buckets(bad, False, ts, dur, None, 0, 100.0, 0, out, 0)
    with pytest.raises(ValueError, match="past int64"):
        kernels.pixel_buckets(rows.astype(np.int64), True, ts, dur * 0, None, -(1 << 62), 1e-300, 0, out, 0)
    with pytest.raises(ValueError, match="bad buffer sizes"):
        kernels.pixel_buckets(rows, False, ts, dur, None, 0, 100.0, 0, out, 5)
    assert lod.merged_per_pixel((ts, dur, None), [bad], [(0, len(bad))], 0, 100.0) is None
    # durations as a difference of ends and starts: the same boxes as the durations themselves
    rng = np.random.default_rng(5)
    ts = np.sort(rng.integers(-10**6, 10**7, 50_000))
    dur = rng.choice([0, 1, 40, 3000, 10**5], len(ts))
    end = ts + dur
    for t0, bucket in ((0, 1.0), (-5 * 10**5, 77.7), (123, 5000.0), (10**6, 1e6)):
        a, b = np.empty((5, len(ts)), np.int64), np.empty((5, len(ts)), np.int64)
        m = kernels.pixel_buckets(np.arange(len(ts)), True, ts, dur, None, t0, bucket, 1, a, 0)
        assert kernels.pixel_buckets(np.arange(len(ts)), True, ts, end, ts, t0, bucket, 1, b, 0) == m
        assert np.array_equal(a[:, :m], b[:, :m]) and 0 < m < len(ts)
