"""ev_ts, read from the mapped file when indexed (EventTimes), gives each event's time as the spec defines it:
the record's second word in ticks of the provider in force at the record (T1), whichever way it is indexed,
in the compiled and the numpy read, on hostile and truncated input."""

from __future__ import annotations

import numpy as np
import pytest

from fxscope.core.synthetic_trace import generate_trace
from fxscope.core.trace.gathered import Gathered
from fxscope.formats.fxt import compiled
from fxscope.formats.fxt import mapped_column as mc
from fxscope.formats.fxt.columns import EventKind as K
from fxscope.formats.fxt.event_times import EventTimes
from fxscope.formats.fxt.reader import read_fxt, read_fxt_bytes
from fxscope.formats.fxt.writer import FxtWriter


def _trace(big_endian: bool = False) -> tuple[bytes, list[int]]:
    """Events at three tick rates and two providers, inline and indexed refs, and the times they must read as."""
    w = FxtWriter(big_endian=big_endian)
    w.thread(1, 10, 11)
    want = []
    w.event(K.INSTANT, 5, 1, "c", "n")  # no initialization yet: 1 tick = 1 ns (warned)
    want.append(5)
    w.event(K.COUNTER, 7, (3, 4), "inline cat", "inline name", data=1)
    want.append(7)
    w.initialization(2_000_000_000)  # 2 ticks a ns
    w.event(K.DURATION_BEGIN, 91, 1, "c", "n")
    want.append(45)  # 45.5 ns, truncated (T1)
    w.event(K.DURATION_END, 1 << 62, 1, "c", "n")
    want.append((1 << 62) // 2)
    w.provider_info(2, "second")
    w.initialization(3)  # 3 ticks a second
    w.thread(1, 10, 12)
    w.event(K.DURATION_COMPLETE, 10, 1, "c", "n", data=20)
    want.append(10 * 10**9 // 3)
    w.provider_section(1)  # a provider never initialized (the first was the implicit one): 1 tick = 1 ns
    w.event(K.INSTANT, 1000, 1, "c", "n")
    want.append(1000)
    return w.getvalue(), want


def _read(data: bytes, numpy_only: bool):
    saved = compiled.record_scan
    if numpy_only:
        compiled.record_scan = None
    try:
        return read_fxt_bytes(data)
    finally:
        compiled.record_scan = saved


@pytest.mark.parametrize("numpy_only", [False, True])
@pytest.mark.parametrize("big_endian", [False, True])
def test_times_at_every_rate(big_endian, numpy_only):
    data, want = _trace(big_endian)
    cols = _read(data, numpy_only)
    assert isinstance(cols.ev_ts, EventTimes)
    assert np.asarray(cols.ev_ts).tolist() == want
    assert cols.ev_ts.nbytes == 0  # nothing stored
    assert cols.n_events == len(want)


def test_every_way_of_indexing(fxt_loops):
    data, want = _trace()
    col = read_fxt_bytes(data).ev_ts
    ref = np.array(want, np.int64)
    assert len(col) == len(ref) and col.shape == ref.shape and col.dtype == np.int64
    assert col[0] == ref[0] and col[-1] == ref[-1] and isinstance(col[3], np.int64)
    assert col[np.int32(2)] == ref[2]
    for key in (slice(None), slice(1, 5), slice(2, 9, 3), slice(None, None, -1), slice(4, 1), slice(-3, None)):
        got = col[key]
        assert got.dtype == np.int64 and np.array_equal(got, ref[key]), key
    mask = np.arange(len(ref)) % 2 == 0
    assert np.array_equal(col[mask], ref[mask])
    rows = np.array([5, 0, 4, 4, -1])
    assert np.array_equal(col[rows], ref[rows])
    assert np.array_equal(col[rows.astype(np.uint16)[:4]], ref[rows[:4]])
    assert np.array_equal(col[[3, 1]], ref[[3, 1]])
    assert np.array_equal(col[np.array([[0, 1], [2, 3]])], ref[[[0, 1], [2, 3]]])
    assert len(col[np.zeros(0, np.int64)]) == 0
    assert col.tolist() == want and list(col) == want
    assert np.array_equal(col.astype(np.float64), ref.astype(np.float64))
    assert (col.min(), col.max()) == (ref.min(), ref.max())
    assert np.array_equal(Gathered(col, np.array([4, 0]))[:], ref[[4, 0]])
    assert np.array_equal(np.asarray(col, np.float64), ref.astype(np.float64))
    for bad in (len(ref), -len(ref) - 1):
        with pytest.raises(IndexError):
            col[bad]
    with pytest.raises(IndexError):
        col[np.array([0, len(ref)])]
    with pytest.raises(IndexError):
        col[np.ones(len(ref) + 1, bool)]
    with pytest.raises(IndexError):
        col[np.array([0.5])]


def test_an_empty_column_has_no_extremes():
    cols = read_fxt_bytes(FxtWriter().getvalue())
    assert len(cols.ev_ts) == 0 and np.asarray(cols.ev_ts).dtype == np.int64
    with pytest.raises(ValueError):
        cols.ev_ts.min()


@pytest.mark.parametrize("numpy_only", [False, True])
def test_a_generated_trace_matches_its_records(numpy_only, tmp_path):
    """Against a per-record reference: each event's time is its record's second word at its provider's rate,
    and the block reads of runs, rows and masks all agree (blocks made small so that many are read)."""
    path = tmp_path / "t.fxt"
    path.write_bytes(generate_trace(30_000, seed=5, scheduling=True))
    saved = compiled.record_scan
    if numpy_only:
        compiled.record_scan = None
    try:
        cols = read_fxt(path)
    finally:
        compiled.record_scan = saved
    words = np.frombuffer(path.read_bytes(), "<u8")
    tps = np.asarray(cols.ticks_per_second, dtype=object)[cols.ev_provider]
    rec = cols.ev_word.astype(np.int64)
    want = np.array([int(t) * 10**9 // int(r) for t, r in zip(words[rec + 1].tolist(), tps, strict=True)], np.int64)
    assert len(set(cols.ticks_per_second)) > 1 or cols.ticks_per_second[0] != 10**9  # (rates to convert)
    assert cols.ev_ts._minmax == (want.min(), want.max())  # found by the reader, block by block
    cols.ev_ts._minmax = None  # (and found again by a pass over the column, below)
    block = mc.BLOCK
    mc.BLOCK = 1000
    try:
        assert np.array_equal(np.asarray(cols.ev_ts), want)
        assert np.array_equal(cols.ev_ts[np.arange(len(want))], want)
        assert np.array_equal(cols.ev_ts[123:25_000:7], want[123:25_000:7])
        mask = cols.ev_kind == K.DURATION_BEGIN
        assert np.array_equal(cols.ev_ts[mask], want[mask])
        assert (cols.ev_ts.min(), cols.ev_ts.max()) == (want.min(), want.max())
    finally:
        mc.BLOCK = block


def test_a_large_read_releases_the_pages_it_mapped(tmp_path):
    """Reading many rows drops the file pages they mapped (as the reader does after each block); the values
    stay the same (the pages come back from the page cache when read again); a few rows release nothing."""
    path = tmp_path / "t.fxt"
    path.write_bytes(generate_trace(150_000, seed=3))
    cols = read_fxt(path)
    assert cols.ev_ts.release is not None  # a memory-mapped file
    calls = []
    release = cols.ev_ts.release
    cols.ev_ts.release = lambda a, b: (calls.append((a, b)), release(a, b))
    first = np.asarray(cols.ev_ts)
    assert calls and all(0 <= a < b <= len(path.read_bytes()) // 8 for a, b in calls)
    assert np.array_equal(np.asarray(cols.ev_ts), first)
    assert np.array_equal(cols.ev_ts[np.arange(len(first))[::-1]], first[::-1])
    few = len(calls)
    cols.ev_ts[np.arange(100)]
    cols.ev_ts[5:105]
    assert len(calls) == few


def test_dropped_records_leave_no_row_and_truncation_keeps_a_prefix():
    """Hostile input: event records too short for a time, of an unknown type, or cut by the file's end are
    not rows, so every row's second word is its time; the events of a prefix are the first ones."""
    w = FxtWriter()
    w.thread(1, 10, 11)
    w.initialization(2_000_000_000)
    w.event(K.INSTANT, 10, 1, "c", "n")
    w.raw_words([4 | (1 << 4)])  # an event record of one word: no time (dropped, warned)
    w.raw_words([4 | (2 << 4) | (12 << 16), 99])  # an unknown event type (dropped, warned)
    w.event(K.INSTANT, 30, 1, "c", "n")
    # an inline category of 8 bytes in a record of two words: the fields run past it (dropped, warned)
    w.raw_words([4 | (2 << 4) | (1 << 24) | ((0x8000 | 8) << 32), 50])
    w.event(K.INSTANT, 40, 1, "c", "n")
    cols = read_fxt_bytes(w.getvalue())
    assert np.asarray(cols.ev_ts).tolist() == [5, 15, 20]
    assert sum(("unknown type" in x) or ("short record" in x) or ("field" in x) for x in cols.warnings) >= 2
    data = _trace()[0]
    full = read_fxt_bytes(data)
    for cut in range(8, len(data), 8):
        part = read_fxt_bytes(data[:cut])
        n = len(part.ev_ts)
        assert np.array_equal(part.ev_ts[:], full.ev_ts[:n])


def test_a_held_build_keeps_its_pages_until_it_ends(tmp_path):
    """Inside ``holding_pages`` (a build step, from one or more threads) large reads of ev_ts and ev_data release
    nothing; when the last holder leaves, the whole map is released once; reads after that release again. The
    model's constructor holds them while it builds."""
    import threading

    from fxscope.core.trace.model import TraceModel

    path = tmp_path / "t.fxt"
    path.write_bytes(generate_trace(150_000, seed=3))
    cols = read_fxt(path)
    assert cols.ev_ts.hold is cols.ev_data.hold is cols.page_hold
    calls = []
    for col in (cols.ev_ts, cols.ev_data):
        col.release = lambda a, b, release=col.release: (calls.append((a, b)), release(a, b))
    n_words = len(path.read_bytes()) // 8
    cols.page_hold._release_all = lambda release=cols.page_hold._release_all: (calls.append("all"), release())
    want_ts, want_data = np.asarray(cols.ev_ts), np.asarray(cols.ev_data)
    assert calls and "all" not in calls
    calls.clear()
    with cols.holding_pages():
        inner = threading.Thread(target=lambda: cols.holding_pages().__enter__())  # a second holder...
        inner.start()
        inner.join()
        assert np.array_equal(np.asarray(cols.ev_ts), want_ts) and np.array_equal(np.asarray(cols.ev_data), want_data)
    assert calls == []  # ...still holding: nothing released
    cols.page_hold.__exit__(None, None, None)  # the second holder leaves: the map goes at once
    assert calls == ["all"]
    calls.clear()
    np.asarray(cols.ev_ts)
    assert calls and all(isinstance(c, tuple) and 0 <= c[0] < c[1] <= n_words for c in calls)
    calls.clear()
    model = TraceModel(cols)
    assert calls == ["all"]  # the constructor's reads held their pages, then released
    calls.clear()
    assert len(model.slices) and calls == ["all"]  # the slices' build's (the loader's step "slices") too
    unmapped = read_fxt_bytes(_trace()[0])  # (no map: holding it releases nothing, reads still work)
    with unmapped.holding_pages():
        assert np.asarray(unmapped.ev_ts).tolist() == _trace()[1]


def test_a_builds_steps_share_one_hold_of_the_pages(tmp_path):
    """The model's steps (prepare_model, two at a time) keep the file pages their reads map until the last
    step ends: the map is released once for the whole build, not by each step (which mapped the whole file
    again each time), and no read releases its pages on its own meanwhile."""
    from fxscope.core.trace.model import TraceModel
    from fxscope.core.trace.prepare import PREPARE_STEPS, prepare_model

    path = tmp_path / "t.fxt"
    path.write_bytes(generate_trace(150_000, seed=4, scheduling=True))
    cols = read_fxt(path)
    model = TraceModel(cols)
    calls = []
    for col in (cols.ev_ts, cols.ev_data):
        col.release = lambda a, b, release=col.release: (calls.append((a, b)), release(a, b))
    cols.page_hold._release_all = lambda release=cols.page_hold._release_all: (calls.append("all"), release())
    prepare_model(model, workers=2)
    assert len(PREPARE_STEPS) > 5 and model.flows is not None and len(model.counters.series) > 0
    assert calls == ["all"]
