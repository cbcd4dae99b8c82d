"""The model's tables built two steps at once (:func:`fxscope.core.trace.prepare.build_steps` on two threads)
are the tables the sequential build makes: in the steps' usual order and reversed, many times over, with
the interpreter switching threads as often as it can (``sys.setswitchinterval``), so that a step reading
lazy state another step is building would show up as a difference or an error."""

from __future__ import annotations

import dataclasses
import hashlib
import sys
import threading
import time
from collections.abc import Iterator

import numpy as np
import pytest

from fxscope.core.concurrent_steps import Step
from fxscope.core.synthetic_trace import generate_trace
from fxscope.core.trace import prepare
from fxscope.core.trace.model import TraceModel
from fxscope.core.trace.prepare import (
    LATER_APART,
    PREPARE_STEPS,
    STEP_AFTER,
    build_steps,
    pending_tables,
    prepare_later,
    prepare_model,
)
from fxscope.formats.fxt.columns import FxtColumns
from fxscope.formats.fxt.reader import read_fxt_bytes

#: the model's tables the steps build (its attributes, and the memoized ones)
TABLES = ("async_spans", "async_pyramid", "counters", "instants", "sched", "pyramid", "logs")
MEMO = ("density1000", "sched_pyramid_cpu", "sched_pyramid_state")


def _walk(value, path: str, seen: set[int]) -> Iterator[tuple[str, object]]:
    """(path, comparable leaf) of everything ``value`` holds: arrays as their dtype, shape and bytes' digest,
    objects by their fields (the columns and the model they refer to are not walked again)."""
    if isinstance(value, (FxtColumns, TraceModel)) or (callable(value) and not hasattr(value, "__dict__")):
        yield path, type(value).__name__
        return
    if isinstance(value, (str, int, float, bool, bytes, type(None), np.generic)):
        yield path, value
        return
    if id(value) in seen:
        yield path, "(seen)"
        return
    seen.add(id(value))
    if isinstance(value, np.ndarray):
        array = np.ascontiguousarray(value)
        yield path, (array.dtype.str, array.shape, hashlib.sha1(array.tobytes()).hexdigest())
    elif isinstance(value, (list, tuple)):
        yield path, len(value)
        for i, item in enumerate(value):
            yield from _walk(item, f"{path}[{i}]", seen)
    elif isinstance(value, dict):
        yield path, sorted(map(repr, value))
        for key in sorted(value, key=repr):
            if not str(key).startswith("_once"):
                yield from _walk(value[key], f"{path}[{key!r}]", seen)
    elif dataclasses.is_dataclass(value) or hasattr(value, "__dict__"):
        fields = vars(value) if hasattr(value, "__dict__") else {}
        if dataclasses.is_dataclass(value):
            fields = {f.name: getattr(value, f.name) for f in dataclasses.fields(value)} | fields
        yield path, type(value).__name__
        for name in sorted(fields):
            if not name.startswith("_once") and not name.endswith("_lock") and name != "_lock":
                yield from _walk(fields[name], f"{path}.{name}", seen)
    else:
        yield path, type(value).__name__


def _tables(model: TraceModel) -> dict[str, object]:
    """Every table the build made, as comparable leaves (and the slice lanes' end maxima, the flows and the
    statistics)."""
    out: dict[str, object] = {}
    for name in TABLES:
        out.update(_walk(vars(model)[name], name, set()))
    for name in MEMO:
        out.update(_walk(model._memo[name], name, set()))
    out.update(_walk(model.slices, "slices", set()))  # (the slices and tracks: the step "slices")
    out.update(_walk([(t.thread, t.pid, t.tid, t.name, t.lo, t.hi, t.max_depth) for t in model.tracks],
                     "tracks", set()))  # fmt: skip
    out.update(_walk(model.flows, "flows", set()))
    out.update(_walk(model.stats, "stats", set()))
    out.update(_walk([t.lane_base for t in model.tracks], "lane_base", set()))
    return out


@pytest.fixture(scope="module")
def trace() -> bytes:
    return generate_trace(30_000, scheduling=True, extra_threads=3)


def _sequential(trace: bytes) -> dict[str, object]:
    model = TraceModel(read_fxt_bytes(trace))
    prepare_model(model, workers=1)
    _ = model.lanes.get().end_max_of
    return _tables(model)


def _reordered() -> list:
    """:data:`PREPARE_STEPS` reversed (each dependency still first: the scheduler waits for it)."""
    steps = list(reversed(PREPARE_STEPS))
    assert any(STEP_AFTER.get(name) for name, _ in steps)  # (the reversal does put dependents first)
    return steps


@pytest.fixture
def switch_often():
    before = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)
    yield
    sys.setswitchinterval(before)


@pytest.mark.parametrize("order", ["usual", "reversed"])
def test_two_threads_build_the_tables_of_the_sequential_build(trace: bytes, order: str, switch_often) -> None:
    expected = _sequential(trace)
    assert len(expected) > 200
    for _ in range(4):
        model = TraceModel(read_fxt_bytes(trace))
        steps = PREPARE_STEPS if order == "usual" else _reordered()
        build_steps(model, steps, workers=2)
        _ = model.lanes.get().end_max_of
        got = _tables(model)
        assert got.keys() == expected.keys()
        differ = [key for key in expected if got[key] != expected[key]]
        assert not differ, differ[:10]


def test_the_windows_background_build_makes_the_same_tables(trace: bytes, switch_often) -> None:
    """A large trace's path: the first frame's steps in the loader, then the track steps, flows, lane ends
    and statistics in one background build of two threads."""
    expected = _sequential(trace)
    for _ in range(3):
        model = TraceModel(read_fxt_bytes(trace))
        prepare_model(model, first_frame_only=True)
        assert pending_tables(model)
        done: list[str] = []
        prepare_later(model, lambda: None, done.append)
        assert not pending_tables(model) and model.stats_ready and model.lanes.get()._end_max.built
        assert _tables(model) == expected


def test_the_comparison_sees_a_different_table(trace: bytes) -> None:
    """(The comparison above can fail: one changed value of one table is a difference.)"""
    model = TraceModel(read_fxt_bytes(trace))
    prepare_model(model, workers=1)
    before = _tables(model)
    model.instants.ts[len(model.instants.ts) // 2] += 1
    after = _tables(model)
    assert [key for key in before if before[key] != after[key]] == ["instants.ts"]


def test_the_background_build_runs_its_large_steps_one_at_a_time(trace: bytes, monkeypatch) -> None:
    """The window's background build never runs two of :data:`LATER_APART`'s steps (the largest temporaries:
    together they were the window's peak memory) at once, and still runs a small step beside one of them.
    Each step is held 20 ms so that any two the scheduler starts together do overlap."""
    running: set[str] = set()
    together: set[frozenset[str]] = set()
    lock = threading.Lock()
    real_run_steps = prepare.run_steps

    def timed(step: Step) -> Step:
        def run() -> None:
            with lock:
                together.update(frozenset({step.name, other}) for other in running)
                running.add(step.name)
            time.sleep(0.02)
            try:
                step.run()
            finally:
                with lock:
                    running.discard(step.name)

        return dataclasses.replace(step, run=run)

    def run_steps(steps, **kwargs):
        return real_run_steps([timed(step) for step in steps], **kwargs)

    monkeypatch.setattr(prepare, "run_steps", run_steps)
    model = TraceModel(read_fxt_bytes(trace))
    prepare_model(model, first_frame_only=True)
    prepare_later(model, lambda: None, workers=2, nice=0)
    assert model.stats_ready and not pending_tables(model)
    large = set(LATER_APART)
    assert large == {"flows", "async_pyramid", "counters", "sched"}
    assert not [pair for pair in together if pair <= large], together
    assert any(pair & large and pair - large for pair in together), together  # (two workers still used)
