"""Counter series from hand-built traces (argument types, ids, processes, names) and their pixel summary."""

from __future__ import annotations

import numpy as np
import pytest

from fxscope.core.synthetic_trace import generate_trace
from fxscope.core.trace import compiled
from fxscope.core.trace.counters import _bucket_min_max, build_counters
from fxscope.formats.fxt.args import ArgType as A
from fxscope.formats.fxt.columns import EventKind as K
from fxscope.formats.fxt.reader import read_fxt_bytes

P1 = (1, 10)
P1B = (1, 11)
P2 = (2, 20)


def _registered(w) -> None:
    w.string(1, "rss")  # an indexed argument name
    w.string(2, "mem")


def test_one_series_per_process_name_id_and_argument(fxt) -> None:
    cols = fxt(
        [
            (
                K.COUNTER,
                100,
                P1,
                "mem",
                0,
                [(1, A.INT64, 1 << 40), ("pct", A.DOUBLE, 0.5), ("tag", A.STRING, "x")],
            ),
            (K.COUNTER, 200, P1B, "mem", 0, [(1, A.INT64, 7), ("pct", A.DOUBLE, 0.25)]),  # same process
            (K.COUNTER, 150, P1, "mem", 3, [(1, A.INT32, -5)]),  # another counter id
            (K.COUNTER, 120, P2, "mem", 0, [(1, A.UINT32, 4_000_000_000)]),  # another process
            (K.COUNTER, 130, P2, "mem", 0, [(1, A.UINT64, (1 << 63) + 2048)]),
            (K.INSTANT, 140, P1, "mem"),
        ],
        setup=_registered,
    )
    cs = build_counters(cols)
    got = [(s.pid, s.label, s.ts.tolist(), s.value.tolist()) for s in cs.series]
    assert got == [
        (1, "mem:pct", [100, 200], [0.5, 0.25]),
        (1, "mem:rss", [100, 200], [float(1 << 40), 7.0]),
        (1, "mem:rss:3", [150], [-5.0]),
        (2, "mem:rss", [120, 130], [4e9, float((1 << 63) + 2048)]),
    ]
    assert cs.non_numeric == 1
    assert cs.for_process(2) == [3]
    assert cs.series[0].event.tolist() == [0, 1]


@pytest.mark.parametrize("paths", ["compiled", "numpy"])
def test_counter_ids_past_2_63(fxt, monkeypatch, paths: str) -> None:
    """Counter ids are any 64-bit data word: ids past 2**63 (all of them, so that the numpy path's dense ranks
    start there: it raised OverflowError) are series of their own, by both groupings."""
    from tests.compiled_loops import choose_loops

    choose_loops(paths, monkeypatch, compiled, "summary_kernels")
    big = (1 << 64) - 3
    cols = fxt(
        [
            (K.COUNTER, 100, P1, "mem", big, [(1, A.INT64, 1)]),
            (K.COUNTER, 200, P1, "mem", big + 1, [(1, A.INT64, 2)]),
            (K.COUNTER, 150, P1, "mem", big, [(1, A.INT64, 3)]),
        ],
        setup=_registered,
    )
    got = [(s.counter_id, s.ts.tolist(), s.value.tolist()) for s in build_counters(cols).series]
    assert got == [(big, [100, 150], [1.0, 3.0]), (big + 1, [200], [2.0])]


def brute_force_lod(ts: np.ndarray, v: np.ndarray, t0: int, t1: int, bucket: float):
    """Per pixel [t0 + k*b, t0 + (k+1)*b) of [t0, t1), one at a time: (min, max, last) of the samples in
    force during it (the last at or before its start, and those strictly inside), or None before any."""
    out = []
    k = 0
    while k * bucket < t1 - t0:  # (offsets: a float of t0 near 2**62 is off by hundreds of ns)
        a, b = k * bucket, (k + 1) * bucket
        rel = [int(t) - t0 for t in ts]
        vals = [float(x) for r, x in zip(rel, v, strict=True) if a < r < b and r < t1 - t0]
        before = [float(x) for r, x in zip(rel, v, strict=True) if r <= a]
        if before:
            vals.append(before[-1])
        ended = [float(x) for r, x in zip(rel, v, strict=True) if r < b and r < t1 - t0]
        out.append((min(vals), max(vals), ended[-1]) if vals else None)
        k += 1
    return out


def expand(start: np.ndarray, lo, hi, last, t0: int, t1: int, bucket: float):
    """The lod entries back to one (min, max, last) per pixel (an entry holds until the next starts)."""
    n = int(np.ceil((t1 - t0) / bucket))
    out: list = [None] * n
    for i, s in enumerate(start.tolist()):
        k0 = int((s - t0) // bucket)  # (the first entry may start at its first sample, inside a pixel)
        k1 = int((int(start[i + 1]) - t0) // bucket) if i + 1 < len(start) else n
        for k in range(k0, k1):
            out[k] = (float(lo[i]), float(hi[i]), float(last[i]))
    return out


def test_lod_is_exactly_the_samples_in_force_per_pixel(fxt, lod_paths) -> None:
    samples = [(0, 5.0), (10, 1.0), (15, 9.0), (19, 3.0), (25, 4.0), (40, 8.0)]
    cols = fxt([(K.COUNTER, t, P1, "c", 0, [("v", A.DOUBLE, v)]) for t, v in samples])
    cs = build_counters(cols)
    start, lo, hi, last = cs.lod(0, 12, 36, 10)
    # pixels [12,22) [22,32) [32,42): 1.0 in force at 12, then 9 and 3; 3.0 in force at 22 until 4 at 25
    assert start.tolist() == [12, 22, 32]
    assert lo.tolist() == [1.0, 3.0, 4.0] and hi.tolist() == [9.0, 4.0, 4.0] and last.tolist() == [3.0, 4.0, 4.0]
    start, lo, hi, last = cs.lod(0, 50, 60, 1)  # after the last sample: it still holds, one entry
    assert start.tolist() == [50] and last.tolist() == [8.0] and lo.tolist() == [8.0]
    assert len(cs.lod(0, -20, -10, 1)[0]) == 0  # before the first sample: nothing


@pytest.fixture(params=["compiled", "numpy"])
def lod_paths(request, monkeypatch) -> str:
    """Each lod test with the compiled loops (slice_kernels.range_min_max, search_ascending) and without."""
    if request.param == "numpy":
        monkeypatch.setattr(compiled, "slice_kernels", None)
    elif compiled.slice_kernels is None:
        pytest.skip("the compiled loops are not built")
    return request.param


@pytest.mark.parametrize("seed", range(6))
def test_lod_matches_a_brute_force_computation(fxt, seed: int, lod_paths) -> None:
    rng = np.random.default_rng(seed)
    base = [0, 1 << 33, (1 << 62) + 12345][seed % 3]  # stamped from boot: hours, or 2**62 ns, after it
    n = int(rng.integers(1, 60))
    ts = np.sort(rng.integers(0, 2_000, n)) + base
    if seed % 2:  # ties
        ts[n // 2 :] = ts[n // 2]
    v = rng.normal(0, 1e6, n).round()
    cols = fxt([(K.COUNTER, int(t), P1, "c", 0, [("v", A.DOUBLE, float(x))]) for t, x in zip(ts, v, strict=True)])
    cs = build_counters(cols)
    s = cs.series[0]
    for _ in range(10):
        t0 = base + int(rng.integers(-300, 1_800))
        t1 = t0 + int(rng.integers(1, 2_500))
        bucket = float(rng.choice([1.0, 3.0, 7.5, 33.3, 250.0]))
        got = expand(*cs.lod(0, t0, t1, bucket), t0, t1, bucket)
        assert got == brute_force_lod(s.ts, s.value, t0, t1, bucket), (t0, t1, bucket)


@pytest.mark.parametrize("seed", range(6))
def test_lod_on_an_anchored_grid_is_exact_and_windows_join(fxt, seed: int, lod_paths) -> None:
    """With an anchor, windows that start and end on the anchor's grid give, pixel for pixel, the brute
    force over the whole grid; two adjacent windows together are the window that holds both (a timeline
    picture is extended strip by strip as the view pans)."""
    rng = np.random.default_rng(100 + seed)
    base = [0, 1 << 33, (1 << 62) + 12345][seed % 3]
    n = int(rng.integers(1, 60))
    ts = np.sort(rng.integers(0, 2_000, n)) + base
    v = rng.normal(0, 1e6, n).round()
    cols = fxt([(K.COUNTER, int(t), P1, "c", 0, [("v", A.DOUBLE, float(x))]) for t, x in zip(ts, v, strict=True)])
    cs = build_counters(cols)
    s = cs.series[0]
    anchor = base - int(rng.integers(0, 50))
    for _ in range(10):
        bucket = float(rng.choice([1.0, 3.0, 7.5, 33.3, 250.0]))
        ka = int(rng.integers(0, int(1_500 / bucket) + 1))
        km = ka + int(rng.integers(1, int(600 / bucket) + 2))
        kb = km + int(rng.integers(1, int(600 / bucket) + 2))
        t0, tm, t1 = (anchor + int(np.ceil(k * bucket)) for k in (ka, km, kb))
        whole = brute_force_lod(s.ts, s.value, anchor, t1, bucket)
        got = expand(*cs.lod(0, t0, t1, bucket, anchor=anchor), anchor, t1, bucket)
        assert got[ka:kb] == whole[ka:kb] and not any(got[:ka]), (t0, t1, bucket)
        left = expand(*cs.lod(0, t0, tm, bucket, anchor=anchor), anchor, tm, bucket)
        right = expand(*cs.lod(0, tm, t1, bucket, anchor=anchor), anchor, t1, bucket)
        assert left[ka:km] + right[km:kb] == whole[ka:kb], (t0, tm, t1, bucket)


def test_generated_trace_counters_match_the_decoded_arguments() -> None:
    cols = read_fxt_bytes(generate_trace(12_000))
    cs = build_counters(cols)
    n_args = int(cols.ev_nargs[cols.ev_kind == K.COUNTER].sum())
    assert sum(len(s) for s in cs.series) == n_args and cs.non_numeric == 0
    for s in cs.series:
        assert (np.diff(s.ts) >= 0).all()
        for i in np.linspace(0, len(s) - 1, 5).astype(int).tolist():
            args = {a.name: a.value for a in cols.event_args(int(s.event[i]))}
            assert float(args[s.arg_name]) == s.value[i]
            assert int(cols.ev_data[s.event[i]]) == s.counter_id
    # three providers' processes, "ratio" of queue_depth/memory per thread id, and "heap"/"slabs"
    assert {s.pid for s in cs.series} == {1000, 2000, 3000}
    assert {s.arg_name for s in cs.series} == {"ratio", "heap", "slabs"}


def test_arguments_decoded_in_batches_give_the_same_series(monkeypatch) -> None:
    """The counters' arguments are decoded a batch of records at a time (bounded temporaries): any batch
    size gives the same series, values and non-numeric count."""
    from fxscope.core.trace import counters

    cols = read_fxt_bytes(generate_trace(20_000))
    whole = build_counters(cols)
    monkeypatch.setattr(counters, "ARG_BATCH", 7)
    batched = build_counters(cols)
    assert len(whole.series) > 1 and sum(len(c.ts) for c in whole.series) > 7
    assert batched.non_numeric == whole.non_numeric
    assert [(c.pid, c.name, c.counter_id, c.arg_name) for c in batched.series] == [
        (c.pid, c.name, c.counter_id, c.arg_name) for c in whole.series
    ]
    for a, b in zip(batched.series, whole.series, strict=True):
        assert np.array_equal(a.ts, b.ts) and np.array_equal(a.value, b.value, equal_nan=True)
        assert np.array_equal(a.event, b.event)


def test_series_by_counting_sort_and_by_lexsort_are_the_same(monkeypatch) -> None:
    """The samples are ordered by a radix sort of their series numbers (dense ranks of process, name,
    counter id and argument) when those are few, else by a lexsort of every key: both give the same series,
    in time order, ties in event order."""
    from fxscope.core.trace import counters

    cols = read_fxt_bytes(generate_trace(30_000, seed=2))
    counted = build_counters(cols)
    monkeypatch.setattr(counters, "MAX_COMBINATIONS", 1)
    sorted_all = build_counters(cols)
    assert len(counted.series) > 3
    assert [(c.pid, c.name, c.counter_id, c.arg_name) for c in counted.series] == [
        (c.pid, c.name, c.counter_id, c.arg_name) for c in sorted_all.series
    ]
    for a, b in zip(counted.series, sorted_all.series, strict=True):
        assert np.array_equal(a.ts, b.ts) and np.array_equal(a.event, b.event) and a.event.dtype == b.event.dtype
        assert np.array_equal(a.value, b.value, equal_nan=True)
        assert (np.diff(a.ts) >= 0).all()


@pytest.mark.parametrize("combinations", [1 << 22, 1])
def test_series_out_of_time_order_are_sorted_ties_in_event_order(fxt, monkeypatch, combinations: int) -> None:
    """Samples of a series written out of time order (two providers' clocks, a late writer) come sorted by
    time, samples of one time in event order, by the counting sort and by the lexsort alike."""
    from fxscope.core.trace import counters

    monkeypatch.setattr(counters, "MAX_COMBINATIONS", combinations)
    cols = fxt(
        [
            (K.COUNTER, 300, P1, "mem", 0, [(1, A.INT64, 1)]),
            (K.COUNTER, 100, P1, "mem", 0, [(1, A.INT64, 2)]),
            (K.COUNTER, 200, P2, "mem", 0, [(1, A.INT64, 3)]),  # another process: in order
            (K.COUNTER, 100, P1B, "mem", 0, [(1, A.INT64, 4), (1, A.INT64, 5)]),  # a tie, twice one name
            (K.COUNTER, 50, P2, "mem", 0, [(1, A.INT64, 6)]),
        ],
        setup=_registered,
    )
    cs = build_counters(cols)
    got = [(s.pid, s.label, s.ts.tolist(), s.value.tolist(), s.event.tolist()) for s in cs.series]
    assert got == [
        (1, "mem:rss", [100, 100, 100, 300], [2.0, 4.0, 5.0, 1.0], [1, 3, 3, 0]),
        (2, "mem:rss", [50, 200], [6.0, 3.0], [4, 2]),
    ]


@pytest.mark.skipif(compiled.slice_kernels is None, reason="the compiled loops are not built")
def test_compiled_bucket_min_max_is_numpys(monkeypatch) -> None:
    """slice_kernels.range_min_max against the numpy reduceats: random samples with NaNs and signed zeros
    cut at random pixel edges, runs that end at the last sample, empty runs (any value: only the others
    compared); a run past the samples raises instead of reading outside them."""
    rng = np.random.default_rng(5)
    for n in (1, 2, 17, 5000):
        v = rng.normal(0, 10, n).round()
        v[rng.random(n) < 0.02] = np.nan
        v[rng.random(n) < 0.05] = -0.0
        ts = np.sort(rng.integers(0, 1000, n))  # the runs as lod finds them: pixel edges searched in times
        edges = np.sort(rng.integers(-50, 1100, 301))
        first = np.maximum(np.searchsorted(ts, edges[:-1], "right") - 1, 0)
        stop = np.searchsorted(ts, edges[1:], "left")
        assert (stop == n).any() and (stop <= first).any()
        got = _bucket_min_max(v, first, stop)
        monkeypatch.setattr(compiled, "slice_kernels", None)
        want = _bucket_min_max(v, first, stop)
        monkeypatch.undo()
        valid = stop > first
        for g, w in zip(got, want, strict=True):
            np.testing.assert_array_equal(g[valid], w[valid])
    kernels = compiled.slice_kernels
    for first, stop in (([0], [6]), ([-1], [2]), ([7], [3])):
        with pytest.raises(ValueError, match="out of range"):
            kernels.range_min_max(np.zeros(5), np.array(first, np.int64), np.array(stop, np.int64), np.empty(1),
                                  np.empty(1))  # fmt: skip


@pytest.mark.skipif(compiled.slice_kernels is None, reason="the compiled loops are not built")
def test_compiled_min_max_of_runs_of_every_length_and_alignment() -> None:
    """The vector loop of slice_kernels' min/max scan (four values a step, the rest one by one): runs of 0 to
    70 values from every alignment, with a NaN at each position a step can hold it (the run's min and max
    are NaN then), infinities and ties, each against numpy's min and max of the run."""
    kernels = compiled.slice_kernels
    rng = np.random.default_rng(11)
    v = rng.normal(0, 100, 400).round()
    v[rng.random(400) < 0.03] = np.inf
    v[rng.random(400) < 0.03] = -np.inf
    first = np.array([a for a in range(9) for _ in range(71)], np.int64)
    stop = first + np.tile(np.arange(71), 9)
    with_nan = v.copy()
    with_nan[[13, 14, 15, 16, 40, 41, 70, 131]] = np.nan
    for values in (v, with_nan):
        got_min, got_max = np.empty(len(first)), np.empty(len(first))
        kernels.range_min_max(values, first, stop, got_min, got_max)
        for k, (a, b) in enumerate(zip(first.tolist(), stop.tolist(), strict=True)):
            if b > a:
                assert np.array_equal(got_min[k], values[a:b].min(), equal_nan=True), (a, b)
                assert np.array_equal(got_max[k], values[a:b].max(), equal_nan=True), (a, b)


@pytest.mark.skipif(compiled.slice_kernels is None, reason="the compiled loops are not built")
@pytest.mark.parametrize("kind", ["walk", "uniform", "nan", "flat"])
def test_block_bounds_give_the_min_and_max_of_every_value(kind: str) -> None:
    """slice_kernels.range_min_max_blocks (whole blocks read from a series' block bounds, the ends of a run
    only where their block reaches past them) against range_min_max, which reads every value: runs from a
    sample to many blocks, at offsets, over random walks (extremes at the runs' ends), uniform noise, NaNs
    and infinities, and a flat series (every end skipped)."""
    from fxscope.core.trace.counters import BOUND_BLOCK, CounterSeries

    rng = np.random.default_rng(7)
    n = 20_000
    v = {"walk": rng.normal(0, 1, n).cumsum(), "uniform": rng.integers(0, 1000, n).astype(np.float64),
         "nan": rng.normal(0, 1, n), "flat": np.full(n, 3.0)}[kind]  # fmt: skip
    if kind == "nan":
        v[rng.random(n) < 0.001] = np.nan
        v[rng.random(n) < 0.001] = np.inf
        v[rng.random(n) < 0.001] = -np.inf
    series = CounterSeries(1, "c", 0, "v", np.arange(n, dtype=np.int64), v, np.arange(n, dtype=np.int32))
    series._bounds = None
    bmin, bmax = series.block_bounds()
    assert len(bmin) == -(-n // BOUND_BLOCK)
    kernels = compiled.slice_kernels
    for offset, runs in ((0, 400), (1, 400), (63, 400), (64, 400), (5000, 400), (0, 12), (1, 20), (63, 9), (5000, 7)):
        # (400 runs: ~50 values each, scanned; 7-20: ~1000-2000, past slice_kernels' BOUNDS_FROM_BLOCKS, read
        # through the bounds)
        m = n - offset
        cuts = np.sort(rng.integers(0, m + 1, runs))
        first = np.maximum(cuts[:-1] - rng.integers(0, 2, runs - 1), 0)  # (runs that share their first value)
        stop = cuts[1:]
        got_min, got_max = np.empty(len(first)), np.empty(len(first))
        kernels.range_min_max_blocks(v, offset, BOUND_BLOCK, bmin, bmax, first, stop, got_min, got_max)
        want_min, want_max = np.empty(len(first)), np.empty(len(first))
        kernels.range_min_max(v[offset:], first, stop, want_min, want_max)
        valid = stop > first
        np.testing.assert_array_equal(got_min[valid], want_min[valid])
        np.testing.assert_array_equal(got_max[valid], want_max[valid])
    for offset, first, stop, block in ((0, [0], [n + 1], 64), (n - 5, [0], [6], 64), (n + 1, [0], [0], 64),
                                       (0, [-1], [2], 64), (0, [0], [6], 32)):  # fmt: skip
        with pytest.raises(ValueError):
            kernels.range_min_max_blocks(v, offset, block, bmin, bmax, np.array(first, np.int64),
                                         np.array(stop, np.int64), np.empty(1), np.empty(1))  # fmt: skip


@pytest.mark.skipif(compiled.slice_kernels is None, reason="the compiled loops are not built")
@pytest.mark.parametrize("kind", ["walk", "nan"])
def test_fine_bounds_are_numpys_min_and_max_of_each_block(kind: str) -> None:
    """CounterSeries.fine_bounds (slice_kernels.block_bounds: one pass) against np.min / np.max of each block
    of FINE_BLOCK values, with each block's first time: a series whose last block is short, NaNs and infinities (a block holding a NaN is
    NaN both ways); the kernel's own blocks of 1 and of more values than the series, and bad sizes refused."""
    from fxscope.core.trace.counters import BOUNDED_FROM, FINE_BLOCK, CounterSeries

    rng = np.random.default_rng(11)
    n = BOUNDED_FROM + 5
    v = rng.normal(0, 1, n).cumsum()
    if kind == "nan":
        v[rng.random(n) < 0.002] = np.nan
        v[rng.random(n) < 0.002] = np.inf
        v[rng.random(n) < 0.002] = -np.inf
    ts = np.sort(rng.integers(0, 10 * n, n)).astype(np.int64)
    series = CounterSeries(1, "c", 0, "v", ts, v, np.arange(n, dtype=np.int32))
    fmin, fmax, tsample = series.fine_bounds()
    np.testing.assert_array_equal(tsample, ts[::FINE_BLOCK])  # (the first time of each fine block)
    padded = np.concatenate([v, np.full(-n % FINE_BLOCK, v[-1])]).reshape(-1, FINE_BLOCK)
    np.testing.assert_array_equal(fmin, padded.min(axis=1))
    np.testing.assert_array_equal(fmax, padded.max(axis=1))
    assert series.fine_bounds()[0] is fmin  # (made once)
    short = np.arange(100, dtype=np.int64)
    assert CounterSeries(1, "c", 0, "v", short, v[:100], short.astype(np.int32)).fine_bounds() is None
    kernels = compiled.slice_kernels
    for block in (1, n + 3):
        m = -(-n // block)
        lo, hi = np.empty(m), np.empty(m)
        kernels.block_bounds(v, block, lo, hi)
        np.testing.assert_array_equal(lo, v if block == 1 else [v.min()])
        np.testing.assert_array_equal(hi, v if block == 1 else [v.max()])
    for block, m in ((0, 1), (8, len(fmin) - 1), (-1, 1)):
        with pytest.raises(ValueError):
            kernels.block_bounds(v, block, np.empty(max(m, 0)), np.empty(max(m, 0)))


def test_lod_of_a_long_series_reads_its_block_bounds(lod_paths) -> None:
    """A series long enough for block bounds gives the same pixels as the brute force, zoomed out (pixels
    of hundreds of samples: whole blocks read from the bounds) and in; short series have none."""
    from fxscope.core.trace.counters import BOUNDED_FROM, CounterSeries, CounterSet

    rng = np.random.default_rng(3)
    n = BOUNDED_FROM + 777
    ts = np.sort(rng.integers(0, 10 * n, n)).astype(np.int64)
    v = rng.normal(0, 1, n).cumsum().round(2)
    s = CounterSeries(1, "c", 0, "v", ts, v, np.arange(n, dtype=np.int32))
    cs = CounterSet([s])
    for t0, t1, bucket in ((0, 10 * n, 10 * n / 97), (0, 10 * n, 10 * n / 11), (-500, 10 * n + 500, 3_000.0),
                           (n, 3 * n, 700.5), (n, n + 300, 7.0)):  # fmt: skip
        got = expand(*cs.lod(0, t0, t1, bucket), t0, t1, bucket)
        assert got == brute_force_lod(ts, v, t0, t1, bucket), (t0, t1, bucket)
    assert s.block_bounds() is not None
    assert CounterSeries(1, "c", 0, "v", ts[:100], v[:100], np.arange(100, dtype=np.int32)).block_bounds() is None


@pytest.mark.skipif(compiled.slice_kernels is None, reason="the compiled loops are not built")
@pytest.mark.parametrize("n", [50, 20_000])
def test_compiled_lod_runs_give_numpys_entries(monkeypatch, n: int) -> None:
    """CounterSet.lod with slice_kernels.lod_runs (min, max, last value and the runs of equal pixels in one
    pass) gives the numpy path's entries: plateaus merged, NaNs never merged, -0.0 and 0.0 equal, windows
    anchored and not, zoomed out (block bounds: the long series) and in."""
    from fxscope.core.trace.counters import CounterSeries, CounterSet

    rng = np.random.default_rng(n)
    ts = np.sort(rng.integers(0, 50 * n, n)).astype(np.int64)
    v = np.repeat(rng.integers(-3, 4, n // 10 + 1).astype(np.float64), 10)[:n]  # plateaus
    v[rng.random(n) < 0.01] = np.nan
    v[rng.random(n) < 0.05] = -0.0
    cs = CounterSet([CounterSeries(1, "c", 0, "v", ts, v, np.arange(n, dtype=np.int32))])
    for t0, t1, bucket, anchor in ((0, 50 * n, 50 * n / 300, None), (-77, 50 * n + 3, 97.5, 0), (n, 9 * n, 13.0, 5),
                                   (3 * n, 3 * n + 400, 1.0, None)):  # fmt: skip
        got = cs.lod(0, t0, t1, bucket, anchor=anchor)
        monkeypatch.setattr(compiled, "slice_kernels", None)
        want = cs.lod(0, t0, t1, bucket, anchor=anchor)
        monkeypatch.undo()
        for g, w in zip(got, want, strict=True):
            np.testing.assert_array_equal(g, w)  # (-0.0 equals 0.0: the same pixel; NaNs at the same places)


@pytest.mark.skipif(compiled.slice_kernels is None, reason="the compiled loops are not built")
def test_compiled_lod_runs_refuse_runs_outside_the_values() -> None:
    """lod_runs reads nothing outside its buffers: runs past the values, a bad offset, block or bounds raise."""
    kernels = compiled.slice_kernels
    v, out = np.zeros(100), [np.empty(1, np.int64), np.empty(1), np.empty(1), np.empty(1)]
    bmin = bmax = np.zeros(2)
    for offset, block, first, stop, bounds in ((0, 64, [0], [101], (bmin, bmax)), (50, 64, [0], [51], (bmin, bmax)),
                                               (101, 64, [0], [0], (bmin, bmax)), (0, 64, [-1], [3], (bmin, bmax)),
                                               (0, 32, [0], [5], (bmin, bmax)), (0, -1, [0], [5], (bmin, bmax))):  # fmt: skip
        with pytest.raises(ValueError):
            kernels.lod_runs(v, offset, block, *bounds, np.array(first, np.int64), np.array(stop, np.int64), *out)
    assert kernels.lod_runs(v, 0, 0, np.zeros(0), np.zeros(0), np.array([0], np.int64), np.array([5], np.int64), *out) == 1
