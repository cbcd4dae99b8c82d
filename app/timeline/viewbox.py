"""The timeline's view box: what the mouse does over the tracks (wheel, drag, Shift+drag, Ctrl+drag)."""

from __future__ import annotations

from typing import Protocol

from PySide6.QtCore import Qt

from fxscope.app.pyqtgraph_import import pg


class TimelineControls(Protocol):
    """What the view box drives on the timeline (a protocol: the widget imports this module)."""

    def pan(self, fraction: float) -> None: ...

    def scroll_rows(self, rows: float) -> None: ...

    def select_area(self, xa: float, xb: float, ya: float, yb: float, final: bool = True) -> tuple: ...

    def measure(self, xa: float, xb: float, y_rows: float, final: bool = True) -> tuple[int, int]: ...


class TimelineViewBox(pg.ViewBox):
    """Drag pans (pyqtgraph's own); Shift+drag measures between two points, snapping to slice edges;
    Ctrl+drag selects an area (a time range over the tracks it spans) for the aggregate table."""

    def __init__(self, timeline: TimelineControls) -> None:
        super().__init__(enableMenu=False)  # no context menu to build: the timeline has its own
        self.timeline = timeline

    def updateViewRange(self, forceX=False, forceY=False) -> None:  # noqa: N803 - pyqtgraph API
        """Apply a range change to the view's transform at once. pyqtgraph defers it to the next paint, where
        moving every track under a new transform (and the axes' tick updates) dirties the scene while it is
        being painted, so each pan or zoom was painted twice."""
        super().updateViewRange(forceX, forceY)
        self.updateMatrix()

    def wheelEvent(self, ev, axis=None) -> None:
        """As in Perfetto: Ctrl+wheel zooms around the pointer, Shift+wheel pans, the wheel scrolls tracks."""
        mods = ev.modifiers()
        if mods & Qt.KeyboardModifier.ControlModifier:
            super().wheelEvent(ev, axis)  # pyqtgraph zooms x around the pointer (y is locked)
            return
        ev.accept()
        steps = ev.delta() / 120.0
        if mods & Qt.KeyboardModifier.ShiftModifier:
            self.timeline.pan(-0.1 * steps)
        else:
            self.timeline.scroll_rows(-3.0 * steps)

    def mouseDragEvent(self, ev, axis=None) -> None:
        mods = ev.modifiers()
        if ev.button() == Qt.MouseButton.LeftButton and mods & (
            Qt.KeyboardModifier.ShiftModifier | Qt.KeyboardModifier.ControlModifier
        ):
            ev.accept()
            a = self.mapSceneToView(ev.buttonDownScenePos())
            b = self.mapSceneToView(ev.scenePos())
            if mods & Qt.KeyboardModifier.ControlModifier:
                self.timeline.select_area(a.x(), b.x(), a.y(), b.y(), final=ev.isFinish())
            else:
                self.timeline.measure(a.x(), b.x(), a.y(), final=ev.isFinish())
            return
        super().mouseDragEvent(ev, axis)
