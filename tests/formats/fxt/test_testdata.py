"""The third-party FXT files read with exactly the counts of ../shared/testdata/fxt/expected-counts.json."""

from __future__ import annotations

import json
from collections import Counter

import numpy as np
import pytest

from fxscope.formats.fxt.args import ArgType
from fxscope.formats.fxt.columns import EventKind
from fxscope.formats.fxt.reader import read_fxt

FILES = ["richiesams_fxt-python_trace.fxt", "ocaml-trace_t2_first.fxt", "ocaml-trace_t2_second.fxt"]


@pytest.fixture(scope="module")
def expected(testdata):
    return json.loads((testdata / "fxt" / "expected-counts.json").read_text())


@pytest.mark.parametrize("name", FILES)
def test_counts_match_expected(testdata, expected, name):
    exp = expected[name]
    cols = read_fxt(testdata / "fxt" / name)
    by_type = Counter()
    for key, count in exp["records"].items():
        by_type[key.split("/")[0]] += count
    got = {k: v for k, v in cols.record_counts.items() if v}
    assert got == dict(by_type)
    assert sum(cols.record_counts.values()) == exp["records_total"]
    assert len(cols.ev_ts) == exp["events_total"]
    kinds = Counter(EventKind(k).name.lower() for k in cols.ev_kind.tolist())
    exp_kinds = {k.split("/")[1]: v for k, v in exp["records"].items() if k.startswith("event/")}
    assert dict(kinds) == exp_kinds
    assert int(cols.ev_ts.min()) == exp["event_timestamp_min"]
    assert int(cols.ev_ts.max()) == exp["event_timestamp_max"]
    assert int((np.diff(cols.ev_ts) < 0).sum()) == exp["events_with_timestamp_lower_than_previous_event"]
    arg_types = Counter(
        ArgType(a.type).name.lower() for i in range(len(cols.ev_ts)) for a in cols.event_args(i)
    )
    assert dict(arg_types) == exp["event_argument_types"]
    meta = {k: v for k, v in exp["records"].items() if k.startswith("kernel_object/")}
    assert Counter(f"kernel_object/obj_type_{o.obj_type}" for o in cols.kernel_objects) == Counter(meta)


def test_jane_street_trace(testdata):
    cols = read_fxt(testdata / "fxt" / "richiesams_fxt-python_trace.fxt")
    assert [(p.id, p.name) for p in cols.providers] == [(0, "jane_tracing")]
    assert cols.ticks_per_second == [1_000_000_000]  # from the 4-word initialization record
    assert {cols.strings[i] for i in np.unique(cols.ev_category)} == {""}  # "" registered at index 105
    assert (cols.ev_thread >= 0).all()
    assert list(zip(cols.threads_pid.tolist(), cols.threads_tid.tolist(), strict=True)) == [(1, 2)]
    procs = {o.koid: o.name for o in cols.kernel_objects if o.obj_type == 1}
    assert procs == {1: "2248878/2248878"}
    thread = next(o for o in cols.kernel_objects if o.obj_type == 2)
    assert (thread.koid, thread.name, thread.args[0].name, thread.args[0].value) == (2, "main", "process", 1)
    assert cols.warnings == []
    # the out-of-order event the MANIFEST names: #34,554 at byte offset 991,128 with timestamp 0
    assert int(cols.ev_offset[34554]) == 991128 and int(cols.ev_ts[34554]) == 0
    first_begin = int(np.flatnonzero(cols.ev_kind == EventKind.DURATION_BEGIN)[0])
    kinds = {a.type for a in cols.event_args(first_begin)}
    assert kinds <= {ArgType.STRING, ArgType.POINTER}


def test_ocaml_first_has_no_provider_records(testdata):
    cols = read_fxt(testdata / "fxt" / "ocaml-trace_t2_first.fxt")
    assert [(p.id, p.name) for p in cols.providers] == [(0, "")]  # implicit provider 0 (P1)
    assert cols.strings[cols.ev_name[0]] == "hello" and cols.strings[cols.ev_category[0]] == ""
    t = cols.ev_thread[0]
    assert (int(cols.threads_pid[t]), int(cols.threads_tid[t])) == (1, 86)
    assert [(a.name, a.value) for a in cols.event_args(0)] == [("x", 42)]


def test_ocaml_second_quirks(testdata):
    """Provider-info name length 2 ("oc"), and the thread record that came before provider-info (P2/P9)."""
    cols = read_fxt(testdata / "fxt" / "ocaml-trace_t2_second.fxt")
    assert [(p.id, p.name) for p in cols.providers] == [(0, ""), (1, "oc")]
    assert [cols.strings[i] for i in cols.ev_name] == ["outer", "inner", "hello"]
    assert (cols.ev_provider == 1).all()
    assert (cols.ev_thread == -1).all()  # provider 1 starts with an empty thread table
    assert any(
        "thread ref 5 not registered (provider 1)" in w and w.startswith("offset 0x") for w in cols.warnings
    )
    complete = cols.ev_kind == EventKind.DURATION_COMPLETE
    assert (cols.ev_end_ts[complete] >= cols.ev_ts[complete]).all()
