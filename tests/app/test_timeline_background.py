"""The timeline's background is filled at each paint, not copied from a cached pixmap: the same pixels as the
cached background (pyqtgraph's default) in both themes, for one write of the viewport a frame."""

from __future__ import annotations

import numpy as np
from PySide6.QtGui import QImage
from PySide6.QtWidgets import QGraphicsView


def _grab(timeline) -> np.ndarray:
    image = timeline.plot.viewport().grab().toImage().convertToFormat(QImage.Format.Format_ARGB32)
    return np.frombuffer(image.constBits(), np.uint32).reshape(image.height(), image.width()).copy()


def test_background_without_a_cache_is_the_cached_one(qtbot, sched_model, shown_timeline) -> None:
    from fxscope.app.theme import THEMES

    timeline = shown_timeline(sched_model)
    assert timeline.plot.cacheMode() == QGraphicsView.CacheModeFlag.CacheNone
    for theme in THEMES.values():
        timeline.set_theme(theme)
        filled = _grab(timeline)
        timeline.plot.setCacheMode(QGraphicsView.CacheModeFlag.CacheBackground)
        timeline.plot.resetCachedContent()
        cached = _grab(timeline)
        timeline.plot.setCacheMode(QGraphicsView.CacheModeFlag.CacheNone)
        np.testing.assert_array_equal(filled, cached)


def test_the_view_paints_every_pixel_without_qts_erase(qtbot, sched_model, shown_timeline) -> None:
    """The viewport skips Qt's fill with the palette before each paint (WA_OpaquePaintEvent): the view's own
    paint covers every pixel, so the window is what it was with that fill, in both themes, zoomed out, zoomed
    in and scrolled past the tracks' end (empty rows below them)."""
    from PySide6.QtCore import Qt

    from fxscope.app.theme import THEMES

    timeline = shown_timeline(sched_model)
    viewport = timeline.plot.viewport()
    assert viewport.testAttribute(Qt.WidgetAttribute.WA_OpaquePaintEvent)
    span = sched_model.end_ns - sched_model.start_ns
    compared = 0
    for theme in THEMES.values():
        timeline.set_theme(theme)
        for view in ("full", "zoomed", "scrolled"):
            if view == "zoomed":
                timeline.set_range_ns(sched_model.start_ns + span // 3, sched_model.start_ns + span // 3 + span // 50)
            elif view == "scrolled":
                timeline.scrollbar.setValue(timeline.scrollbar.maximum())
            opaque = _grab(timeline)
            viewport.setAttribute(Qt.WidgetAttribute.WA_OpaquePaintEvent, False)
            erased = _grab(timeline)
            viewport.setAttribute(Qt.WidgetAttribute.WA_OpaquePaintEvent, True)
            np.testing.assert_array_equal(opaque, erased)
            compared += 1
        timeline.fit_all()
    assert compared == 2 * 3
