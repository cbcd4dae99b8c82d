"""A single-row box picture's fills drawn as one image: the same pixels as its rectangles, one blit.

Zoomed out, a CPU lane or a thread's state strip is a box a pixel (the sched pyramid's: each pixel in the
colour of the thread that ran longest in it), thousands of 1-2 pixel rectangles in a dozen colours: Qt's
raster engine fills them one by one (~0.25 us a rectangle here: ~1 ms a lane, every frame, a repaint too,
the picture kept or not). All of a single-row picture's rectangles share their top and height, so what they
cover is one row of pixel columns repeated over the same pixel rows: :class:`RowFills` paints that row
(``slice_kernels.paint_columns``: each rectangle's columns in the order Qt fills them, a later one over an
earlier one) and draws it as one image.

The pixels are Qt's: with no antialiasing and a transform that only moves, the raster engine hands each
rectangle to its rasterizer as a line from the middle of its left edge to the middle of its right edge with
a width, which it clips and turns into spans with a few float operations; ``slice_kernels.raster_rect_spans``
does the same operations in the same order (an edge on a pixel's centre rounds as Qt's, its float noise
included), in the engine's device pixels (the painter's device transform, and the device's rectangle cut to
the clip's bounds). The tests compare the two drawings pixel for pixel, on images and in the window. Any
other painter (antialiased, a paint engine that is not the raster one: a printer, a recorded picture; a
high-DPI device, whose pixels are not the painter's) gets the rectangles, and so do rectangles whose rows
come out different.
"""

from __future__ import annotations

import numpy as np
from PySide6.QtCore import QPoint, QRect, Qt
from PySide6.QtGui import QBrush, QImage, QPaintEngine, QPainter, QTransform

from fxscope.core.trace import compiled

#: rectangles from which a single-row picture is drawn as an image (fewer are filled as they are): the image
#: costs ~0.3 ms a lane a frame whatever its rectangles, Qt ~0.25 us a rectangle (a state strip of a few
#: hundred drew slower as an image; a busy CPU lane zoomed out is thousands)
IMAGE_FROM = 1024


#: what opaque_rgba found of each brush it was asked about, by id (the brush kept: its id stays its own)
_OPAQUE: dict[int, tuple[QBrush, int | None]] = {}


def opaque_rgba(brush: QBrush) -> int | None:
    """The brush's colour (premultiplied ARGB) when it is one opaque colour, else None; found once a brush (the
    tracks' brushes are a fixed palette: four Qt calls a colour, a dozen colours a new picture, were ~0.1 ms)."""
    known = _OPAQUE.get(id(brush))
    if known is not None and known[0] is brush:
        return known[1]
    colour = brush.color()
    rgba = colour.rgba() if brush.style() == Qt.BrushStyle.SolidPattern and colour.alpha() == 255 else None
    if len(_OPAQUE) > 4096:  # (a bound: brushes made on the fly would otherwise pile up)
        _OPAQUE.clear()
    _OPAQUE[id(brush)] = (brush, rgba)
    return rgba


class RowFills:
    """The rectangles of a single-row picture in the order they are filled (as rect_buffer makes them, the
    picture's pixels) and their colours (premultiplied ARGB)."""

    def __init__(self, rects: np.ndarray, rgba: np.ndarray) -> None:
        self.rects, self.rgba = rects, rgba
        self.left = rects[:, 0]

    @classmethod
    def of(cls, fills: list[tuple[QBrush, np.ndarray]]) -> RowFills | None:
        """The fills ``(brush, rects)`` (rects as :func:`~fxscope.app.timeline.lane_item.rect_buffer` makes
        them, filled in this order) as one row, or None when they are not one: rectangles of several tops or
        heights, a brush that is not one opaque colour, or fewer than :data:`IMAGE_FROM` rectangles."""
        if sum(len(r) for _, r in fills) < IMAGE_FROM:
            return None
        # (a lane of several rows, a thread's depths, as a rule shows it in the first rectangles of its colours:
        # no copy of its thousands of rectangles to find it)
        heads = [r[0] for _, r in fills if len(r)]
        if any(h[1] != heads[0][1] or h[3] != heads[0][3] for h in heads):
            return None
        rects = np.concatenate([r for _, r in fills])
        if not (np.all(rects[:, 1] == rects[0, 1]) and np.all(rects[:, 3] == rects[0, 3])):
            return None
        colours = []
        for brush, r in fills:
            rgba = opaque_rgba(brush)
            if rgba is None:
                return None
            colours.append(np.full(len(r), rgba, np.uint32))
        return cls(np.ascontiguousarray(rects), np.concatenate(colours))

    def paint(self, painter: QPainter) -> bool:
        """Draw the rectangles, as one image, with the painter's transform (one that only moves: the
        caller's); False (nothing drawn) when the painter needs the rectangles themselves (see the module
        docstring)."""
        kernels = compiled.slice_kernels
        engine = painter.paintEngine()
        if (kernels is None or engine is None or engine.type() != QPaintEngine.Type.Raster
                or painter.testRenderHint(QPainter.RenderHint.Antialiasing)):  # fmt: skip
            return False
        device = painter.device()
        world, to_device = painter.transform(), painter.deviceTransform()
        if (device.devicePixelRatioF() != 1.0 or world.type().value > QTransform.TransformationType.TxTranslate.value
                or to_device.type().value > QTransform.TransformationType.TxTranslate.value):  # fmt: skip
            return False
        clip = self._clip_rect(painter, engine, to_device)
        if clip.isEmpty():
            return True
        spans = np.empty((len(self.left), 4), np.int64)
        kernels.raster_rect_spans(self.rects, to_device.dx(), to_device.dy(), clip.left(), clip.top(), clip.right(),
                                  clip.bottom(), spans)  # fmt: skip
        # the drawn columns and rows, and the row of pixels (0: no rectangle, transparent), in one pass
        # (a dozen numpy calls over the spans were ~0.15 ms a lane a frame); the clip bounds the columns
        row = np.empty(clip.width() + 2, np.uint32)
        drawn = kernels.row_pixels(spans, self.rgba, row)
        if drawn is None:
            return False  # (rows that differ between rectangles: not one row of pixels)
        c0, c1, y1, y2 = drawn
        if c1 <= c0:
            return True
        pixels = np.empty((y2 - y1, c1 - c0), np.uint32)
        pixels[:] = row[: c1 - c0]
        image = QImage(pixels.data, c1 - c0, y2 - y1, 4 * (c1 - c0), QImage.Format.Format_ARGB32_Premultiplied)
        # (device pixels: the painter's logical ones once its own move is gone, but for the device's offset)
        off_x, off_y = round(to_device.dx() - world.dx()), round(to_device.dy() - world.dy())
        painter.save()
        painter.resetTransform()
        painter.drawImage(QPoint(c0 - off_x, y1 - off_y), image)
        painter.restore()
        return True

    @staticmethod
    def _clip_rect(painter: QPainter, engine: QPaintEngine, to_device: QTransform) -> QRect:
        """The rectangle the raster engine clips a fill to (device pixels): the device's, cut to the bounds
        of the system clip (a widget's region) and of the painter's clip."""
        device = engine.paintDevice() or painter.device()
        rect = QRect(0, 0, device.width(), device.height())
        system = engine.systemClip()
        if not system.isEmpty():
            rect &= system.boundingRect()
        if painter.hasClipping():
            rect &= to_device.mapRect(painter.clipBoundingRect()).toAlignedRect()
        return rect
