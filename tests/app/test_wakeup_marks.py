"""A state strip's wakeup marks stamped from a sprite (one drawPixmapFragments call a strip) are the pixels
of the wedge polygons drawn one by one: strips of a trace with a schedule at zooms where they show their
wakeups, scrolled to fractional row offsets, with antialiasing off and on."""

from __future__ import annotations

import numpy as np
import pytest
from PySide6.QtCore import Qt
from PySide6.QtGui import QImage, QPainter

from fxscope.app.timeline import sched_tracks
from fxscope.app.timeline.lane_item import WAKEUP_BRUSH
from fxscope.app.timeline.sched_tracks import StateTrackItem, wakeup_polygon


def _polygon_wakeups(self, painter, f) -> None:
    """The marks as wedge polygons, one drawPolygon each (the reference)."""
    px = self.wakeup_marks(f)
    if px is None:
        return
    top = self.y0 * f[4] + f[5]
    painter.save()
    painter.resetTransform()
    painter.setPen(Qt.PenStyle.NoPen)
    painter.setBrush(WAKEUP_BRUSH)
    for x in px.tolist():
        painter.drawPolygon(wakeup_polygon(x, top))
    self.last_wakeups = len(px)
    painter.restore()


def _pixels(widget) -> np.ndarray:
    image = widget.grab().toImage().convertToFormat(QImage.Format.Format_ARGB32)
    return np.frombuffer(image.constBits(), np.uint32).reshape(image.height(), image.width()).copy()


@pytest.mark.parametrize("antialiased", [False, True])
def test_sprite_marks_are_the_polygons_pixels(qtbot, sched_model, shown_timeline, monkeypatch, antialiased) -> None:
    timeline = shown_timeline(sched_model, 1400, 900)
    timeline.plot.setRenderHint(QPainter.RenderHint.Antialiasing, antialiased)
    strips = [lane.item for lane in timeline.lanes() if isinstance(lane.item, StateTrackItem)]
    span = sched_model.end_ns - sched_model.start_ns
    marked = 0
    for a, b in ((0.2, 0.21), (0.5, 0.503), (0.7, 0.7008)):
        timeline.set_range_ns(sched_model.start_ns + int(a * span), sched_model.start_ns + int(b * span))
        for scroll in (0.0, 0.37):  # (strips' tops at a fraction of a pixel)
            timeline.scroll_rows(scroll)
            sprites = _pixels(timeline)
            marked += sum(s.last_wakeups for s in strips)
            with monkeypatch.context() as m:
                m.setattr(StateTrackItem, "_paint_wakeups", _polygon_wakeups)
                for s in strips:
                    s.update()
                polygons = _pixels(timeline)
            for s in strips:
                s.update()
            assert np.array_equal(sprites, polygons), (a, b, scroll, int((sprites != polygons).sum()))
    assert marked > 20  # (marks were drawn)
    assert any(key[1] == antialiased for key in sched_tracks._WAKEUP_SPRITES)
