"""Background builds that yield pause while the timeline draws frames or takes input, and still finish.

A large trace's tab builds tables in a background thread after its first frame; Python threads share one
interpreter lock, so navigation frames drawn meanwhile waited for it. The timeline notes its paints
(:mod:`fxscope.app.timeline.view_activity`) and a yielding :class:`~fxscope.app.worker_threads.ModelBuild`
sleeps at its next function call while they are recent. Checked on what the build did while activity was
noted (its steps counted), never on how long anything took."""

from __future__ import annotations

import threading
import time

import fxscope.app.worker_threads as worker_threads
from fxscope.app.timeline.widget import TimelineWidget
from fxscope.app.worker_threads import ModelBuild, note_ui_activity
from fxscope.core.synthetic_trace import generate_trace
from fxscope.core.trace.model import TraceModel
from fxscope.formats.fxt.reader import read_fxt_bytes


def _step() -> None:
    """One step of a test build: a function call, where a yielding build may pause."""


def _counting_build(steps: list[int], started: threading.Event, stop: threading.Event):
    def build(check) -> int:
        started.set()
        while not stop.is_set():
            _step()
            steps[0] += 1
            time.sleep(0.0005)
        return steps[0]

    return build


def _steps_while_active(qtbot, yields: bool, monkeypatch) -> tuple[int, float]:
    """Steps a build makes while the UI notes activity for 0.3 s (pauses unbounded within it)."""
    monkeypatch.setattr(worker_threads, "MAX_PAUSE_S", 10.0)
    steps, started, stop = [0], threading.Event(), threading.Event()
    worker = ModelBuild(_counting_build(steps, started, stop), yields=yields)
    worker.start()
    assert started.wait(10)
    before = -1
    start = time.monotonic()
    while time.monotonic() < start + 0.4:
        note_ui_activity()
        time.sleep(0.005)
        if before < 0 and time.monotonic() > start + 0.1:  # (a step in progress has ended: counted from here)
            before = steps[0]
    during = steps[0] - before
    stop.set()
    worker.wait(10_000)
    return during, worker.paused_s


def test_a_yielding_build_pauses_while_the_ui_is_active_and_a_plain_one_does_not(qtbot, monkeypatch) -> None:
    during, paused = _steps_while_active(qtbot, True, monkeypatch)
    plain, plain_paused = _steps_while_active(qtbot, False, monkeypatch)
    assert during == 0 and paused > 0
    assert plain > 0 and plain_paused == 0


def test_a_yielding_build_finishes_while_the_ui_never_stops(qtbot, monkeypatch) -> None:
    """Activity noted all along: the build runs between its bounded pauses and ends."""
    monkeypatch.setattr(worker_threads, "MAX_PAUSE_S", 0.02)
    monkeypatch.setattr(worker_threads, "RUN_S", 0.01)

    def build(check) -> int:
        total = 0
        for _ in range(200):
            _step()
            total += 1
            time.sleep(0.001)
        return total

    worker = ModelBuild(build, yields=True)
    worker.start()
    while not worker.isFinished():
        note_ui_activity()
        time.sleep(0.002)
    assert worker.result == 200 and worker.paused_s > 0


def test_the_timeline_notes_its_paints(qtbot) -> None:
    model = TraceModel(read_fxt_bytes(generate_trace(2_000, seed=3)))
    timeline = TimelineWidget(model)
    qtbot.addWidget(timeline)
    timeline.resize(800, 400)
    timeline.show()
    qtbot.waitExposed(timeline)
    worker_threads._ui_active_at[0] = float("-inf")
    assert not worker_threads.ui_recently_active()
    timeline.zoom(0.5)  # (the view repaints at the event loop's next turn)
    qtbot.waitUntil(lambda: worker_threads._ui_active_at[0] > float("-inf"))


def test_a_drag_is_activity_and_the_pointer_moving_over_the_view_is_not(qtbot) -> None:
    from PySide6.QtCore import QEvent, QPointF, Qt
    from PySide6.QtGui import QMouseEvent
    from PySide6.QtWidgets import QApplication

    model = TraceModel(read_fxt_bytes(generate_trace(2_000, seed=3)))
    timeline = TimelineWidget(model)
    qtbot.addWidget(timeline)
    timeline.show()
    qtbot.waitExposed(timeline)
    qtbot.wait(20)  # (the first paints done)
    viewport = timeline.plot.viewport()

    def moved(buttons) -> bool:
        worker_threads._ui_active_at[0] = float("-inf")
        event = QMouseEvent(QEvent.Type.MouseMove, QPointF(50, 50), QPointF(50, 50), Qt.MouseButton.NoButton,
                            buttons, Qt.KeyboardModifier.NoModifier)  # fmt: skip
        QApplication.sendEvent(viewport, event)
        return worker_threads._ui_active_at[0] > float("-inf")

    assert not moved(Qt.MouseButton.NoButton)
    assert moved(Qt.MouseButton.LeftButton)


def test_a_held_yielding_build_makes_no_step_until_released_and_a_cancel_ends_the_hold(qtbot) -> None:
    """:meth:`ModelBuild.hold` (a search running): no bound on the pause, unlike the UI's; a build that does
    not yield is not held."""
    for yields in (True, False):
        steps, started, stop = [0], threading.Event(), threading.Event()
        worker = ModelBuild(_counting_build(steps, started, stop), yields=yields)
        worker.start()
        assert started.wait(10)
        worker.hold()
        time.sleep(0.05)  # (a step in progress ends)
        before = steps[0]
        time.sleep(0.3)
        assert (steps[0] == before) == yields
        worker.release()
        deadline = time.monotonic() + 10
        while steps[0] == before and time.monotonic() < deadline:
            time.sleep(0.005)
        assert steps[0] > before  # released: it steps again
        stop.set()
        assert worker.wait(10_000)
    steps, started, stop = [0], threading.Event(), threading.Event()
    worker = ModelBuild(_counting_build(steps, started, stop), yields=True)
    worker.start()
    assert started.wait(10)
    worker.hold()
    time.sleep(0.05)
    worker.cancel()  # (the build's own loop does not check: the hold ends, the build goes on until stopped)
    deadline = time.monotonic() + 10
    before = steps[0]
    while steps[0] == before and time.monotonic() < deadline:
        time.sleep(0.005)
    assert steps[0] > before
    stop.set()
    assert worker.wait(10_000)
