"""The model's slices and tracks as a step of the build (TraceModel.build_slice_tables): the constructor leaves
them to it, the steps that read them start after it, two readers build them once, a cancel leaves them
unbuilt, and the tables are those of a model building them on first use."""

from __future__ import annotations

import threading
import time

import numpy as np
import pytest

from fxscope.core.synthetic_trace import generate_trace
from fxscope.core.trace import model as model_module
from fxscope.core.trace.model import TraceModel
from fxscope.core.trace.prepare import PREPARE_STEPS, STEP_AFTER, build_steps, prepare_model
from fxscope.formats.fxt.reader import read_fxt_bytes

#: the steps that read the slices or the tracks (the others read only the columns, the extent and the labels)
SLICE_READERS = ("pyramid", "flows", "density", "stats")


@pytest.fixture(scope="module")
def trace() -> bytes:
    return generate_trace(20_000, seed=11, scheduling=True, extra_threads=2)


def _slice_columns(model: TraceModel) -> dict[str, np.ndarray]:
    s = model.slices
    return {f: np.asarray(getattr(s, f)) for f in ("ts", "dur", "thread", "depth", "name", "event", "flags", "parent")}


def _track_rows(model: TraceModel) -> list[tuple]:
    return [(t.thread, t.pid, t.tid, t.name, t.lo, t.hi, t.max_depth) for t in model.tracks]


def test_the_constructor_leaves_the_slices_to_their_step(trace: bytes) -> None:
    model = TraceModel(read_fxt_bytes(trace))
    assert not model.slices_ready and model.start_ns < model.end_ns
    prepare_model(model)
    assert model.slices_ready
    on_first_use = TraceModel(read_fxt_bytes(trace))  # (a command's model: built when first read)
    expected, got = _slice_columns(on_first_use), _slice_columns(model)
    assert len(expected["ts"]) > 1000
    assert all(np.array_equal(expected[f], got[f]) for f in expected)
    assert _track_rows(on_first_use) == _track_rows(model) and len(model.tracks) > 2
    assert np.array_equal(on_first_use.density(1000), model.density(1000))


def test_the_steps_reading_the_slices_start_after_their_step(trace: bytes, monkeypatch) -> None:
    """(Else a worker would sit waiting for the slices another one builds.)"""
    assert all("slices" in STEP_AFTER.get(name, ()) for name in SLICE_READERS if name != "stats")
    real = model_module.build_slices

    def slow(*args, **kwargs):
        time.sleep(0.3)  # (the other worker starts every step that may start meanwhile)
        return real(*args, **kwargs)

    monkeypatch.setattr(model_module, "build_slices", slow)
    model = TraceModel(read_fxt_bytes(trace))
    started: dict[str, float] = {}
    ended: dict[str, float] = {}

    def timed(name, build):
        def run(m):
            started[name] = time.perf_counter()
            build(m)
            ended[name] = time.perf_counter()

        return run

    build_steps(model, [(name, timed(name, build)) for name, build in PREPARE_STEPS], workers=2)
    assert set(started) == {name for name, _ in PREPARE_STEPS}
    for name in SLICE_READERS:
        assert started[name] >= ended["slices"], name
    # the steps of the columns alone ran beside the slices (the point of the step)
    assert any(started[name] < ended["slices"] for name in started if name not in (*SLICE_READERS, "slices"))


def test_two_threads_asking_for_the_slices_build_them_once(trace: bytes, monkeypatch) -> None:
    real = model_module.build_slices
    calls = []

    def slow(*args, **kwargs):
        calls.append(1)
        time.sleep(0.2)
        return real(*args, **kwargs)

    monkeypatch.setattr(model_module, "build_slices", slow)
    model = TraceModel(read_fxt_bytes(trace))
    got = []
    threads = [threading.Thread(target=lambda: got.append(model.processes)),
               threading.Thread(target=lambda: got.append(model.slices))]  # fmt: skip
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(calls) == 1 and len(got) == 2
    assert model.processes is model.processes and model.tracks[0].lanes is model.lanes


def test_a_cancel_of_the_slices_step_stops_the_build_and_leaves_them_unbuilt(trace: bytes, monkeypatch) -> None:
    from fxscope.core.trace import slices

    monkeypatch.setattr(slices, "BATCH_EVENTS", 500)  # (checks between steps of ~2,000 events)
    cancel = threading.Event()
    checks: list[int] = []

    class Cancelled(Exception):
        pass

    def check() -> None:
        checks.append(1)
        if len(checks) == 5:
            cancel.set()
        if cancel.is_set():
            raise Cancelled

    model = TraceModel(read_fxt_bytes(trace), check=check)
    with pytest.raises(Cancelled):
        prepare_model(model)
    assert not model.slices_ready and "pyramid" not in vars(model)
    cancel.clear()
    model.done_checking()
    assert len(model.slices) > 0 and model.slices_ready  # (built by the next reader)
    fresh = TraceModel(read_fxt_bytes(trace))
    assert np.array_equal(model.density(1000), fresh.density(1000))
    assert model._density_read is None  # (counted anew by the build that finished, and taken: not read again)
    assert all(np.array_equal(a, b) for a, b in zip(_slice_columns(model).values(), _slice_columns(fresh).values(), strict=True))


def _extent_of_the_columns(cols) -> tuple[int, int]:
    """The extent a model must have, from every column read whole: every event's time, the scheduling and
    log records', every complete event's end (read back from its record's data word)."""
    from fxscope.formats.fxt.columns import EventKind

    complete = np.flatnonzero(np.asarray(cols.ev_kind) == EventKind.DURATION_COMPLETE)
    parts = [np.asarray(cols.ev_ts), np.asarray(cols.sched_ts), np.asarray(cols.log_ts),
             np.asarray(cols.ev_data[complete]).view(np.int64)]  # fmt: skip
    parts = [p for p in parts if len(p)]
    if not parts:
        return 0, 1
    start = min(int(p.min()) for p in parts)
    return start, max(max(int(p.max()) for p in parts), start + 1)


def test_the_extent_is_every_columns_on_real_and_hostile_traces(testdata, cut_and_flip) -> None:
    """The constructor takes the event times' extremes the reader found and the complete events' ends it
    decoded (read back from the file when it did not keep them): the extent of every column read whole."""
    import random

    from fxscope.formats.errors import FormatError

    rng = random.Random(22)
    sources = [p.read_bytes() for p in sorted((testdata / "fxt").glob("*.fxt"))]
    sources += [generate_trace(3_000, seed=9, scheduling=True)]
    checked = 0
    for data in sources:
        variants = [data] + [cut_and_flip(data, rng, 6, len(data) // 2) for _ in range(15)]
        for variant in variants:
            try:
                cols = read_fxt_bytes(variant)
            except FormatError:
                continue
            model = TraceModel(cols)
            assert (model.start_ns, model.end_ns) == _extent_of_the_columns(cols)
            checked += 1
            kept = read_fxt_bytes(variant)
            kept.ev_complete_end = None  # (a reader that did not keep them: the ends read from the file)
            model = TraceModel(kept)
            assert (model.start_ns, model.end_ns) == _extent_of_the_columns(kept)
    assert checked > 50
