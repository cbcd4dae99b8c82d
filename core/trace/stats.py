"""A trace's vital statistics and problems, as Perfetto's "Info and stats" page lists them, Qt-free.

:func:`summarize` is what ``fxscope info`` prints (record and event counts, providers, span, reader
warnings); :func:`trace_stats` adds what the model made of the events (slices, async spans, flows,
counters, scheduling, logs, blobs) and the problems it counted (ends without a begin, begins never
closed, flow events and async instants that bind to nothing), one :class:`Stat` row each. Every count is a
numpy reduction over a whole column, or a length of a table the views already built: no loop per event.

Blob payloads stay in the file: :func:`read_blob` reads one at the offset the reader recorded.
"""

from __future__ import annotations

import os
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

import numpy as np

from fxscope.core.trace import async_spans, slices
from fxscope.core.trace.counters import CounterSet
from fxscope.core.trace.event_rows import event_kind_counts, kind_counts
from fxscope.core.trace.flows import FlowTable
from fxscope.core.trace.instants import InstantTable
from fxscope.core.trace.sched import SchedTables
from fxscope.formats.fxt.coded_column import CodedColumn
from fxscope.formats.fxt.columns import Blob, FxtColumns, SchedKind

if TYPE_CHECKING:
    from fxscope.core.trace.logs import LogTable  # (it brings the symbolizer)


class TraceTables(Protocol):
    """The tables :func:`trace_stats` counts (those of a :class:`fxscope.core.trace.model.TraceModel`): a protocol,
    not the model class, because the model imports this module for its ``stats`` table."""

    cols: FxtColumns
    start_ns: int
    end_ns: int
    processes: Sequence[Any]  # ProcessGroup: each with its ``tracks``
    slices: slices.SliceTable
    async_spans: async_spans.AsyncTable
    flows: FlowTable
    counters: CounterSet
    instants: InstantTable
    sched: SchedTables
    logs: LogTable

    @property
    def stats(self) -> list[Stat]: ...

#: the event kinds as ``fxscope info --json`` names them, in EventKind order
EVENT_KEYS = [
    "instant",
    "counter",
    "duration_begin",
    "duration_end",
    "duration_complete",
    "async_begin",
    "async_instant",
    "async_end",
    "flow_begin",
    "flow_step",
    "flow_end",
]

INFO = "info"
WARNING = "warning"

#: section of the reader's warnings (each one a row named by its byte offset)
READER_WARNINGS = "Reader warnings"

#: blob record types (spec: TRACE_BLOB_TYPE_*); large blob records are named by their format instead
BLOB_TYPES = {1: "data", 2: "last branch", 3: "perfetto"}
LARGE_BLOB_FORMATS = {0: "large blob", 1: "large blob (no metadata)"}


@dataclass(frozen=True)
class Stat:
    """One row of the Info page. ``unit`` says how to show ``value``: ``""`` as it is, ``"ns"`` a
    timestamp, ``"duration"`` a duration in ns, ``"bytes"`` a size."""

    section: str
    name: str
    value: object
    severity: str = INFO
    unit: str = ""
    note: str = ""  # what the row means, for a tooltip


def summarize(cols: FxtColumns, thread_values: tuple[np.ndarray, int] | None = None) -> dict:
    """The ``fxscope info --json`` object: counts, providers, distinct processes/threads that events refer
    to, first and last event timestamps, reader warnings. ``thread_values``: :func:`_thread_values` of
    ``cols`` when the caller has it."""
    kinds = event_kind_counts(cols)
    threads = _referenced_threads(cols, thread_values or _thread_values(cols))
    pids = np.unique(cols.threads_pid[threads]) if len(threads) else np.zeros(0)
    ts = cols.ev_ts
    return {
        "path": cols.path,
        "big_endian": cols.big_endian,
        "records": dict(cols.record_counts),
        "events": {key: int(kinds[i]) for i, key in enumerate(EVENT_KEYS)},
        "providers": [{"id": p.id, "name": p.name} for p in cols.providers],
        "processes": len(pids),
        "threads": len(threads),
        "first_ts_ns": int(ts.min()) if len(ts) else None,
        "last_ts_ns": int(ts.max()) if len(ts) else None,
        "warnings": list(cols.warnings),
    }


def _referenced_threads(cols: FxtColumns, thread_values: tuple[np.ndarray, int]) -> np.ndarray:
    """Thread table rows that some event refers to, ascending (one scatter of ``thread_values``'s values, no
    sort of the events)."""
    seen = np.zeros(len(cols.threads_pid) + 1, bool)
    seen[thread_values[0]] = True  # -1 (unresolved) lands in the extra last slot
    return np.flatnonzero(seen[:-1])


def _thread_values(cols: FxtColumns) -> tuple[np.ndarray, int]:
    """(the thread codes the events hold, and how many events hold none: code -1). For a one-byte code
    column its distinct values: when every one is some event's (the reader's column,
    :attr:`~fxscope.formats.fxt.coded_column.CodedColumn.every_value_used`) without a pass over the events
    unless -1 is among them (then a count of the index: at 100M events a pass of ~46 ms, 10 ms at 30M,
    past the caches), else those its index counts (one count of a byte column: expanding it to its values
    for a scatter and a comparison took ~60 ms at 10M events); else the column itself (each value counts
    once)."""
    thread = cols.ev_thread
    if isinstance(thread, CodedColumn):
        values = thread.values
        negative = values < 0
        if thread.every_value_used and not negative.any():
            return values, 0
        counts = kind_counts(thread.index, len(values))[: len(values)]
        return values[counts > 0], int(counts[negative].sum())
    values = np.asarray(thread)
    return values, int(np.count_nonzero(values < 0))


def _warning_row(line: str) -> Stat:
    """A reader warning ("offset 0x1a8: message") as a row named by its offset."""
    m = re.match(r"(offset 0x[0-9a-f]+): (.*)", line, re.S)
    name, text = (m.group(1), m.group(2)) if m else ("reader", line)
    return Stat(READER_WARNINGS, name, text, WARNING)


def _problem(section: str, name: str, count: int, note: str) -> Stat:
    """A count of something that went wrong: a warning when it is not zero."""
    return Stat(section, name, int(count), WARNING if count else INFO, note=note)


def _flag_counts(flags: np.ndarray, *bits: int) -> list[int]:
    """How many rows have each flag bit set. The problems they flag are rare: a table with none set is known
    from one count of its nonzero bytes (~1 ms at 25M slices, against ~6 ms for a mask and a count per bit)."""
    if len(flags) == 0 or np.count_nonzero(flags) == 0:
        return [0] * len(bits)
    return [int(np.count_nonzero(flags & bit)) for bit in bits]


def blob_type_name(blob: Blob) -> str:
    if blob.large_format is not None:
        return LARGE_BLOB_FORMATS.get(blob.large_format, f"large blob format {blob.large_format}")
    return BLOB_TYPES.get(blob.blob_type, f"type {blob.blob_type}")


def trace_stats(model: TraceTables) -> list[Stat]:
    """The Info page of ``model``: reader warnings first, then one section per kind of data."""
    cols = model.cols
    thread_values = _thread_values(cols)
    info = summarize(cols, thread_values)
    rows: list[Stat] = [_warning_row(w) for w in cols.warnings]

    def add(section: str, *items: tuple) -> None:
        for item in items:
            rows.append(item if isinstance(item, Stat) else Stat(section, *item))

    try:
        size: object = os.path.getsize(cols.path)
    except OSError:
        size = "unknown"
    add("File", ("path", cols.path), ("size", size, INFO, "bytes" if isinstance(size, int) else ""),
        ("byte order", "big-endian" if cols.big_endian else "little-endian"),
        ("providers", len(cols.providers)))  # fmt: skip
    tps = cols.ticks_per_second
    for i, p in enumerate(cols.providers):
        rate = f", {tps[i]:,} ticks/s" if i < len(tps) else ""
        add("File", (f"provider {p.id}", f"{p.name or '(unnamed)'}{rate}"))

    add("Time", ("start", model.start_ns, INFO, "ns"), ("end", model.end_ns, INFO, "ns"),
        ("duration", model.end_ns - model.start_ns, INFO, "duration"))  # fmt: skip

    records = info["records"]
    add("Records", ("total", sum(records.values())))
    add("Records", *((name.replace("_", " "), n) for name, n in records.items() if n))
    events = info["events"]
    add("Events", ("total", cols.n_events))
    add("Events", *((name.replace("_", " "), n) for name, n in events.items() if n))

    unresolved = thread_values[1]
    add("Processes and threads", ("processes", info["processes"]), ("threads", info["threads"]),
        ("thread tracks", sum(len(g.tracks) for g in model.processes)),
        ("kernel objects", len(cols.kernel_objects)), ("userspace objects", len(cols.userspace_objects)))  # fmt: skip
    if unresolved:
        add("Processes and threads", ("events on an unresolved thread", unresolved))

    s = model.slices
    flags = _flag_counts(s.flags, slices.FLAG_UNMATCHED_END, slices.FLAG_UNCLOSED)
    # (the tracks' deepest levels, which their build found: not a pass over every slice's depth)
    depth = max((t.max_depth for group in model.processes for t in group.tracks), default=0) if len(s) else 0
    add("Slices", ("total", len(s)), ("max depth", int(depth)),
        _problem("Slices", "unmatched ends", flags[0], "duration ends with no open begin on their thread: the "
                 "trace began inside these slices (drawn from the thread's first event)"),
        _problem("Slices", "unclosed begins", flags[1], "duration begins never ended: the trace stopped inside "
                 "these slices (drawn to the end of the trace)"))  # fmt: skip

    a = model.async_spans
    aflags = _flag_counts(a.flags, async_spans.FLAG_UNMATCHED_END, async_spans.FLAG_UNCLOSED)
    add("Async spans", ("total", len(a)), ("instants bound to a span", len(a.instants)),
        _problem("Async spans", "unmatched ends", aflags[0], "async ends with no begin of their (category, name, "
                 "id): drawn from the start of the trace"),
        _problem("Async spans", "unclosed begins", aflags[1], "async begins never ended: drawn to the end of the trace"),
        _problem("Async spans", "unbound async instants", a.unbound_instants, "async instants with no span of "
                 "their key or id open at their time (not shown)"))  # fmt: skip

    f = model.flows
    add("Flows", ("links", len(f)), _problem("Flows", "unbound flow events", f.unbound, "flow events with no "
        "enclosing slice on their thread (dropped)"))  # fmt: skip
    for key, label, note in (
        ("without_start", "steps/ends without a begin", "flow steps and ends of a flow never begun (dropped)"),
        ("ambiguous", "ambiguous (several processes)", "flow steps and ends in a process that began no flow of "
         "their id, while several other processes did (dropped)"),
        ("duplicate_begin", "begins of an active flow", "flow begins while a flow of their key was active (ignored)"),
    ):  # fmt: skip
        add("Flows", _problem("Flows", label, f.dropped.get(key, 0), note))

    c = model.counters
    add("Counters", ("series", len(c)), ("samples", sum(len(x) for x in c.series)),
        _problem("Counters", "non-numeric arguments", c.non_numeric, "arguments of counter events that are "
                 "not numbers (not plotted)"))  # fmt: skip

    inst = model.instants
    scope = inst.scope_counts() if len(inst) else [0, 0, 0]
    add("Instants", ("total", len(inst)), ("thread scope", int(scope[0])), ("process scope", int(scope[1])),
        ("global scope", int(scope[2])))  # fmt: skip

    sched = model.sched
    # (counted a block at a time: np.bincount widens a whole column to intp first, 8 bytes a record)
    kinds = kind_counts(cols.sched_kind, 3)
    cpus = int(np.count_nonzero(kind_counts(cols.sched_cpu, 0))) if len(cols.sched_cpu) else 0
    add("Scheduling", ("records", len(cols.sched_ts)), ("CPUs", cpus),
        ("context switches", int(kinds[SchedKind.CONTEXT_SWITCH] + kinds[SchedKind.LEGACY_CONTEXT_SWITCH])),
        ("CPU slices", len(sched.cpu_slices)), ("thread states", len(sched.thread_states)),
        ("wakeups", len(sched.wakeups)))  # fmt: skip

    logs = model.logs
    add("Logs", ("records", len(logs)), ("records with symbolizer markup", int(np.count_nonzero(logs.markup))),
        ("crash reports", len(logs.reports)))  # fmt: skip

    add("Blobs", ("blobs", len(cols.blobs)), ("total size", sum(b.size for b in cols.blobs), INFO, "bytes"))
    return rows


def model_stats(model: TraceTables) -> list[Stat]:
    """:func:`trace_stats` of ``model``, computed once and kept by the model (its ``stats`` table; the loader
    computes it off the UI thread: at 10M events it is tens of milliseconds of numpy)."""
    return model.stats


def warnings_of(stats: list[Stat]) -> list[Stat]:
    return [r for r in stats if r.severity == WARNING]


def read_blob(path: str | os.PathLike[str], blob: Blob) -> bytes:
    """The payload of ``blob`` read from the trace file at ``path`` (the reader keeps only its place)."""
    with open(path, "rb") as fh:
        fh.seek(blob.offset)
        data = fh.read(blob.size)
    if len(data) != blob.size:
        raise OSError(f"{path}: blob {blob.name!r} ends past the end of the file (was it changed?)")
    return data
