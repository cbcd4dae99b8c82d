"""The model's derived tables: built on first access, once, and consistent on the third-party traces."""

from __future__ import annotations

import numpy as np

from core.synthetic_trace import generate_trace
from core.trace.model import TraceModel
from formats.fxt.reader import read_fxt, read_fxt_bytes

TABLES = ("async_spans", "flows", "counters", "instants", "sched", "objects")


def test_tables_are_built_lazily_and_cached() -> None:
    model = TraceModel(read_fxt_bytes(generate_trace(6_000)))
    for name in TABLES:
        first = getattr(model, name)
        assert getattr(model, name) is first
    assert len(model.async_spans) and len(model.flows) and len(model.counters)
    assert len(model.instants) and len(model.sched.cpu_slices)
    # flows index the model's own slices
    assert int(model.flows.dst_slice.max()) < len(model.slices)


def test_third_party_traces(testdata) -> None:
    jane = TraceModel(read_fxt(testdata / "fxt" / "richiesams_fxt-python_trace.fxt"))
    # MANIFEST: 17,296 begin/end pairs, nothing else timed; one process (koid 1) and thread (koid 2)
    assert len(jane.slices) == 17296
    assert len(jane.async_spans) == len(jane.flows) == len(jane.counters) == len(jane.instants) == 0
    assert jane.objects.koid_label(2) == "main (2)"
    first = TraceModel(read_fxt(testdata / "fxt" / "ocaml-trace_t2_first.fxt"))
    inst = first.instants
    assert len(inst) == 1 and first.strings[inst.name[0]] == "hello"
    assert inst.ts.tolist() == [12_345_678]
    assert first.cols.event_args(int(inst.event[0]))[0].value == 42
    second = TraceModel(read_fxt(testdata / "fxt" / "ocaml-trace_t2_second.fxt"))
    # two complete events on the unresolved thread ref 5 (thread -1): "outer" encloses "inner"
    names = [second.strings[i] for i in second.slices.name]
    assert names == ["outer", "inner"] and second.slices.depth.tolist() == [0, 1]
    assert np.all(second.slices.thread == -1)
