"""One name per thread and process, by one rule (core/trace/objects.py), whoever asks: the thread tracks, the
process groups, the slice, CPU-slice and thread-state details, and the Chrome export."""

from __future__ import annotations

import json
from pathlib import Path

from fxscope.core.trace.export_chrome import export_chrome_json
from fxscope.core.trace.model import TraceModel
from fxscope.core.trace.prepare import prepare_model
from fxscope.core.trace.sched import cpu_slice_details, thread_state_details
from fxscope.formats.fxt.columns import EventKind as K
from fxscope.formats.fxt.writer import FxtWriter
from tests.core.trace.conftest import build_columns

PROCESS, THREAD = 1, 2


def _conflicting(w: FxtWriter) -> None:
    w.kernel_object(1, PROCESS, "compositor")
    w.kernel_object(1, PROCESS, "comp")  # the kernel's truncated copy: a prefix does not replace the name
    w.kernel_object(20, THREAD, "worker-thread-long-name", [("process", 8, 1)])
    w.kernel_object(20, THREAD, "wkr")  # renamed: the last name wins, as in Perfetto
    w.kernel_object(20, THREAD, "wk")  # a truncated copy of the current name: ignored
    w.kernel_object(20, THREAD, "")  # an empty name never erases one
    w.kernel_object(21, THREAD, "io-thread-with-a-long-name")
    w.kernel_object(21, THREAD, "io-thread")  # prefix: the long name stays
    w.context_switch(5, 0, 0, 0, 20)
    w.context_switch(40, 0, 3, 20, 21)


def _model() -> TraceModel:
    cols = build_columns([(K.DURATION_COMPLETE, 10, (1, 20), "work", 30), (K.DURATION_COMPLETE, 12, (1, 21), "io", 8)],
                         setup=_conflicting)  # fmt: skip
    model = TraceModel(cols)
    prepare_model(model)
    return model


def test_every_view_names_a_thread_alike(tmp_path: Path) -> None:
    model = _model()
    [group] = model.processes
    assert group.name == "compositor 1"
    assert {t.tid: t.name for t in group.tracks} == {20: "wkr 20", 21: "io-thread-with-a-long-name 21"}
    cs = model.sched.cpu_slices
    row = next(i for i, tid in enumerate(cs.tid.tolist()) if tid == 20)
    assert cpu_slice_details(model, row)["thread"] == "wkr 20"
    st = model.sched.thread_states
    row = next(i for i, tid in enumerate(st.tid.tolist()) if tid == 20)
    assert thread_state_details(model, row)["thread"] == "wkr 20"
    out = tmp_path / "t.json"
    export_chrome_json(model, out)
    meta = {
        (e["name"], e["tid"]): e["args"]["name"]
        for e in json.loads(out.read_text())["traceEvents"]
        if e["ph"] == "M"
    }
    assert meta[("thread_name", 20)] == "wkr" and meta[("thread_name", 21)] == "io-thread-with-a-long-name"
    assert meta[("process_name", 0)] == "compositor"


def test_a_truncated_process_argument_names_no_process() -> None:
    """A thread object whose ``process`` koid argument is one word short (found by the FXT fuzz harness: the
    model's constructor raised TypeError on it) reads with the reader's warning; the thread keeps the process
    its events name, and the details panel says what the argument lacks."""
    from fxscope.core.trace.objects import ObjectLabels
    from fxscope.formats.fxt.args import ArgType
    from fxscope.formats.fxt.reader import read_fxt_bytes

    w = FxtWriter()
    w.initialization(1_000_000_000)
    w.kernel_object(20, THREAD, "worker", [("process", 8, 7)])
    w.event(K.DURATION_COMPLETE, 10, (1, 20), "cat", "work", (), data=30)
    blob = bytearray(w.getvalue())
    whole = (8 | 3 << 4 | 0x8007 << 16).to_bytes(8, "little")  # the koid argument: header, name, value
    at = blob.index(whole)
    blob[at : at + 8] = (8 | 2 << 4 | 0x8007 << 16).to_bytes(8, "little")  # its size without the value word
    cols = read_fxt_bytes(bytes(blob))
    assert any("'process' is shorter than its type needs" in w for w in cols.warnings)
    [obj] = cols.kernel_objects
    [arg] = obj.args
    assert (arg.type, arg.value) == (ArgType.KOID, None)
    model = TraceModel(cols)
    prepare_model(model)
    [group] = model.processes
    assert group.pid == 1 and [t.name for t in group.tracks] == ["worker 20"]
    labels = ObjectLabels(cols)
    assert labels.thread_process == {}
    assert labels.label_arg(arg, 1) == "<koid argument shorter than its type needs>"
