"""Columns read through a row index (core.trace.gathered) and the model tables that use them."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from fxscope.core.synthetic_trace import generate_trace
from fxscope.core.trace.gathered import Gathered
from fxscope.core.trace.model import TraceModel
from fxscope.core.trace.slices import build_slices
from fxscope.formats.fxt.reader import read_fxt, read_fxt_bytes


def test_indexing_like_the_array_it_stands_for() -> None:
    source = np.array([10, 11, 12, 13, 14], np.int32)
    index = np.array([4, 0, 2, 2], np.int32)
    col = Gathered(source, index)
    plain = source[index]
    assert len(col) == 4 and col.shape == (4,) and col.dtype == np.int32 and col.nbytes == 0
    assert col[0] == 14 and col[-1] == 12
    assert col[1:3].tolist() == [10, 12]
    assert col[np.array([3, 0])].tolist() == [12, 14]
    assert col[np.array([True, False, True, False])].tolist() == [14, 12]
    assert np.array_equal(np.asarray(col), plain) and np.asarray(col, np.int64).dtype == np.int64
    assert list(col) == plain.tolist() and col.tolist() == plain.tolist()
    # operators and ufuncs act on the gathered values
    assert (col == 12).tolist() == [False, False, True, True]
    assert (col >= 12).sum() == 3 and np.max(col) == 14 and (col + 1).tolist() == [15, 11, 13, 13]
    assert np.unique(col).tolist() == [10, 12, 14]
    assert source[col - 10].tolist() == [14, 10, 12, 12]


def test_missing_rows_and_chains() -> None:
    pids = np.array([100, 200], np.uint64)
    thread_of_event = np.array([1, -1, 0], np.int32)
    events = np.array([2, 1, 0, 0], np.int32)
    pid = Gathered(pids, Gathered(thread_of_event, events), missing=0)
    assert pid.tolist() == [100, 0, 200, 200] and pid.dtype == np.uint64
    assert pid[1] == 0 and pid[0] == 100
    assert Gathered(np.zeros(0, np.uint64), np.array([-1, -1]), missing=0).tolist() == [0, 0]


def test_model_columns_equal_the_reader_columns_at_their_events() -> None:
    cols = read_fxt_bytes(generate_trace(6_000))
    model = TraceModel(cols)
    s, inst, spans, flows = model.slices, model.instants, model.async_spans, model.flows
    assert len(s) and len(inst) and len(spans) and len(flows) and len(spans.instants)
    for col, source, rows in (
        (s.name, cols.ev_name, s.event), (s.category, cols.ev_category, s.event),
        (inst.name, cols.ev_name, inst.event), (inst.category, cols.ev_category, inst.event),
        (inst.thread, cols.ev_thread, inst.event),
        (inst.scope, cols.ev_scope, inst.event), (spans.name, cols.ev_name, spans.event),
        (spans.category, cols.ev_category, spans.event), (spans.id, cols.ev_data, spans.event),
        (spans.instants.ts, cols.ev_ts, spans.instants.event), (flows.id, cols.ev_data, flows.src_event),
        (flows.src_ts, cols.ev_ts, flows.src_event), (flows.dst_ts, cols.ev_ts, flows.dst_event),
    ):  # fmt: skip
        assert isinstance(col, Gathered) and np.array_equal(np.asarray(col), source[rows])
    assert np.array_equal(np.asarray(inst.pid), cols.threads_pid[inst.thread])
    # each thread's rows found once (the per-frame searches), as a search of the sorted thread column finds them
    thread = np.asarray(inst.thread).astype(np.int32)
    assert inst.thread_bounds is not None and np.all(np.diff(thread) >= 0)
    assert sorted(inst.thread_bounds) == np.unique(thread).tolist()
    for t in [*np.unique(thread).tolist(), 10**6]:
        lo, hi = inst.thread_rows(t)
        want = np.searchsorted(thread, t, "left"), np.searchsorted(thread, t, "right")
        assert hi - lo == want[1] - want[0] and (hi == lo or (lo, hi) == want)
    # spans are still sorted by process
    assert np.all(np.diff(np.asarray(spans.pid).astype(np.float64)) >= 0)


def test_async_tracks_and_lane_rows_from_the_process_index() -> None:
    model = TraceModel(read_fxt_bytes(generate_trace(6_000)))
    t = model.async_spans
    pid = np.asarray(t.pid)
    tracks = t.tracks()
    assert [p for p, _n in tracks] == np.unique(pid).tolist()
    covered = 0
    for p, lanes in tracks:
        assert lanes == int(t.lane[pid == p].max()) + 1
        for lane in range(lanes):
            lo, hi = t.lane_rows(p, lane)
            want = np.flatnonzero((pid == p) & (t.lane == lane))
            assert want.tolist() == list(range(lo, hi))
            covered += hi - lo
    assert covered == len(t)
    lo, hi = t.lane_rows(p, lanes)  # a lane past the last one, and an unknown process: empty
    assert lo == hi
    lo, hi = t.lane_rows(int(pid.max()) + 1, 0)
    assert lo == hi == len(t)


def test_self_time_of_any_rows_equals_the_whole_table_computation(testdata: Path) -> None:
    cols = read_fxt(testdata / "fxt" / "richiesams_fxt-python_trace.fxt")
    table = build_slices(cols)
    full = table.self_dur
    # the definition: duration minus the children's durations
    child = np.zeros(len(table), np.int64)
    np.add.at(child, table.parent[table.parent >= 0], table.dur[table.parent >= 0])
    assert np.array_equal(full, np.maximum(table.dur - child, 0))
    assert np.all(full <= table.dur) and full.sum() > 0
    rng = np.random.default_rng(3)
    for size in (1, 7, 300, len(table) // 2, len(table)):
        rows = np.sort(rng.choice(len(table), size, replace=False))
        assert np.array_equal(table.self_dur_of(rows), full[rows])
    parents = np.unique(table.parent[table.parent >= 0])[:5]
    assert np.array_equal(table.self_dur_of(parents), full[parents])
    assert (full[parents] < table.dur[parents]).all()  # they have children, so less self than wall time
