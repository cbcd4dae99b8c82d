"""Trace SQL: Perfetto's documented queries run unchanged and agree with the model's own tables, and the
table counts agree with ``fxscope info --json`` on the third-party traces, the demo and a generated trace."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pyarrow as pa
import pytest

from fxscope.core.sql.engine import PUBLIC_TABLES, QueryError, TraceSQL
from fxscope.core.synthetic_trace import generate_trace
from fxscope.core.trace.model import TraceModel
from fxscope.core.trace.sched import RUNNABLE
from fxscope.core.trace.stats import summarize
from fxscope.formats.fxt.columns import EventKind
from fxscope.formats.fxt.reader import read_fxt, read_fxt_bytes

DEMO = Path(__file__).resolve().parents[3] / "resources" / "demo" / "demo.fxt"
THIRD_PARTY = ("richiesams_fxt-python_trace.fxt", "ocaml-trace_t2_first.fxt", "ocaml-trace_t2_second.fxt")


@pytest.fixture(scope="module")
def demo() -> tuple[TraceModel, TraceSQL]:
    model = TraceModel(read_fxt(DEMO))
    return model, TraceSQL(model)


def _scalar(sql: TraceSQL, query: str):
    return sql.query(query).column(0)[0].as_py()


def test_slices_by_name_as_perfetto_documents(demo) -> None:
    model, sql = demo
    # Perfetto docs, "slices": SELECT ts, dur, name FROM slice WHERE name = ...
    s = model.slices
    names = np.array([model.strings[i] for i in s.name[:].tolist()], object)
    name = str(names[0])
    got = sql.query(f"SELECT ts, dur, name FROM slice WHERE name = '{name}' AND track_id < "
                    f"(SELECT count(*) FROM thread) ORDER BY ts, dur")
    mine = np.flatnonzero(names == name)
    order = np.lexsort((s.dur[mine], s.ts[mine]))
    assert got.column("ts").to_numpy().tolist() == s.ts[mine][order].tolist()
    assert got.column("dur").to_numpy().tolist() == s.dur[mine][order].tolist()
    # slices and async spans together, as Perfetto's slice table holds both
    assert _scalar(sql, "SELECT count(*) FROM slice") == len(s) + len(model.async_spans)
    total = int(s.dur.sum() + (model.async_spans.end - model.async_spans.start).sum())
    assert _scalar(sql, "SELECT sum(dur) FROM slice") == total


def test_thread_time_by_state(demo) -> None:
    model, sql = demo
    t = model.sched.thread_states
    utid = _scalar(sql, "SELECT utid FROM thread_state GROUP BY utid ORDER BY count(*) DESC LIMIT 1")
    tid = _scalar(sql, f"SELECT tid FROM thread WHERE utid = {utid}")
    # Perfetto docs: thread time by state
    rows = sql.query(f"SELECT state, SUM(dur) AS total_dur FROM thread_state WHERE utid = {utid} "
                     "GROUP BY state").to_pylist()
    got = {r["state"]: r["total_dur"] for r in rows}
    mine = t.tid == tid
    assert sum(got.values()) == int((t.end - t.start)[mine].sum())
    runnable = mine & (t.state == RUNNABLE)
    assert got.get("R", 0) == int((t.end - t.start)[runnable].sum())
    assert len(got) == len(np.unique(t.state[mine]))


def test_counters_over_time(demo) -> None:
    model, sql = demo
    series = max(model.counters.series, key=len)
    # Perfetto docs, "counters": values of one track over time with each sample's duration
    rows = sql.query(
        "SELECT ts, LEAD(ts, 1, ts) OVER (PARTITION BY track_id ORDER BY ts) - ts AS dur, value "
        "FROM counter c JOIN counter_track t ON c.track_id = t.id "
        f"WHERE t.name = '{series.label}' AND t.upid = (SELECT upid FROM process WHERE pid = {series.pid}) "
        "ORDER BY ts"
    )
    assert rows.column("ts").to_numpy().tolist() == series.ts.tolist()
    assert np.array_equal(rows.column("value").to_numpy(), series.value)
    assert rows.column("dur").to_numpy().tolist() == [*np.diff(series.ts).tolist(), 0]
    assert _scalar(sql, "SELECT count(*) FROM counter") == sum(len(c) for c in model.counters.series)


def test_top_slices_by_self_time(demo) -> None:
    model, sql = demo
    rows = sql.query(
        "SELECT s.id, s.dur - COALESCE(SUM(c.dur), 0) AS self_dur FROM slice s "
        "LEFT JOIN slice c ON c.parent_id = s.id GROUP BY s.id, s.dur ORDER BY self_dur DESC, s.id LIMIT 20"
    ).to_pylist()
    own = model.slices.self_dur
    for r in rows:
        if r["id"] < len(model.slices):
            assert r["self_dur"] == own[r["id"]]
    assert rows[0]["self_dur"] >= max(int(own.max()), 0) or rows[0]["id"] >= len(model.slices)


def test_args_are_decoded_only_when_a_query_names_them(demo) -> None:
    model = TraceModel(read_fxt(DEMO))
    sql = TraceSQL(model)
    sql.query("SELECT count(*) FROM slice")
    assert "args" not in sql.tables._built
    n = _scalar(sql, "SELECT count(*) FROM args")
    assert "args" in sql.tables._built
    assert n == int(model.cols.ev_nargs.sum())
    # a slice's arguments, as the details panel decodes them one record at a time
    row = int(np.flatnonzero(model.cols.ev_nargs[model.slices.event] > 0)[0])
    expected = model.cols.event_args(int(model.slices.event[row]))
    got = sql.query(f"SELECT a.key, a.value_type, a.int_value, a.string_value, a.real_value FROM slice s "
                    f"JOIN args a USING (arg_set_id) WHERE s.id = {row}").to_pylist()
    assert [g["key"] for g in got] == [a.name for a in expected]
    for g, a in zip(got, expected, strict=True):
        if isinstance(a.value, str):
            assert g["string_value"] == a.value
        elif isinstance(a.value, float):
            assert g["real_value"] == a.value


@pytest.mark.parametrize("source", [*THIRD_PARTY, "demo", "generated"])
def test_counts_equal_info_and_model(testdata, source: str) -> None:
    if source == "demo":
        cols = read_fxt(DEMO)
    elif source == "generated":
        cols = read_fxt_bytes(generate_trace(5_000, scheduling=True))
    else:
        cols = read_fxt(testdata / "fxt" / source)
    info = summarize(cols)
    model = TraceModel(cols)
    sql = TraceSQL(model)
    ev = info["events"]
    assert _scalar(sql, "SELECT count(*) FROM instant") == ev["instant"] == len(model.instants)
    assert _scalar(sql, "SELECT count(*) FROM thread_slice") == len(model.slices)
    assert _scalar(sql, "SELECT count(*) FROM _thread_slice") == len(model.slices)
    complete = int((cols.ev_kind == EventKind.DURATION_COMPLETE).sum())
    assert complete == ev["duration_complete"]
    begins_and_completes = ev["duration_begin"] + ev["duration_complete"]
    flagged = int(np.count_nonzero(model.slices.flags & 1))  # unmatched ends become slices too
    assert len(model.slices) == begins_and_completes + flagged
    samples = sum(len(c) for c in model.counters.series)
    assert _scalar(sql, "SELECT count(*) FROM counter") == samples
    # every argument of a counter event is a sample, or counted as not numeric
    counter_args = int(cols.ev_nargs[cols.ev_kind == EventKind.COUNTER].sum())
    assert samples + model.counters.non_numeric == counter_args
    assert _scalar(sql, "SELECT count(*) FROM provider") == len(info["providers"])
    assert _scalar(sql, "SELECT count(*) FROM warning") == len(info["warnings"])
    referenced = sql.query(
        "SELECT count(DISTINCT utid) AS threads, count(DISTINCT upid) AS processes FROM thread WHERE utid IN "
        "(SELECT utid FROM thread_slice UNION SELECT utid FROM instant)"
    ).to_pylist()[0]
    if ev["counter"] == 0 and ev["async_begin"] == 0 and ev["flow_begin"] == 0:  # all events on slices/instants
        assert referenced == {"threads": info["threads"], "processes": info["processes"]}
    assert _scalar(sql, "SELECT count(*) FROM log") == info["records"].get("log", 0)
    assert _scalar(sql, "SELECT count(*) FROM kernel_object") == sum(
        v for k, v in info["records"].items() if k.startswith("kernel_object")
    )
    # every thread and process the reader knows (info counts those that events name); async spans, flows
    # and scheduling as the model has them
    assert _scalar(sql, "SELECT count(*) FROM thread") == len(cols.threads_tid) >= info["threads"]
    assert _scalar(sql, "SELECT count(*) FROM process") == len(np.unique(cols.threads_pid)) >= info["processes"]
    spans = _scalar(sql, "SELECT count(*) FROM slice WHERE track_id IN (SELECT id FROM process_track)")
    assert spans == len(model.async_spans) >= ev["async_begin"]
    assert _scalar(sql, "SELECT count(*) FROM flow") == len(model.flows.src_slice)
    assert _scalar(sql, "SELECT count(*) FROM sched") == len(model.sched.cpu_slices)
    assert _scalar(sql, "SELECT count(*) FROM thread_state") == len(model.sched.thread_states)
    for table in PUBLIC_TABLES:  # every table answers, also on the smallest traces
        assert _scalar(sql, f"SELECT count(*) FROM {table}") >= 0


def test_first_query_joining_tables_by_using(demo) -> None:
    # the first query of a fresh connection names slice and thread in a USING join (tables not yet registered)
    model = TraceModel(read_fxt(DEMO))
    rows = TraceSQL(model).query(
        "SELECT t.tid, count(*) AS n FROM thread_slice s JOIN thread t USING (utid) GROUP BY t.tid ORDER BY t.tid"
    ).to_pylist()
    tids = model.cols.threads_tid[model.slices.thread]
    uniq, counts = np.unique(tids, return_counts=True)
    assert rows == [{"tid": int(t), "n": int(c)} for t, c in zip(uniq, counts, strict=True)]


def test_bad_sql_is_a_query_error(demo) -> None:
    _, sql = demo
    with pytest.raises(QueryError, match=r"(?i)syntax|parser"):
        sql.query("SELEC 1")
    with pytest.raises(QueryError, match="nope"):
        sql.query("SELECT * FROM nope")


def test_tables_wrap_the_models_columns(demo) -> None:
    """What the SQL tables add next to the model is kept small: event columns are the model's own buffers,
    names are narrow dictionary indices, per-process columns of async spans are runs, the slices' ids are
    counted by the views (no column)."""
    model, sql = demo
    sql.query("SELECT count(*) FROM slice")
    t, a = sql.tables.table("_thread_slice"), sql.tables.table("_async_slice")
    s = model.slices
    for column, mine in (("ts", s.ts), ("dur", s.dur), ("depth", s.depth)):
        assert t.column(column).chunk(0).buffers()[1].address == mine.ctypes.data, column
    # the slices' threads are the events' (the model stores none): made once, int32 as before
    assert t.column("utid").type == pa.int32() and t.column("utid").to_numpy().tolist() == s.thread.tolist()
    assert a.column("ts").chunk(0).buffers()[1].address == model.async_spans.start.ctypes.data
    assert t.column("name").type.index_type.bit_width <= 16 < 32
    assert pa.types.is_run_end_encoded(a.column("upid").type)
    assert "id" not in t.column_names and "id" not in a.column_names
    assert sql.query("SELECT id FROM slice").column(0).to_numpy().tolist() == list(range(len(s) + len(a)))
    # and what the views compute from them is what the model says
    spans = model.async_spans
    got = sql.query("SELECT s.id, s.dur, pt.upid FROM slice s JOIN process_track pt ON pt.id = s.track_id"
                    " ORDER BY s.id").to_pydict()
    assert got["id"] == list(range(len(s), len(s) + len(spans)))
    assert got["dur"] == (spans.end - spans.start).tolist()
    pids = sql.query("SELECT upid, pid FROM process").to_pydict()
    pid_of = dict(zip(pids["upid"], pids["pid"], strict=True))
    assert [pid_of[u] for u in got["upid"]] == np.asarray(spans.pid, np.int64).tolist()
    states = model.sched.thread_states
    got = sql.query("SELECT dur FROM thread_state ORDER BY id").column(0).to_numpy()
    assert np.array_equal(got, states.end - states.start)
