"""Write random traces with the writer, read them back equal (hypothesis), both byte orders."""

from __future__ import annotations

import math

from hypothesis import given, settings
from hypothesis import strategies as st

from fxscope.formats.fxt.args import ArgType as A
from fxscope.formats.fxt.columns import EventKind as K
from fxscope.formats.fxt.reader import read_fxt_bytes
from fxscope.formats.fxt.writer import FxtWriter

TEXT = st.text(min_size=1, max_size=20)
U64 = st.integers(0, 2**64 - 1)

ARG_VALUE = {
    A.NULL: st.none(),
    A.INT32: st.integers(-(2**31), 2**31 - 1),
    A.UINT32: st.integers(0, 2**32 - 1),
    A.INT64: st.integers(-(2**63), 2**63 - 1),
    A.UINT64: U64,
    A.DOUBLE: st.floats(allow_nan=False),
    A.STRING: TEXT,
    A.POINTER: U64,
    A.KOID: U64,
    A.BOOL: st.booleans(),
    A.BLOB: st.binary(max_size=30),
}
ARG = st.sampled_from(list(ARG_VALUE)).flatmap(lambda t: st.tuples(TEXT, st.just(t), ARG_VALUE[t]))

EVENT = st.fixed_dictionaries(
    {
        "kind": st.sampled_from(list(K)),
        "ts": st.integers(0, 2**62),
        "thread": st.one_of(st.tuples(U64, U64), st.integers(1, 3)),
        "category": st.one_of(st.just(""), TEXT, st.integers(1, 3)),
        "name": st.one_of(TEXT, st.integers(1, 3)),
        "args": st.lists(ARG, max_size=4),
        "data": U64,
        "indexed_args": st.booleans(),
    }
)


@settings(max_examples=120, deadline=None)
@given(events=st.lists(EVENT, max_size=12), big=st.booleans(), names=st.lists(TEXT, min_size=3, max_size=3))
def test_events_round_trip(events, big, names):
    w = FxtWriter(big_endian=big)
    w.provider_info(3, "prov")
    for i, s in enumerate(names):
        w.string(i + 1, s)
        w.thread(i + 1, 100 + i, 200 + i)
    for e in events:
        kind = e["kind"]
        data = e["data"] if kind in (K.COUNTER, K.DURATION_COMPLETE) or kind >= K.ASYNC_BEGIN else None
        if kind == K.DURATION_COMPLETE:
            data = min(e["ts"] + (e["data"] >> 2), 2**63 - 1)
        args = [((1 if e["indexed_args"] else n), t, v) for n, t, v in e["args"]]
        w.event(kind, e["ts"], e["thread"], e["category"], e["name"], args, data=data)
    cols = read_fxt_bytes(w.getvalue())
    no_init = [w for w in cols.warnings if "provider 3 ('prov') has no initialization record" in w]
    assert len(cols.warnings) == len(no_init) == (1 if events else 0)
    assert len(cols.ev_ts) == len(events)

    def text(ref):
        return names[ref - 1] if isinstance(ref, int) else ref

    for i, e in enumerate(events):
        assert cols.ev_kind[i] == e["kind"] and cols.ev_ts[i] == e["ts"]
        assert cols.strings[cols.ev_category[i]] == text(e["category"])
        assert cols.strings[cols.ev_name[i]] == text(e["name"])
        pid, tid = (
            (100 + e["thread"] - 1, 200 + e["thread"] - 1) if isinstance(e["thread"], int) else e["thread"]
        )
        assert (cols.threads_pid[cols.ev_thread[i]], cols.threads_tid[cols.ev_thread[i]]) == (pid, tid)
        if e["kind"] == K.DURATION_COMPLETE:
            assert cols.ev_end_ts[i] == min(e["ts"] + (e["data"] >> 2), 2**63 - 1)
        elif e["kind"] in (K.COUNTER,) or e["kind"] >= K.ASYNC_BEGIN:
            assert cols.ev_id[i] == e["data"]
        got = cols.event_args(i)
        assert len(got) == len(e["args"])
        for arg, (name, atype, value) in zip(got, e["args"], strict=True):
            assert arg.name == (names[0] if e["indexed_args"] else name)
            assert arg.type == atype
            if atype == A.DOUBLE:
                assert arg.value == value or (math.isnan(arg.value) and math.isnan(value))
            else:
                assert arg.value == value


@settings(max_examples=60, deadline=None)
@given(
    big=st.booleans(),
    logs=st.lists(st.tuples(st.integers(0, 2**62), st.text(max_size=40)), max_size=5),
    objects=st.lists(st.tuples(U64, st.integers(0, 255), TEXT, st.lists(ARG, max_size=3)), max_size=4),
    blobs=st.lists(st.tuples(TEXT, st.integers(1, 3), st.binary(max_size=100)), max_size=3),
    sched=st.lists(
        st.tuples(st.integers(0, 2**62), st.integers(0, 255), st.integers(0, 5), U64, U64), max_size=4
    ),
)
def test_other_records_round_trip(big, logs, objects, blobs, sched):
    w = FxtWriter(big_endian=big)
    w.initialization(1_000_000_000)
    for ts, msg in logs:
        w.log(ts, (1, 2), msg)
    for koid, otype, name, args in objects:
        w.kernel_object(koid, otype, name, args)
    for name, btype, payload in blobs:
        w.blob(name, btype, payload)
    for ts, cpu, state, out_tid, in_tid in sched:
        w.context_switch(ts, cpu, state, out_tid, in_tid)
        w.legacy_context_switch(ts, cpu, state, (1, out_tid), (2, in_tid))
    data = w.getvalue()
    cols = read_fxt_bytes(data)
    assert cols.warnings == []
    assert [cols.strings[m] for m in cols.log_message] == [m for _, m in logs]
    assert cols.log_ts.tolist() == [t for t, _ in logs]
    assert [(o.koid, o.obj_type, o.name) for o in cols.kernel_objects] == [
        (k, t, n) for k, t, n, _ in objects
    ]
    assert [[(a.name, a.type) for a in o.args] for o in cols.kernel_objects] == [
        [(n, t) for n, t, _ in args] for *_, args in objects
    ]
    assert [(b.name, b.blob_type, data[b.offset : b.offset + b.size]) for b in cols.blobs] == blobs
    assert cols.sched_in_tid.tolist() == [x for s in sched for x in (s[4], s[4])]
    assert cols.sched_out_state.tolist() == [x for s in sched for x in (s[2], s[2])]
    assert cols.sched_in_pid.tolist() == [x for _ in sched for x in (0, 2)]
