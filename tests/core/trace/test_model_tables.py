"""The model's derived tables: built on first access, once, and consistent on the third-party traces."""

from __future__ import annotations

import numpy as np
import pytest

from fxscope.core.synthetic_trace import generate_trace
from fxscope.core.trace import slices
from fxscope.core.trace.model import TraceModel
from fxscope.core.trace.prepare import (
    TRACK_STEPS,
    pending_tables,
    prepare_later,
    prepare_model,
    prepare_tracks,
)
from fxscope.formats.fxt.columns import EventKind as K
from fxscope.formats.fxt.reader import read_fxt, read_fxt_bytes
from fxscope.formats.fxt.writer import FxtWriter

TABLES = ("async_spans", "flows", "counters", "instants", "sched", "objects")
#: the tables built on first use (``once_property``: stored on the instance once built)
LAZY = ("async_spans", "async_pyramid", "counters", "instants", "sched", "pyramid", "logs", "search_index")
#: what the loader builds before the tab opens: all but the search index (built on the first search)
PREPARED = tuple(name for name in LAZY if name != "search_index")


def test_tables_are_built_lazily_and_cached() -> None:
    model = TraceModel(read_fxt_bytes(generate_trace(6_000)))
    assert not set(LAZY) & set(vars(model))  # nothing built by the constructor
    assert not model.flows_ready and not model.stats_ready and not model.search_index_ready
    for name in TABLES:
        first = getattr(model, name)
        assert getattr(model, name) is first
    assert len(model.async_spans) and len(model.flows) and len(model.counters)
    assert len(model.instants) and len(model.sched.cpu_slices)
    # flows index the model's own slices
    assert int(model.flows.dst_slice.max()) < len(model.slices)


def test_prepare_builds_every_table_the_views_read() -> None:
    model = TraceModel(read_fxt_bytes(generate_trace(6_000)))
    fractions: list[float] = []
    prepare_model(model, fractions.append)
    assert set(PREPARED) <= set(vars(model)) and model.flows_ready and model.stats_ready
    assert "search_index" not in vars(model)  # its temporaries are not part of the load's peak
    assert fractions == sorted(fractions) and fractions[-1] == 1.0
    built = {name: vars(model)[name] for name in PREPARED}
    flows, stats = model.flows, model.stats
    prepare_model(model)  # a second call builds nothing again
    assert all(vars(model)[name] is table for name, table in built.items())
    assert model.flows is flows and model.stats is stats


def test_first_frame_prepare_leaves_flows_and_stats_to_later() -> None:
    """A large trace's loader builds what the first frame draws; the flows and statistics come after it
    (:func:`prepare_later`, in a background thread), and a cancelled later build leaves them unbuilt."""
    model = TraceModel(read_fxt_bytes(generate_trace(6_000)))
    fractions: list[float] = []
    prepare_model(model, fractions.append, first_frame_only=True)
    assert fractions[-1] == 1.0 and "pyramid" in vars(model)
    # the other track kinds' tables are left to the background build after the first frame
    assert pending_tables(model) == {name for name, _ in TRACK_STEPS}
    assert not {"async_pyramid", "counters", "sched", "instants"} & set(vars(model))
    done: list[str] = []
    prepare_tracks(model, lambda: None, done.append)
    # each step once, in the order they finished (two at once): the scheduling pyramids after their tables
    assert sorted(done) == sorted(name for name, _ in TRACK_STEPS) and not pending_tables(model)
    assert done.index("sched") < min(done.index("sched_pyramid_cpu"), done.index("sched_pyramid_state"))
    assert set(PREPARED) <= set(vars(model))
    assert not model.flows_ready and not model.stats_ready
    wakeups = model.sched.wakeups
    assert len(wakeups) and wakeups._by_tid is not None  # what the first frame's state strips mark: built too
    tid = int(wakeups.tid[0])
    assert wakeups.rows_in(0, 2**62, tid=tid).tolist() == np.flatnonzero(wakeups.tid == tid).tolist()

    def cancel() -> None:
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        prepare_later(model, cancel)
    assert not model.flows_ready and not model.stats_ready
    prepare_later(model, lambda: None)
    assert model.lanes.get()._end_max.built  # (what a frame zoomed in past the pyramid reads: not built there)
    assert model.flows_ready and model.stats_ready and len(model.flows)
    assert model.flows is model.flows  # built once
    assert any(s.section == "Flows" and s.name == "links" and s.value == len(model.flows) for s in model.stats)


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


def _many_threads_trace(threads: int) -> bytes:
    """Nested slices on many threads (and the odd unmatched end, unclosed begin, and skipped depth)."""
    rng = np.random.default_rng(11)
    w = FxtWriter()
    w.initialization(1_000_000_000)
    for t in range(threads):
        th = (100 + t % 7, 10_000 + t)
        ts, depth = int(rng.integers(0, 1000)), 0
        if t % 13 == 0:
            w.event(K.DURATION_END, ts, th, "cat", "late")  # began before the trace
        for _ in range(int(rng.integers(1, 12))):
            ts += int(rng.integers(0, 3))  # equal timestamps too
            if depth < 6 and rng.random() < 0.55:
                w.event(K.DURATION_BEGIN, ts, th, "cat", f"s{depth}")
                depth += 1
            elif depth:
                w.event(K.DURATION_END, ts, th, "cat", "")
                depth -= 1
            else:
                w.event(K.DURATION_COMPLETE, ts, th, "cat", "c", data=ts + int(rng.integers(0, 4)))
    return w.getvalue()


def test_tracks_of_thousands_of_threads_hold_each_depths_rows(monkeypatch) -> None:
    model = TraceModel(read_fxt_bytes(_many_threads_trace(3000)))
    s = model.slices
    tracks = model.tracks
    assert len(tracks) == len(np.unique(s.thread)) == 3000
    for track in tracks:
        depth = s.depth[track.lo : track.hi]
        assert (s.thread[track.lo : track.hi] == track.thread).all()
        assert track.max_depth == int(depth.max()) == len(track.by_depth) - 1
        for d, (rows, end_max) in enumerate(zip(track.by_depth, track.end_max, strict=True)):
            expect = track.lo + np.flatnonzero(depth == d)
            assert rows.dtype == np.int32 and rows.tolist() == expect.tolist()
            assert end_max.dtype == np.int64
            assert end_max.tolist() == np.maximum.accumulate(s.ts[expect] + s.dur[expect]).tolist()
    # matched in batches of a few threads: the same table
    monkeypatch.setattr(slices, "BATCH_EVENTS", 50)
    batched = slices.build_slices(model.cols, model.end_ns)
    for name in ("ts", "dur", "thread", "depth", "event", "flags", "parent"):
        a, b = getattr(s, name), getattr(batched, name)
        assert a.dtype == b.dtype and np.array_equal(a, b), name


def test_the_slices_are_the_same_with_or_without_the_decoded_complete_ends(tmp_path):
    """The model build takes the complete events' ends the reader decoded (``take_complete_ends``); a model of
    columns whose ends were taken already reads them from ``ev_data``: the same slices and extent."""
    from fxscope.core.synthetic_trace import generate_trace
    from fxscope.formats.fxt.reader import read_fxt

    path = tmp_path / "t.fxt"
    path.write_bytes(generate_trace(30_000, seed=5))
    cols = read_fxt(path)
    assert cols.ev_complete_end is not None
    first = TraceModel(cols)
    assert cols.ev_complete_end is not None  # (the constructor's extent reads them without taking them)
    first.build_slice_tables()
    assert cols.ev_complete_end is None  # taken by the slices' build: no copy kept with the columns
    second = TraceModel(cols)
    assert (first.start_ns, first.end_ns) == (second.start_ns, second.end_ns)
    for name in ("ts", "dur", "thread", "depth", "event", "flags", "parent"):
        assert np.array_equal(getattr(first.slices, name), getattr(second.slices, name)), name
    assert np.count_nonzero(cols.ev_kind == 4) > 100


def test_lane_ends_built_on_first_use_and_pyramid_durations_computed_from_the_tables() -> None:
    """What the load leaves out of the model's memory (the lanes' running end maxima, the pyramids' duration
    columns, the sched rows' lane column) is read the same when a view asks for it."""
    model = TraceModel(read_fxt_bytes(generate_trace(20_000, scheduling=True)))
    prepare_model(model, first_frame_only=True)
    assert not model.lanes.get()._end_max.built  # the first frame's pyramid does not need them
    s = model.slices
    for track in model.tracks:
        for rows, end_max in zip(track.by_depth, track.end_max, strict=True):
            assert end_max.tolist() == np.maximum.accumulate(s.ts[rows] + s.dur[rows]).tolist()
    pyramid, _bases = model.async_pyramid
    t = model.async_spans
    rows = np.arange(len(t))
    assert len(t) and np.asarray(pyramid.dur).tolist() == (t.end - t.start).tolist()
    assert pyramid.dur[rows[::3]].tolist() == (t.end - t.start)[::3].tolist()
    for which in ("cpu", "state"):
        table = model.sched.cpu_slices if which == "cpu" else model.sched.thread_states
        key = table.cpu if which == "cpu" else table.tid
        pyramid, lanes = model.sched_pyramid(which)
        assert len(key) > 100
        rank = np.r_[0, np.cumsum(key[1:] != key[:-1])]
        assert [int(lanes[r]) for r in range(len(key))] == rank.tolist()
        assert np.asarray(pyramid.dur).tolist() == (table.end - table.start).tolist()


def test_background_build_starts_with_the_flows(monkeypatch) -> None:
    """The window's background build starts the flows first (beside the first track step, while the model
    holds least: their temporaries on top of every other table were the window's peak memory), the track
    steps next in their order, then the lane ends and the statistics."""
    from fxscope.core.trace import prepare

    model = TraceModel(read_fxt_bytes(generate_trace(6_000)))
    prepare_model(model, first_frame_only=True)
    started: list[str] = []
    real = prepare.build_step

    def recorded(m, build):
        names = [name for name, b in steps_of[0] if b is build]
        started.append(names[0])
        return real(m, build)

    steps_of: list[list] = []
    real_build_steps = prepare.build_steps

    def capture(m, steps, **kwargs):
        steps_of.append(steps)
        return real_build_steps(m, steps, **{**kwargs, "workers": 1})

    monkeypatch.setattr(prepare, "build_steps", capture)
    monkeypatch.setattr(prepare, "build_step", recorded)
    prepare_later(model, lambda: None)
    assert started == ["flows", *(name for name, _ in TRACK_STEPS), "lane_ends", "stats"]
    assert model.flows_ready and model.stats_ready and not pending_tables(model)


def test_the_window_s_background_build_ends_the_load_s_huge_pages(monkeypatch) -> None:
    """A large trace's first-frame build leaves numpy's advice of huge pages on (the load goes on in the
    background build), and the background build turns it off at its end, cancelled or not (freed_memory:
    small pages for the search index and the frames)."""
    from fxscope.core import freed_memory

    multiarray = pytest.importorskip("numpy._core.multiarray")
    monkeypatch.delenv(freed_memory.HUGE_PAGES_ENV, raising=False)
    was = multiarray._get_madvise_hugepage()
    try:
        for cancelled in (False, True):
            freed_memory.use_huge_pages()  # (as read_trace does)
            model = TraceModel(read_fxt_bytes(generate_trace(6_000)))
            prepare_model(model, first_frame_only=True)
            assert multiarray._get_madvise_hugepage()

            def cancel(cancelled: bool = cancelled) -> None:
                if cancelled:
                    raise RuntimeError("cancelled")

            try:
                prepare_later(model, cancel)
            except RuntimeError:
                assert cancelled
            assert not multiarray._get_madvise_hugepage()
    finally:
        multiarray._set_madvise_hugepage(was)
