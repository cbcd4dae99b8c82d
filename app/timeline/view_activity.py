"""Tells background builds when the timeline is drawing frames or taking input, so that they pause.

A large trace's tab builds tables in a background thread after its first frame (flows, statistics, the search
index: ~2-3 s at 10M events). Python threads share one interpreter lock: while a build held it, each frame
of a pan or zoom waited for it in 5 ms turns (pan/zoom frames p50 19 ms and p95 62 ms during the build,
against 12 and 26 ms after it). Builds that yield (:class:`fxscope.app.worker_threads.ModelBuild` with
``yields``) pause while :func:`fxscope.app.worker_threads.note_ui_activity` was called within
:data:`fxscope.app.worker_threads.UI_QUIET_S`; :class:`ViewActivity` calls it for the timeline's paints and
input.

It also gives the memory that the frames freed back to the system once they stop for a while
(:data:`IDLE_TRIM_MS`): after a load freed memory stays in the process
(:func:`fxscope.core.freed_memory.hold_freed_memory`), and a frame's pictures and query arrays (~10-13 MB
at once in a zoomed-out view of a 10M-event trace, proportional to what the view shows) stayed resident
after the last frame for the window's life: measured at 10M events after 60 pan/zoom steps, RssAnon 421-427
-> 407-414 MiB with the trim (~0.2-0.5 ms on the UI thread, once per pause).
"""

from __future__ import annotations

from PySide6.QtCore import QEvent, QObject, Qt, QTimer

from fxscope.app.worker_threads import note_ui_activity
from fxscope.core.freed_memory import return_freed_memory

#: the events that start or are a frame of navigation: the paint itself, and the input that leads to one (a
#: mouse move only with a button held: a drag; the pointer merely moving over the view must not hold the
#: builds back)
ACTIVE_EVENTS = frozenset({QEvent.Type.Paint, QEvent.Type.Wheel, QEvent.Type.KeyPress, QEvent.Type.MouseMove})


#: how long after the last paint or input the memory freed meanwhile is given back (a pause in navigating:
#: not between the frames of a pan, whose next frame would fault the same pages in again)
IDLE_TRIM_MS = 1000


class ViewActivity(QObject):
    """An event filter (on the timeline's view and the timeline itself, its parent) that notes their paints
    and input, and gives freed memory back when they pause; it never consumes an event. A paint of the
    parent alone is neither (it does not pause the builds nor put the trim off): it is not a frame, and the
    search box's blinking cursor repaints the parent's background under it every 0.5 s while the box has the
    focus (the background build of a large trace paused up to :data:`~fxscope.app.worker_threads.UI_QUIET_S`
    at each blink, the argument index's build typically, right after a search was typed)."""

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._idle = QTimer(self)  # (restarted by each paint or input: fires once they pause)
        self._idle.setSingleShot(True)
        self._idle.setInterval(IDLE_TRIM_MS)
        self._idle.timeout.connect(self._return_freed_memory)

    @staticmethod
    def _return_freed_memory() -> None:
        """(On the UI thread, :data:`IDLE_TRIM_MS` after the last paint or input.)"""
        return_freed_memory()

    def eventFilter(self, obj: QObject, event: QEvent) -> bool:
        kind = event.type()
        if kind in ACTIVE_EVENTS and (kind != QEvent.Type.MouseMove or event.buttons() != Qt.MouseButton.NoButton):
            if kind == QEvent.Type.Paint and obj is self.parent():
                return False  # (the parent's own repaint is not a frame: see the class docstring)
            note_ui_activity()
            self._idle.start()
        return False
