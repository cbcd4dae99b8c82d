"""The timeline's time axis (:mod:`fxscope.app.timeline.time_axis`) lays out the same ticks and labels as
pyqtgraph's ``AxisItem`` (each compared with pyqtgraph's own layout of the same view, as the axis paints it)
over views from a few nanoseconds to the whole trace, at several widths; and takes its own path for the
timeline's case, pyqtgraph's for any other."""

from __future__ import annotations

import random

import pyqtgraph as pg
import pytest
from PySide6.QtGui import QPainter, QPicture

from fxscope.app.timeline.time_axis import TimeAxisItem


def _specs(axis, generate) -> tuple:
    """``generate(axis, painter)`` as ``AxisItem.paint`` calls it (a painter on a picture, the tick font set),
    as plain values: the pens' colours, the points' and rectangles' coordinates, the flags and texts."""
    picture = QPicture()
    painter = QPainter(picture)
    try:
        if axis.style["tickFont"]:
            painter.setFont(axis.style["tickFont"])
        specs = generate(axis, painter)
    finally:
        painter.end()
    if specs is None:
        return None
    (pen, a, b), ticks, texts = specs
    return (
        (pen.color().rgba(), a.x(), a.y(), b.x(), b.y()),
        [(p.color().rgba(), p.widthF(), p1.x(), p1.y(), p2.x(), p2.y()) for p, p1, p2 in ticks],
        [(r.x(), r.y(), r.width(), r.height(), int(flags), text) for r, flags, text in texts],
    )


def _views(duration_s: float) -> list[tuple[float, float]]:
    """View ranges (seconds from the trace start): the whole trace and zoomed-in windows from 2 ns to 10 s
    wide at places across it."""
    rng = random.Random(3)
    views = [(-0.05 * duration_s, 1.05 * duration_s), (0.0, duration_s)]
    for width in (2e-9, 7e-9, 3e-8, 1e-7, 4.5e-6, 2e-5, 1e-3, 0.0123, 0.5, 3.0, 10.0):
        for _ in range(3):
            start = rng.uniform(0, duration_s)
            views.append((start, start + width))
    return views


@pytest.mark.parametrize("width", [1200, 420, 2400])
def test_same_ticks_and_labels_as_pyqtgraph(shown_timeline, sched_model, qtbot, width: int) -> None:
    timeline = shown_timeline(sched_model, width=width)
    axis = timeline.plot.getAxis("bottom")
    assert isinstance(axis, TimeAxisItem)
    vb = timeline.plot.getViewBox()
    duration = (sched_model.end_ns - sched_model.start_ns) / 1e9
    labelled = 0
    for x0, x1 in _views(duration):
        vb.setXRange(x0, x1, padding=0)
        qtbot.wait(1)  # (the axis' range and SI prefix follow the view)
        want = _specs(axis, pg.AxisItem.generateDrawSpecs)
        got = _specs(axis, TimeAxisItem.generateDrawSpecs)
        assert got == want, (x0, x1)
        labelled += bool(want and want[2])
    assert labelled >= 30  # (the views had labels to compare)


def test_the_timeline_case_is_its_own_and_others_are_pyqtgraphs(shown_timeline, sched_model, monkeypatch) -> None:
    """The timeline's axis never calls pyqtgraph's layout; an axis with ticks of its own (``setTicks``) does."""
    timeline = shown_timeline(sched_model)
    axis = timeline.plot.getAxis("bottom")
    called = []
    real = pg.AxisItem.generateDrawSpecs

    def recorded(self, p):
        called.append(self)
        return real(self, p)

    monkeypatch.setattr(pg.AxisItem, "generateDrawSpecs", recorded)
    specs = _specs(axis, TimeAxisItem.generateDrawSpecs)
    assert specs is not None and specs[2] and not called
    axis.setTicks([[(0.0, "start"), (0.001, "one ms")]])
    specs = _specs(axis, TimeAxisItem.generateDrawSpecs)
    assert called == [axis] and {text for *_, text in specs[2]} <= {"start", "one ms"}


def _painted(axis, paint) -> bytes:
    """``paint(axis, painter)`` onto an image of the axis' bounding rectangle (white, the painter moved to
    its top left), as ARGB32 bytes."""
    from PySide6.QtGui import QColor, QImage

    rect = axis.boundingRect().toAlignedRect()
    image = QImage(rect.width(), rect.height(), QImage.Format.Format_ARGB32)
    image.fill(QColor("white"))
    painter = QPainter(image)
    try:
        painter.translate(-rect.left(), -rect.top())
        paint(axis, painter)
    finally:
        painter.end()
    return bytes(image.constBits())


def _pyqtgraphs_paint(axis, painter) -> None:
    """pyqtgraph's ``AxisItem.paint`` of the same layout: recorded into a QPicture, a drawLine a tick, played."""
    axis.picture = None
    pg.AxisItem.paint(axis, painter, None, None)
    axis.picture = None


@pytest.mark.parametrize("width", [1200, 420])
def test_painted_as_pyqtgraphs_picture(shown_timeline, sched_model, monkeypatch, width: int) -> None:
    """TimeAxisItem.paint (its layout drawn straight into the painter, a drawLines a tick level) gives the
    pixels pyqtgraph's paint gives (the layout recorded into a QPicture and played back, a drawLine a tick),
    over views from nanoseconds to the whole trace; a second paint of an unchanged view reuses the layout,
    and a layout change (a new range) makes it again."""
    timeline = shown_timeline(sched_model, width=width)
    axis = timeline.plot.getAxis("bottom")
    vb = timeline.plot.getViewBox()
    duration = (sched_model.end_ns - sched_model.start_ns) / 1e9
    made = []
    real = TimeAxisItem.generateDrawSpecs
    monkeypatch.setattr(TimeAxisItem, "generateDrawSpecs", lambda self, p: made.append(1) or real(self, p))
    labelled = 0
    for x0, x1 in _views(duration)[::3]:
        vb.setXRange(x0, x1, padding=0)
        axis.picture = None  # (as pyqtgraph marks a new range)
        ours = _painted(axis, lambda a, p: a.paint(p, None, None))
        layouts = len(made)
        assert _painted(axis, lambda a, p: a.paint(p, None, None)) == ours and len(made) == layouts
        theirs = _painted(axis, _pyqtgraphs_paint)
        assert ours == theirs, (x0, x1)
        blank = _painted(axis, lambda a, p: None)
        labelled += ours != blank
    assert labelled >= 8 and len(made) >= labelled

