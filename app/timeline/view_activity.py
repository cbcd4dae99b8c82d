"""Tells background builds when the timeline is drawing frames or taking input, so that they pause.

A large trace's tab builds tables in a background thread after its first frame (flows, statistics, the search
index: ~2-3 s at 10M events). Python threads share one interpreter lock: while a build held it, each frame
of a pan or zoom waited for it in 5 ms turns (pan/zoom frames p50 19 ms and p95 62 ms during the build,
against 12 and 26 ms after it). Builds that yield (:class:`fxscope.app.worker_threads.ModelBuild` with
``yields``) pause while :func:`fxscope.app.worker_threads.note_ui_activity` was called within
:data:`fxscope.app.worker_threads.UI_QUIET_S`; :class:`ViewActivity` calls it for the timeline's paints and
input.
"""

from __future__ import annotations

from PySide6.QtCore import QEvent, QObject, Qt

from fxscope.app.worker_threads import note_ui_activity

#: the events that start or are a frame of navigation: the paint itself, and the input that leads to one (a
#: mouse move only with a button held: a drag; the pointer merely moving over the view must not hold the
#: builds back)
ACTIVE_EVENTS = frozenset({QEvent.Type.Paint, QEvent.Type.Wheel, QEvent.Type.KeyPress, QEvent.Type.MouseMove})


class ViewActivity(QObject):
    """An event filter (on the timeline's view and the timeline itself) that notes their paints and input;
    it never consumes an event."""

    def eventFilter(self, obj: QObject, event: QEvent) -> bool:
        kind = event.type()
        if kind in ACTIVE_EVENTS and (kind != QEvent.Type.MouseMove or event.buttons() != Qt.MouseButton.NoButton):
            note_ui_activity()
        return False
