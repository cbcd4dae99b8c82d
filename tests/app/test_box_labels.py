"""Box labels drawn from kept static texts (QStaticText: a text's layout made once, not at every frame) are the
pixels drawText gives at the same baseline in device pixels: the labels of every kind of box track of a trace with a schedule,
zoomed in until hundreds of boxes carry names, at fractional offsets as pans leave them."""

from __future__ import annotations

import numpy as np
from PySide6.QtCore import QPointF, Qt
from PySide6.QtGui import QImage

from fxscope.app.timeline import box_track
from fxscope.app.timeline.box_track import BoxTrackItem


def _drawn_text_labels(self, painter, idx, names, left, top, width, height) -> None:
    """The labels as drawText draws them at the same device position (the reference): each label's text
    shaped at every call. (drawText under a fractional move of the painter places a glyph's antialiased
    edge a little differently from drawText at the moved point, which is where a static text lands.)"""
    if not len(idx):
        return
    move = painter.transform()
    painter.save()
    painter.resetTransform()
    painter.setFont(self._font)
    painter.setPen(box_track.LABEL_PEN)
    m = self._metrics
    base = (height + m.ascent() - m.descent()) / 2
    for n, x, y, w in zip(names[idx].tolist(), left.tolist(), top.tolist(), width.tolist(), strict=True):
        text = self.name_label(n)
        if m.horizontalAdvance(text) > w - 4:
            text = m.elidedText(text, Qt.TextElideMode.ElideRight, int(w - 4) & ~7)
            if not text or text == "…":
                continue
        painter.drawText(QPointF(x + 2 + move.dx(), y + base + move.dy()), text)
    painter.restore()


def _pixels(widget) -> np.ndarray:
    image = widget.grab().toImage().convertToFormat(QImage.Format.Format_ARGB32)
    return np.frombuffer(image.constBits(), np.uint32).reshape(image.height(), image.width()).copy()


def test_static_text_labels_are_drawn_texts_pixels(qtbot, sched_model, shown_timeline, monkeypatch) -> None:
    timeline = shown_timeline(sched_model, 1400, 900)
    span = sched_model.end_ns - sched_model.start_ns
    labelled = 0
    for a, b in ((0.0, 1.0), (0.3, 0.33), (0.5, 0.5021), (0.1234, 0.12401)):
        timeline.set_range_ns(sched_model.start_ns + int(a * span), sched_model.start_ns + int(b * span))
        for pan in (0.0, 0.137):  # (a fraction of a pixel: labels at fractional offsets)
            timeline.pan(pan)
            static = _pixels(timeline)
            labelled += sum(len(item._static_texts) for item in (lane.item for lane in timeline.lanes())
                            if isinstance(item, BoxTrackItem))  # fmt: skip
            with monkeypatch.context() as m:
                m.setattr(BoxTrackItem, "_paint_labels", _drawn_text_labels)
                for lane in timeline.lanes():
                    lane.item.update()
                drawn = _pixels(timeline)
            for lane in timeline.lanes():
                lane.item.update()
            assert np.array_equal(static, drawn), (a, b, pan, int((static != drawn).sum()))
    assert labelled > 100  # (labels were drawn: the comparison is not of empty tracks)
