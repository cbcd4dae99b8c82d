"""What the details panel shows for a selected async span, instant event or counter sample, and the one-line
hover text of any box (:func:`describe`) (thread slices have
:meth:`fxscope.core.trace.model.TraceModel.slice_details`; scheduling rows have their own in :mod:`fxscope.core.trace.sched`).

Values come back as plain Python (names resolved, times in ns, koid and pointer arguments labelled with
their objects), so the Qt panel only formats them.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from fxscope.core.trace import async_spans
from fxscope.core.trace.sched import STATE_NAMES
from fxscope.core.units import format_duration_ns as format_ns
from fxscope.core.units import format_quantity

if TYPE_CHECKING:
    from fxscope.core.trace.model import TraceModel


def _string(model: TraceModel, index: int) -> str:
    strings = model.strings
    return strings[index] if 0 <= index < len(strings) else "<unresolved>"


def event_args(model: TraceModel, event: int, pid: int) -> list[tuple[str, object]]:
    """The arguments of event row ``event`` as (name, value shown), never raising: a corrupt argument
    block is one line saying so (the panel must open whatever the file holds)."""
    try:
        return [(a.name, model.objects.label_arg(a, pid)) for a in model.cols.event_args(event)]
    except Exception as exc:  # noqa: BLE001 - any decoding failure is shown, not raised
        return [("<arguments unreadable>", str(exc))]


def async_details(model: TraceModel, row: int) -> dict[str, object]:
    """An async span: name, category, process, correlation id, times, notes, the begin's arguments and the
    async instants bound to it (name and time)."""
    t = model.async_spans
    pid = int(t.pid[row])
    flags = int(t.flags[row])
    notes = []
    if flags & async_spans.FLAG_UNMATCHED_END:
        notes.append("began before the trace started (end without a begin)")
    if flags & async_spans.FLAG_UNCLOSED:
        notes.append("never ended in the trace (begin without an end)")
    inst = t.instants
    bound = t.instants_of(row)
    start, end = int(t.start[row]), int(t.end[row])
    return {
        "name": _string(model, int(t.name[row])),
        "category": _string(model, int(t.category[row])),
        "process": model.process_name(pid),
        "id": int(t.id[row]),
        "start_ns": start,
        "duration_ns": end - start,
        "lane": int(t.lane[row]),
        "notes": notes,
        "args": event_args(model, int(t.event[row]), pid),
        "instants": [(_string(model, int(inst.name[i])), int(inst.ts[i])) for i in bound.tolist()],
    }


SCOPE_NAMES = {0: "thread", 1: "process", 2: "global"}


def instant_details(model: TraceModel, row: int) -> dict[str, object]:
    """An instant event: name, category, scope, thread, process, time and arguments."""
    inst = model.instants
    thread = int(inst.thread[row])
    pid = int(inst.pid[row])
    return {
        "name": _string(model, int(inst.name[row])),
        "category": _string(model, int(inst.category[row])),
        "scope": SCOPE_NAMES.get(int(inst.scope[row]), str(int(inst.scope[row]))),
        "thread": model.thread_name(thread) if thread >= 0 else "",
        "process": model.process_name(pid),
        "ts_ns": int(inst.ts[row]),
        "args": event_args(model, int(inst.event[row]), pid),
    }


#: a counter sample's selection row: the series index in the high bits, the sample in the low 32
COUNTER_SAMPLE_BITS = 32


def counter_row(series: int, sample: int) -> int:
    """The selection row of sample ``sample`` of counter series ``series``."""
    return (series << COUNTER_SAMPLE_BITS) | sample


def counter_details(model: TraceModel, row: int) -> dict[str, object]:
    """A counter sample (``row`` from :func:`counter_row`): the series, the value, its change from the
    previous sample and how long it held (until the next sample, or the end of the trace), as Perfetto shows
    a selected counter; plus the series' minimum, maximum and sample count."""
    index, i = row >> COUNTER_SAMPLE_BITS, row & ((1 << COUNTER_SAMPLE_BITS) - 1)
    s = model.counters.series[index]
    ts, value = int(s.ts[i]), float(s.value[i])
    until = int(s.ts[i + 1]) if i + 1 < len(s.ts) else model.end_ns
    return {
        "series": s.label,
        "process": model.process_name(s.pid),
        "ts_ns": ts,
        "value": value,
        "delta": value - float(s.value[i - 1]) if i > 0 else None,
        "duration_ns": until - ts,
        "min": float(np.nanmin(s.value)),
        "max": float(np.nanmax(s.value)),
        "samples": len(s.ts),
    }


def describe(model: TraceModel, kind: str, row: int) -> str:
    """One line about a box or point, for the timeline's hover tooltip: its name and how long it lasted."""
    m = model
    if kind == "slice":
        return f"{m.name_of(row)}  {format_ns(int(m.slices.dur[row]))}  ·  {m.thread_name(int(m.slices.thread[row]))}"
    if kind == "async":
        t = m.async_spans
        name = int(t.name[row])
        text = m.strings[name] if 0 <= name < len(m.strings) else "?"
        return f"{text} (async)  {format_ns(int(t.end[row]) - int(t.start[row]))}"
    if kind == "cpu":
        cs = m.sched.cpu_slices
        return f"{m.objects.koid_label(int(cs.tid[row]))}  {format_ns(int(cs.end[row]) - int(cs.start[row]))}"
    if kind == "state":
        st = m.sched.thread_states
        return f"{STATE_NAMES.get(int(st.state[row]), '?')}  {format_ns(int(st.end[row]) - int(st.start[row]))}"
    if kind == "instant":
        name = int(m.instants.name[row])
        return m.strings[name] if 0 <= name < len(m.strings) else "?"
    if kind == "log":
        text = m.logs.text(row)
        return text if len(text) <= 120 else text[:117] + "…"
    if kind == "crash":
        return f"crash report {row + 1}: click to open it"
    if kind == "counter":
        d = counter_details(model, row)
        return f"{d['series']} = {format_quantity(d['value'])}"
    return ""
