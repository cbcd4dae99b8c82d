"""The Info page's statistics (core.trace.stats): every count is what the model's tables hold, counted here
again row by row; reader warnings come first, as warning rows; blob payloads are read back from the file."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import numpy as np
import pytest

from fxscope.core.trace.model import TraceModel
from fxscope.core.trace.stats import READER_WARNINGS, WARNING, Stat, read_blob, summarize, trace_stats
from fxscope.formats.fxt.columns import Blob, EventKind, SchedKind
from fxscope.formats.fxt.reader import read_fxt
from fxscope.resources import DEMO_TRACE


def _table(stats: list[Stat]) -> dict[tuple[str, str], Stat]:
    table = {(s.section, s.name): s for s in stats}
    assert len(table) == len(stats), "a (section, name) pair appears twice"
    return table


def _expected(model: TraceModel) -> dict[tuple[str, str], object]:
    """The counts, from the model's tables and the reader's columns, one Python object per row."""
    cols = model.cols
    kinds = Counter(cols.ev_kind.tolist())
    slice_flags = model.slices.flags.tolist()
    spans = model.async_spans
    span_flags = spans.flags.tolist()
    flows = model.flows
    scopes = Counter(int(x) for x in model.instants.scope)
    sched_kinds = Counter(cols.sched_kind.tolist())
    threads = {t for t in cols.ev_thread.tolist() if t >= 0}
    messages = [cols.strings[m] for m in cols.log_message.tolist()]
    all_ts = cols.ev_ts.tolist() + cols.sched_ts.tolist() + cols.log_ts.tolist()
    ends = [int(e) for e, k in zip(cols.ev_end_ts.tolist(), cols.ev_kind.tolist(), strict=True) if k == 4]
    expected = {
        ("File", "path"): cols.path,
        ("File", "size"): Path(cols.path).stat().st_size,
        ("File", "byte order"): "little-endian",
        ("File", "providers"): len(cols.providers),
        ("Time", "start"): min(all_ts),
        ("Time", "end"): max(all_ts + ends),
        ("Time", "duration"): max(all_ts + ends) - min(all_ts),
        ("Records", "total"): sum(cols.record_counts.values()),
        ("Events", "total"): len(cols.ev_kind),
        ("Processes and threads", "processes"): len({int(cols.threads_pid[t]) for t in threads}),
        ("Processes and threads", "threads"): len(threads),
        ("Processes and threads", "kernel objects"): len(cols.kernel_objects),
        ("Slices", "total"): len(slice_flags),
        ("Slices", "max depth"): max(model.slices.depth.tolist()),
        ("Slices", "unmatched ends"): sum(1 for f in slice_flags if f & 1),
        ("Slices", "unclosed begins"): sum(1 for f in slice_flags if f & 2),
        ("Async spans", "total"): len(span_flags),
        ("Async spans", "instants bound to a span"): len(spans.instants.span),
        ("Async spans", "unmatched ends"): sum(1 for f in span_flags if f & 1),
        ("Async spans", "unclosed begins"): sum(1 for f in span_flags if f & 2),
        ("Async spans", "unbound async instants"): spans.unbound_instants,
        ("Flows", "links"): len(flows.src_slice),
        ("Flows", "unbound flow events"): flows.unbound,
        ("Flows", "steps/ends without a begin"): flows.dropped["without_start"],
        ("Counters", "series"): len(model.counters.series),
        ("Counters", "samples"): sum(len(s.ts) for s in model.counters.series),
        ("Instants", "total"): kinds[EventKind.INSTANT],
        ("Instants", "thread scope"): scopes[0],
        ("Instants", "global scope"): scopes[2],
        ("Scheduling", "records"): cols.record_counts["scheduling"],
        ("Scheduling", "CPUs"): len(set(cols.sched_cpu.tolist())),
        ("Scheduling", "context switches"): sched_kinds[SchedKind.CONTEXT_SWITCH]
        + sched_kinds[SchedKind.LEGACY_CONTEXT_SWITCH],
        ("Scheduling", "CPU slices"): len(model.sched.cpu_slices.start),
        ("Scheduling", "thread states"): len(model.sched.thread_states.start),
        ("Scheduling", "wakeups"): len(model.sched.wakeups.ts),
        ("Logs", "records"): cols.record_counts["log"],
        ("Logs", "records with symbolizer markup"): sum("{{{" in m for m in messages),
        ("Logs", "crash reports"): sum("{{{reset}}}" in m for m in messages),
        ("Blobs", "blobs"): cols.record_counts["blob"] + cols.record_counts["large"],
        ("Blobs", "total size"): sum(b.size for b in cols.blobs),
    }
    for kind in EventKind:
        if kinds[kind]:
            expected[("Events", kind.name.lower().replace("_", " "))] = kinds[kind]
    return expected


def _check(model: TraceModel) -> dict[tuple[str, str], Stat]:
    stats = trace_stats(model)
    table = _table(stats)
    for key, value in _expected(model).items():
        assert key in table, key
        assert table[key].value == value, key
    # reader warnings: first, in the reader's order, each a warning row named by its offset
    warned = [s for s in stats if s.section == READER_WARNINGS]
    assert stats[: len(warned)] == warned
    assert [f"{s.name}: {s.value}" for s in warned] == model.cols.warnings
    assert all(s.severity == WARNING for s in warned)
    # a problem count is a warning exactly when it is not zero; plain counts never are
    for s in stats[len(warned) :]:
        problem = s.note != ""
        assert s.severity == (WARNING if problem and s.value else "info"), s
    return table


def test_demo_stats_are_the_model_tables_counts() -> None:
    model = TraceModel(read_fxt(DEMO_TRACE))
    table = _check(model)
    # the demo has a bit of everything, and the generator's "buffer filled up" provider event
    for key in [("Scheduling", "CPU slices"), ("Logs", "crash reports"), ("Flows", "links"),
                ("Counters", "series"), ("Async spans", "total"), ("Instants", "global scope")]:  # fmt: skip
        assert table[key].value > 0, key
    assert table[("Blobs", "blobs")].value == 8
    overflow = [s for s in table.values() if s.section == READER_WARNINGS]
    assert (
        len(overflow) == 1
        and overflow[0].value == "provider 2: buffer filled up, records were likely dropped"
    )
    assert overflow[0].name == f"offset 0x{model.cols.buffer_overflows[0][1]:x}"
    assert table[("Async spans", "unclosed begins")].severity == WARNING  # the last unit's span stays open


def test_truncated_demo_stats(truncated_demo: Path) -> None:
    full = TraceModel(read_fxt(DEMO_TRACE))
    model = TraceModel(read_fxt(truncated_demo))
    table = _check(model)
    warned = [s for s in table.values() if s.section == READER_WARNINGS]
    assert any(
        s.value.startswith("truncated final record: ") and s.name.startswith("offset 0x") for s in warned
    )
    assert 0 < table[("Events", "total")].value < full.cols.n_events
    assert table[("File", "size")].value == truncated_demo.stat().st_size < DEMO_TRACE.stat().st_size


def test_summarize_counts_threads_as_the_events_refer_to_them(fxt) -> None:
    """An unresolved thread reference (-1) is no thread; the CLI's numbers are the core's."""
    cols = fxt([(EventKind.INSTANT, 10, (1, 2), "a"), (EventKind.INSTANT, 20, (3, 4), "b"),
                (EventKind.INSTANT, 30, (1, 5), "c")])  # fmt: skip
    cols.ev_thread = np.array(cols.ev_thread)  # (the reader's column is read-only: a writable copy)
    cols.ev_thread[1] = -1
    info = summarize(cols)
    assert (info["processes"], info["threads"]) == (1, 2)
    assert info["events"]["instant"] == 3 and info["first_ts_ns"] == 10 and info["last_ts_ns"] == 30


def test_read_blob_is_the_payload_the_writer_wrote(tmp_path: Path) -> None:
    all_blobs = read_fxt(DEMO_TRACE).blobs
    raw = [b for b in all_blobs if b.name == "raw-data"]  # chunks 0, 5, ... (core.synthetic_trace)
    assert [read_blob(DEMO_TRACE, b) for b in raw] == [
        bytes((5 * k + i) & 0xFF for i in range(37)) for k in range(len(raw))
    ]
    blobs = {b.name: b for b in all_blobs}
    assert read_blob(DEMO_TRACE, blobs["bytes"]) == b"\x01\x02\x03\x04" * 8
    assert read_blob(DEMO_TRACE, blobs["big-snapshot"]) == bytes(range(256)) * 160
    assert read_blob(DEMO_TRACE, blobs["attachment"]) == b"attachment payload"
    short = tmp_path / "short.fxt"
    short.write_bytes(DEMO_TRACE.read_bytes()[:100])
    with pytest.raises(OSError, match="past the end of the file"):
        read_blob(short, Blob("x", 1, 96, 37))


def test_third_party_trace_stats_match_their_recorded_counts(testdata: Path) -> None:
    """Counts checked against tests/data/fxt/expected-counts.json, which was recorded by other tools (see its
    MANIFEST), not against the tables under test: records and events in total and by kind, the file size and
    the first event's time (these traces tick in nanoseconds)."""
    import json

    expected_all = json.loads((testdata / "fxt" / "expected-counts.json").read_text())
    assert len(expected_all) == 3
    for name, expected in expected_all.items():
        model = TraceModel(read_fxt(testdata / "fxt" / name))
        # two reader warnings may share an offset (one record, two problems): key the rest only
        table = _table([s for s in trace_stats(model) if s.section != READER_WARNINGS])
        assert table[("File", "size")].value == expected["bytes"], name
        assert table[("Records", "total")].value == expected["records_total"], name
        assert table[("Events", "total")].value == expected["events_total"], name
        assert table[("Time", "start")].value == expected["event_timestamp_min"], name
        for record, count in expected["records"].items():
            family, _, kind = record.partition("/")
            if family == "event":
                assert table[("Events", kind.replace("_", " "))].value == count, (name, record)
        begins = expected["records"].get("event/duration_begin", 0)
        if begins and begins == expected["records"].get("event/duration_end"):
            # a well-formed begin/end trace: every begin is one slice, nothing left unmatched
            assert table[("Slices", "total")].value == begins, name
            assert table[("Slices", "unmatched ends")].value == 0, name


def test_a_code_column_of_threads_counts_as_its_values_do() -> None:
    """A one-byte code column of threads (its values taken as they are when the reader coded them, else
    counted by its index, not expanded) gives the same referenced threads, processes and unresolved-thread
    count as the same values in a plain column, -1 included."""
    from fxscope.core.trace.stats import _referenced_threads, _thread_values
    from fxscope.formats.fxt.coded_column import CodedColumn, coded

    cols = read_fxt(DEMO_TRACE)
    plain = np.array(cols.ev_thread, np.int16)
    rng = np.random.default_rng(3)
    for unresolved in (0, 1, 57):
        values = plain.copy()
        values[rng.choice(len(values), unresolved, replace=False)] = -1
        cols.ev_thread = coded(values)
        assert isinstance(cols.ev_thread, CodedColumn) and cols.ev_thread.every_value_used
        by_code = _thread_values(cols)
        cols.ev_thread = values
        by_value = _thread_values(cols)
        assert np.array_equal(_referenced_threads(cols, by_code), _referenced_threads(cols, by_value))
        assert by_code[1] == by_value[1] == unresolved
        cols.ev_thread = coded(values)
        coded_info = summarize(cols)
        cols.ev_thread = values
        assert coded_info == summarize(cols)


def test_a_code_column_of_some_rows_counts_the_values_it_holds() -> None:
    """A code column not known to use every value (some rows' codes: a value none of them holds) is counted
    by its index: the value no row holds is no referenced thread; the reader's column (every value used)
    takes its values as they are, and -1 among them is counted."""
    from fxscope.core.trace.stats import _referenced_threads, _thread_values
    from fxscope.formats.fxt.coded_column import CodedColumn, coded

    cols = read_fxt(DEMO_TRACE)
    full = coded(np.array(cols.ev_thread, np.int16))
    assert isinstance(full, CodedColumn) and len(full.values) > 2
    kept = full.index != 1  # (the rows of every code but 1)
    cols.ev_thread = CodedColumn(full.index[kept], full.values)
    assert not cols.ev_thread.every_value_used
    expected = np.unique(np.asarray(cols.ev_thread))
    assert full.values[1] not in expected
    assert np.array_equal(_referenced_threads(cols, _thread_values(cols)), expected[expected >= 0])
    cols.ev_thread = CodedColumn(full.index, full.values, every_value_used=True)
    assert np.array_equal(_referenced_threads(cols, _thread_values(cols)), full.values[full.values >= 0])
    with_missing = np.array(full, np.int16)
    with_missing[[0, 5, 9]] = -1
    cols.ev_thread = coded(with_missing)
    assert _thread_values(cols)[1] == 3


def test_flag_counts_are_the_rows_with_each_bit() -> None:
    """The flag counts (none set known from one count) equal the rows with each bit, set or not."""
    from fxscope.core.trace.stats import _flag_counts

    flags = np.random.default_rng(5).integers(0, 256, 100_000).astype(np.uint8)
    bits = (1, 2, 4, 128)
    assert _flag_counts(flags, *bits) == [sum(1 for f in flags.tolist() if f & b) for b in bits]
    one = np.zeros(100_000, np.uint8)
    one[-1] = 2
    assert _flag_counts(one, 1, 2) == [0, 1]
    assert _flag_counts(np.zeros(7, np.uint8), 1, 2) == [0, 0] == _flag_counts(np.zeros(0, np.uint8), 1, 2)


def test_instant_scope_counts_are_counted_once_and_bounded() -> None:
    """The Info tab's scope counts are the scopes' counts, whether the build counted them with the times
    (the compiled path) or a later read did; a damaged scope word (huge) counts in no scope and allocates
    nothing its size (a bincount would)."""
    from fxscope.core.trace.instants import InstantTable

    model = TraceModel(read_fxt(DEMO_TRACE))
    inst = model.instants
    assert len(inst) and inst.scope_counts() == np.bincount(np.asarray(inst.scope), minlength=3)[:3].tolist()
    z = np.zeros(4, np.int32)
    damaged = InstantTable(ts=np.arange(4), thread=z, pid=z, name=z, category=z,
                           scope=np.array([0, 1, 2, 1 << 60], np.uint64), event=z)  # fmt: skip
    assert damaged.scope_counts() == [1, 1, 1]
    stats = {(s.section, s.name): s.value for s in trace_stats(model)}
    assert [stats[("Instants", f"{k} scope")] for k in ("thread", "process", "global")] == inst.scope_counts()
