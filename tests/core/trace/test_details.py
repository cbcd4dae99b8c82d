"""Details of async spans and instants on hand-built traces: names, times, notes, arguments (koids labelled
with their objects) and the async instants bound to a span."""

from __future__ import annotations

from fxscope.core.trace.details import async_details, instant_details
from fxscope.core.trace.model import TraceModel
from fxscope.formats.fxt.args import ArgType
from fxscope.formats.fxt.columns import EventKind as K

A = (1, 10)
B = (2, 20)


def _objects(w) -> None:
    w.kernel_object(1, 1, "app.cm")
    w.kernel_object(10, 2, "main", [("process", ArgType.KOID, 1)])
    w.kernel_object(20, 2, "worker", [("process", ArgType.KOID, 2)])


def test_async_span_details_with_arguments_notes_and_bound_instants(fxt) -> None:
    cols = fxt([
        (K.DURATION_BEGIN, 50, A, "outer"),
        (K.ASYNC_BEGIN, 100, A, "load", 7, [("url", ArgType.STRING, "a.png"), ("owner", ArgType.KOID, 20)]),
        (K.ASYNC_INSTANT, 150, A, "load", 7, [("step", ArgType.STRING, "decoded")]),
        (K.ASYNC_INSTANT, 170, A, "load", 7),
        (K.ASYNC_END, 400, B, "load", 7),
        (K.ASYNC_BEGIN, 450, A, "save", 8),  # never ends
        (K.DURATION_END, 900, A, "outer"),
    ], _objects)  # fmt: skip
    model = TraceModel(cols)
    spans = model.async_spans
    load = next(i for i in range(len(spans)) if int(spans.id[i]) == 7)
    save = next(i for i in range(len(spans)) if int(spans.id[i]) == 8)
    d = async_details(model, load)
    assert (d["name"], d["category"], d["process"], d["id"]) == ("load", "cat", "app.cm 1", 7)
    assert (d["start_ns"], d["duration_ns"], d["notes"]) == (100, 300, [])
    assert d["args"] == [("url", "a.png"), ("owner", "worker (20)")]
    assert d["instants"] == [("load", 150), ("load", 170)]
    d = async_details(model, save)
    assert d["start_ns"] == 450 and d["duration_ns"] == model.end_ns - 450
    assert d["notes"] == ["never ended in the trace (begin without an end)"] and d["instants"] == []


def test_instant_details_name_scope_thread_and_arguments(fxt) -> None:
    cols = fxt([
        (K.DURATION_BEGIN, 50, A, "outer"),
        (K.INSTANT, 120, B, "vsync", None, [("frame", ArgType.UINT32, 42), ("by", ArgType.KOID, 10)], "gfx"),
        (K.DURATION_END, 900, A, "outer"),
    ], _objects)  # fmt: skip
    model = TraceModel(cols)
    row = 0
    d = instant_details(model, row)
    assert (d["name"], d["category"], d["scope"]) == ("vsync", "gfx", "thread")
    assert (d["thread"], d["process"], d["ts_ns"]) == ("worker 20", "process 2", 120)
    assert d["args"] == [("frame", "42"), ("by", "main (10)")]


def test_counter_sample_details_value_delta_and_how_long_it_held(fxt) -> None:
    from fxscope.core.trace.details import counter_details, counter_row

    cols = fxt([
        (K.COUNTER, 100, A, "mem", 1, [("heap", ArgType.INT64, 10), ("slab", ArgType.DOUBLE, 0.5)]),
        (K.COUNTER, 300, A, "mem", 1, [("heap", ArgType.INT64, 25), ("slab", ArgType.DOUBLE, 0.25)]),
        (K.COUNTER, 700, A, "mem", 1, [("heap", ArgType.INT64, 5)]),
        (K.INSTANT, 1000, A, "end"),
    ], _objects)  # fmt: skip
    model = TraceModel(cols)
    heap = next(i for i, s in enumerate(model.counters.series) if s.arg_name == "heap")
    d = counter_details(model, counter_row(heap, 1))
    assert (d["series"], d["process"], d["ts_ns"], d["value"]) == ("mem:heap:1", "app.cm 1", 300, 25.0)
    assert (d["delta"], d["duration_ns"], d["min"], d["max"], d["samples"]) == (15.0, 400, 5.0, 25.0, 3)
    first, last = counter_details(model, counter_row(heap, 0)), counter_details(model, counter_row(heap, 2))
    assert first["delta"] is None and last["duration_ns"] == model.end_ns - 700 == 300
