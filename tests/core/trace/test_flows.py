"""Flow links on hand-built traces (binding, chaining, cross-process keys, drops) and on a generated trace."""

from __future__ import annotations

import numpy as np
import pytest

from fxscope.core.synthetic_trace import generate_trace
from fxscope.core.trace.flows import build_flows
from fxscope.core.trace.slices import build_slices
from fxscope.formats.fxt.columns import EventKind as K
from fxscope.formats.fxt.reader import read_fxt_bytes

#: every test here runs with the span kernels and with the numpy paths
pytestmark = pytest.mark.usefixtures("span_paths")

P1A = (1, 10)
P1B = (1, 11)
P2 = (2, 20)
P3 = (3, 30)


def _links(cols):
    slices = build_slices(cols)
    flows = build_flows(cols, slices)
    name = [cols.strings[i] for i in slices.name]
    pairs = [
        (name[a], name[b], int(i)) for a, b, i in zip(flows.src_slice, flows.dst_slice, flows.id, strict=True)
    ]
    return slices, flows, pairs


def test_binds_to_the_innermost_open_slice_and_chains_begin_step_end(fxt) -> None:
    cols = fxt([
        (K.DURATION_BEGIN, 0, P1A, "outer"),
        (K.DURATION_BEGIN, 10, P1A, "inner"),
        (K.FLOW_BEGIN, 20, P1A, "f", 7),  # inner is open: binds to inner
        (K.DURATION_END, 30, P1A, "inner"),
        (K.FLOW_STEP, 40, P1A, "f", 7),  # inner ended: outer
        (K.DURATION_END, 100, P1A, "outer"),
        (K.DURATION_COMPLETE, 110, P1B, "work", 150),
        (K.FLOW_STEP, 120, P1B, "f", 7),
        (K.DURATION_BEGIN, 200, P1B, "done"),
        (K.FLOW_END, 200, P1B, "f", 7),  # same timestamp as the begin, after it in the file
        (K.DURATION_END, 210, P1B, "done"),
    ])  # fmt: skip
    slices, flows, pairs = _links(cols)
    # inner -> outer points back in time: drawn from the earlier slice (outer) to the later one
    links = sorted(zip(pairs, flows.src_ts.tolist(), flows.dst_ts.tolist(), strict=True))
    assert links == [
        (("outer", "inner", 7), 40, 20),
        (("outer", "work", 7), 40, 120),
        (("work", "done", 7), 120, 200),
    ]
    assert flows.unbound == 0 and flows.dropped == {"ambiguous": 0, "without_start": 0, "duplicate_begin": 0}
    outer = int(np.flatnonzero(slices.ts == 0)[0])
    inner = int(np.flatnonzero(slices.ts == 10)[0])
    assert sorted(pairs[i][1] for i in flows.outgoing(outer)) == ["inner", "work"]
    assert flows.incoming(outer).tolist() == [] and len(flows.incoming(inner)) == 1
    leave, arrive = flows.anchors(slices)
    assert sorted(zip(leave.tolist(), arrive.tolist(), strict=True)) == [(100, 10), (100, 110), (150, 200)]


def test_arrow_goes_from_the_earlier_slice_even_when_the_inner_one_starts_the_flow(fxt) -> None:
    cols = fxt([
        (K.DURATION_BEGIN, 0, P1A, "outer"),
        (K.DURATION_BEGIN, 10, P1A, "inner"),
        (K.FLOW_BEGIN, 20, P1A, "f", 1),
        (K.DURATION_END, 30, P1A, "inner"),
        (K.DURATION_END, 100, P1A, "outer"),
        (K.DURATION_BEGIN, 5, P1B, "early"),
        (K.FLOW_END, 50, P1B, "f", 1),  # its slice started before the begin's slice
        (K.DURATION_END, 60, P1B, "early"),
    ])  # fmt: skip
    _, flows, pairs = _links(cols)
    assert pairs == [("early", "inner", 1)]
    assert flows.src_ts.tolist() == [50] and flows.dst_ts.tolist() == [20]


def test_cross_process_flow_and_ambiguous_ids(fxt) -> None:
    cols = fxt([
        (K.DURATION_BEGIN, 0, P1A, "send"),
        (K.FLOW_BEGIN, 5, P1A, "f", 7),  # only process 1 begins id 7
        (K.FLOW_BEGIN, 6, P1A, "f", 5),  # id 5 is begun by processes 1 and 2
        (K.FLOW_BEGIN, 7, P1A, "f", 9),
        (K.DURATION_END, 10, P1A, "send"),
        (K.DURATION_BEGIN, 0, P2, "p2"),
        (K.FLOW_BEGIN, 8, P2, "f", 5),
        (K.FLOW_BEGIN, 8, P2, "f", 9),
        (K.DURATION_END, 10, P2, "p2"),
        (K.DURATION_BEGIN, 20, P2, "recv"),
        (K.FLOW_END, 25, P2, "f", 7),  # joins process 1's flow 7
        (K.FLOW_END, 26, P2, "f", 9),  # its own process began 9: own key first
        (K.DURATION_END, 30, P2, "recv"),
        (K.DURATION_BEGIN, 20, P3, "p3"),
        (K.FLOW_END, 25, P3, "f", 5),  # two processes began 5: ambiguous, dropped
        (K.FLOW_STEP, 26, P3, "f", 123),  # never begun
        (K.DURATION_END, 30, P3, "p3"),
    ])  # fmt: skip
    _, flows, pairs = _links(cols)
    assert sorted(pairs) == [("p2", "recv", 9), ("send", "recv", 7)]
    assert flows.dropped["ambiguous"] == 1
    assert flows.dropped["without_start"] == 1


def test_unbound_events_duplicate_begins_and_restart_after_end(fxt) -> None:
    cols = fxt([
        (K.FLOW_BEGIN, 1, P1A, "f", 3),  # no slice open: unbound (dropped)
        (K.DURATION_BEGIN, 10, P1A, "a"),
        (K.FLOW_STEP, 11, P1A, "f", 3),  # the unbound begin started nothing
        (K.FLOW_BEGIN, 12, P1A, "f", 3),
        (K.FLOW_BEGIN, 13, P1A, "f", 3),  # key active: ignored, the first binding is kept
        (K.DURATION_END, 20, P1A, "a"),
        (K.DURATION_BEGIN, 30, P1A, "b"),
        (K.FLOW_END, 31, P1A, "f", 3),
        (K.FLOW_END, 32, P1A, "f", 3),  # already retired
        (K.FLOW_BEGIN, 33, P1A, "f", 3),  # the key starts again
        (K.DURATION_END, 40, P1A, "b"),
        (K.DURATION_BEGIN, 50, P1A, "c"),
        (K.FLOW_END, 55, P1A, "f", 3),
        (K.DURATION_END, 60, P1A, "c"),
        (K.FLOW_END, 70, P1A, "f", 3),  # after every slice: unbound
    ])  # fmt: skip
    _, flows, pairs = _links(cols)
    assert pairs == [("a", "b", 3), ("b", "c", 3)]
    assert flows.src_ts.tolist() == [12, 33]
    assert flows.unbound == 2
    assert flows.dropped == {"ambiguous": 0, "without_start": 2, "duplicate_begin": 1}


def test_a_flow_event_at_a_slice_boundary_binds_by_file_order(fxt) -> None:
    cols = fxt([
        (K.DURATION_BEGIN, 0, P1A, "first"),
        (K.FLOW_BEGIN, 50, P1A, "f", 1),  # before first's end record: first
        (K.DURATION_END, 50, P1A, "first"),
        (K.FLOW_BEGIN, 50, P1A, "f", 2),  # after first's end, before second's begin: still first (inclusive end)
        (K.DURATION_BEGIN, 50, P1A, "second"),
        (K.FLOW_BEGIN, 50, P1A, "f", 3),  # after second's begin: second
        (K.DURATION_END, 90, P1A, "second"),
        (K.DURATION_BEGIN, 100, P1B, "sink"),
        (K.FLOW_END, 101, P1B, "f", 1),
        (K.FLOW_END, 102, P1B, "f", 2),
        (K.FLOW_END, 103, P1B, "f", 3),
        (K.DURATION_END, 110, P1B, "sink"),
    ])  # fmt: skip
    _, _, pairs = _links(cols)
    assert sorted(pairs, key=lambda p: p[2]) == [
        ("first", "sink", 1),
        ("first", "sink", 2),
        ("second", "sink", 3),
    ]


def test_generated_trace_links_every_flow_end_and_step() -> None:
    cols = read_fxt_bytes(generate_trace(20_000))
    slices = build_slices(cols)
    flows = build_flows(cols, slices)
    kinds = np.bincount(cols.ev_kind, minlength=11)
    # every flow end finds the previous unit's begin, often in another provider's process (cross-process)
    assert len(flows) == kinds[K.FLOW_END] + kinds[K.FLOW_STEP]
    assert flows.unbound == 0 and sum(flows.dropped.values()) == 0
    assert (slices.ts[flows.src_slice] <= slices.ts[flows.dst_slice]).all()
    pid = cols.threads_pid[slices.thread]
    assert (pid[flows.src_slice] != pid[flows.dst_slice]).any()
    # a link's events lie in their slices
    for col, ts in ((flows.src_slice, flows.src_ts), (flows.dst_slice, flows.dst_ts)):
        assert ((slices.ts[col] <= ts) & (ts <= slices.ts[col] + slices.dur[col])).all()


def test_incoming_and_outgoing_links_of_every_slice_of_a_generated_trace() -> None:
    """Each link is found once as its source's outgoing and once as its destination's incoming (ascending),
    for every slice of a generated trace with thousands of links."""
    from fxscope.core.trace.model import TraceModel

    model = TraceModel(read_fxt_bytes(generate_trace(20_000)))
    flows = model.flows
    assert len(flows) > 1000
    seen_in, seen_out = [], []
    for row in np.unique(np.r_[flows.dst_slice, flows.src_slice]).tolist():
        incoming, outgoing = flows.incoming(row), flows.outgoing(row)
        assert np.all(flows.dst_slice[incoming] == row) and np.all(np.diff(incoming) > 0)
        assert np.all(flows.src_slice[outgoing] == row)
        seen_in.extend(incoming.tolist())
        seen_out.extend(outgoing.tolist())
    assert sorted(seen_in) == sorted(seen_out) == list(range(len(flows)))
    assert len(flows.incoming(len(model.slices) + 5)) == 0
