"""A single-row box picture drawn as one image (app/timeline/lane_image.py) gives the pixels Qt's rectangle
fills give: random rectangles at fractional positions and edges on pixel centres, moved by fractional
offsets and none, overlapping in several colours, past the image's ends and cut by a clip; and the timeline
of a trace with a schedule, zoomed out and in, drawn both ways."""

from __future__ import annotations

import numpy as np
import pytest
import shiboken6
from PySide6.QtCore import QRect, QRectF, Qt
from PySide6.QtGui import QBrush, QColor, QImage, QPainter, QTransform

from fxscope.app.timeline import lane_image
from fxscope.app.timeline.box_track import BoxTrackItem
from fxscope.app.timeline.lane_image import RowFills
from fxscope.app.timeline.lane_item import rect_buffer
from fxscope.app.timeline.sched_tracks import CpuTrackItem, StateTrackItem
from fxscope.core.trace import compiled

pytestmark = pytest.mark.skipif(compiled.slice_kernels is None, reason="the compiled loops are not built")

COLOURS = [QBrush(QColor(c)) for c in ("#4e79a7", "#f28e2b", "#e15759", "#76b7b2")]


@pytest.fixture(autouse=True)
def few_rectangles_make_an_image(monkeypatch) -> None:
    """Rows of 64 rectangles and more as images (the window's threshold is set for speed, not for the
    pixels: the small pictures here are compared the same way)."""
    monkeypatch.setattr(lane_image, "IMAGE_FROM", 64)


def _pixels(image: QImage) -> np.ndarray:
    return np.frombuffer(image.constBits(), np.uint32).reshape(image.height(), image.width()).copy()


#: whether each _draw(as_image=True) drew an image (True) or left it to the rectangles (False)
IMAGES: list[bool] = []


def _draw(fills, dx: float, dy: float, as_image: bool, size=(300, 40), clip: QRect | None = None) -> np.ndarray:
    image = QImage(*size, QImage.Format.Format_ARGB32_Premultiplied)
    image.fill(QColor("#202020"))
    painter = QPainter(image)
    painter.setPen(Qt.PenStyle.NoPen)
    if clip is not None:  # (rectangles cut by the clip: Qt's line clipping)
        painter.setClipRect(clip)
    painter.setTransform(QTransform.fromTranslate(dx, dy))
    drawn = as_image and RowFills.of(fills).paint(painter)
    if as_image:
        IMAGES.append(drawn)
    if not drawn:
        for brush, rects in fills:
            painter.setBrush(brush)
            painter.drawRects(shiboken6.wrapInstance(rects.ctypes.data, QRectF), len(rects))
    painter.end()
    return _pixels(image)


@pytest.mark.parametrize("seed", range(16))
def test_row_image_is_the_rectangles_pixels(qapp, seed: int) -> None:
    rng = np.random.default_rng(seed)
    top = float(rng.choice([0.0, 0.5, 1.25, 3.7]))
    height = float(rng.choice([17.2, 17.5, 16.0, 30.1, 0.4]))
    fills = []
    for brush in COLOURS:
        n = int(rng.integers(20, 60))
        # fractional and half-pixel edges, some past either end of the image, widths of at least a pixel
        x = rng.uniform(-30, 330, n).round(int(rng.integers(0, 3))) + rng.choice([0, 0.5, 0.25, 1 / 64, 0.4999999], n)
        w = np.maximum(rng.uniform(0, 9, n), 1.0) + rng.choice([0, 0.5], n)
        fills.append((brush, rect_buffer(x, np.full(n, top), w, height)))
    clip = QRect(int(rng.integers(0, 40)), int(rng.integers(0, 5)), int(rng.integers(100, 260)), 30) if seed % 2 else None
    IMAGES.clear()
    for dx, dy in ((0.0, 0.0), (float(rng.uniform(-4, 4)), float(rng.uniform(0, 6))), (0.5, 0.5), (-0.5, 2.5)):
        np.testing.assert_array_equal(_draw(fills, dx, dy, True, clip=clip), _draw(fills, dx, dy, False, clip=clip))
    if height >= 1.0:  # (rows a pixel high or more: drawn as images, not left to the rectangles)
        assert any(IMAGES), IMAGES


def test_rows_of_several_tops_or_few_rectangles_are_not_one_image(qapp) -> None:
    n = 64
    one = rect_buffer(np.arange(n, dtype=np.float64), np.zeros(n), np.ones(n), 10.0)
    assert RowFills.of([(COLOURS[0], one)]) is not None
    assert RowFills.of([(COLOURS[0], one[: n - 1])]) is None
    two = rect_buffer(np.arange(n, dtype=np.float64), np.arange(n) % 2 * 12.0, np.ones(n), 10.0)
    assert RowFills.of([(COLOURS[0], two)]) is None
    see_through = QBrush(QColor(10, 20, 30, 128))
    assert RowFills.of([(see_through, one)]) is None
    image = QImage(50, 20, QImage.Format.Format_ARGB32_Premultiplied)
    painter = QPainter(image)
    painter.setRenderHint(QPainter.RenderHint.Antialiasing)
    assert not RowFills.of([(COLOURS[0], one)]).paint(painter)  # (antialiased: the rectangles)
    painter.end()


def test_timeline_sched_lanes_drawn_as_images_look_the_same(qtbot, sched_model, shown_timeline, monkeypatch) -> None:
    """The timeline zoomed out and zoomed in on a trace with a schedule: its CPU lanes and state strips are
    drawn as images (counted) and the window's pixels equal those of the rectangles."""
    timeline = shown_timeline(sched_model)
    drawn = []
    paint = RowFills.paint

    def counted(self, painter):
        done = paint(self, painter)
        drawn.append(done)
        return done

    def grab() -> np.ndarray:
        for lane in timeline.lanes():
            lane.item.invalidate()
        return _pixels(timeline.plot.viewport().grab().toImage().convertToFormat(QImage.Format.Format_ARGB32))

    for zoom in (None, 0.3):
        if zoom is not None:
            timeline.zoom(zoom)
            timeline.pan(0.137)
        monkeypatch.setattr(RowFills, "paint", counted)
        drawn.clear()
        with_images = grab()
        assert any(drawn), "no lane drawn as an image"
        images = [lane.item for lane in timeline.lanes() if isinstance(lane.item, BoxTrackItem)
                  and lane.item._picture is not None and lane.item._picture.row_fills() is not None]  # fmt: skip
        assert any(isinstance(item, CpuTrackItem | StateTrackItem) for item in images)
        monkeypatch.setattr(RowFills, "paint", lambda self, painter: False)
        np.testing.assert_array_equal(with_images, grab())
