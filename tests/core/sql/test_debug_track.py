"""Debug tracks: a query's result on the demo trace becomes boxes in lanes (or a counter series) that agree
with the model's own slices and counters; bad columns are a clear error, NULL rows are counted."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pyarrow as pa
import pytest

from fxscope.core.sql.debug_track import (
    COUNTER,
    SLICES,
    DebugTrackError,
    debug_track,
    debug_track_kind,
)
from fxscope.core.sql.engine import TraceSQL
from fxscope.core.trace.model import TraceModel
from fxscope.formats.fxt.reader import read_fxt

DEMO = Path(__file__).resolve().parents[3] / "resources" / "demo" / "demo.fxt"


@pytest.fixture(scope="module")
def demo() -> tuple[TraceModel, TraceSQL]:
    model = TraceModel(read_fxt(DEMO))
    return model, TraceSQL(model)


def test_kind_follows_perfettos_columns() -> None:
    assert debug_track_kind(["ts", "dur", "name"]) == SLICES
    assert debug_track_kind(["ts", "dur", "value"]) == SLICES
    assert debug_track_kind(["ts", "value"]) == COUNTER
    assert debug_track_kind(["dur", "value"]) is None and debug_track_kind(["ts", "name"]) is None


def test_one_threads_slices_become_its_depths(demo) -> None:
    """One thread's slices nest without partial overlaps: first-fit lanes are exactly their depths, and
    every box of a window is found, zoomed in and zoomed out."""
    model, sql = demo
    track = max(model.tracks, key=lambda t: (t.hi - t.lo, t.max_depth))
    result = sql.query(f"SELECT id, ts, dur, name, depth FROM thread_slice WHERE utid = {track.thread}")
    t = debug_track(result, "q1", model.start_ns, model.end_ns)
    assert t.kind == SLICES and len(t) == result.num_rows == track.hi - track.lo and t.dropped == 0
    depth = result.column("depth").to_numpy()[t.source_row]
    assert t.lanes == track.max_depth + 1 and np.array_equal(t.lane, depth)
    names = result.column("name").to_pylist()
    assert [t.label(int(i)) for i in t.name] == [names[r] for r in t.source_row.tolist()]
    # zoomed in to one ns a pixel: every box overlapping the window, each as itself
    s = model.slices
    mid = int(s.ts[track.lo + (track.hi - track.lo) // 2])
    t0, t1 = mid - 1_000_000, mid + 1_000_000
    rows, _lane, count, _start, _end, _name = t.boxes(t0, t1, 1.0)
    want = np.flatnonzero((t.start < t1) & (t.end > t0))
    assert sorted(rows.tolist()) == want.tolist() and (count == 1).all()
    # the whole trace in 1,000 pixels: every box accounted for, merged or not
    span = model.end_ns - model.start_ns
    rows, _lane, count, _start, _end, _name = t.boxes(model.start_ns, model.end_ns, span / 1000)
    assert int(count.sum()) == len(t) and len(rows) < len(t)
    # a click: the box covering a time in a lane
    r = int(want[0])
    assert t.row_at(int(t.lane[r]), int(t.start[r])) == r
    assert t.row_values(r)["id"] == result.column("id")[int(t.source_row[r])].as_py()
    assert t.row_at(t.lanes, int(t.start[r])) == -1


def test_overlapping_results_get_lanes_and_open_ends(demo) -> None:
    model, sql = demo
    result = sql.query("SELECT ts, dur FROM thread_state ORDER BY dur DESC LIMIT 200")
    t = debug_track(result, "states", model.start_ns, model.end_ns)
    assert t.labels.to_pylist() == ["states"] and (t.name == 0).all()
    for lo, hi in t.lane_ranges:  # boxes of a lane never overlap
        assert (t.start[lo + 1 : hi] >= t.end[lo : hi - 1]).all()
    assert t.lanes > 1  # states of different threads overlap
    table = pa.table({"ts": pa.array([10, 20, None, 30, 1, 2], pa.int64()),
                      "dur": pa.array([5, -1, 3, None, 8, 3], pa.int64()),
                      "name": pa.array(["a", None, "c", "d", "e", "f"])})  # fmt: skip
    t = debug_track(table, "x", 5, 1000)  # (a trace from 5 to 1000 ns)
    assert len(t) == 3 and t.dropped == 3  # NULLs, and a box over before the trace began
    assert sorted(zip(t.start.tolist(), t.end.tolist(), strict=True)) == [(5, 9), (10, 15), (20, 1000)]
    assert sorted(t.label(int(i)) for i in t.name) == ["NULL", "a", "e"]
    # a counter sample from before the trace is the value in force at its start
    c = debug_track(pa.table({"ts": [1, 3, 7], "value": [1.0, 2.0, 3.0]}), "c", 5, 1000)
    assert c.series.ts.tolist() == [5, 5, 7] and c.counters.lod(0, 5, 6, 1.0)[1].tolist() == [2.0]


def test_counter_result_is_the_models_series(demo) -> None:
    model, sql = demo
    base = int(sql.query("SELECT min(id) FROM counter_track").column(0)[0].as_py())
    i = max(range(len(model.counters.series)), key=lambda k: len(model.counters.series[k]))
    mine = model.counters.series[i]
    result = sql.query(f"SELECT ts, value FROM counter WHERE track_id = {base + i} ORDER BY ts DESC")
    t = debug_track(result, "c", model.start_ns, model.end_ns)
    assert t.kind == COUNTER and len(t) == len(mine)
    assert np.array_equal(t.series.ts, mine.ts) and np.allclose(t.series.value, mine.value)
    px = (model.end_ns - model.start_ns) / 500
    got, want = t.counters.lod(0, model.start_ns, model.end_ns, px), model.counters.lod(i, model.start_ns, model.end_ns, px)
    assert all(np.array_equal(a, b) for a, b in zip(got, want, strict=True))


def test_results_that_make_no_track(demo) -> None:
    model, sql = demo
    with pytest.raises(DebugTrackError, match="ts and dur"):
        debug_track(sql.query("SELECT name FROM thread"), "x", model.start_ns, model.end_ns)
    with pytest.raises(DebugTrackError, match="column ts is string"):
        debug_track(sql.query("SELECT name AS ts, 1 AS dur FROM thread"), "x", model.start_ns, model.end_ns)
    with pytest.raises(DebugTrackError, match="column ts"):  # a HUGEINT past int64
        debug_track(sql.query("SELECT 1::HUGEINT << 80 AS ts, 1 AS value"), "x", model.start_ns, model.end_ns)
    # computed columns: decimals from sum(), fractional ts, an empty result
    t = debug_track(sql.query("SELECT sum(dur) AS ts, 2.5 AS dur FROM slice"), "x", 0, model.end_ns)
    assert len(t) == 1 and int(t.end[0] - t.start[0]) == 2
    assert len(debug_track(sql.query("SELECT ts, dur FROM slice WHERE false"), "x", model.start_ns, model.end_ns)) == 0
    # floats that are no time (NaN, past int64) are left out like NULLs
    t = debug_track(pa.table({"ts": [1.9, float("nan"), 1e30], "dur": [1.0, 1.0, 1.0]}), "x", 0, model.end_ns)
    assert t.start.tolist() == [1] and t.dropped == 2
