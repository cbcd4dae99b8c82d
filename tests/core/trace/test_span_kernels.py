"""The compiled span kernels (core/trace/span_kernels.c) build exactly the tables the numpy paths build: the
flow links on the third-party traces, the demo, generated traces and hypothesis-made hostile traces
(unmatched begins and ends, duplicate ids, ties, several processes per id) and mutated files; and the
kernels refuse bad buffers, and hand inputs they do not handle back to the numpy paths, instead of
reading out of bounds."""

from __future__ import annotations

import dataclasses
import itertools
import os
import random
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from fxscope.core.synthetic_trace import generate_trace
from fxscope.core.trace import compiled
from fxscope.core.trace.async_spans import build_async
from fxscope.core.trace.flows import bind_to_slices, build_flows
from fxscope.core.trace.gathered import Gathered
from fxscope.core.trace.slices import build_slices
from fxscope.formats.errors import FormatError
from fxscope.formats.fxt.columns import EventKind as K
from fxscope.formats.fxt.reader import read_fxt_bytes
from fxscope.formats.fxt.writer import FxtWriter

DEMO = Path(__file__).resolve().parents[3] / "resources" / "demo" / "demo.fxt"
KERNELS = compiled.span_kernels


def test_extension_is_built():
    """The install built the extension (CI and a developer machine have a C compiler): without it the
    flows are built at the numpy fallback's speed."""
    assert KERNELS is not None, "fxscope.core.trace.span_kernels was not built: pip install -e . with gcc"
    assert callable(KERNELS.bind_to_slices) and callable(KERNELS.flow_table)


def test_env_forces_the_numpy_paths():
    """``FXSCOPE_NO_COMPILED=1`` (as for the reader's loops) leaves the kernels out: what a comparison of the
    two paths runs."""
    code = "from fxscope.core.trace.compiled import span_kernels; print(span_kernels is None)"
    env = {**os.environ, "FXSCOPE_NO_COMPILED": "1"}
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "True"


def _with(kernels, build):
    saved = compiled.span_kernels
    compiled.span_kernels = kernels
    try:
        return build()
    finally:
        compiled.span_kernels = saved


def _plain(value):
    if isinstance(value, Gathered):
        return np.asarray(value)
    return value


def assert_same_tables(a, b) -> None:
    """Every field of two dataclass tables equal: arrays in dtype and values, the rest by repr."""
    for f in dataclasses.fields(a):
        x, y = _plain(getattr(a, f.name)), _plain(getattr(b, f.name))
        if isinstance(x, np.ndarray):
            assert x.dtype == y.dtype and np.array_equal(x, y), f.name
        else:
            assert repr(x) == repr(y), f.name


def assert_same_flows(cols) -> None:
    assert KERNELS is not None
    slices = build_slices(cols)
    fast = _with(KERNELS, lambda: build_flows(cols, slices))
    numpy = _with(None, lambda: build_flows(cols, slices))
    assert_same_tables(fast, numpy)


def assert_same_async(cols) -> None:
    assert KERNELS is not None
    fast = _with(KERNELS, lambda: build_async(cols))
    numpy = _with(None, lambda: build_async(cols))
    assert_same_tables(fast, numpy)
    assert_same_tables(fast.instants, numpy.instants)


def assert_same_tables_of(cols) -> None:
    assert_same_flows(cols)
    assert_same_async(cols)


def _corpus(testdata: Path) -> list[bytes]:
    files = sorted((testdata / "fxt").glob("*.fxt"))
    assert files, "no FXT traces in the test corpus"
    return [p.read_bytes() for p in files] + [DEMO.read_bytes()]


def test_same_tables_of_real_traces(testdata):
    for data in _corpus(testdata):
        assert_same_tables_of(read_fxt_bytes(data))


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_same_tables_of_generated_traces(seed):
    cols = read_fxt_bytes(generate_trace(20_000, seed=seed, scheduling=seed == 2))
    assert int(np.count_nonzero(np.asarray(cols.ev_kind) == K.FLOW_BEGIN)) > 100
    assert int(np.count_nonzero(np.asarray(cols.ev_kind) == K.ASYNC_BEGIN)) > 100
    assert_same_tables_of(cols)


#: a few threads, two of them in one process and one tid in two processes (thread refs are (pid, tid))
THREADS = [(1, 10), (1, 11), (2, 20), (3, 10)]
_KINDS = [K.DURATION_BEGIN, K.DURATION_END, K.DURATION_COMPLETE, K.FLOW_BEGIN, K.FLOW_STEP, K.FLOW_END,
          K.ASYNC_BEGIN, K.ASYNC_INSTANT, K.ASYNC_END]  # fmt: skip
_WITH_ID = (K.FLOW_BEGIN, K.FLOW_STEP, K.FLOW_END, K.ASYNC_BEGIN, K.ASYNC_INSTANT, K.ASYNC_END)
_event = st.tuples(
    st.sampled_from(_KINDS),
    st.integers(0, 40),  # (few timestamps: many ties)
    st.sampled_from(THREADS),
    st.sampled_from(["a", "b", "c"]),
    st.integers(0, 5),  # flow and async ids (and a complete event's end)
    st.sampled_from(["cat", "dog"]),
)


def _columns(events: list[tuple], cuts: list[int] = ()):
    """The columns of a trace of ``events``; with ``cuts``, written in provider sections (providers 1, 2, 1, ...)
    that begin at those positions: a trace whose sections may go back in time, and whose sections' own events
    may too."""
    w = FxtWriter()
    w.initialization(1_000_000_000)
    if cuts:
        for provider in (1, 2):
            w.provider_info(provider, f"p{provider}")
    for i, (kind, ts, thread, name, data, category) in enumerate(events):
        if i in cuts:
            w.provider_section(1 + cuts.index(i) % 2)
        if kind == K.DURATION_COMPLETE:
            data = ts + data * 7
        elif kind not in _WITH_ID:
            data = None
        w.event(kind, ts, thread, category, name, (), data=data)
    return read_fxt_bytes(w.getvalue())


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(_event, max_size=80))
def test_same_tables_of_hostile_traces(events):
    """Unmatched and nested begins/ends, flows begun twice, steps and ends without a begin, one id in
    several processes and keys, all at a handful of timestamps: the same links, spans, instants, counts."""
    assert_same_tables_of(_columns(events))


@pytest.fixture
def small_pair_blocks(monkeypatch):
    """The compiled pairing's walk in blocks of 7 event rows (a trace's events are one block below
    PAIR_BLOCK): blocks with no async event, stacks open across blocks, the read ahead of the next block, a
    time going back across two blocks (the walk starts again on the events sorted)."""
    from fxscope.core.trace import async_spans

    monkeypatch.setattr(async_spans, "PAIR_BLOCK", 7)


@pytest.mark.usefixtures("small_pair_blocks")
def test_same_async_walked_in_blocks(testdata):
    for data in [*_corpus(testdata), generate_trace(20_000, seed=1), generate_trace(20_000, seed=2, scheduling=True)]:
        assert_same_async(read_fxt_bytes(data))


@pytest.mark.usefixtures("small_pair_blocks")
@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(st.lists(_event, max_size=80))
def test_same_async_of_hostile_traces_walked_in_blocks(events):
    """As test_same_tables_of_hostile_traces, the async events walked a few at a time (times going back
    within a block and across blocks: the walk in time order instead)."""
    assert_same_async(_columns(events))


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(_event, min_size=1, max_size=60), st.data())
def test_same_binding_of_any_queries(events, data):
    """bind_to_slices of queries the flows never make (threads with no slices, any time, any event row)."""
    cols = _columns(events)
    slices = build_slices(cols)
    n = data.draw(st.integers(0, 40))
    thread = np.array(data.draw(st.lists(st.integers(-1, 5), min_size=n, max_size=n)), cols.ev_thread.dtype)
    ts = np.array(data.draw(st.lists(st.integers(-5, 50), min_size=n, max_size=n)), np.int64)
    event = np.array(data.draw(st.lists(st.integers(-1, 100), min_size=n, max_size=n)), np.int32)
    fast = _with(KERNELS, lambda: bind_to_slices(slices, thread, ts, event))
    numpy = _with(None, lambda: bind_to_slices(slices, thread, ts, event))
    assert fast.dtype == numpy.dtype and np.array_equal(fast, numpy)


def test_binding_by_thread_codes_and_to_int32_rows():
    """The flows bind their events by the thread column's one-byte codes (not decoded) into int32 rows: the
    same rows as by the decoded threads into int64, compiled and numpy."""
    from fxscope.core.trace.flows import _bind_compiled, _query_threads
    from fxscope.formats.fxt.coded_column import CodedColumn

    cols = read_fxt_bytes(generate_trace(5_000, seed=7))
    assert isinstance(cols.ev_thread, CodedColumn)
    slices = build_slices(cols)
    kind = np.asarray(cols.ev_kind)
    sel = np.flatnonzero((kind >= K.FLOW_BEGIN) & (kind <= K.FLOW_END)).astype(np.int32)
    ts = cols.ev_ts[sel]
    codes = _query_threads(cols.ev_thread, sel)
    assert isinstance(codes, CodedColumn) and codes.index.dtype == np.uint8
    expected = _with(None, lambda: bind_to_slices(slices, cols.ev_thread[sel], ts, sel))
    assert (expected >= 0).sum() > 100
    assert _bind_compiled(slices, codes, ts, sel) is not None  # (the kernel takes the codes: no decline)
    for kernels in (KERNELS, None):
        for dtype in (np.int64, np.int32):
            got = _with(kernels, lambda: bind_to_slices(slices, codes, ts, sel, dtype))  # noqa: B023
            assert got.dtype == dtype and got.tolist() == expected.tolist()
            # the whole thread column, each query's thread read through its event row (what build_flows passes)
            got = _with(kernels, lambda: bind_to_slices(slices, cols.ev_thread, ts, sel, dtype, True))  # noqa: B023
            assert got.dtype == dtype and got.tolist() == expected.tolist()
    assert _bind_compiled(slices, cols.ev_thread, ts, sel, np.int32, True) is not None
    whole = cols.ev_thread.index.view(np.int8)
    args = (slices.ts, slices.dur, slices.event, slices.parent, whole, 1, whole, ts)
    for bad in (len(whole), -1):  # (hostile rows: refused, not read)
        rows = sel.copy()
        rows[len(rows) // 2] = bad
        with pytest.raises(ValueError, match="event row"):
            KERNELS.bind_to_slices(*args, rows, 4, np.zeros(len(rows), np.int32), True)


def test_same_tables_of_mutated_traces():
    """Bytes of a generated trace flipped at random: whatever the reader makes of them, both paths build
    the same flows and async spans."""
    rng = random.Random(18)
    base = bytearray(generate_trace(600, seed=5))
    built = 0
    for _ in range(150):
        data = bytearray(base)
        for _ in range(rng.randint(1, 12)):
            data[rng.randrange(len(data))] = rng.randrange(256)
        try:
            cols = read_fxt_bytes(bytes(data))
        except FormatError:
            continue
        assert_same_tables_of(cols)
        built += 1
    assert built > 50


def _slice_columns(n: int):
    ts = np.arange(n, dtype=np.int64) * 10
    return ts, np.full(n, 5, np.int64), np.arange(n, dtype=np.int32), np.full(n, -1, np.int32)


def test_bind_kernel_declines_what_it_does_not_handle():
    """Slices out of (thread, start) order, a parent or event row out of range, a parent cycle: status 1
    (the numpy path answers), never a read out of bounds or a hang."""
    assert KERNELS is not None
    th = np.zeros(4, np.int32)
    q = (np.zeros(2, np.int32), np.array([12, 33], np.int64), np.array([9, 9], np.int64))

    def run(ts, dur, event, parent, threads=th):
        out = np.full(2, 99, np.int64)
        status = KERNELS.bind_to_slices(ts, dur, event, parent, threads, 4, q[0], q[1], q[2], 8, out)
        return status, out.tolist()

    ts, dur, event, parent = _slice_columns(4)
    assert run(ts, dur, event, parent) == (0, [1, 3])
    assert run(ts[::-1].copy(), dur, event, parent)[0] == 1  # starts out of order
    assert run(ts, dur, np.array([0, 1, 2, 4], np.int32), parent)[0] == 1  # event row past ``th``
    assert run(ts, dur, np.array([0, -1, 2, 3], np.int32), parent)[0] == 1
    assert run(ts, dur, event, np.array([-1, 0, 1, 4], np.int32))[0] == 1  # parent past the table
    assert run(ts, dur, event, parent, np.array([0, 1, 0, 1], np.int32))[0] == 1  # a thread in two runs
    cycle = np.array([1, 0, 1, 2], np.int32)  # 0 <-> 1: the walk up from slice 1 would not end
    assert run(ts, np.zeros(4, np.int64), event, cycle)[0] == 1
    # a negative parent other than -1 ends the walk and is the answer, as in numpy
    assert run(ts, np.zeros(4, np.int64), event, np.full(4, -7, np.int32)) == (0, [-7, -7])


def test_kernels_refuse_bad_buffers():
    assert KERNELS is not None
    ts, dur, event, parent = _slice_columns(4)
    th = np.zeros(4, np.int32)
    out = np.zeros(2, np.int64)
    q = (np.zeros(2, np.int32), np.zeros(2, np.int64), np.zeros(2, np.int64))
    with pytest.raises(ValueError):
        KERNELS.bind_to_slices(ts, dur[:3], event, parent, th, 4, *q, 8, out)  # lengths differ
    with pytest.raises(ValueError):
        KERNELS.bind_to_slices(ts, dur, event, parent, th, 3, *q, 8, out)  # no such item size
    with pytest.raises(ValueError):
        KERNELS.bind_to_slices(ts, dur, event, parent, th, 4, *q, 8, np.zeros(3, np.int64))
    args = _flow_table_args(np.array([K.FLOW_BEGIN, K.FLOW_END], np.uint8), n_slices=2)
    KERNELS.flow_table(*args)  # (as given: valid)
    for i, bad in [
        (1, np.zeros(1, np.uint64)),  # lengths differ
        (4, np.array([0, 2], np.int32)),  # a slice row out of range
        (4, np.array([0, -2], np.int32)),
        (4, np.array([0, 1], np.int64)),  # not int32
        (2, np.array([0, -1], np.int32)),  # a process rank out of range
        (2, np.array([0, 1], np.int16)),  # neither ranks nor codes
    ]:
        with pytest.raises(ValueError):
            KERNELS.flow_table(*args[:i], bad, *args[i + 1 :])
    codes = np.array([0, 3], np.uint8)
    KERNELS.flow_table(*args[:2], codes, np.arange(4, dtype=np.int32), *args[4:])
    with pytest.raises(ValueError):  # a code with no rank
        KERNELS.flow_table(*args[:2], codes, np.arange(3, dtype=np.int32), *args[4:])
    with pytest.raises(ValueError):  # a code's rank out of range
        KERNELS.flow_table(*args[:2], codes, np.array([0, 0, 0, -1], np.int32), *args[4:])
    with pytest.raises(ValueError):  # no room for the end's link
        KERNELS.flow_table(*args[:11], *(np.zeros(0, np.int32) for _ in range(5)))
    with pytest.raises(TypeError):  # outputs must be writable
        ro = np.zeros(1, np.int32)
        ro.setflags(write=False)
        KERNELS.flow_table(*args[:11], ro, *args[12:])


def _random_flow_table_args(rng, m: int, n_slices: int, ids: int):
    """flow_table's arguments for ``m`` flow events of random kinds, ids below ``ids``, slices (some unbound)."""
    k = rng.choice(np.array([K.FLOW_BEGIN, K.FLOW_STEP, K.FLOW_END], np.uint8), m)
    fid = rng.integers(0, ids, m).astype(np.uint64)
    bound = rng.integers(-1, n_slices, m).astype(np.int32)
    slice_ts = np.sort(rng.integers(0, 10**6, n_slices)).astype(np.int64)
    return _flow_table_args(k, n_slices, fid=fid, bound=bound, slice_ts=slice_ts)


def test_flow_table_without_the_order_by_destination_gives_the_same_links():
    """Asked for no order by destination (what the flows' build asks: FlowTable.incoming scans the
    destinations), flow_table writes the same links and counts; asked for it, by_dst is the links' stable
    order by destination slice."""
    args = _random_flow_table_args(np.random.default_rng(4), 4000, 300, 40)
    with_order = [np.full_like(a, -9) for a in args[11:]]
    counts = KERNELS.flow_table(*args[:11], *with_order)
    without = [np.full_like(a, -9) for a in args[11:]]
    assert KERNELS.flow_table(*args[:11], *without, False) == counts
    no_scratch = [np.full_like(a, -9) for a in args[11:15]]  # (by_dst empty: what build_flows passes)
    assert KERNELS.flow_table(*args[:11], *no_scratch, np.zeros(0, np.int32), False) == counts
    with pytest.raises(ValueError):  # an empty by_dst only when no order by destination is asked
        KERNELS.flow_table(*args[:11], *no_scratch, np.zeros(0, np.int32))
    links = counts[0]
    assert links > 100
    for a, b, c in zip(with_order[:4], without[:4], no_scratch, strict=True):
        assert np.array_equal(a[:links], b[:links]) and np.array_equal(a[:links], c[:links])
    assert np.array_equal(with_order[4][:links], np.argsort(with_order[1][:links], kind="stable"))


def test_flow_table_reads_the_kinds_and_codes_through_the_event_rows():
    """Given the whole kind column (by_event 1) and the whole process code column (2), as build_flows passes
    them (no gathered copies of the flow events' kinds and codes), flow_table reads kind[event] and
    code[event] and gives the links and counts of the gathered ones; an event row outside a column is
    refused (hostile rows), not read."""
    rng = np.random.default_rng(7)
    m = 5000
    args = _random_flow_table_args(rng, m, 200, 60)
    k, event = args[0], args[6]
    column = rng.choice(np.array([1, 2, 5, 11], np.uint8), 3 * m + 1)  # (other kinds between the flow events)
    column[event] = k
    gathered = [np.full_like(a, -9) for a in args[11:15]]
    counts = KERNELS.flow_table(*args[:11], *gathered, np.zeros(0, np.int32), False)
    through = [np.full_like(a, -9) for a in args[11:15]]
    assert KERNELS.flow_table(column, *args[1:11], *through, np.zeros(0, np.int32), False, True) == counts
    assert counts[0] > 100
    for a, b in zip(gathered, through, strict=True):
        assert np.array_equal(a, b)
    # the process codes through the rows as well (by_event 3: what build_flows passes for a code column)
    proc = rng.integers(0, 9, m).astype(np.uint8)
    code_column = rng.integers(0, 9, len(column)).astype(np.uint8)
    code_column[event] = proc
    ranks = rng.permutation(9).astype(np.int32)
    coded = [np.full_like(a, -9) for a in args[11:15]]
    counts = KERNELS.flow_table(*args[:2], proc, ranks, *args[4:11], *coded, np.zeros(0, np.int32), False)
    both = [np.full_like(a, -9) for a in args[11:15]]
    assert KERNELS.flow_table(column, args[1], code_column, ranks, *args[4:11], *both, np.zeros(0, np.int32),
                              False, 3) == counts  # fmt: skip
    for a, b in zip(coded, both, strict=True):
        assert np.array_equal(a, b)
    with pytest.raises(ValueError, match="event row"):  # a code column shorter than the rows
        KERNELS.flow_table(column, args[1], code_column[:10], ranks, *args[4:11], *both, np.zeros(0, np.int32),
                           False, 3)  # fmt: skip
    for bad in (len(column), -1):
        rows = event.copy()
        rows[m // 2] = bad
        with pytest.raises(ValueError, match="event row"):
            KERNELS.flow_table(column, *args[1:6], rows, *args[7:11], *through, np.zeros(0, np.int32), False, True)


def test_compiled_flows_build_holds_few_arrays_a_flow_event():
    """The compiled flows' build at its peak, as tracemalloc sees it (its numpy arrays): the flow events'
    rows, times, ids and slices and the links' four columns, ~32 bytes a flow event, and no gathered kinds
    or thread codes nor a fifth output column (36 bytes before: the kernel reads kinds and codes through the
    rows and keeps the links in its outputs). The kernel's own tables (malloc) are not traced; bench
    figures: the step's anon peak at 30M events 233 -> 172 MB."""
    import tracemalloc

    assert KERNELS is not None
    cols = read_fxt_bytes(generate_trace(100_000))
    slices = build_slices(cols)
    n_flow = int(((cols.ev_kind >= K.FLOW_BEGIN) & (cols.ev_kind <= K.FLOW_END)).sum())
    assert n_flow > 10_000
    build_flows(cols, slices)  # (warm: lazily built columns are not the step's)
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        flows = build_flows(cols, slices)
        peak = tracemalloc.get_traced_memory()[1] - before
    finally:
        tracemalloc.stop()
    assert len(flows) > n_flow // 3
    assert peak / n_flow < 34


def _flow_table_args(k, n_slices, fid=None, proc=None, bound=None, ts=None, slice_ts=None):
    """flow_table's arguments for the flow events of kinds ``k`` (the rest made up unless given)."""
    m = len(k)
    fid = np.zeros(m, np.uint64) if fid is None else fid
    proc = np.zeros(m, np.int32) if proc is None else proc
    ranks = np.zeros(0, np.int32)
    if proc.dtype == np.uint8:  # (codes: the ranks of the codes' processes, here each code's own)
        ranks = np.arange(256, dtype=np.int32)
    bound = (np.arange(m) % n_slices if bound is None else bound).astype(np.int32)
    ts = np.arange(m, dtype=np.int64) if ts is None else ts
    slice_ts = np.arange(n_slices, dtype=np.int64) if slice_ts is None else slice_ts
    room = m - int(np.count_nonzero(k == K.FLOW_BEGIN))
    event = (np.arange(m) * 3 + 1).astype(np.int32)
    return (k, fid, proc, ranks, bound, ts, event, slice_ts, 8, 9, 10, *(np.full(room, -9, np.int32) for _ in range(5)))


def test_same_order_of_links_leaving_one_slice_at_one_time():
    """Links from one slice at one timestamp come by key (process, id), then time, as the numpy path
    orders them (its links come grouped by key), not by when they end."""
    p = (1, 10)
    events = [
        (K.DURATION_BEGIN, 0, p, "a", 0, "cat"),
        (K.FLOW_BEGIN, 5, p, "f", 5, "cat"),
        (K.FLOW_BEGIN, 5, p, "f", 3, "cat"),
        (K.FLOW_BEGIN, 5, (2, 20), "f", 4, "cat"),
        (K.DURATION_END, 8, p, "a", 0, "cat"),
        (K.DURATION_BEGIN, 10, p, "b", 0, "cat"),
        (K.FLOW_END, 12, p, "f", 5, "cat"),
        (K.FLOW_END, 13, (2, 20), "f", 4, "cat"),
        (K.DURATION_END, 20, p, "b", 0, "cat"),
        (K.DURATION_BEGIN, 30, p, "c", 0, "cat"),
        (K.FLOW_END, 31, p, "f", 3, "cat"),
        (K.DURATION_END, 40, p, "c", 0, "cat"),
        (K.DURATION_BEGIN, 2, (2, 20), "d", 0, "cat"),
        (K.DURATION_END, 50, (2, 20), "d", 0, "cat"),
    ]
    cols = _columns(events)
    assert_same_flows(cols)
    flows = build_flows(cols, build_slices(cols))
    assert np.asarray(flows.id).tolist() == [3, 5, 4]


def test_same_order_of_instants_of_one_span_at_one_time():
    """Instants bound to one span at one time (through its id: other keys) come by key, as the numpy path
    orders them, not in file order."""
    p = (1, 10)
    events = [
        (K.DURATION_BEGIN, 0, p, "d", 0, "y"),  # ("y" is string 1 or so: before "z")
        (K.ASYNC_BEGIN, 0, p, "s", 1, "x"),
        (K.ASYNC_INSTANT, 50, p, "i", 1, "z"),
        (K.ASYNC_INSTANT, 50, p, "i", 1, "y"),
        (K.ASYNC_END, 100, p, "s", 1, "x"),
        (K.DURATION_END, 200, p, "d", 0, "y"),
    ]
    cols = _columns(events)
    assert_same_async(cols)
    instants = build_async(cols).instants
    assert [cols.strings[int(cols.ev_category[e])] for e in instants.event] == ["y", "z"]


def _async_spans(kind, rows, cat, name, cid, ts=None, spans=None, instants=None, trace=(0, 100), thread=None,
                 blocks=1):
    """span_kernels.async_spans' outputs (the span ones, then the instant ones) as lists, and its count of
    unmatched ends (``kind``: the events' kinds by row, as the reader's column); ``spans``/``instants``: the
    outputs' sizes (default: one row an event); ``thread``: (thread column, track_of at thread + 1);
    ``blocks``: the events walked in that many blocks of one walk (async_state, async_spans per block,
    async_spans_end)."""
    assert KERNELS is not None
    ts = np.arange(len(kind), dtype=np.int64) if ts is None else ts
    spans = len(rows) if spans is None else spans  # (the kernel's outputs have room for every event)
    instants = len(rows) if instants is None else instants
    ev = rows.dtype if rows.itemsize in (4, 8) else np.int64
    outs = (np.zeros(spans, np.int64), np.zeros(spans, np.int64), np.zeros(spans, np.uint8), np.zeros(spans, ev),
            np.zeros(spans, ev), np.zeros(spans, np.uint64), np.zeros(spans, np.int32), np.zeros(spans, np.int32),
            np.zeros(instants, ev), np.zeros(instants, np.int64), np.zeros(instants, np.uint64),
            np.zeros(instants, np.int64))  # fmt: skip
    thread, track_of = (np.zeros(len(kind), np.int16), np.zeros(2, np.int32)) if thread is None else thread
    state = KERNELS.async_state(len(rows))
    cuts = np.linspace(0, len(rows), blocks + 1).astype(int).tolist()
    for a, b in itertools.pairwise(cuts):
        assert KERNELS.async_spans(state, kind, rows[a:b], rows.itemsize, cat, cat.itemsize, name, name.itemsize,
                                   0, cid[a:b], ts[a:b], thread, thread.itemsize, track_of, 1, K.ASYNC_BEGIN,
                                   K.ASYNC_INSTANT, K.ASYNC_END, trace[0], *outs) is True  # fmt: skip
    nb, nu, ni = KERNELS.async_spans_end(state, rows.itemsize, trace[1], *outs[:8])
    assert nb == int((kind == K.ASYNC_BEGIN).sum()) and ni == int((kind == K.ASYNC_INSTANT).sum())
    return nu, [o.tolist() for o in outs]


def test_async_kernel_refuses_bad_input():
    """A row outside the category or name column, outputs that do not hold the begins, ends and instants,
    keys wider than 32 bits: an error, never a read or write out of bounds."""
    kind = np.array([K.ASYNC_BEGIN, K.ASYNC_INSTANT, K.ASYNC_END, K.ASYNC_END], np.uint8)
    cid = np.ones(4, np.uint64)
    col = np.zeros(4, np.int16)

    def run(rows, spans=None, cat=col):
        return _async_spans(kind, rows, cat, col, cid, spans=spans, trace=(-5, 50))

    # the begin at 0 closed by the end at 2, the end at 3 unmatched (from the trace's start); the instant in it
    # (room for two ends: the row of the one that closed the begin is unused)
    got = run(np.arange(4, dtype=np.int32))
    assert got[0] == 1 and [o[:2] for o in got[1][:7]] == [[0, -5], [2, 3], [0, 1], [0, 3], [2, 3], [1, 1], [0, 0]]
    assert [o[:1] for o in got[1][8:]] == [[1], [1], [1], [0]]
    with pytest.raises(IndexError):
        run(np.array([0, 1, 2, 4], np.int32))
    with pytest.raises(IndexError):
        run(np.array([0, -1, 2, 3], np.int64))
    with pytest.raises(ValueError):
        run(np.arange(4, dtype=np.int32), spans=3)  # no room for every event
    no_ids = np.zeros(0, np.uint64)  # (ids not asked for: not written, the other outputs the same)
    outs = [np.zeros(4, d) for d in (np.int64, np.int64, np.uint8, np.int32, np.int32)]
    rest = [np.zeros(4, np.int32), np.zeros(4, np.int32), np.zeros(4, np.int32), np.zeros(4, np.int64), no_ids,
            np.zeros(4, np.int64)]  # fmt: skip
    state = KERNELS.async_state(4)
    assert KERNELS.async_spans(state, kind, np.arange(4, dtype=np.int32), 4, col, 2, col, 2, 0, cid,
                               np.arange(4, dtype=np.int64), np.zeros(4, np.int16), 2, np.zeros(2, np.int32), 1,
                               K.ASYNC_BEGIN, K.ASYNC_INSTANT, K.ASYNC_END, -5, *outs, no_ids, *rest) is True  # fmt: skip
    assert KERNELS.async_spans_end(state, 4, 50, *outs, no_ids, *rest[:2]) == (1, 1, 1)
    assert [o[:2].tolist() for o in outs] == [r[:2] for r in got[1][:5]] and rest[3][:1].tolist() == [1]
    tracks = np.array([5, 6, 7], np.int32)  # (threads -1, 0, 1)
    got = _async_spans(kind, np.arange(4, dtype=np.int32), col, col, cid, thread=(np.array([1, 9, 9, -4], np.int16), tracks))
    assert got[1][7][:2] == [7, 5]  # the begin's thread 1, the unmatched end's -4 (as -1); the others not read
    with pytest.raises(IndexError):  # a span's thread past the table
        _async_spans(kind, np.arange(4, dtype=np.int32), col, col, cid, thread=(np.array([2, 0, 0, 0], np.int16), tracks))
    assert [o[:2] for o in run(np.arange(4, dtype=np.int32), spans=9)[1][:2]] == [[0, -5], [2, 3]]  # (room to spare)
    with pytest.raises(ValueError):
        run(np.arange(4, dtype=np.int32), cat=np.zeros(4, np.int64))
    with pytest.raises(ValueError):
        run(np.arange(4, dtype=np.int16))  # (rows of 2 bytes: the outputs' rows are 4 or 8)


def _async_reference(kind, key):
    """The async kernel's outputs by a plain Python replay of each key's stack."""
    stacks: dict = {}
    b_end, level, unmatched, opened = [], [], [], []
    for i, (k, kk) in enumerate(zip(kind.tolist(), key, strict=True)):
        stack = stacks.setdefault(kk, [])
        if k == K.ASYNC_BEGIN:
            level.append(len(stack))
            b_end.append(-1)
            stack.append(len(b_end) - 1)
        elif k == K.ASYNC_END:
            if stack:
                b_end[stack.pop()] = i
            else:
                unmatched.append(i)
        else:
            opened.append(stack[-1] if stack else -1)
    return b_end, level, unmatched, opened


@pytest.mark.parametrize("blocks", [1, 7])
@pytest.mark.parametrize("keys", [3, 40, 5000])
def test_async_kernel_matches_a_stack_replay(keys, blocks):
    """Thousands of keys open at once (the kernel's table grows, and deletes each key whose stack empties),
    against a plain replay; walked in one block and in several (stacks open across the blocks' bounds)."""
    assert KERNELS is not None
    rng = np.random.default_rng(keys)
    n = 30_000
    kind = rng.choice(np.array([K.ASYNC_BEGIN, K.ASYNC_END, K.ASYNC_INSTANT], np.uint8), n, p=[0.45, 0.4, 0.15])
    cat = rng.integers(-3, 3, n).astype(np.int16)
    name = rng.integers(0, 2, n).astype(np.int32)
    cid = rng.integers(0, keys, n).astype(np.uint64) * np.uint64(0x10000000001)  # (far apart: hashed)
    rows = np.arange(n, dtype=np.int64)  # (times and rows: the positions, so ends and rows are positions too)
    nu, (start, end, flags, event, end_event, _id, level, _track, *inst) = _async_spans(
        kind, rows, cat, name, cid, trace=(-1, n), blocks=blocks)
    b_end, b_level, unmatched, opened = _async_reference(kind, list(zip(cat.tolist(), name.tolist(), cid.tolist(), strict=True)))
    nb = len(b_end)
    assert end_event[:nb] == b_end and level[:nb] == b_level
    assert event[nb : nb + nu] == unmatched and inst[3][: len(opened)] == opened
    assert end[:nb] == [e if e >= 0 else n for e in b_end] and start[nb : nb + nu] == [-1] * nu
    assert flags[:nb + nu] == [0 if e >= 0 else 2 for e in b_end] + [1] * nu


def test_async_kernel_walk_refuses_what_is_not_one_walk():
    """The block walk's state: a time before the one walked before it (in the block or the block before)
    says so (False) and ends the walk; more events than the state was made for, outputs smaller than it,
    a walk used after its end: errors, never a write out of bounds."""
    assert KERNELS is not None
    kind = np.array([K.ASYNC_BEGIN, K.ASYNC_INSTANT, K.ASYNC_END, K.ASYNC_END], np.uint8)
    cid, col, rows = np.ones(4, np.uint64), np.zeros(4, np.int16), np.arange(4, dtype=np.int32)
    no_ids = np.zeros(0, np.uint64)

    def outputs(m):
        return [np.zeros(m, np.int64), np.zeros(m, np.int64), np.zeros(m, np.uint8), np.zeros(m, np.int32),
                np.zeros(m, np.int32), no_ids, np.zeros(m, np.int32), np.zeros(m, np.int32), np.zeros(m, np.int32),
                np.zeros(m, np.int64), no_ids, np.zeros(m, np.int64)]  # fmt: skip

    def walk(state, a, b, ts, outs):
        return KERNELS.async_spans(state, kind, rows[a:b], 4, col, 2, col, 2, 0, cid[a:b], ts[a:b], np.zeros(4, np.int16),
                                   2, np.zeros(2, np.int32), 1, K.ASYNC_BEGIN, K.ASYNC_INSTANT, K.ASYNC_END, 0, *outs)  # fmt: skip

    back_in_block = np.array([0, 2, 1, 3], np.int64)
    back_across = np.array([0, 5, 4, 6], np.int64)
    outs = outputs(4)
    state = KERNELS.async_state(4)
    assert walk(state, 0, 4, back_in_block, outs) is False
    with pytest.raises(ValueError):  # (ended: a new walk starts from a new state)
        walk(state, 0, 4, np.arange(4, dtype=np.int64), outs)
    state = KERNELS.async_state(4)
    assert walk(state, 0, 2, back_across, outs) is True and walk(state, 2, 4, back_across, outs) is False
    state = KERNELS.async_state(3)  # more events than the state's
    assert walk(state, 0, 2, np.arange(4, dtype=np.int64), outs) is True
    with pytest.raises(ValueError):
        walk(state, 0, 2, np.arange(4, dtype=np.int64) + 2, outs)
    state = KERNELS.async_state(5)  # outputs without room for the state's events
    with pytest.raises(ValueError):
        walk(state, 0, 4, np.arange(4, dtype=np.int64), outs)
    state = KERNELS.async_state(4)
    assert walk(state, 0, 4, np.arange(4, dtype=np.int64), outs) is True
    with pytest.raises(ValueError):
        KERNELS.async_spans_end(state, 4, 9, *outputs(3)[:8])
    assert KERNELS.async_spans_end(state, 4, 9, *outs[:8]) == (1, 1, 1)
    with pytest.raises(ValueError):
        KERNELS.async_spans_end(state, 4, 9, *outs[:8])
    with pytest.raises(ValueError):
        KERNELS.async_state(-1)


def test_bind_kernel_declines_threads_of_too_wide_a_range():
    """Thread values spanning more than the per-thread table the kernel makes (int64 extremes included:
    no overflow): the numpy path answers."""
    assert KERNELS is not None
    ts, dur, event, parent = _slice_columns(2)
    for th in (np.array([0, 1 << 30], np.int64), np.array([-(1 << 63), (1 << 63) - 1], np.int64)):
        out = np.zeros(1, np.int64)
        q = (np.zeros(1, np.int64), np.zeros(1, np.int64), np.zeros(1, np.int64))
        assert KERNELS.bind_to_slices(ts, dur, event, parent, th, 8, *q, 8, out) == 1


@pytest.mark.parametrize("n_slices", [1, 7, 1000])
def test_link_order_kernel_is_lexsort(n_slices):
    """The links' order (counting sort by slice, insertion within one) is np.lexsort's, ties in row order;
    a slice with more than 64 links, or one out of range, is declined (status 1)."""
    assert KERNELS is not None
    rng = np.random.default_rng(n_slices)
    n = min(60 * n_slices, 20_000)
    src = rng.integers(0, n_slices, n).astype(np.int32)
    ts, kp, fid = rng.integers(0, 4, n), rng.integers(0, 3, n).astype(np.uint64), rng.integers(0, 3, n).astype(np.uint64)
    order = np.empty(n, np.int64)
    status = KERNELS.group_order(src, ts, kp, fid, n_slices, order)
    if int(np.bincount(src).max()) > 64:
        assert status == 1
    else:
        assert status == 0 and order.tolist() == np.lexsort((fid, kp, ts, src)).tolist()
    bad = src.copy()
    bad[-1] = n_slices
    assert KERNELS.group_order(bad, ts, kp, fid, n_slices, order) == 1
    # without the keys (the async instants): by (group, time), ties in row order
    none = np.zeros(0, np.uint64)
    status = KERNELS.group_order(src, ts, none, none, n_slices, order)
    assert status == 1 or order.tolist() == np.lexsort((ts, src)).tolist()
    with pytest.raises(ValueError):  # one key without the other
        KERNELS.group_order(src, ts, kp, none, n_slices, order)


def test_same_async_of_a_span_with_many_instants():
    """A span with more instants than the order kernel sorts by insertion: lexsort takes over, the same
    table."""
    p = (1, 10)
    events = [(K.ASYNC_BEGIN, 0, p, "s", 1, "cat")]
    events += [(K.ASYNC_INSTANT, 10 + i % 7, p, "i", 1, "cat" if i % 3 else "dog") for i in range(100)]
    events += [(K.ASYNC_END, 50, p, "s", 1, "cat")]
    cols = _columns(events)
    assert_same_async(cols)
    assert len(build_async(cols).instants) == 100


def test_same_flows_of_a_slice_with_many_links():
    """A slice that many flows leave (more than the link-order kernel sorts by insertion): the numpy
    sort takes over, the same table."""
    p = (1, 10)
    events = [(K.DURATION_BEGIN, 0, p, "a", 0, "cat")]
    events += [(K.FLOW_BEGIN, 5 + i % 3, p, "f", 100 - i, "cat") for i in range(90)]
    events += [(K.DURATION_END, 10, p, "a", 0, "cat"), (K.DURATION_BEGIN, 20, p, "b", 0, "cat")]
    events += [(K.FLOW_END, 25 + i % 5, p, "f", i + 11, "cat") for i in range(90)]
    events += [(K.DURATION_END, 40, p, "b", 0, "cat")]
    cols = _columns(events)
    assert_same_flows(cols)
    assert len(build_flows(cols, build_slices(cols))) == 90


def test_same_order_of_links_of_two_processes_leaving_one_slice():
    """Two links leave one slice at one time, one keyed by its own process, one joining a flow begun in
    another process: by key process first, then id (the numpy path's key order), not by id alone."""
    p1, p2 = (1, 10), (2, 20)
    events = [
        (K.DURATION_BEGIN, 0, p2, "p2", 0, "cat"),
        (K.FLOW_BEGIN, 1, p2, "f", 3, "cat"),
        (K.DURATION_END, 2, p2, "p2", 0, "cat"),
        (K.DURATION_BEGIN, 4, p1, "S", 0, "cat"),
        (K.FLOW_BEGIN, 5, p1, "f", 9, "cat"),
        (K.FLOW_STEP, 5, p1, "f", 3, "cat"),  # joins process 2's flow 3
        (K.DURATION_END, 10, p1, "S", 0, "cat"),
        (K.DURATION_BEGIN, 20, p1, "T", 0, "cat"),
        (K.FLOW_END, 50, p1, "f", 3, "cat"),
        (K.FLOW_END, 60, p1, "f", 9, "cat"),
        (K.DURATION_END, 70, p1, "T", 0, "cat"),
    ]
    cols = _columns(events)
    assert_same_flows(cols)
    slices = build_slices(cols)
    flows = build_flows(cols, slices)
    s_row = int(np.flatnonzero(np.asarray(slices.ts) == 4)[0])
    assert np.asarray(flows.id)[flows.outgoing(s_row)].tolist() == [9, 3]


@pytest.mark.parametrize(
    ("ids", "processes", "n_slices", "spread"),
    [(5, 2, 3, 1), (300, 40, 1000, 1), (20_000, 3000, 50_000, 1), (5, 2, 3, 2**61 + 1), (20_000, 300, 9, 1_000_003)],
)
def test_flow_table_kernel_is_the_numpy_chaining(ids, processes, n_slices, spread):
    """Flow events of many ids and processes (the kernel's table of other processes' flows grows), some
    unbound, bound to slices with tied starts (few slices: hundreds of links leave one, sorted by merging),
    against the numpy keying, chaining, turning and sort (flows._key_process, _links, _table): the same
    links in the same order, the same order by destination and the same counts. Ids counted from 0 take
    the kernel's dense ids table, ids ``spread`` apart (wrapping past 2**64) its hashed one."""
    from fxscope.core.trace import flows
    from fxscope.core.trace.sorting import lexsort

    rng = np.random.default_rng(ids)
    n = 40_000
    k = rng.choice(np.array([K.FLOW_BEGIN, K.FLOW_STEP, K.FLOW_END], np.uint8), n, p=[0.4, 0.2, 0.4])
    fid = rng.integers(0, ids, n).astype(np.uint64) * np.uint64(spread)
    proc = rng.integers(0, processes, n).astype(np.int32)
    bound = np.where(rng.random(n) < 0.05, -1, rng.integers(0, n_slices, n))
    ts = np.sort(rng.integers(0, n // 4, n))  # (time order, with ties)
    slice_ts = rng.integers(0, 50, n_slices)
    args = _flow_table_args(k, n_slices, fid, proc, bound, ts, slice_ts)
    if processes <= 256:  # the processes as codes (a thread column's), each code's rank in a table
        ranks = rng.permutation(processes).astype(np.int32)
        codes = np.argsort(ranks)[proc].astype(np.uint8)  # (ranks[codes] == proc)
        args = (*args[:2], codes, ranks, *args[4:])
    links, unbound, ambiguous, without, duplicate = KERNELS.flow_table(*args)
    src_slice, dst_slice, src_event, dst_event, by_dst = (a[:links] for a in args[11:])
    # the numpy stages, as build_flows runs them on the bound events
    keep = np.flatnonzero(bound >= 0)
    kp, amb, no_start = flows._key_process(proc[keep].astype(np.uint64), fid[keep], k[keep])
    expected = {"ambiguous": int(amb.sum()), "without_start": int(no_start.sum())}
    idx = np.flatnonzero(~(amb | no_start))
    idx = idx[lexsort((idx, fid[keep][idx], kp[idx]))]
    ea, eb = flows._links([kp[idx], fid[keep][idx], k[keep][idx]], expected)
    ea, eb = keep[idx[ea]], keep[idx[eb]]
    swap = slice_ts[bound[ea]] > slice_ts[bound[eb]]
    ea, eb = np.where(swap, eb, ea), np.where(swap, ea, eb)
    order = lexsort((ts[ea], bound[ea]))
    ea, eb = ea[order], eb[order]
    assert (unbound, ambiguous, without, duplicate) == (
        n - len(keep), expected["ambiguous"], expected["without_start"], expected["duplicate_begin"])
    event = args[6]
    assert src_slice.tolist() == bound[ea].tolist() and dst_slice.tolist() == bound[eb].tolist()
    assert src_event.tolist() == event[ea].tolist() and dst_event.tolist() == event[eb].tolist()
    assert by_dst.tolist() == np.argsort(dst_slice, kind="stable").tolist()
    assert links > 100


def test_kernels_take_a_generated_trace():
    """On an ordinary trace the kernels answer (a kernel that declined everything would pass the
    comparisons above at numpy's speed)."""
    from fxscope.core.trace import async_spans, flows

    cols = read_fxt_bytes(generate_trace(5_000, seed=4))
    slices = build_slices(cols)
    sel = np.flatnonzero((np.asarray(cols.ev_kind) >= K.FLOW_BEGIN) & (np.asarray(cols.ev_kind) <= K.FLOW_END))
    sel = sel.astype(np.int32)
    bound = flows._bind_compiled(slices, cols.ev_thread[sel], cols.ev_ts[sel], sel)
    assert bound is not None and (bound >= 0).any()
    rows = np.flatnonzero((np.asarray(cols.ev_kind) >= K.ASYNC_BEGIN) & (np.asarray(cols.ev_kind) <= K.ASYNC_END))
    paired = async_spans._pair_compiled(cols, len(rows), 0, 1 << 40, lambda: None)
    assert paired is not None and paired[-1] is not None and paired[6] > 0  # (begins paired)


@pytest.mark.parametrize(("length", "grid"), [(3000, 1), (30, 1), (40_000, 1), (3, 4), (0, 8)])
def test_lanes_kernel_is_first_fit(length, grid):
    """The lanes kernel lays spans out as assign_lanes (the numpy path) and a plain loop do: overlapping,
    touching, zero-length spans, hundreds of lanes, several groups; unsorted spans are declined."""
    from fxscope.core.trace.async_spans import assign_lanes

    assert KERNELS is not None
    rng = np.random.default_rng(length + grid)
    n = 4000
    group = np.sort(rng.integers(0, 4, n)).astype(np.uint64)
    start = rng.integers(0, 100_000, n)
    start -= start % grid
    end = start + (rng.integers(0, length, n) if length else 0)
    o = np.lexsort((-(end - start), start, group))
    group, start, end = group[o], start[o], end[o]
    lane = np.empty(n, np.int32)
    assert KERNELS.first_fit_lanes(group, start, end, lane) == 0
    assert lane.tolist() == assign_lanes(group, start, end).tolist()
    ends: dict = {}
    for g, s, e, ln in zip(group.tolist(), start.tolist(), end.tolist(), lane.tolist(), strict=True):
        lanes = ends.setdefault(g, [])
        free = [i for i, x in enumerate(lanes) if x <= s]
        assert ln == (free[0] if free else len(lanes))
        if ln == len(lanes):
            lanes.append(e)
        lanes[ln] = e
    assert KERNELS.first_fit_lanes(group, start[::-1].copy(), end, lane) == 1  # starts descending
    assert KERNELS.first_fit_lanes(group[::-1].copy(), start, end, lane) == 1  # groups descending


@pytest.mark.parametrize(("length", "grid", "tracks"), [(3000, 1, 1), (30, 7, 3), (40_000, 1, 5), (3, 4, 2), (0, 8, 4)])
def test_layout_kernel_is_the_sorts_and_first_fit(length, grid, tracks):
    """async_layout lays spans out as the numpy path does: the lexsort by (track, start, longer first, event),
    first-fit lanes (assign_lanes), then the order by (track, lane, start); spans given in any order (here:
    in start order but for a shuffled tail, as unmatched ends come), ties of start, zero-length spans."""
    from fxscope.core.trace.async_spans import assign_lanes

    assert KERNELS is not None
    rng = np.random.default_rng(length + grid + tracks)
    n = 4000
    start = np.sort(rng.integers(0, 100_000, n))
    start -= start % grid
    start[-300:] = rng.permutation(start[-300:])
    end = start + (rng.integers(0, length, n) if length else 0)
    track = rng.integers(0, tracks, n).astype(np.int32)
    event = rng.permutation(n).astype(np.int32)
    lane, order, row = np.empty(n, np.int32), np.empty(n, np.int64), np.empty(n, np.int32)
    lanes, counts = np.empty(tracks + 1, np.int32), np.empty(tracks + 1, np.int64)
    status = KERNELS.async_layout(track, tracks + 1, start, end, event, 4, lane, order, row, lanes, counts)
    assert counts.tolist() == np.bincount(track, minlength=tracks + 1).tolist()
    assert np.array_equal(order[row], np.arange(n))
    o1 = np.lexsort((event, -(end - start), start, track))
    expected = np.empty(n, np.int32)
    expected[o1] = assign_lanes(track[o1].astype(np.uint64), start[o1], end[o1])
    assert lane.tolist() == expected.tolist()
    assert lanes.tolist() == [int(lane[track == t].max(initial=-1)) + 1 for t in range(tracks + 1)]
    final = np.lexsort((start, lane, track))  # (the kernel's order of equal rows: the start order's)
    key = np.stack([track[order], lane[order], start[order]])
    assert np.array_equal(key, np.stack([track[final], lane[final], start[final]]))
    same = (np.diff(key, axis=1) == 0).all(axis=0)
    assert status == (2 if same.any() else 0)
    with pytest.raises(IndexError):
        KERNELS.async_layout(np.r_[track[:-1], tracks + 1].astype(np.int32), tracks + 1, start, end, event, 4, lane,
                             order, row, lanes, counts)  # (a track out of range)  # fmt: skip
    with pytest.raises(ValueError):
        KERNELS.async_layout(track, tracks + 1, start[1:], end, event, 4, lane, order, row, lanes, counts)


@pytest.mark.parametrize("per_span", [1, 3, 200])
def test_instant_order_kernel_is_lexsort(per_span):
    """async_instant_order: each instant's span (begin_row[pos]) and the order by (span, time), ties in time
    order, as np.lexsort; instants without an open span, positions out of range or times out of order are
    declined (the numpy path decides)."""
    assert KERNELS is not None
    rng = np.random.default_rng(per_span)
    n_spans = 500
    m = n_spans * per_span // 2
    begin_row = rng.permutation(n_spans).astype(np.int32)
    pos = rng.integers(0, n_spans, m).astype(np.int64)
    ts = np.sort(rng.integers(0, m // 2 + 1, m))
    span, order = np.empty(m, np.int32), np.empty(m, np.int64)
    status = KERNELS.async_instant_order(pos, begin_row, ts, n_spans, span, order)
    assert span.tolist() == begin_row[pos].tolist()
    assert order.tolist() == np.lexsort((ts, span)).tolist()
    ties = ((np.diff(span[order]) == 0) & (np.diff(ts[order]) == 0)).any()
    assert status == (2 if ties else 0)
    for bad_pos, bad_ts, spans in [(-1, ts, n_spans), (n_spans, ts, n_spans), (0, ts[::-1].copy(), n_spans), (0, ts, 3)]:
        p = pos.copy()
        p[m // 2] = bad_pos
        assert KERNELS.async_instant_order(p, begin_row, bad_ts, spans, span, order) == 1
    with pytest.raises(ValueError):
        KERNELS.async_instant_order(pos[1:], begin_row, ts, n_spans, span, order)


def test_async_kernel_reads_a_block_s_names_from_their_first_row():
    """Names given as a block's rows (name_base: the block's first event row, a FrequentCodedColumn's values
    expanded a block at a time) pair as the whole column does; a row before the base or past the block's
    names is refused (IndexError), never read outside the buffer."""
    rng = np.random.default_rng(5)
    n = 400
    kind = rng.choice(np.array([K.ASYNC_BEGIN, K.ASYNC_INSTANT, K.ASYNC_END], np.uint8), n)
    cid, name = rng.integers(0, 4, n).astype(np.uint64), rng.integers(0, 3, n).astype(np.int16)
    cat = np.zeros(n, np.int16)
    rows = np.arange(n, dtype=np.int32)
    ts = np.arange(n, dtype=np.int64)

    def walk(cuts, names_of):
        outs = [np.zeros(n, d) for d in (np.int64, np.int64, np.uint8, np.int32, np.int32, np.uint64, np.int32,
                                         np.int32, np.int32, np.int64, np.uint64, np.int64)]  # fmt: skip
        state = KERNELS.async_state(n)
        for a, b in itertools.pairwise(cuts):
            names, base = names_of(a, b)
            assert KERNELS.async_spans(state, kind, rows[a:b], 4, cat, 2, names, 2, base, cid[a:b], ts[a:b],
                                       np.zeros(n, np.int16), 2, np.zeros(2, np.int32), 1, K.ASYNC_BEGIN,
                                       K.ASYNC_INSTANT, K.ASYNC_END, 0, *outs) is True  # fmt: skip
        return KERNELS.async_spans_end(state, 4, n, *outs[:8]), [o.tolist() for o in outs]

    cuts = [0, 97, 250, n]
    whole = walk(cuts, lambda a, b: (name, 0))
    assert walk(cuts, lambda a, b: (name[a:b].copy(), a)) == whole
    assert walk([0, n], lambda a, b: (name.copy(), 0)) == whole
    with pytest.raises(IndexError):  # the block's names start after its first row
        walk(cuts, lambda a, b: (name[a + 1 : b].copy(), a + 1))
    with pytest.raises(IndexError):  # the block's names end before its last row
        walk(cuts, lambda a, b: (name[a : b - 1].copy(), a))
    # names by position (name_base below 0: one a row, a merged block's rows from several parts of the file)
    assert walk(cuts, lambda a, b: (name[a:b].copy(), -1)) == whole
    with pytest.raises(ValueError):  # not one a row
        walk(cuts, lambda a, b: (name[a : b + 1].copy(), -1))


@pytest.fixture
def small_merges(monkeypatch):
    """The merged walk (async events out of time order between runs: a trace saved one provider after the
    other) in blocks of a few events, each run read a few event rows at a time, the first walk in blocks of
    64 event rows; records which walks ran (``calls``: "merged" or "sorted") and the names' bases given."""
    from fxscope.core.trace import async_spans

    monkeypatch.setattr(async_spans, "PAIR_BLOCK", 64)
    monkeypatch.setattr(async_spans, "MERGE_BLOCK", 9)
    monkeypatch.setattr(async_spans, "MERGE_READ", 5)
    calls: list[str] = []
    bases: set[int] = set()
    merged, names = async_spans._walk_merged, async_spans._names_of_rows

    def counted(*args, **kwargs):
        calls.append("merged")
        return merged(*args, **kwargs)

    def named(*args, **kwargs):
        out = names(*args, **kwargs)
        bases.add(out[1])
        return out

    monkeypatch.setattr(async_spans, "_walk_merged", counted)
    monkeypatch.setattr(async_spans, "_names_of_rows", named)
    return calls, bases


@pytest.mark.parametrize("seed", [1, 2])
def test_same_async_of_traces_saved_one_provider_after_another(small_merges, seed):
    """A one-shot trace (``providers_in_turn``: each provider's events in turn, out of time order where one
    provider's end and the next one's begin) is paired by the merged walk, a few events a block, the same
    spans and instants as the numpy path; with its names frequency-coded (a trace of more than 256 names) the
    blocks' names are given by position."""
    from fxscope.formats.fxt.frequent_codes import frequent_coded

    calls, bases = small_merges
    cols = read_fxt_bytes(generate_trace(6_000, seed=seed, providers_in_turn=True, scheduling=seed == 2))
    assert_same_async(cols)
    assert calls and 0 in bases
    names = np.asarray(cols.ev_name, np.int16).copy()
    names[::97] = 300 + np.arange(len(names[::97])) % 400  # (rare names: more than 256 in all)
    cols.ev_name = frequent_coded(names)
    assert cols.ev_name is not None
    calls.clear()
    assert_same_async(cols)
    assert calls and -1 in bases


def test_same_async_of_many_runs_sorted_at_once(small_merges, monkeypatch):
    """Past MERGE_RUNS time-ordered runs the async events are sorted at once (as before the merged walk):
    the same tables."""
    from fxscope.core.trace import async_spans

    calls, _ = small_merges
    monkeypatch.setattr(async_spans, "MERGE_RUNS", 2)
    cols = read_fxt_bytes(generate_trace(6_000, seed=3, providers_in_turn=True))
    assert_same_async(cols)
    assert not calls  # (three providers: three runs, over the limit)
    monkeypatch.setattr(async_spans, "MERGE_RUNS", 3)
    assert_same_async(cols)
    assert calls


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(st.lists(_event, max_size=80), st.integers(1, 6), st.integers(1, 6))
def test_same_async_of_hostile_traces_merged(small_merges, events, block, read):
    """Times going back anywhere, with many ties (few timestamps): the merged walk's blocks (of any size,
    each run read any few rows at a time) pair them as the numpy path does."""
    from fxscope.core.trace import async_spans

    async_spans.MERGE_BLOCK, async_spans.MERGE_READ = block, read  # (restored by the fixture's monkeypatch)
    assert_same_async(_columns(events))


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(st.lists(_event, max_size=80), st.lists(st.integers(1, 79), max_size=4, unique=True), st.integers(1, 6))
def test_same_async_of_hostile_sections_merged(small_merges, events, cuts, block):
    """Provider sections that go back in time are merged from the start; where a section's own times go back
    too, the merge stops (that run is not in order) and the events are walked again from their time-ordered
    runs: the numpy path's spans and instants either way."""
    from fxscope.core.trace import async_spans

    async_spans.MERGE_BLOCK = block  # (restored by the fixture's monkeypatch)
    assert_same_async(_columns(events, sorted(cuts)))


def test_sections_going_back_are_merged_from_the_start(small_merges, monkeypatch):
    """A one-shot trace's sections are merged at once: no first walk in file order (which would stop where the
    second provider's events begin) and no pass to find its runs."""
    from fxscope.core.trace import async_spans

    calls, _ = small_merges
    walked: list[int] = []
    runs_found: list[int] = []
    blocks, found = async_spans._walk_blocks, async_spans._time_ordered_runs
    monkeypatch.setattr(async_spans, "_walk_blocks", lambda *a, **k: walked.append(1) or blocks(*a, **k))
    monkeypatch.setattr(async_spans, "_time_ordered_runs", lambda *a, **k: runs_found.append(1) or found(*a, **k))
    cols = read_fxt_bytes(generate_trace(6_000, seed=4, providers_in_turn=True))
    assert len(async_spans._section_runs(cols)) == 3  # (three providers, each one's chunks together)
    assert_same_async(cols)
    assert calls and not walked and not runs_found
    streamed = read_fxt_bytes(generate_trace(6_000, seed=4))  # (sections in time order: walked in file order)
    assert async_spans._section_runs(streamed) is None
