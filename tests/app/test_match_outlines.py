"""Search matches are outlined by filling the pixels that the match pen's stroke covers (outline_rects): the
pixels must be exactly the stroke's, on random rectangles as the tracks place them and on the timeline of a
generated trace with thousands of matches (every kind of box track, instants and markers), zoomed out (where
touching rings merge) and in."""

from __future__ import annotations

import numpy as np
from PySide6.QtCore import Qt
from PySide6.QtGui import QImage, QPainter, QTransform

from fxscope.app.timeline import box_track, marker_track, slice_track
from fxscope.app.timeline.lane_item import MATCH_PEN, draw_rects, outline_rects


def stroked(painter: QPainter, x, y, w, h) -> None:
    """The outlines as the pen strokes them (the reference)."""
    painter.setBrush(Qt.BrushStyle.NoBrush)
    painter.setPen(MATCH_PEN)
    draw_rects(painter, x, y, w, h)
    painter.setPen(Qt.PenStyle.NoPen)


def pixels(draw, shift: tuple[float, float], *rects) -> np.ndarray:
    image = QImage(420, 320, QImage.Format.Format_ARGB32_Premultiplied)
    image.fill(0)
    painter = QPainter(image)
    painter.setTransform(QTransform.fromTranslate(*shift))
    draw(painter, *rects)
    painter.end()
    return np.frombuffer(image.constBits(), np.uint32).reshape(320, 420).copy()


def test_filled_outlines_are_the_pixels_of_the_stroke(qapp) -> None:
    rng = np.random.default_rng(7)
    for trial in range(400):
        n = 40
        x, y = rng.uniform(-30, 430, n), rng.uniform(-20, 330, n)
        if trial % 3 == 0:  # pixel and half-pixel positions, as integer layouts give them
            x, y = np.round(x * 2) / 2, np.round(y * 2) / 2
        w = np.where(rng.random(n) < 0.6, rng.uniform(1, 4, n), rng.uniform(1, 60, n))  # (>= 1: as boxes)
        if trial % 4 == 0:  # boxes of whole pixels, and narrow touching ones on a few rows (merged rings)
            w = rng.choice([1.0, 2.0, 3.0, 2.5], n)
            y = rng.choice([10.0, 23.5, 37.2], n)
            x = np.sort(np.round(rng.uniform(0, 80, n)))
        h = rng.choice([10.32, 9.0, 6.0, 3.0, 1.0, rng.uniform(0.5, 20)])  # one height a call, as the tracks
        shift = (rng.uniform(-900, 3), rng.uniform(-3, 3)) if trial % 2 else (0.0, 0.0)
        if trial % 2:
            x = x - shift[0]  # (on the image: the tracks paint from their picture's left, moved)
        a, b = pixels(stroked, shift, x, y, w, h), pixels(outline_rects, shift, x, y, w, h)
        assert np.count_nonzero(a), trial
        np.testing.assert_array_equal(a != 0, b != 0, err_msg=f"trial {trial}")
        np.testing.assert_array_equal(a, b, err_msg=f"trial {trial}")


def test_the_timeline_with_matches_is_drawn_as_with_stroked_outlines(qtbot, sched_model, shown_timeline,
                                                                     monkeypatch) -> None:  # fmt: skip
    timeline = shown_timeline(sched_model)
    timeline.search_box.setText("frame")
    qtbot.waitUntil(lambda: timeline.search_status.text().endswith("matches"), timeout=10_000)
    compared = 0
    for step in range(4):
        images, matched = [], 0
        for outline in (outline_rects, stroked):
            for module in (box_track, slice_track, marker_track):
                monkeypatch.setattr(module, "outline_rects", outline)
            for lane in timeline.lanes():
                lane.item.update()  # (drawn from the model again)
            images.append(timeline.plot.grab().toImage())
            matched = sum(getattr(lane.item, "last_matches", 0) for lane in timeline.lanes() if lane.item.isVisible())
        assert matched > (100 if step == 0 else 0)
        assert images[0] == images[1], f"step {step}: the outlines differ from the stroke's"
        compared += 1
        timeline.zoom(0.2)
    assert compared == 4


def test_outlines_past_the_view_are_left_out_without_a_pixel_changed(qtbot, sched_model, shown_timeline,
                                                                    monkeypatch) -> None:  # fmt: skip
    """A picture is wider than its view: the match outlines outside the view (with the pixels an outline
    reaches past its box) are not drawn; zoomed and panned so that boxes cross both edges of the view, the
    window is the same as with every outline of the picture drawn."""
    timeline = shown_timeline(sched_model)
    timeline.search_box.setText("frame")
    qtbot.waitUntil(lambda: timeline.search_status.text().endswith("matches"), timeout=10_000)
    for step in range(8):
        images, matched = [], 0
        for reach in (box_track.OUTLINE_REACH, 1e15):
            monkeypatch.setattr(box_track, "OUTLINE_REACH", reach)
            for lane in timeline.lanes():
                lane.item.update()
            images.append(timeline.plot.grab().toImage())
            matched = sum(getattr(lane.item, "last_matches", 0) for lane in timeline.lanes() if lane.item.isVisible())
        assert matched > 0
        assert images[0] == images[1], f"step {step}: leaving out the outlines past the view changed the window"
        if step % 2:
            timeline.pan(0.37)
        else:
            timeline.zoom(0.45)
