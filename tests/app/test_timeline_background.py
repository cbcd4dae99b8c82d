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
