"""A counter series as a filled step curve, with its scale and the value under the pointer."""

from __future__ import annotations

import math

import numpy as np
from PySide6.QtCore import QPoint, QPointF, QRect, QRectF, Qt
from PySide6.QtGui import QBrush, QColor, QFont, QFontMetrics, QImage, QPainter, QPixmap, QTransform

from fxscope.app.timeline.counter_picture import CounterPicture, round_up4
from fxscope.app.timeline.lane_item import (
    PALETTE,
    ROW_FILL,
    LaneItem,
    colour_index,
    outline_selection,
    paint_rects,
    pixels_since,
)
from fxscope.core.timeline.layout import ROW_HEIGHT
from fxscope.core.trace import compiled
from fxscope.core.trace.counters import BOUND_BLOCK, FINE_BLOCK, CounterSet
from fxscope.core.trace.details import COUNTER_SAMPLE_BITS, counter_row
from fxscope.core.trace.model import TraceModel

#: no block bounds (a short series: lod reads every sample)
_EMPTY = np.zeros(0)
_EMPTY_TS = np.zeros(0, np.int64)


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
        self._picture: CounterPicture | None = None  # the drawing of a window around the last view
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

    def bands(self, t0: int, t1: int, sx: float, dx: float, base: float, full: float, since: int | None = None,
              anchor: int | None = None):
        """What a frame draws, in device pixels: (left, width, y of the max, y of the min, y of zero), one
        entry per run of pixels from :meth:`CounterSet.lod` (the exact min..max of the samples in force
        during each pixel; an entry holds until the next one starts). x is ``dx`` plus pixels from
        ``since`` (default the trace start; a picture measures from its window's start); ``anchor``: the
        pixels' grid (:meth:`CounterSet.lod`)."""
        since = self.origin if since is None else since
        start, vmin, vmax, _last = self.counters.lod(self.index, t0, t1, 1e9 / sx, anchor=anchor)
        left = np.clip(pixels_since(start, since, sx, self.origin) + dx, -10.0, 1e7)
        right = np.append(left[1:], np.clip((t1 - since) / 1e9 * sx + dx, -10.0, 1e7))
        zero = float(self.value_y(np.zeros(1), base, full)[0])
        return left, np.maximum(right - left, 0.0), self.value_y(vmax, base, full), self.value_y(vmin, base, full), zero

    #: a pan past the picture adds the pixels it brings into view and this fraction of the view's width
    #: beyond them (the next steps of a pan draw without asking the model)
    PAD = 0.05
    #: a picture grows up to this many view widths (~0.9 MB a counter at 1920 pixels: its image and pixels);
    #: past that (a far jump, or a long pan) a new one starts
    KEEP = 3

    def picture(self, t0: int, t1: int, sx: float, sy: float) -> CounterPicture:
        """The drawing of grid pixels around [t0, t1) at this zoom (:mod:`counter_picture`): the last one
        when it covers them (a repaint, a pan within it, a vertical scroll), the last one extended by the
        pixels a pan brought into view, or a new one of the view alone (a zoom)."""
        ka, kb = self.grid_pixels(t0, t1, sx)
        p = self._picture
        if p is not None and p.covers(ka, kb, sx, sy):
            return p
        full = self.rows * ROW_HEIGHT * ROW_FILL * sy  # the picture's y: pixels from the track's top
        if p is not None and p.same_zoom(sx, sy):
            pad = math.ceil((kb - ka) * self.PAD)
            lo = p.k0 - round_up4(p.k0 - (ka - pad)) if ka < p.k0 else p.k0
            hi = p.k1 + round_up4(kb + pad - p.k1) if kb > p.k1 else p.k1
            if hi - lo <= self.KEEP * (kb - ka) + 2 * pad + 8:
                if lo < p.k0:
                    p.add(lo, p.k0, self._strip(lo, p.k0, sx, full))
                if hi > p.k1:
                    p.add(p.k1, hi, self._strip(p.k1, hi, sx, full))
                return p
        p = CounterPicture(ka, sx, sy, full, self._fill.color().rgba(), self._min_fill.color().rgba(), spare=p)
        kb = ka + round_up4(kb - ka)
        p.add(ka, kb, self._strip(ka, kb, sx, full))
        self._picture = p
        return p

    #: grid pixels a view spans at most (a view is a screen wide; more is a corrupt trace's float noise)
    MAX_VIEW_PIXELS = 1 << 16

    def grid_pixels(self, t0: int, t1: int, sx: float) -> tuple[int, int]:
        """The grid pixels [ka, kb) that hold the view [t0, t1) at ``sx`` (at least one, at most
        :attr:`MAX_VIEW_PIXELS`: far from the trace start, a corrupt trace's times lose the pixel as floats)."""
        b = 1e9 / sx
        ka = math.floor((t0 - self.origin) / b)
        kb = math.ceil((t1 - self.origin) / b)
        return ka, min(max(kb, ka + 1), ka + self.MAX_VIEW_PIXELS)

    def _strip(self, ka: int, kb: int, sx: float, full: float) -> tuple:
        """:meth:`bands` of grid pixels [ka, kb) at ``sx`` in pixels from ``ka`` and the track's top."""
        b = 1e9 / sx
        lo, hi = -(1 << 63) + 1, (1 << 63) - 2
        w0 = min(max(self.origin + math.ceil(ka * b), lo), hi)
        w1 = min(max(self.origin + math.ceil(kb * b), lo), hi)
        strip = self._compiled_strip(w0, w1, sx, full, kb - ka)
        if strip is not None:
            return strip
        return self.bands(w0, w1, sx, 0.0, full, full, since=w0, anchor=self.origin)

    def _compiled_strip(self, w0: int, w1: int, sx: float, full: float, pixels: int) -> tuple | None:
        """:meth:`bands` of the window [w0, w1) (pixels from ``w0``, y from the track's top) in one compiled
        call (slice_kernels.counter_strip: the same operations as lod and bands, the numpy glue around them
        was ~0.25 ms a counter on every pan and zoom), or None where the numpy path answers (no compiled
        loops, a window outside the exact integer case)."""
        kernels = compiled.slice_kernels
        s = self.series
        if kernels is None or not (compiled.plain(s.ts, np.int64) and compiled.plain(s.value, np.float64)):
            return None
        if w1 <= w0 or not len(s):
            return None
        bucket = max(1e9 / sx, 1.0, (w1 - w0) / CounterSet.MAX_BUCKETS)
        bounds = s.block_bounds()
        block, (bmin, bmax) = (BOUND_BLOCK, bounds) if bounds is not None else (0, (_EMPTY, _EMPTY))
        fine = s.fine_bounds() if bounds is not None else None
        fblock, (fmin, fmax, tsample) = (FINE_BLOCK, fine) if fine is not None else (0, (_EMPTY, _EMPTY, _EMPTY_TS))
        cap = pixels + 4
        left, width, y_max, y_min = np.empty(cap), np.empty(cap), np.empty(cap), np.empty(cap)
        m = kernels.counter_strip(s.ts, s.value, block, bmin, bmax, fblock, fmin, fmax, tsample, self.origin, self.origin,
                                  w0, w1, bucket, sx, self.lo, self.hi, full, left, width, y_max, y_min)  # fmt: skip
        if m < 0:
            return None
        zero = float(self.value_y(np.zeros(1), full, full)[0])
        return left[:m], width[:m], y_max[:m], y_min[:m], zero

    def draw(self, painter: QPainter) -> None:
        f = self.frame(painter)
        if f is None:
            return
        t0, t1, sx, dx, sy, dy = f
        top = self.y0 * sy + dy
        full = self.rows * ROW_HEIGHT * ROW_FILL * sy
        p = self.picture(t0, t1, sx, sy)
        shift = p.k0 + dx  # the device x of the picture's pixel 0 (grid pixel k is at k + dx)
        self._last_view = (p, *self.grid_pixels(t0, t1, sx))  # (what last_drawn counts, when asked)
        painter.save()
        painter.resetTransform()
        if p.rects is not None:
            painter.setTransform(QTransform.fromTranslate(shift, top))
            painter.setPen(Qt.PenStyle.NoPen)
            painter.setBrush(self._fill)
            paint_rects(painter, p.rects[0])
            painter.setBrush(self._min_fill)
            paint_rects(painter, p.rects[1])
            painter.resetTransform()
        elif p.image is not None:
            # at whole device pixels: the picture's pixel columns land on the device's (within half a pixel)
            painter.drawImage(QPoint(round(shift), round(top + p.y_top)), p.image,
                              QRect(p.c0, 0, p.k1 - p.k0, p.image.height()))  # fmt: skip
        i = self.selected_sample()
        if i >= 0:
            ts = self.series.ts
            a, b = int(ts[i]), int(ts[i + 1]) if i + 1 < len(ts) else self.model.end_ns
            xa = min(max((a - self.origin) / 1e9 * sx + dx, -10.0), 1e7)
            xb = min(max((b - self.origin) / 1e9 * sx + dx, -10.0), 1e7)
            outline_selection(painter, QRectF(xa, top, max(xb - xa, 2.0), full))
        self._paint_scale(painter, top, (t0 - self.origin) / 1e9 * sx + dx)
        painter.restore()

    @property
    def last_drawn(self) -> int:
        """The entries the last paint showed (tests and benchmarks read it: counted when asked, not at every
        frame)."""
        seen = getattr(self, "_last_view", None)
        if seen is None:
            return self._last_drawn
        p, ka, kb = seen
        return p.entries_in(ka, kb)

    @last_drawn.setter
    def last_drawn(self, value: int) -> None:
        self._last_drawn, self._last_view = value, None

    def invalidate(self) -> None:
        self._picture = None
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
        # (the text made again only when what it says may change: format_quantity at every frame of a dozen
        # counters was ~0.3 ms)
        said = (self.cursor_ns, self.hi)
        if self._scale is None or self._scale_of != said:
            self._scale_of, self._scale_text = said, self.scale_text()
        key = (self._scale_text, self.matched)
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

