"""A counter series as a filled step curve, with its scale and the value under the pointer."""

from __future__ import annotations

import numpy as np
from PySide6.QtCore import QPointF, QRectF, Qt
from PySide6.QtGui import QBrush, QColor, QFont, QFontMetrics, QImage, QPainter, QPixmap

from fxscope.app.timeline.lane_item import (
    PALETTE,
    ROW_FILL,
    LaneItem,
    colour_index,
    outline_selection,
    paint_rects,
    rect_buffer,
)
from fxscope.core.timeline.layout import ROW_HEIGHT
from fxscope.core.trace.counters import CounterSet
from fxscope.core.trace.details import COUNTER_SAMPLE_BITS, counter_row
from fxscope.core.trace.model import TraceModel


class CounterTrackItem(LaneItem):
    """One counter series as an area chart on a scale that holds zero: per pixel, a dark band over exactly
    the min..max of the samples in force during that pixel, and a light area between the band and the
    zero line (negative values hang below it); from the model's per-pixel summary, never an item per
    sample."""

    rows = 2
    kind = "counter"

    def __init__(self, model: TraceModel, index: int, y0: float, counters: CounterSet | None = None) -> None:
        """Series ``index`` of ``counters`` (default: the trace's; a debug track brings its own)."""
        super().__init__(model, y0)
        self.index = index
        self.counters = counters if counters is not None else model.counters
        self.series = self.counters.series[index]
        values = self.series.value
        finite = values[np.isfinite(values)]  # a corrupt sample may be inf or NaN: scale by the others
        # the scale always holds zero (the baseline): negative-only counters hang below it
        self.lo = min(float(finite.min()), 0.0) if len(finite) else 0.0
        self.hi = max(float(finite.max()), 0.0) if len(finite) else 1.0
        if self.hi == self.lo:
            self.hi = self.lo + 1.0
        self.selected_row = -1
        colour = QColor(PALETTE[colour_index(self.series.label)])
        self._fill = QBrush(colour.lighter(135))
        self._min_fill = QBrush(colour)
        self._scale: tuple | None = None  # ((text, matched), its pixmap)
        self._image: tuple | None = None  # the last frame's drawing: (frame, its rectangles or its image)
        self.cursor_ns: int | None = None  # the time under the pointer, for the value shown on the track
        self.matched = False  # its name matches the search
        self._font = QFont()
        self._font.setPointSizeF(7.5)
        self._metrics = QFontMetrics(self._font)

    def value_y(self, values: np.ndarray, base: float, full: float) -> np.ndarray:
        """Device y of ``values`` on a lane whose scale runs from ``base`` (``lo``) up ``full`` pixels
        (``hi``). Halves first: hi - lo of an i64 counter at +-4.6e18, or of +-1e308, would overflow or lose
        the scale; (v/2 - lo/2) / (hi/2 - lo/2) does not."""
        half_span = self.hi * 0.5 - self.lo * 0.5
        return base - (np.asarray(values, np.float64) * 0.5 - self.lo * 0.5) / half_span * full

    def bands(self, t0: int, t1: int, sx: float, dx: float, base: float, full: float):
        """What a frame draws, in device pixels: (left, width, y of the max, y of the min, y of zero), one
        entry per run of pixels from :meth:`CounterSet.lod` (the exact min..max of the samples in force
        during each pixel; an entry holds until the next one starts)."""
        start, vmin, vmax, _last = self.counters.lod(self.index, t0, t1, 1e9 / sx)
        left = np.clip(self.px(start, sx, dx), -10.0, 1e7)
        right = np.append(left[1:], np.clip((t1 - self.origin) / 1e9 * sx + dx, -10.0, 1e7))
        zero = float(self.value_y(np.zeros(1), base, full)[0])
        return left, np.maximum(right - left, 0.0), self.value_y(vmax, base, full), self.value_y(vmin, base, full), zero

    def draw(self, painter: QPainter) -> None:
        f = self.frame(painter)
        if f is None:
            return
        t0, t1, sx, dx, sy, dy = f
        base = (self.y0 + self.rows * ROW_HEIGHT * ROW_FILL) * sy + dy
        full = self.rows * ROW_HEIGHT * ROW_FILL * sy
        key = (t0, t1, sx, dx, sy, dy, self.y0)
        if self._image is None or self._image[0] != key:  # (a repaint of the same view, the pointer moving over it)
            left, width, y_max, y_min, zero = self.bands(t0, t1, sx, dx, base, full)
            self.last_drawn = len(left)
            if not len(left):
                self._image = (key, None)
            elif len(left) <= self.RECTS_UP_TO:  # few entries: two rectangles each cost less than an image
                # the area between zero and the band (light), then the band itself: min..max of the pixel
                # (dark, at least a pixel high so that a flat stretch shows its value as a line)
                near = np.where(y_min > zero, y_max, y_min)  # the band's edge nearest the zero line
                w = np.maximum(width, 1.0)
                self._image = (key, (rect_buffer(left, np.minimum(near, zero), w, np.abs(near - zero)),
                                     rect_buffer(left, y_max, w, np.maximum(y_min - y_max, 1.0))))  # fmt: skip
            else:
                limit = painter.device().width() if painter.device() is not None else 20_000
                self._image = (key, area_image(left, width, y_max, y_min, zero, base - full, base, limit,
                                               self._fill.color().rgba(), self._min_fill.color().rgba()))  # fmt: skip
        drawing = self._image[1]
        if drawing is None:
            return
        painter.save()
        painter.resetTransform()
        if len(drawing) == 2:
            painter.setPen(Qt.PenStyle.NoPen)
            painter.setBrush(self._fill)
            paint_rects(painter, drawing[0])
            painter.setBrush(self._min_fill)
            paint_rects(painter, drawing[1])
        elif drawing[2] is not None:
            painter.drawImage(QPointF(drawing[0], drawing[1]), drawing[2])
        i = self.selected_sample()
        if i >= 0:
            ts = self.series.ts
            a, b = int(ts[i]), int(ts[i + 1]) if i + 1 < len(ts) else self.model.end_ns
            xa = min(max((a - self.origin) / 1e9 * sx + dx, -10.0), 1e7)
            xb = min(max((b - self.origin) / 1e9 * sx + dx, -10.0), 1e7)
            outline_selection(painter, QRectF(xa, base - full, max(xb - xa, 2.0), full))
        self._paint_scale(painter, base - full, (t0 - self.origin) / 1e9 * sx + dx)
        painter.restore()

    #: entries up to which a frame draws rectangles (two per entry); more make one image (area_image)
    RECTS_UP_TO = 256

    def invalidate(self) -> None:
        self._image = None
        super().invalidate()

    def set_cursor(self, ts_ns: int | None) -> None:
        """The time under the mouse pointer (None: elsewhere): the track shows the value in force there."""
        if ts_ns != self.cursor_ns:
            self.cursor_ns = ts_ns
            self.update()

    def value_at(self, ts_ns: int) -> float | None:
        """The sample in force at ``ts_ns`` (the last one at or before it), or None before the first."""
        i = int(np.searchsorted(self.series.ts, ts_ns, side="right")) - 1
        return float(self.series.value[i]) if i >= 0 else None

    def scale_text(self) -> str:
        """What the track says about its scale: its maximum, and the value at the pointer when it is on it."""
        from fxscope.core.units import format_quantity

        text = f"max {format_quantity(self.hi)}"
        if self.cursor_ns is not None:
            value = self.value_at(self.cursor_ns)
            if value is not None:
                text += f"   at cursor {format_quantity(value)}"
        return text

    def _paint_scale(self, painter: QPainter, top: float, left: float) -> None:
        """The scale on the track's top left, at the view's left edge ``left`` (device coordinates, painter
        reset), over a light band. The label is drawn once per text into a pixmap (laying out the text
        each frame cost ~0.5 ms a counter)."""
        key = (self.scale_text(), self.matched)
        if self._scale is None or self._scale[0] != key:
            text = key[0]
            m = self._metrics
            image = QImage(m.horizontalAdvance(text) + 6, m.height(), QImage.Format.Format_ARGB32_Premultiplied)
            image.fill(QColor(255, 255, 255, 190))
            p = QPainter(image)
            p.setFont(self._font)
            p.setPen(QColor("#d08a00") if self.matched else QColor("#303036"))
            p.drawText(QPointF(3.0, m.ascent()), text)
            p.end()
            self._scale = (key, QPixmap.fromImage(image))
        painter.drawPixmap(QPointF(max(left, 0.0) + 2.0, top), self._scale[1])

    def sample_row(self, sample: int) -> int:
        """The selection row of one of this track's samples (a ``counter_row``)."""
        return counter_row(self.index, sample)

    def selected_sample(self) -> int:
        """The selected sample of this track (from :attr:`selected_row`), or -1."""
        if self.selected_row < 0 or self.selected_row >> COUNTER_SAMPLE_BITS != self.index:
            return -1
        i = self.selected_row & ((1 << COUNTER_SAMPLE_BITS) - 1)
        return i if i < len(self.series) else -1

    def hit(self, lane_y: float, t: int, tol_ns: float) -> tuple[str, int]:
        """The sample in force at ``t`` (the last one at or before it), as a :meth:`sample_row`."""
        i = int(np.searchsorted(self.series.ts, t, side="right")) - 1
        return (self.kind, self.sample_row(i)) if i >= 0 else ("", -1)


def area_image(left, width, y_max, y_min, zero: float, top: float, bottom: float, limit: int, fill: int, band: int):
    """A counter's drawing as one image: (x, y, QImage, its pixel array), or (0, 0, None, None) when empty.

    Per pixel column (the entry of :meth:`CounterTrackItem.bands` over its centre), the band from the max to
    the min (``band`` colour, at least a pixel high) and the area between the band and the zero line
    (``fill``), pixels taken by their centres as Qt fills rectangles. Built with numpy over ~2000 x 35
    pixels: a thousand times fewer calls than two rectangles per entry, which cost ~1 ms a track a frame.
    """
    if not len(left):
        return 0, 0, None, None
    right = left + np.maximum(width, 1.0)
    x0 = int(max(np.floor(left[0]), 0.0))
    x1 = int(min(np.ceil(right.max()), float(limit), x0 + 20_000.0))
    x1 += -(x1 - x0) % 4  # (rows of the image 32-bit aligned, as QImage wants its rows)
    y0, y1 = int(np.floor(top)) - 1, int(np.ceil(bottom)) + 2
    if x1 <= x0 or y1 <= y0:
        return 0, 0, None, None
    centre = np.arange(x0, x1) + 0.5
    entry = np.searchsorted(left, centre, "right") - 1
    has = entry >= 0
    entry = np.maximum(entry, 0)
    has &= centre < right[entry]
    y_max, y_min = y_max[entry], y_min[entry]
    near = np.where(y_min > zero, y_max, y_min)  # the band's edge nearest the zero line
    band_bottom = y_max + np.maximum(y_min - y_max, 1.0)

    def first_row(y: np.ndarray) -> np.ndarray:  # the first image row whose centre is at or below y
        return np.clip(np.ceil(y - 0.5) - y0, 0, y1 - y0).astype(np.int16)

    rows = np.arange(y1 - y0, dtype=np.int16)[:, None]
    area_top, area_bottom = first_row(np.minimum(near, zero)), first_row(np.maximum(near, zero))
    band_top, band_end = first_row(y_max), first_row(band_bottom)
    area_bottom[~has] = area_top[~has]  # (columns with no entry: empty ranges)
    band_end[~has] = band_top[~has]
    # one byte a pixel: 1 the area, 2 the band (over the area where both), coloured by the image's table
    # (a uint32 image filled through masks cost twice as much)
    pixels = ((rows >= area_top) & (rows < area_bottom)).view(np.uint8)
    pixels |= ((rows >= band_top) & (rows < band_end)).view(np.uint8) << 1
    image = QImage(pixels.data, x1 - x0, y1 - y0, x1 - x0, QImage.Format.Format_Indexed8)
    image.setColorTable([0, fill, band, band])
    return x0, y0, image, pixels
