"""The timeline's time axis: pyqtgraph's bottom axis, its ticks and labels laid out in fewer Python calls.

pyqtgraph's ``AxisItem`` lays its ticks out again whenever the view's range changes, so on every pan or zoom
frame: a ``Point`` (a Python ``QPointF`` subclass) for each end of each tick, a ``QPainter.boundingRect`` for
each label's text and the item's own bounding rectangle for each label. Measured in the benchmark's pan/zoom
frames at 10M events (1920x1080): 2.2-2.5 ms of a 16-18 ms frame, the largest item after the counters.
:meth:`TimeAxisItem.generateDrawSpecs` gives the same specifications (tests/app/test_time_axis.py compares
them over many ranges) for the one case the timeline uses (a bottom axis without pyqtgraph's grid, ticks left
to :meth:`tickValues`): the ticks' positions in one numpy expression, ``QPointF`` ends, each label's size
measured once per text and font, the bounding rectangle taken once. Any other case is pyqtgraph's.

It also paints that case itself (:meth:`TimeAxisItem.paint`): pyqtgraph records the layout into a
``QPicture`` and plays it back, every pan and zoom, then draws each tick with a ``setPen`` and a ``drawLine``
of its own. Here the layout is kept as the lines of each pen and the labels (made again when pyqtgraph drops
its picture: a range, size or style change) and drawn straight into the view's painter, one ``drawLines`` a
tick level: the same pixels (tests/app/test_time_axis.py compares the images), the axis' paint at 10M events
in the benchmark's pan/zoom frames ~2.1 -> ~1 ms.
"""

from __future__ import annotations

import math

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QLineF, QPointF, QRectF, Qt
from PySide6.QtGui import QColor, QPainter, QPen

#: label sizes kept per axis (texts of tick values: a long session sees a few thousand)
MAX_SIZES = 4096

_CENTER = Qt.AlignmentFlag.AlignCenter
_LABEL_FLAGS = Qt.AlignmentFlag.AlignHCenter | Qt.AlignmentFlag.AlignTop | Qt.TextFlag.TextDontClip


class TimeAxisItem(pg.AxisItem):
    """A bottom ``AxisItem`` whose layout of ticks and labels is computed for that case (module docstring)."""

    def __init__(self, **kwargs) -> None:
        super().__init__("bottom", **kwargs)
        self._sizes: dict[tuple[str, str], tuple[float, float]] = {}  # (font key, text): (width, height)
        #: the layout :meth:`paint` draws: (axis pen, axis line, [(pen, lines)], labels), made when pyqtgraph
        #: drops its picture (``self.picture = None``: range, size or style changed)
        self._layout: tuple | None = None
        #: (tick pen, alpha setting) -> each level's pen, made once for a pen (two levels a frame)
        self._pens: dict[tuple, dict[int, QPen]] = {}

    def _fast_case(self) -> bool:
        style = self.style
        return (self.orientation == "bottom" and self.grid is False and self._tickLevels is None
                and not any(style["stopAxisAtTick"]) and bool(style["showValues"]))  # fmt: skip

    def _label_size(self, p: QPainter, font_key: str, text: str) -> tuple[float, float]:
        """pyqtgraph's measure of a label: the painter's bounding rectangle of the text centred in a 100-pixel
        square, 80% of its height ("usually just a bit too large")."""
        key = (font_key, text)
        size = self._sizes.get(key)
        if size is None:
            if len(self._sizes) >= MAX_SIZES:
                self._sizes.clear()
            br = p.boundingRect(QRectF(0, 0, 100, 100), _CENTER, text)
            br.setHeight(br.height() * 0.8)
            size = self._sizes[key] = (br.width(), br.height())
        return size

    def _tick_pen(self, level: int) -> QPen:
        """The pen of a tick level (:meth:`_make_tick_pen`), made once for the axis' tick pen and alpha style."""
        base = self.tickPen()  # (pyqtgraph makes a new QPen at each call: keyed by what the level's pen takes)
        key = (base.color().rgba(), base.widthF(), base.style(), base.isCosmetic(), base.brush().style(),
               base.capStyle(), self.style["tickAlpha"])  # fmt: skip
        pens = self._pens.get(key)
        if pens is None:
            self._pens.clear()  # (a pen or style changed: the old one's pens are not asked again)
            pens = self._pens[key] = {}
        pen = pens.get(level)
        if pen is None:
            pen = pens[level] = self._make_tick_pen(level)
        return pen

    def _make_tick_pen(self, level: int) -> QPen:
        """The pen of a tick level: the axis' tick pen at alpha 255 / (level + 1), or the style's alpha."""
        alpha = self.style["tickAlpha"]
        if alpha is None:
            alpha = 255 / (level + 1)
        elif isinstance(alpha, float):
            alpha = min(255, max(0, round(alpha * 255)))
        elif isinstance(alpha, int):
            if alpha > 255 or alpha < 0:
                raise ValueError("lineAlpha should be [0..255]")
        else:
            raise TypeError("Line Alpha should be of type None, float or int")
        pen = self.tickPen()
        if pen.brush().style() == Qt.BrushStyle.SolidPattern:
            pen = QPen(pen)
            color = QColor(pen.color())
            color.setAlpha(int(alpha))
            pen.setColor(color)
        return pen

    def tickValues(self, min_val: float, max_val: float, size: float):
        """pyqtgraph's tick values (also what the timeline's grid lines are drawn at), a lower level's ticks
        within 1% of its spacing of a higher level's dropped as there, with ``numpy.isclose``'s test written
        out (``|a - b| <= atol``, or equal): ``isclose`` was half of this call's 0.3 ms, twice a frame."""
        if self.logMode:
            return super().tickValues(min_val, max_val, size)
        lo, hi = sorted((min_val, max_val))
        lo *= self.scale
        hi *= self.scale
        ticks = []
        seen = np.zeros(0)
        for spacing, offset in self.tickSpacing(lo, hi, size):
            start = (math.ceil((lo - offset) / spacing) * spacing) + offset
            num = int((hi - start) / spacing) + 1
            values = (np.arange(num) * spacing + start) / self.scale
            if len(seen):
                diff = seen - values[:, np.newaxis]
                close = ((np.abs(diff) <= spacing / self.scale * 0.01) | (diff == 0)).any(axis=-1)
                values = values[~close]
            seen = np.concatenate([seen, values])
            ticks.append((spacing / self.scale, values.tolist()))
        return ticks

    def generateDrawSpecs(self, p: QPainter):
        if not self._fast_case():
            return super().generateDrawSpecs(p)
        style = self.style
        if style["tickFont"] is not None:
            p.setFont(style["tickFont"])
        bounds = self.mapRectFromParent(self.geometry())
        tick_start = tick_stop = bounds.top()
        span = (QPointF(bounds.left() - 1.0, bounds.top() + 1.0), QPointF(bounds.right() + 1.0, bounds.top() + 1.0))
        a, b = self.mapToDevice(span[0]), self.mapToDevice(span[1])
        if a is None or b is None:
            return None
        length = float(np.hypot(b.x() - a.x(), b.y() - a.y()))
        if length == 0:
            return None
        levels = self.tickValues(self.range[0], self.range[1], length)
        dif = self.range[1] - self.range[0]
        if dif == 0:
            scale, offset = 1, 0
        else:
            scale = bounds.width() / dif
            offset = self.range[0] * scale
        ends = [x * scale - offset for x in self.range]
        lo, hi = min(ends), max(ends)
        positions: list[list[float | None]] = []
        tick_specs = []
        for i, (_spacing, ticks) in enumerate(levels):
            tick_length = style["tickLength"] / (i * 0.5 + 1.0)
            pen = self._tick_pen(i)
            xs = np.asarray(ticks, np.float64) * scale - offset
            out = (xs < lo) | (xs > hi)
            level = [None if o else x for x, o in zip(xs.tolist(), out.tolist(), strict=True)]
            positions.append(level)
            end = tick_stop + tick_length
            tick_specs.extend((pen, QPointF(x, tick_start), QPointF(x, end)) for x in level if x is not None)
        axis_spec = (self.pen(), span[0], span[1])
        text_offset = style["tickTextOffset"][1]
        label_at = tick_stop + max(0, style["tickLength"]) + text_offset
        item_rect = self.boundingRect()
        font_key = p.font().key()
        widths: list[float] = []
        heights: list[float] = []
        text_specs: list[tuple[QRectF, Qt.AlignmentFlag, str]] = []
        last_size2 = 0
        for i in range(min(len(levels), style["maxTextLevel"] + 1)):
            spacing, values = levels[i]
            strings = self.tickStrings(values, self.autoSIPrefixScale * self.scale, spacing)
            if len(strings) == 0:
                continue
            level = positions[i]
            labels = [(x, s, self._label_size(p, font_key, s)) for x, s in zip(level, strings, strict=True)
                      if x is not None]  # fmt: skip
            for _x, _s, (w, h) in labels:
                widths.append(w)
                heights.append(h)
            size, size2 = (sum(widths), max(heights)) if widths else (0, 0)
            if i > 0 and any(len(text_specs) >= n and size / length >= limit for n, limit in style["textFillLimits"]):
                break  # (crowded: no more levels' labels)
            last_size2 = size2
            for x, s, (w, h) in labels:
                rect = QRectF(x - w / 2.0, label_at, w, h)
                if item_rect & rect != rect:
                    continue
                text_specs.append((rect, _LABEL_FLAGS, s))
        self._updateMaxTextSize(last_size2)
        return axis_spec, tick_specs, text_specs

    def paint(self, p: QPainter, *args) -> None:
        """The timeline's case drawn straight into ``p`` from the kept layout (module docstring); any other
        case is pyqtgraph's (its picture)."""
        if not self._fast_case():
            if self._layout is not None or self.picture is True:  # (pyqtgraph's own picture from here on)
                self._layout = self.picture = None
            return super().paint(p, *args)
        if self.picture is None or self._layout is None:
            p.save()
            try:
                if self.style["tickFont"]:
                    p.setFont(self.style["tickFont"])
                specs = self.generateDrawSpecs(p)
            finally:
                p.restore()
            self._layout = None if specs is None else self._grouped(*specs)
            self.picture = True  # (pyqtgraph's "laid out" flag: set to None again when the layout changes)
        if self._layout is None:
            return
        (axis_pen, axis_line), levels, texts = self._layout
        p.save()
        try:
            p.setRenderHint(QPainter.RenderHint.Antialiasing, False)
            p.setRenderHint(QPainter.RenderHint.TextAntialiasing, True)
            p.setPen(axis_pen)
            p.drawLine(axis_line)
            for pen, lines in levels:
                p.setPen(pen)
                p.drawLines(lines)
            if self.style["tickFont"] is not None:
                p.setFont(self.style["tickFont"])
            p.setPen(self.textPen())
            p.setClipRect(self.boundingRect().toAlignedRect(), Qt.ClipOperation.IntersectClip)
            for rect, flags, text in texts:
                p.drawText(rect, int(flags), text)
        finally:
            p.restore()

    @staticmethod
    def _grouped(axis_spec: tuple, tick_specs: list, text_specs: list) -> tuple:
        """:meth:`generateDrawSpecs`' specifications as :meth:`paint` draws them: the ticks' lines per pen
        (consecutive ticks of one level share their pen), in their order."""
        pen, a, b = axis_spec
        levels: list[tuple[QPen, list[QLineF]]] = []
        for tick_pen, p1, p2 in tick_specs:
            if not levels or levels[-1][0] is not tick_pen:
                levels.append((tick_pen, []))
            levels[-1][1].append(QLineF(p1, p2))
        return (pen, QLineF(a, b)), levels, text_specs
