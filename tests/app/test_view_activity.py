"""The timeline gives the memory its frames freed back once they pause (app/timeline/view_activity.py), not
between the frames of a pan or zoom."""

from __future__ import annotations

import time

from fxscope.app import worker_threads
from fxscope.app.timeline import view_activity
from fxscope.app.timeline.widget import TimelineWidget
from fxscope.core.synthetic_trace import generate_trace
from fxscope.core.trace.model import TraceModel
from fxscope.formats.fxt.reader import read_fxt_bytes


def test_freed_memory_is_given_back_once_the_frames_pause(qtbot, monkeypatch) -> None:
    trims: list[float] = []
    monkeypatch.setattr(view_activity, "IDLE_TRIM_MS", 400)
    monkeypatch.setattr(view_activity, "return_freed_memory", lambda: trims.append(time.monotonic()))
    timeline = TimelineWidget(TraceModel(read_fxt_bytes(generate_trace(2_000, seed=3))))
    qtbot.addWidget(timeline)
    timeline.resize(800, 400)
    timeline.show()
    qtbot.waitExposed(timeline)
    qtbot.waitUntil(lambda: len(trims) == 1, timeout=5000)  # (the first paints' pause)
    painted = []
    timeline.plot.viewport().installEventFilter(_PaintsNoted(painted, timeline))
    for i in range(20):  # frames of a zoom, 30 ms apart: none of them followed by a trim
        timeline.zoom(0.9 if i % 2 else 1.1)
        qtbot.wait(30)
    assert painted and len(trims) == 1
    qtbot.waitUntil(lambda: len(trims) == 2, timeout=5000)
    assert trims[1] - painted[-1] >= 0.3  # once, after the pause
    timeline.search_box.setFocus()  # (its cursor blinks: the timeline's background repaints, not a frame)
    qtbot.wait(1200)
    assert len(trims) == 2, (trims, painted[-5:])


class _PaintsNoted(view_activity.QObject):
    """Notes when the view paints (the test's clock for the pause)."""

    def __init__(self, painted: list[float], parent) -> None:
        super().__init__(parent)
        self.painted = painted

    def eventFilter(self, obj, event) -> bool:
        if event.type() == view_activity.QEvent.Type.Paint:
            self.painted.append(time.monotonic())
        return False


def test_the_search_box_cursor_does_not_pause_the_background_builds(qtbot) -> None:
    """With the search box focused its cursor blinks (the timeline's background repaints every 0.5 s): no
    activity is noted for it, so a background build (the argument index's, after a search) is not paused at
    each blink; a frame of the view still is."""
    timeline = TimelineWidget(TraceModel(read_fxt_bytes(generate_trace(2_000, seed=3))))
    qtbot.addWidget(timeline)
    timeline.resize(800, 400)
    timeline.show()
    qtbot.waitExposed(timeline)
    qtbot.wait(200)
    timeline.search_box.setFocus()
    before = worker_threads._ui_active_at[0]
    qtbot.wait(1300)  # (two blinks at least)
    assert worker_threads._ui_active_at[0] == before
    timeline.zoom(1.1)
    qtbot.waitUntil(lambda: worker_threads._ui_active_at[0] > before, timeout=3000)
