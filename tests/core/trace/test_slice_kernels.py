"""The model build's compiled loops (core/trace/slice_kernels.c) build exactly what the numpy paths build:
the same slice table (every column and dtype), lanes, LOD pyramids (thread slices, async spans, CPU and
thread-state lanes), instants and density, on the third-party traces, the demo, generated traces, hypothesis-made
event lists (unmatched ends, overlaps, time going backwards, deep stacks) and mutated traces; and the
extension refuses out-of-range input instead of reading outside a buffer."""

from __future__ import annotations

import random
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from fxscope.core.synthetic_trace import generate_trace
from fxscope.core.trace import compiled
from fxscope.core.trace.lod import SlicePyramid
from fxscope.core.trace.model import TraceModel
from fxscope.formats.errors import FormatError
from fxscope.formats.fxt.columns import EventKind as K
from fxscope.formats.fxt.reader import read_fxt_bytes
from fxscope.formats.fxt.writer import FxtWriter

DEMO = Path(__file__).resolve().parents[3] / "resources" / "demo" / "demo.fxt"
KERNELS = compiled.slice_kernels


def test_extension_is_built():
    """The install built the extension (CI and a developer machine have a C compiler): without it the
    model of a large trace builds at the numpy fallback's speed."""
    assert KERNELS is not None, "fxscope.core.trace.slice_kernels was not built: pip install -e . with gcc"
    for name in ("duration_threads", "thread_counts", "scatter_threads", "match_threads", "lane_rows", "pyramid", "density",
                 "group_by_thread_time"):
        assert callable(getattr(KERNELS, name))


def _model(cols, kernels) -> tuple[TraceModel | str, dict]:
    """The model of ``cols`` built with ``kernels`` (None: the numpy paths), and what its tables hold."""
    saved = compiled.slice_kernels
    compiled.slice_kernels = kernels
    try:
        try:
            m = TraceModel(cols)
            m.build_slice_tables()  # (the slices and tracks: built on first use, here)
        except Exception as e:  # noqa: BLE001 - both paths must fail alike on hostile input
            return f"{type(e).__name__}: {e}", {}
        lanes = m.lanes.get()
        out = {f"slices.{f}": np.asarray(getattr(m.slices, f)) for f in
               ("ts", "dur", "thread", "depth", "name", "category", "event", "flags", "parent")}  # fmt: skip
        out["lanes.rows"], out["lanes.starts"] = lanes.rows, lanes.starts
        out["lanes.by_depth"] = {t: [r.tolist() for r in rows] for t, rows in lanes.by_depth.items()}
        inst = m.instants
        out.update({f"instants.{f}": np.asarray(getattr(inst, f)) for f in ("ts", "thread", "pid", "name", "event")})
        out["instants.scoped"] = [inst.scoped(scope).tolist() for scope in (0, 1, 2)]
        out["density"] = m.density(1000)
        out["density7"] = m.density(7)
        pyramids = {"slices": m.pyramid, "cpu": m.sched_pyramid("cpu")[0], "state": m.sched_pyramid("state")[0],
                    "async": m.async_pyramid[0]}  # fmt: skip
        for name, p in pyramids.items():
            out.update(_pyramid_fields(name, p))
        return m, out
    finally:
        compiled.slice_kernels = saved


def _pyramid_fields(name: str, p: SlicePyramid) -> dict:
    out: dict = {f"{name}.levels": len(p.levels)}
    for i, level in enumerate(p.levels):
        for f in ("shift", "bucket", "row", "count", "lane_ptr"):
            out[f"{name}.{i}.{f}"] = getattr(level, f)
        out[f"{name}.{i}.long_rows"] = {k: (v.dtype.str, v.tolist()) for k, v in level.long_rows.items()}
        out[f"{name}.{i}.long_end_max"] = {k: (v.dtype.str, v.tolist()) for k, v in level.long_end_max.items()}
    return out


def _assert_same(a: dict, b: dict) -> None:
    assert a.keys() == b.keys()
    for key, x in a.items():
        y = b[key]
        if isinstance(x, np.ndarray):
            assert x.dtype == y.dtype, (key, x.dtype, y.dtype)
            assert np.array_equal(x, y), key
        else:
            assert x == y, key


def assert_same_model(cols) -> TraceModel | None:
    """Both paths build the same model of ``cols`` (or fail with the same error); the compiled one's model."""
    assert KERNELS is not None
    ma, a = _model(cols, KERNELS)
    mb, b = _model(cols, None)
    if isinstance(ma, str) or isinstance(mb, str):
        assert ma == mb
        return None
    _assert_same(a, b)
    return ma


def _corpus(testdata: Path) -> list[bytes]:
    files = sorted((testdata / "fxt").glob("*.fxt"))
    assert files, "no FXT traces in the test corpus"
    return [p.read_bytes() for p in files] + [DEMO.read_bytes()]


def test_same_model_of_real_traces_and_the_demo(testdata):
    slices = 0
    for data in _corpus(testdata):
        m = assert_same_model(read_fxt_bytes(data))
        assert m is not None
        slices += len(m.slices)
    assert slices > 20_000


def test_same_model_of_generated_traces():
    """Thousands of slices per thread, scheduling, async spans, a start hours after boot."""
    for data in (generate_trace(60_000), generate_trace(20_000, seed=4, scheduling=True, start_ns=1 << 40)):
        m = assert_same_model(read_fxt_bytes(data))
        assert m is not None and len(m.slices) > 4_000 and int(m.slices.depth.max()) >= 1


def test_same_model_of_truncated_and_mutated_traces(testdata, cut_and_flip):
    """Hostile variants (cut anywhere, bytes overwritten: kinds, timestamps, threads): 300+ models."""
    rng = random.Random(18)
    cases = 0
    sources = [*_corpus(testdata)[-2:], generate_trace(400, seed=3), generate_trace(400, seed=5, scheduling=True)]
    for data in sources:
        for _ in range(80):
            try:
                cols = read_fxt_bytes(cut_and_flip(data, rng, 6, len(data) // 2))
            except FormatError:
                continue
            assert_same_model(cols)
            cases += 1
    assert cases >= 300


def _trace(events: list[tuple]) -> bytes:
    w = FxtWriter()
    w.initialization(1_000_000_000)
    for kind, ts, thread, name, *rest in events:
        w.event(kind, ts, thread, "cat", name, data=rest[0] if rest else None)
    return w.getvalue()


EVENTS = st.lists(
    st.tuples(
        st.integers(0, 3),  # thread
        st.one_of(st.integers(0, 60), st.integers(-(1 << 62), 1 << 62)),  # time: small ties, or anywhere
        st.sampled_from([K.DURATION_BEGIN, K.DURATION_END, K.DURATION_COMPLETE, K.INSTANT, K.INSTANT]),
        st.one_of(st.integers(-5, 30), st.integers(0, 1 << 62)),  # a complete event's length
    ),
    min_size=1,
    max_size=60,
)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(EVENTS, st.booleans())
def test_same_model_of_hostile_event_lists(spec, in_time_order) -> None:
    """Unmatched ends, unclosed begins, overlapping and zero- or negative-length complete events, ties,
    timestamps anywhere in int64 (the pyramid's origin then far from some starts), in file order or in
    time order per thread (the replay's merge of complete events' ends, or its sort)."""
    if in_time_order:
        spec = sorted(spec, key=lambda e: e[1])
    events = []
    for order, (thread, ts, kind, length) in enumerate(spec):
        end = [max(min(ts + length, (1 << 63) - 1), -(1 << 63))] if kind == K.DURATION_COMPLETE else []
        if kind == K.INSTANT:
            end = [length % 3]  # its scope: thread, process or global
        events.append((kind, ts, (1, 100 + thread), f"e{order % 5}", *end))
    assert_same_model(read_fxt_bytes(_trace(events)))


@settings(max_examples=300, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 2), st.sampled_from([K.DURATION_BEGIN, K.DURATION_END, K.DURATION_COMPLETE]),
                          st.integers(0, 1)), min_size=2, max_size=40))  # fmt: skip
def test_same_model_of_slices_tied_at_a_few_timestamps(spec) -> None:
    """Many slices starting (and ending) at the same time on one thread: the parent among equal starts
    is the longest, the last of equally long ones; rows of equal start sorted by depth, stably."""
    events = []
    for order, (ts, kind, length) in enumerate(spec):
        end = [ts + length] if kind == K.DURATION_COMPLETE else []
        events.append((kind, ts, (1, 2), f"e{order}", *end))
    assert_same_model(read_fxt_bytes(_trace(events)))


def test_parent_of_equally_long_slices_starting_together_is_the_last():
    """X and Y both [5, 5] at depth 0, Z inside Y: Z's parent is Y (the last of the equally long)."""
    events = [(K.DURATION_BEGIN, 5, (1, 2), "x"), (K.DURATION_END, 5, (1, 2), "x"),
              (K.DURATION_BEGIN, 5, (1, 2), "y"), (K.DURATION_BEGIN, 5, (1, 2), "z"),
              (K.DURATION_END, 5, (1, 2), "z"), (K.DURATION_END, 5, (1, 2), "y")]  # fmt: skip
    m = assert_same_model(read_fxt_bytes(_trace(events)))
    assert m is not None
    names = [m.name_of(i) for i in range(len(m.slices))]
    assert names == ["x", "y", "z"] and m.slices.parent.tolist() == [-1, -1, 1]


def test_same_model_of_a_stack_deeper_than_the_depth_column():
    """70,000 nested begins (depths past uint16, parents by the true level), then ends for half of them,
    and an unmatched end on another thread."""
    n = 70_000
    events = [(K.DURATION_BEGIN, i, (1, 2), "b") for i in range(n)]
    events += [(K.DURATION_END, n + i, (1, 2), "b") for i in range(n // 2)]
    events += [(K.DURATION_END, 5, (1, 3), "u"), (K.DURATION_BEGIN, 6, (1, 3), "v")]
    m = assert_same_model(read_fxt_bytes(_trace(events)))
    assert m is not None and len(m.slices) == n + 2


@settings(max_examples=200, deadline=None)
@given(
    st.lists(st.tuples(st.integers(0, 4), st.one_of(st.integers(-50, 3000), st.integers(-(1 << 62), 1 << 62)),
                       st.one_of(st.integers(0, 400), st.integers(0, 1 << 62))), min_size=1, max_size=80),
    st.one_of(st.integers(-100, 100), st.integers(-(1 << 62), 1 << 62)),
    st.one_of(st.integers(1, 5000), st.integers(1, (1 << 63) - 1)),
    st.booleans(),
)  # fmt: skip
def test_same_pyramid_of_hostile_lanes(spec, origin, span, as_difference) -> None:
    """Starts before the origin (buckets not ascending in a lane), durations past every bucket, spans up to
    2**63 (levels whose long threshold passes int64), durations given as a difference of two columns."""
    lane = np.array([s[0] for s in spec], np.int32)
    ts = np.array([s[1] for s in spec], np.int64)
    dur = np.array([s[2] for s in spec], np.int64)
    d = dur
    if as_difference:
        from fxscope.core.trace.gathered import Difference

        d = Difference(ts + dur, ts)
    built = {}
    for name, k in (("compiled", KERNELS), ("numpy", None)):
        saved = compiled.slice_kernels
        compiled.slice_kernels = k
        try:
            built[name] = _pyramid_fields("p", SlicePyramid(ts, d, lane, 5, origin, span))
        finally:
            compiled.slice_kernels = saved
    _assert_same(built["compiled"], built["numpy"])


def test_pyramid_lanes_out_of_range_or_unsorted_take_the_numpy_path():
    """Lanes past n_lanes or an order not by lane: the compiled loops refuse them (ValueError) and the
    pyramid is the numpy path's."""
    ts = np.arange(10, dtype=np.int64) * 100
    dur = np.full(10, 50, np.int64)
    lane = np.array([0, 0, 1, 1, 2, 2, 3, 3, 4, 4], np.int32)
    state = np.zeros((1, 8), np.int64)
    shifts = np.array([4], np.int64)
    with pytest.raises(ValueError):
        KERNELS.pyramid(np.arange(10, dtype=np.int32), False, ts, dur, None, lane, 3, 0, shifts, 0, 10, state)
    with pytest.raises(ValueError):
        KERNELS.pyramid(np.arange(10, dtype=np.int32)[::-1].copy(), False, ts, dur, None, lane, 5, 0, shifts, 0, 10,
                        state)  # fmt: skip
    with pytest.raises(ValueError):  # a row past the columns
        KERNELS.pyramid(np.array([0, 11], np.int32), False, ts, dur, None, lane, 5, 0, shifts, 0, 2, state)
    with pytest.raises(ValueError):  # b past the order
        KERNELS.pyramid(np.arange(10, dtype=np.int32), False, ts, dur, None, lane, 5, 0, shifts, 0, 11, state)
    state[:] = 0
    KERNELS.pyramid(np.arange(10, dtype=np.int32), False, ts, dur, None, lane, 5, 0, shifts, 0, 10, state)
    assert state[0, 0] == 10  # ten buckets of 16 ns, one slice each
    with pytest.raises(ValueError):  # outputs smaller than the entries counted
        st2 = state.copy()
        st2[:, [0, 1, 3]] = 0
        KERNELS.pyramid(np.arange(10, dtype=np.int32), False, ts, dur, None, lane, 5, 0, shifts, 0, 10, st2,
                        np.empty(3, np.int32), np.empty(3, np.int32), np.empty(3, np.uint16), np.empty(0, np.int32),
                        np.empty(0, np.int64), np.empty((1, 6), np.int64))  # fmt: skip
    built = {}
    for name, k in (("compiled", KERNELS), ("numpy", None)):
        saved = compiled.slice_kernels
        compiled.slice_kernels = k
        try:
            built[name] = _pyramid_fields("p", SlicePyramid(ts, dur, lane, 5, 0, 1000, order=np.arange(10)[::-1].copy()))
        finally:
            compiled.slice_kernels = saved
    _assert_same(built["compiled"], built["numpy"])


def _grouped(kind, ts, thread, crow, cend, lo=0, n_keys=8, block=2):
    """thread_counts, then scatter_threads a ``block`` of rows at a time (the model's blocks of times)."""
    width = thread.dtype.itemsize
    ptr, cptr = np.empty(n_keys + 1, np.int64), np.empty(n_keys + 1, np.int64)
    n, _ = KERNELS.thread_counts(kind, thread, width, lo, ptr, cptr)
    order, ts_g, kind_g = np.empty(n, np.int32), np.empty(n, np.int64), np.empty(n, np.uint8)
    cend_g = np.empty(len(crow), np.int64)
    nxt, cnxt, j = ptr[:-1].copy(), cptr[:-1].copy(), 0
    for a in range(0, len(kind), block):
        j = KERNELS.scatter_threads(kind, thread, width, lo, a, ts[a : a + block], crow, cend, j, nxt, cnxt, order,
                                    ts_g, kind_g, cend_g)  # fmt: skip
    assert j == len(crow) and nxt.tolist() == ptr[1:].tolist() and cnxt.tolist() == cptr[1:].tolist()
    return order, ptr, ts_g, kind_g, cend_g, cptr


def test_thread_grouping_by_blocks_and_by_one_byte_codes():
    """The grouping is the same whatever the block of rows scattered at once, and by int16 thread values or
    by the uint8 codes of a one-byte code column (values ascending with the codes): each thread's duration
    events in file order, the threads in order."""
    rng = np.random.default_rng(7)
    n = 500
    kind = rng.integers(0, 6, n).astype(np.uint8)
    ts = rng.integers(0, 1000, n).astype(np.int64)
    thread = rng.integers(0, 5, n).astype(np.int16)
    crow = np.flatnonzero(kind == 4).astype(np.int32)
    cend = ts[crow] + 5
    whole = _grouped(kind, ts, thread, crow, cend, n_keys=5, block=n)
    sel = np.flatnonzero((kind >= 2) & (kind <= 4))
    expect = sel[np.argsort(thread[sel], kind="stable")]
    assert whole[0].tolist() == expect.tolist() and whole[2].tolist() == ts[expect].tolist()
    assert whole[5][-1] == len(crow) and whole[1].tolist() == [0, *np.cumsum(np.bincount(thread[sel])).tolist()]
    for block in (1, 7, 64):
        got = _grouped(kind, ts, thread, crow, cend, n_keys=5, block=block)
        assert all(np.array_equal(x, y) for x, y in zip(got, whole, strict=True))
    codes = _grouped(kind, ts, thread.astype(np.uint8), crow, cend, n_keys=256, block=33)
    for k in (0, 2, 3, 4):
        assert np.array_equal(codes[k], whole[k])
    assert np.array_equal(codes[1][:6], whole[1]) and (codes[1][6:] == whole[1][-1]).all()


def test_slice_kernels_refuse_rows_threads_and_sizes_out_of_range():
    kind = np.array([2, 3, 4, 0, 2], np.uint8)
    ts = np.array([1, 2, 3, 4, 5], np.int64)
    thread = np.array([0, 0, 1, 1, 7], np.int16)
    crow, cend = np.array([2], np.int32), np.array([9], np.int64)
    assert KERNELS.duration_threads(kind, thread, False) == (4, 1, 0, 7)
    with pytest.raises(ValueError):  # thread values past ptr
        _grouped(kind, ts, thread, crow, cend, n_keys=2)
    with pytest.raises(ValueError):  # complete ends not those of the complete events
        _grouped(kind, ts, thread, np.array([1], np.int32), cend)
    ptr9, cptr9 = np.empty(9, np.int64), np.empty(9, np.int64)
    with pytest.raises(ValueError):  # a width other than 1, 2, 4
        KERNELS.thread_counts(kind, thread, 3, 0, ptr9, cptr9)
    with pytest.raises(ValueError):  # a thread below lo
        KERNELS.thread_counts(kind, thread, 2, 1, ptr9, cptr9)
    assert KERNELS.thread_counts(kind, thread, 2, 0, ptr9, cptr9) == (4, 1)

    def scatter(start=0, block=ts, order_size=4, j=0, nxt=None, cnxt=None):
        return KERNELS.scatter_threads(kind, thread, 2, 0, start, block, crow, cend, j,
                                       ptr9[:-1].copy() if nxt is None else nxt,
                                       cptr9[:-1].copy() if cnxt is None else cnxt, np.empty(order_size, np.int32),
                                       np.empty(order_size, np.int64), np.empty(order_size, np.uint8),
                                       np.empty(1, np.int64))  # fmt: skip

    assert scatter() == 1
    with pytest.raises(ValueError):  # order of the wrong size: a slot past it
        scatter(order_size=3)
    with pytest.raises(ValueError):  # rows past the columns
        scatter(start=1)
    with pytest.raises(ValueError):  # a cursor past the outputs
        scatter(nxt=np.full(8, 9, np.int64))
    with pytest.raises(ValueError):  # a negative cursor
        scatter(nxt=np.full(8, -1, np.int64))
    with pytest.raises(ValueError):  # the complete events past crow
        scatter(j=1)
    with pytest.raises(ValueError):  # a complete event's cursor past cend_g
        scatter(cnxt=np.full(8, 1, np.int64))
    grouped = _grouped(kind, ts, thread, crow, cend)
    order, ptr, ts_g, kind_g, cend_g, cptr = grouped
    assert order.tolist() == [0, 1, 2, 4] and ptr.tolist() == [0, 2, 3, 3, 3, 3, 3, 3, 4]
    assert ts_g.tolist() == [1, 2, 3, 5] and kind_g.tolist() == [2, 3, 4, 2] and cend_g.tolist() == [9]
    assert cptr.tolist() == [0, 0, 1, 1, 1, 1, 1, 1, 1]
    out = [np.empty(3, t) for t in (np.int64, np.int64, np.uint16, np.int32, np.uint8, np.int32)]
    assert KERNELS.match_threads(*grouped, 0, 8, 10, *out, 0) == (3, 8, 0)
    alone = [c.copy() for c in out]
    for scratch in (np.empty(KERNELS.match_scratch(2), np.uint8), np.empty(1, np.uint8)):  # (too small: its own)
        out = [np.zeros(3, t) for t in (np.int64, np.int64, np.uint16, np.int32, np.uint8, np.int32)]
        assert KERNELS.match_threads(*grouped, 0, 8, 10, *out, 0, scratch) == (3, 8, 0)
        assert all(np.array_equal(x, y) for x, y in zip(out, alone, strict=True))
    with pytest.raises((TypeError, BufferError)):  # a read-only scratch
        KERNELS.match_threads(*grouped, 0, 8, 10, *out, 0, b"x" * 1000)
    with pytest.raises(ValueError):
        KERNELS.match_scratch(-1)
    bad_kind = kind_g.copy()
    bad_kind[1] = 0  # an instant among the duration events
    with pytest.raises(ValueError):
        KERNELS.match_threads(order, ptr, ts_g, bad_kind, cend_g, cptr, 0, 8, 10, *out, 0)
    with pytest.raises(ValueError):  # ptr past the order
        KERNELS.match_threads(order, np.array([0, 9], np.int64), ts_g, kind_g, cend_g, np.array([0, 0], np.int64), 0,
                              1, 10, *out, 0)  # fmt: skip
    with pytest.raises(ValueError):  # a thread's complete events not those of cptr
        KERNELS.match_threads(order, ptr, ts_g, kind_g, cend_g, np.zeros(9, np.int64), 0, 8, 10, *out, 0)
    with pytest.raises(ValueError):  # key_end past the threads
        KERNELS.match_threads(*grouped, 0, 9, 10, *out, 0)
    # a table of one row: thread 0 (one slice) fits, thread 1 (one more) does not: it stops there, asking 1
    small = [np.empty(1, t) for t in (np.int64, np.int64, np.uint16, np.int32, np.uint8, np.int32)]
    assert KERNELS.match_threads(*grouped, 0, 8, 10, *small, 0) == (1, 1, 1)
    with pytest.raises(ValueError):  # an event row past the threads column
        KERNELS.lane_rows(thread, 2, np.array([0, 5], np.int32), np.zeros(2, np.uint16), np.empty(2, np.int32),
                          np.empty(2, np.int64))  # fmt: skip
    with pytest.raises(ValueError):  # threads not ascending
        KERNELS.lane_rows(thread, 2, np.array([4, 0], np.int32), np.zeros(2, np.uint16), np.empty(2, np.int32),
                          np.empty(2, np.int64))  # fmt: skip
    with pytest.raises(ValueError):  # a thread past the keys, outputs of the wrong size
        KERNELS.group_by_thread_time(kind, ts, thread, False, 0, 0, 1, np.empty(1, np.int32), np.empty(1, np.int64),
                                     np.empty(1, np.int32))  # fmt: skip
    with pytest.raises(ValueError):
        KERNELS.group_by_thread_time(kind, ts, thread, False, 0, 0, 2, np.empty(2, np.int32), np.empty(1, np.int64),
                                     np.empty(2, np.int32))  # fmt: skip
    with pytest.raises(ValueError):
        KERNELS.density(ts, 0, 1.0, np.empty(0, np.int64))


def test_density_of_timestamps_out_of_range_matches_numpy():
    """Timestamps whose distance from the start passes int64 (wrapping) or makes the bin's float leave
    int64's range: the bins numpy's conversion gives."""
    ts = np.array([-(1 << 63), -5, 0, 3, (1 << 62), (1 << 63) - 1], np.int64)
    for start, scale in ((-(1 << 63), 1e-15), (0, 1e3), (5, 1e10), (-(1 << 62), 2.5e-16)):
        counts = np.zeros(1000, np.int64)
        KERNELS.density(ts, start, scale, counts)
        with np.errstate(all="ignore"):
            ref = np.bincount(((ts - start) * scale).astype(np.int64).clip(0, 999), minlength=1000)
        assert np.array_equal(counts, ref), (start, scale)
    # blocks of ascending times (counted a block at once where the first and last share a bin) crossing
    # the wrap of ts - start and the float's range, in time order and not
    rng = np.random.default_rng(18)
    for _ in range(200):
        ts = np.sort(rng.integers(-(1 << 63), (1 << 63) - 1, 700, dtype=np.int64))
        ts[rng.integers(0, 700, 5)] = rng.integers(-(1 << 63), (1 << 63) - 1, 5, dtype=np.int64)
        ts[100:400] = np.sort(rng.integers(-50, 50, 300)) * rng.choice([1, 1 << 40, 1 << 60])
        start = int(rng.choice([ts.min(), 0, -(1 << 62), int(rng.integers(-(1 << 63), (1 << 63) - 1))]))
        scale = float(rng.choice([1e-16, 1e-9, 1.0, 1e6, -1.0, 5e-19]))
        bins = int(rng.choice([1, 7, 1000]))
        counts = np.zeros(bins, np.int64)
        KERNELS.density(ts, start, scale, counts)
        with np.errstate(all="ignore"):
            ref = np.bincount(((ts - start) * scale).astype(np.int64).clip(0, bins - 1), minlength=bins)
        assert np.array_equal(counts, ref), (start, scale, bins)


def test_same_model_when_the_times_are_grouped_in_many_blocks(monkeypatch):
    """The compiled build reads the event times a block at a time (the next block on a worker thread) and
    counts the overview's density block by block: small blocks give the numpy path's model too."""
    from fxscope.core.trace import slices

    cols = read_fxt_bytes(generate_trace(20_000, seed=6, scheduling=True))
    monkeypatch.setattr(slices, "GROUP_BLOCK", 997)
    assert len(cols.ev_kind) > 20 * slices.GROUP_BLOCK
    m = assert_same_model(cols)
    assert m is not None and m._density_read is None  # (the density counted while the model was built, taken)


def test_same_model_when_the_matched_threads_pages_are_released(monkeypatch):
    """The compiled build takes back the pages of the grouped events of the threads already matched (one
    thread a step here) and moves them under the table's rows still to be written (RecycledPages): the rows
    still to match are untouched, the model is the numpy path's; where the pages cannot be moved they are
    released instead, with the same model."""
    from fxscope.core import released_rows
    from fxscope.core.trace import slices

    given: list[int] = []
    moved: list[int] = []

    class Counting(released_rows.RecycledPages):
        def give(self, array, start, stop):
            given.append(super().give(array, start, stop))
            return given[-1]

        def fill(self, array, start, stop):
            moved.append(super().fill(array, start, stop))
            return moved[-1]

    monkeypatch.setattr(slices, "RecycledPages", Counting)
    monkeypatch.setattr(slices, "BATCH_EVENTS", 100)  # (a step of one thread: a release after each)
    monkeypatch.setattr(slices, "RELEASE_EVENTS", 1000)
    cols = read_fxt_bytes(generate_trace(60_000, seed=8, scheduling=True, extra_threads=3))
    m = assert_same_model(cols)
    assert m is not None and len(m.processes) > 1
    assert sum(given) > 64 * 1024  # (pages were taken back while the later threads were matched)
    assert sum(moved) >= 4 * 4096  # (and moved under the table's rows written after)
    given.clear()
    monkeypatch.setattr(released_rows, "_mremap", None)  # (no mremap: released as before)
    assert assert_same_model(cols) is not None
    assert sum(given) > 64 * 1024


def test_lane_rows_of_one_byte_codes_as_of_their_values() -> None:
    """lane_rows takes a one-byte code column's codes (width 1: no 2-byte copy of every event's thread) and
    gives the lanes it gives for the codes' values; every event row is checked (hostile rows raise, never read
    past the codes), as are the width and threads out of order."""
    rng = np.random.default_rng(7)
    n_ev, n = 5000, 3000
    codes = np.sort(rng.integers(0, 200, n_ev)).astype(np.uint8)
    values = (np.arange(256) * 3 + 5).astype(np.int16)  # (ascending with the code)
    event = np.sort(rng.choice(n_ev, n, replace=False)).astype(np.int32)
    depth = rng.integers(0, 6, n).astype(np.uint16)

    def lanes(keys, width, ev=event):
        rows, starts = np.empty(len(ev), np.int32), np.empty(len(ev), np.int64)
        k = KERNELS.lane_rows(keys, width, ev, depth[: len(ev)], rows, starts)
        return rows.tolist(), starts[:k].tolist()

    assert lanes(codes, 1) == lanes(values[codes], 2) == lanes(values[codes].astype(np.int32), 4)
    for bad in (np.array([0, n_ev], np.int32), np.array([-1, 0], np.int32)):  # an event past the codes
        with pytest.raises(ValueError):
            lanes(codes, 1, bad)
    with pytest.raises(ValueError):  # threads not ascending
        lanes(codes[::-1].copy(), 1, np.array([0, n_ev - 1], np.int32))
    with pytest.raises(ValueError):  # no such width
        lanes(codes, 3)


@pytest.mark.parametrize("ascending", [True, False])
def test_model_lanes_from_codes_same_as_numpy(ascending: bool, monkeypatch) -> None:
    """The model's lanes over a one-byte thread code column (its codes handed to lane_rows as they are when
    its values ascend, decoded when not) are the numpy path's."""
    from fxscope.core.trace import model as model_module
    from fxscope.formats.fxt.coded_column import CodedColumn

    cols = read_fxt_bytes(generate_trace(20_000))
    thread = cols.ev_thread
    assert isinstance(thread, CodedColumn) and thread.index.dtype == np.uint8
    if not ascending:  # (the same threads, their codes in another order)
        perm = np.arange(len(thread.values))[::-1]
        inverse = np.argsort(perm)
        monkeypatch.setattr(cols, "ev_thread", CodedColumn(inverse[thread.index].astype(np.uint8),
                                                             thread.values[perm]))  # fmt: skip
    from fxscope.core.trace.slices import thread_keys

    assert (thread_keys(cols.ev_thread).dtype == np.uint8) == ascending  # (the codes as they are, or decoded)
    m = TraceModel(cols)
    m.build_slice_tables()
    compiled_lanes = model_module._lane_rows_compiled(m.slices)
    assert compiled_lanes is not None
    monkeypatch.setattr(compiled, "slice_kernels", None)
    numpy_lanes = model_module._Lanes(m.slices)
    assert np.array_equal(compiled_lanes[0], numpy_lanes.rows)
    assert np.array_equal(compiled_lanes[1], numpy_lanes.starts)
