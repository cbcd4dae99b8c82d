"""Queries copied from Perfetto's documentation run on fxscope's tables and give the numbers fxscope's own
tables give (the model's columns, the scheduling aggregates of the area summary, the details panel's
wakeups), computed without SQL.

The query texts are quoted from Perfetto's documentation (https://github.com/google/perfetto, docs/,
Copyright The Android Open Source Project, Apache License 2.0); each says its file and section. They are
verbatim except where a comment says which literal (a slice, thread or counter name, an id, a threshold)
was replaced by one the demo trace has. Queries of those pages that cannot run unchanged in DuckDB are
listed in docs/sql.md with the reason.
"""

from __future__ import annotations

import fnmatch
from collections import Counter, defaultdict
from pathlib import Path

import numpy as np
import pytest

from fxscope.core.analysis.sched_stats import sched_summary
from fxscope.core.sql.engine import QueryError, TraceSQL
from fxscope.core.trace.model import TraceModel
from fxscope.core.trace.sched import RUNNABLE, RUNNING, STATE_NAMES, thread_state_details
from fxscope.formats.fxt.reader import read_fxt

DEMO = Path(__file__).resolve().parents[3] / "resources" / "demo" / "demo.fxt"


@pytest.fixture(scope="module")
def demo() -> tuple[TraceModel, TraceSQL]:
    model = TraceModel(read_fxt(DEMO))
    return model, TraceSQL(model)


def _names(model: TraceModel, index: np.ndarray) -> list[str]:
    return [model.strings[i] for i in np.asarray(index).tolist()]


def _thread_names(model: TraceModel) -> dict[int, str]:
    """Thread koid -> name, from the trace's kernel object records (type 2: thread)."""
    return {k.koid: k.name for k in model.cols.kernel_objects if k.obj_type == 2}


def _process_names(model: TraceModel) -> dict[int, str]:
    return {k.koid: k.name for k in model.cols.kernel_objects if k.obj_type == 1}


def _busiest_name(model: TraceModel) -> str:
    names, counts = np.unique(model.slices.name, return_counts=True)
    return model.strings[int(names[np.argmax(counts)])]


# ---------------------------------------------------------------------------------------------- slices
def test_quickstart_slices(demo) -> None:
    model, sql = demo
    # docs/quickstart/trace-analysis.md, "Sample queries" > "Slices"
    got = sql.query("SELECT ts, dur, name FROM slice")
    s, a = model.slices, model.async_spans
    mine = sorted(zip(np.r_[s.ts, a.start].tolist(), np.r_[s.dur, a.end - a.start].tolist(),
                      _names(model, s.name[:]) + _names(model, a.name[:]), strict=True))  # fmt: skip
    assert sorted(zip(*(got.column(c).to_pylist() for c in ("ts", "dur", "name")), strict=True)) == mine


def test_context_using_tracks_slices_by_name(demo) -> None:
    model, sql = demo
    name = _busiest_name(model)
    s = model.slices
    mine = s.name[:] == model.strings.index(name)
    # docs/analysis/perfetto-sql-getting-started.md, "Getting More Context with JOINs" (also
    # docs/analysis/trace-processor.md, "Context using tracks"); 'measure' replaced by a demo slice name
    got = sql.query(f"""SELECT utid
FROM slice
JOIN thread_track ON thread_track.id = slice.track_id
WHERE slice.name = '{name}'""")
    assert sorted(got.column("utid").to_pylist()) == sorted(s.thread[mine].tolist())
    # same page, "Thread and process tables": the threads that emitted those slices
    got = sql.query(f"""SELECT thread.name AS thread_name
FROM slice
JOIN thread_track ON slice.track_id = thread_track.id
JOIN thread USING(utid)
WHERE slice.name = '{name}'
GROUP BY thread_name""")
    names = _thread_names(model)
    tids = model.cols.threads_tid[np.unique(s.thread[mine])]
    assert sorted(got.column("thread_name").to_pylist()) == sorted({names[int(t)] for t in tids})


def test_thread_by_utid(demo) -> None:
    model, sql = demo
    utid = len(model.cols.threads_tid) - 1  # (the demo has 15 threads: the page's utid 10 is one of them too)
    for u in (10, utid):
        # docs/analysis/perfetto-sql-getting-started.md, "Thread and process tables" (utid 10 as written)
        got = sql.query(f"""SELECT tid, name
FROM thread
WHERE utid = {u}""").to_pylist()
        tid = int(model.cols.threads_tid[u])
        assert got == [{"tid": tid, "name": _thread_names(model).get(tid)}]


def test_finding_slices_by_glob(demo) -> None:
    model, sql = demo
    name = _busiest_name(model)
    pattern = f"*{name[1:-1]}*"
    # docs/getting-started/android-trace-analysis.md, "Finding slices"; '*interesting_slice*' replaced
    got = sql.query(f"""SELECT *
FROM slice
WHERE name GLOB '{pattern}'
LIMIT 10;""")
    # Perfetto's slice columns (fxscope has no thread_ts/thread_dur and the like: FXT does not record them)
    assert got.column_names == ["id", "ts", "dur", "track_id", "category", "name", "depth", "parent_id",
                                "arg_set_id"]  # fmt: skip
    every = _names(model, model.slices.name[:]) + _names(model, model.async_spans.name[:])
    matching = sum(fnmatch.fnmatchcase(n, pattern) for n in every)
    assert got.num_rows == min(10, matching) == 10
    assert all(fnmatch.fnmatchcase(n, pattern) for n in got.column("name").to_pylist())
    s = model.slices
    for row in got.to_pylist():  # each row is the model's slice of that id
        if row["id"] < len(s):
            assert (row["ts"], row["dur"], row["depth"]) == (int(s.ts[row["id"]]), int(s.dur[row["id"]]),
                                                             int(s.depth[row["id"]]))  # fmt: skip


def test_top_slices_by_self_time(demo) -> None:
    model, sql = demo
    # Perfetto's standard library module slices.self_dur (table slice_self_dur: id, self_dur), as its
    # reference (docs/analysis/stdlib-docs) documents it; the query over it is ours
    got = sql.query("""INCLUDE PERFETTO MODULE slices.self_dur;
SELECT id, self_dur FROM slice_self_dur ORDER BY self_dur DESC, id LIMIT 20""").to_pylist()
    s, a = model.slices, model.async_spans
    own = np.r_[s.self_dur, a.end - a.start]  # an async span has no children (no parent_id)
    order = np.lexsort((np.arange(len(own)), -own))[:20]
    assert [(r["id"], r["self_dur"]) for r in got] == [(int(i), int(own[i])) for i in order]
    with pytest.raises(QueryError, match="not available"):
        sql.query("INCLUDE PERFETTO MODULE android.startup.startups; SELECT 1")


# ---------------------------------------------------------------------------------------------- counters
def test_quickstart_counters(demo) -> None:
    model, sql = demo
    # docs/quickstart/trace-analysis.md, "Sample queries" > "Counters"
    got = sql.query("SELECT ts, value FROM counter")
    series = model.counters.series
    mine = sorted(zip(np.concatenate([c.ts for c in series]).tolist(),
                      np.concatenate([c.value for c in series]).tolist(), strict=True))  # fmt: skip
    assert sorted(zip(got.column("ts").to_pylist(), got.column("value").to_pylist(), strict=True)) == mine


def test_process_counter_above_a_threshold(demo) -> None:
    model, sql = demo
    series = max(model.counters.series, key=len)
    threshold = float(np.median(series.value))
    # docs/analysis/perfetto-sql-getting-started.md, "Getting More Context with JOINs"; 'mem.swap' and 1000
    # replaced by a demo counter track's name and its median
    got = sql.query(f"""SELECT upid
FROM counter
JOIN process_counter_track ON process_counter_track.id = counter.track_id
WHERE process_counter_track.name = '{series.label}' AND value > {threshold}""")
    pids = np.unique(model.cols.threads_pid)  # upid: rank of the process koid
    mine = [int(np.searchsorted(pids, c.pid)) for c in model.counters.series if c.label == series.label
            for v in c.value.tolist() if v > threshold]  # fmt: skip
    assert sorted(got.column("upid").to_pylist()) == sorted(mine) and mine


# ---------------------------------------------------------------------------------------------- scheduling
def test_sched_slices_with_thread_and_process(demo) -> None:
    model, sql = demo
    # docs/data-sources/cpu-scheduling.md, "SQL"
    got = sql.query("""select ts, dur, cpu, end_state, priority, process.name, thread.name
from sched_slice left join thread using(utid) left join process using(upid)""")
    cs = model.sched.cpu_slices
    assert got.num_rows == len(cs)
    assert got.column_names[:5] == ["ts", "dur", "cpu", "end_state", "priority"]
    per_thread: dict[str, int] = defaultdict(int)
    for dur, thread in zip(got.column(1).to_pylist(), got.column(6).to_pylist(), strict=True):
        per_thread[thread] += dur
    # the CPU time per thread of the area summary over the whole trace
    summary = sched_summary(model, model.start_ns, model.end_ns)
    names = _thread_names(model)
    assert dict(per_thread) == {names[int(t)]: int(ns) for t, ns in
                                zip(summary.thread_tid, summary.thread_cpu_ns, strict=True)}  # fmt: skip
    processes = Counter(got.column(5).to_pylist())
    pnames = _process_names(model)
    assert processes == Counter(pnames[int(p)] for p in cs.pid.tolist())


def _first_run_after(model: TraceModel, tid: int, ts: int) -> int:
    """dur of the first CPU slice of ``tid`` that starts after ``ts`` (0 when none; the CPU slices are in
    order per CPU)."""
    cs = model.sched.cpu_slices
    rows = np.flatnonzero((cs.tid == tid) & (cs.start > ts))
    first = rows[np.argmin(cs.start[rows])] if len(rows) else -1
    return int(cs.end[first] - cs.start[first]) if len(rows) else 0


def test_scheduling_time_by_woken_threads(demo) -> None:
    model, sql = demo
    # docs/analysis/common-queries.md, "Computing scheduling time by woken threads" (for all the threads)
    got = sql.query("""SELECT
  waker_process.name AS process_name,
  waker.name AS thread_name,
  SUM((
    SELECT dur FROM sched
    WHERE
      sched.ts > wakee_runnable.ts AND
      sched.utid = wakee_runnable.utid
    ORDER BY ts
    LIMIT 1
  )) AS scheduled_dur
FROM thread AS waker
JOIN process AS waker_process USING (upid)
JOIN thread_state AS wakee_runnable ON waker.utid = wakee_runnable.waker_utid
WHERE waker.utid != 0
GROUP BY 1, 2
ORDER BY 3 desc""").to_pylist()
    # the same from the details panel's wakeup of each runnable interval and the model's CPU slices
    st = model.sched.thread_states
    names, pnames = _thread_names(model), _process_names(model)
    tid_of_utid = model.cols.threads_tid
    pid_of_tid = dict(zip(tid_of_utid.tolist(), model.cols.threads_pid.tolist(), strict=True))
    mine: dict[tuple[str, str], int] = defaultdict(int)
    for row in np.flatnonzero(st.state == RUNNABLE).tolist():
        waker = thread_state_details(model, row).get("waker_tid")
        if not waker or int(waker) == int(tid_of_utid[0]) or int(waker) not in pid_of_tid:  # utid 0 left out
            continue
        key = (pnames[pid_of_tid[int(waker)]], names[int(waker)])
        mine[key] += _first_run_after(model, int(st.tid[row]), int(st.start[row]))
    assert {(r["process_name"], r["thread_name"]): int(r["scheduled_dur"]) for r in got} == dict(mine)
    assert len(got) > 1 and [int(r["scheduled_dur"]) for r in got] == sorted(mine.values(), reverse=True)
    # the first query of that section, for one waker thread (its name literal replaced by the busiest waker's)
    waker_name = got[0]["thread_name"]
    one = sql.query(f"""SELECT
  SUM((
    SELECT dur FROM sched
    WHERE
      sched.ts > wakee_runnable.ts AND
      wakee_runnable.utid = wakee_runnable.utid
    ORDER BY ts
    LIMIT 1
  )) AS scheduled_dur
FROM thread AS waker
JOIN thread_state AS wakee_runnable ON waker.utid = wakee_runnable.waker_utid
WHERE waker.name = '{waker_name}'""").column(0)[0].as_py()
    # (as written, its subquery's condition compares the wakee with itself: the first CPU slice of any thread)
    cs = model.sched.cpu_slices
    order = np.argsort(cs.start, kind="stable")
    starts = cs.start[order]
    expected = 0
    for row in np.flatnonzero(st.state == RUNNABLE).tolist():
        waker = thread_state_details(model, row).get("waker_tid")
        if waker and names.get(int(waker)) == waker_name:
            j = int(np.searchsorted(starts, int(st.start[row]), "right"))
            expected += int(cs.end[order[j]] - starts[j]) if j < len(starts) else 0
    assert int(one) == expected


def test_cpu_time_of_slices(demo) -> None:
    """docs/analysis/common-queries.md, "Computing CPU time for slices": its first view runs as written; the
    span join it is intersected with is a Perfetto operator (DuckDB: an interval join, written here), and
    its queries group by slice_id alone, selecting slice_name bare (SQLite allows it, DuckDB asks for it in
    the GROUP BY)."""
    model, sql = demo
    sql.query("""DROP VIEW IF EXISTS slice_with_utid;
CREATE VIEW slice_with_utid AS
SELECT
  ts,
  dur,
  slice.name as slice_name,
  slice.id as slice_id, utid,
  thread.name as thread_name
FROM slice
JOIN thread_track ON thread_track.id = slice.track_id
JOIN thread USING (utid);""")
    sql.query("""CREATE OR REPLACE VIEW slice_thread_state_breakdown AS
SELECT s.slice_id, s.slice_name, s.utid, t.state,
       least(s.ts + s.dur, t.ts + t.dur) - greatest(s.ts, t.ts) AS dur
FROM slice_with_utid s JOIN thread_state t
  ON t.utid = s.utid AND t.ts < s.ts + s.dur AND t.ts + t.dur > s.ts""")
    got = sql.query("""SELECT slice_id, slice_name, SUM(dur) AS cpu_time
FROM slice_thread_state_breakdown
WHERE state = 'Running'
GROUP BY slice_id, slice_name""").to_pylist()
    cpu_time = {r["slice_id"]: int(r["cpu_time"]) for r in got}
    runnable = {r["slice_id"]: int(r["runnable_time"]) for r in sql.query("""SELECT
  slice_id,
  slice_name,
  SUM(IIF(state = 'R', dur, 0)) AS runnable_time
FROM slice_thread_state_breakdown
GROUP BY slice_id, slice_name""").to_pylist()}
    # the area summary's time per state, on the slice's thread over the slice's time
    s = model.slices
    tids = model.cols.threads_tid
    rows = np.flatnonzero(s.dur > 0)
    checked = 0
    for row in rows[:: max(1, len(rows) // 60)].tolist():
        t0, t1 = int(s.ts[row]), int(s.ts[row] + s.dur[row])
        state_ns = sched_summary(model, t0, t1, tids=np.array([tids[s.thread[row]]])).state_ns
        assert cpu_time.get(row, 0) == state_ns.get(STATE_NAMES[RUNNING], 0), row
        assert runnable.get(row, 0) == state_ns.get(STATE_NAMES[RUNNABLE], 0), row
        checked += cpu_time.get(row, 0) > 0
    assert checked > 5
    with pytest.raises(QueryError, match=r"(?i)group by"):  # the page's query as written
        sql.query("""SELECT slice_id, slice_name, SUM(dur) AS cpu_time
FROM slice_thread_state_breakdown
WHERE state = 'Running'
GROUP BY slice_id;""")


# ---------------------------------------------------------------------------------------------- helpers
def test_extract_arg(demo) -> None:
    model, sql = demo
    s = model.slices
    row = int(np.flatnonzero(model.cols.ev_nargs[s.event] > 0)[0])
    args = model.cols.event_args(int(s.event[row]))
    for arg in args:
        # docs/analysis/perfetto-sql-getting-started.md, "Extract args" (on slice: FXT has no ftrace_event)
        got = sql.query(f"SELECT EXTRACT_ARG(arg_set_id, '{arg.name}') FROM slice WHERE id = {row}").column(0)[0]
        value = got.as_py()
        if isinstance(arg.value, bool) or arg.value is None:
            continue
        if isinstance(arg.value, float):
            assert float(value) == arg.value
        elif isinstance(arg.value, int):
            assert int(value) == arg.value or int(value) == arg.value - 2**64  # (uint64 as int_value)
        else:
            assert value == str(arg.value)
    assert sql.query(f"SELECT EXTRACT_ARG(arg_set_id, 'no such key') FROM slice WHERE id = {row}").column(0)[0].as_py() is None


def test_an_export_answers_the_same(demo, tmp_path) -> None:
    """A Parquet export opened as a trace has the same compatibility views and helpers."""
    from fxscope.core.sql.dataset import ParquetSQL
    from fxscope.core.sql.export_parquet import export_parquet

    model, sql = demo
    export_parquet(sql, tmp_path / "demo")
    exported = ParquetSQL(tmp_path / "demo")
    name = _busiest_name(model)
    row = int(np.flatnonzero(model.cols.ev_nargs[model.slices.event] > 0)[0])
    key = model.cols.event_args(int(model.slices.event[row]))[0].name
    for query in (
        f"SELECT utid FROM slice JOIN thread_track ON thread_track.id = slice.track_id WHERE slice.name = '{name}'"
        " ORDER BY utid",
        "INCLUDE PERFETTO MODULE slices.self_dur;\nSELECT id, self_dur FROM slice_self_dur ORDER BY id",
        "INCLUDE PERFETTO MODULE slices.with_context;\nSELECT id, utid, thread_name, process_name, upid FROM"
        " thread_slice WHERE utid >= 0 ORDER BY id",
        "SELECT p.upid, count(*) AS n FROM counter c JOIN process_counter_track p ON p.id = c.track_id GROUP BY 1"
        " ORDER BY 1",
        f"SELECT EXTRACT_ARG(arg_set_id, '{key}') AS v FROM slice WHERE id = {row}",
        "SELECT name, PERCENTILE(dur, 90) AS p90 FROM slice GROUP BY name ORDER BY name",
        "SELECT * FROM slice ORDER BY id",  # (written from the tables behind the view, not by the view)
    ):
        assert exported.query(query).to_pylist() == sql.query(query).to_pylist(), query
    assert exported.query("SELECT * FROM slice LIMIT 0").schema == sql.query("SELECT * FROM slice LIMIT 0").schema
    exported.close()
