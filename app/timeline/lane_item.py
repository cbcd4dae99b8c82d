"""What every track item shares: the palette and brushes, one-call rectangle drawing over numpy columns,
guarded painting, and :class:`LaneItem` (a lane's graphics item: its rows, its y, the frame's time window).

Painting happens in pixel coordinates from a local time origin: absolute nanosecond timestamps do not
survive float32 drawing."""

from __future__ import annotations

import logging
import math
import weakref
import zlib
from typing import ClassVar

import numpy as np
import shiboken6
from PySide6.QtCore import QRectF, Qt
from PySide6.QtGui import QBrush, QColor, QPainter, QPen, QTransform
from PySide6.QtWidgets import QGraphicsObject

from fxscope.core.timeline.layout import ROW_HEIGHT
from fxscope.core.trace import compiled
from fxscope.core.trace.model import TraceModel

#: Perfetto-like muted palette; a name always gets the same colour (hash of the name, not of its index).
PALETTE = [
    "#4e79a7", "#f28e2b", "#e15759", "#76b7b2", "#59a14f", "#edc948", "#b07aa1", "#ff9da7",
    "#9c755f", "#7f8fa6", "#3d9970", "#c45d8a", "#5f8dd3", "#d4a017", "#6a8e3f", "#a05195",
]
BRUSHES = [QBrush(QColor(c)) for c in PALETTE] + [
    QBrush(QColor(c))
    for c in ("#c9d1d9", "#2e9e5b", "#c9a227", "#9aa3ad", "#b0413e", "#6e6e6e", "#9fd6a4", "#bfe3c2")
]  # after the palette: thread states NEW, RUNNING, SUSPENDED, BLOCKED, DYING, DEAD, RUNNABLE, PREEMPTED
MERGED_BRUSH = QBrush(QColor("#8a8f98"))
#: per trace (tab): the colour index of every string of the trace, computed once; dropped with the model
STRING_COLOURS: weakref.WeakKeyDictionary[TraceModel, np.ndarray] = weakref.WeakKeyDictionary()
INSTANT_BRUSH = QBrush(QColor("#222222"))
CRASH_BRUSH = QBrush(QColor("#d62728"))  # crash reports in the thread's log records
LABEL_PEN = QPen(QColor("#ffffff"))
WAKEUP_BRUSH = QBrush(QColor("#1b1b1b"))
MATCH_PEN = QPen(QColor("#f5b400"), 2.0)  # search matches: an amber outline (a selection is near-black)
MATCH_PEN.setCosmetic(True)
#: square corners: the stroke is then exactly a ring of rectangles, which :func:`outline_rects` fills (the
#: default bevel join cut corner pixels by rules of the stroker that no fill reproduces)
MATCH_PEN.setJoinStyle(Qt.PenJoinStyle.MiterJoin)
MATCH_BRUSH = QBrush(MATCH_PEN.color())
ROW_FILL = 0.86  # fraction of a row a slice fills (a gap shows nesting)
#: the selection's outline: near-black on the box's edge inside a near-white ring, so that it stands out on
#: the light and the dark background alike (a near-black outline alone vanished in the dark theme)
SELECTION_PEN = QPen(QColor("#111111"), 2.0)
SELECTION_RING = QPen(QColor("#f4f4f6"), 2.0)


def outline_selection(painter: QPainter, rect: QRectF) -> None:
    """Outline the selected box or mark ``rect`` (device pixels); leaves the painter's pen and brush set to
    no pen, no brush."""
    painter.setBrush(Qt.BrushStyle.NoBrush)
    painter.setPen(SELECTION_RING)
    painter.drawRect(rect.adjusted(-2.0, -2.0, 2.0, 2.0))
    painter.setPen(SELECTION_PEN)
    painter.drawRect(rect)
    painter.setPen(Qt.PenStyle.NoPen)


def rect_buffer(x: np.ndarray, y: np.ndarray, w: np.ndarray, h) -> np.ndarray:
    """Rectangles over numpy columns (pixel coordinates) as the memory of a QRectF array: an (n, 4) float64
    array that :func:`paint_rects` hands to Qt as it is, no Python object per rectangle. A box track keeps
    these between frames (a repaint or a pan draws them again without building anything)."""
    mem = np.empty((len(x), 4), np.float64)
    mem[:, 0], mem[:, 1], mem[:, 2], mem[:, 3] = x, y, w, h
    # Qt's rasterizer crashes on NaN or astronomically large coordinates, which a corrupt trace can produce
    # (a counter of 1e308, a timestamp near 2**63): keep every rectangle finite and near the screen
    # (fmax/fmin return the non-NaN operand: NaN becomes -1e6, infinities the bounds; two ufunc calls, where
    # nan_to_num + clip cost ~20 us a call, which runs per colour per track per frame)
    np.fmin(np.fmax(mem, -1e6, out=mem), 1e7, out=mem)
    return mem


def paint_rects(painter: QPainter, rects: np.ndarray) -> None:
    """One drawRects call over a :func:`rect_buffer` (Qt reads the array's memory as QRectF[n])."""
    if len(rects):
        painter.drawRects(shiboken6.wrapInstance(rects.ctypes.data, QRectF), len(rects))


def draw_rects(painter: QPainter, x: np.ndarray, y: np.ndarray, w: np.ndarray, h) -> None:
    """One drawRects call over numpy columns (pixel coordinates)."""
    if len(x):
        paint_rects(painter, rect_buffer(x, y, w, h))


def stroke_pixels(v: np.ndarray) -> np.ndarray:
    """The first pixel column (or row) at or after device coordinate ``v`` as Qt's raster engine fills a
    stroke's outline without antialiasing: coordinates snapped to 1/64 pixel, a pixel covered when its
    centre is past the outline's left (top) edge and not past its right (bottom) edge."""
    v = np.round(v * 64.0)
    v /= 64.0
    v -= 0.5
    np.floor(v, out=v)
    v += 1.0
    return v


def outline_rects(painter: QPainter, x: np.ndarray, y: np.ndarray, w: np.ndarray, h) -> None:
    """Outline rectangles (``x``, ``y``, ``w`` >= 1, ``h`` > 0: pixels in the painter's coordinates) with
    :data:`MATCH_PEN`, drawn as the pixels its stroke covers, filled: the stroke of a 2-pixel pen runs Qt's
    path stroker and polygon rasterizer per rectangle (~20 ms a frame for the thousands of outlines of a
    search over a large trace), where filled pixel-aligned rectangles are a span fill each. The ring of each
    outline is one rectangle where it has no inside (a box 1-2 pixels wide: most boxes zoomed out; touching
    ones on a row merged into one) and four otherwise. Pixel-identical to the stroke (the tests compare them);
    a painter that scales or rotates gets the stroke itself. Leaves the painter with no pen and no brush."""
    tr = painter.transform()
    if tr.type().value > QTransform.TransformationType.TxTranslate.value:
        painter.setBrush(Qt.BrushStyle.NoBrush)
        painter.setPen(MATCH_PEN)
        draw_rects(painter, x, y, w, h)
        painter.setPen(Qt.PenStyle.NoPen)
        return
    solid, rings = outline_fill_rects(x, y, w, h, tr.dx(), tr.dy())
    painter.save()
    painter.resetTransform()
    painter.setPen(Qt.PenStyle.NoPen)
    painter.setBrush(MATCH_BRUSH)
    paint_rects(painter, solid)
    paint_rects(painter, rings)
    painter.restore()
    painter.setPen(Qt.PenStyle.NoPen)
    painter.setBrush(Qt.BrushStyle.NoBrush)


def outline_fill_rects(x, y, w, h, tx: float, ty: float) -> tuple[np.ndarray, np.ndarray]:
    """The rectangles :func:`outline_rects` fills for boxes ``x``, ``y``, ``w``, ``h`` translated by
    (``tx``, ``ty``): (solid rings, merged where touching; four rectangles a ring with an inside), as
    :func:`rect_buffer` makes them. By the compiled loop (slice_kernels.match_outlines: a search's outlines
    are thousands of boxes a track zoomed out, ~40 numpy calls a frame otherwise) when it is built."""
    kernels = compiled.slice_kernels
    x = np.ascontiguousarray(x, np.float64)
    if kernels is not None and np.ndim(h) == 0 and np.shape(y) == x.shape and np.shape(w) == x.shape:
        solid = np.empty((len(x), 4), np.float64)
        rings = np.empty((4 * len(x), 4), np.float64)
        ns, nr = kernels.match_outlines(x, np.ascontiguousarray(y, np.float64), np.ascontiguousarray(w, np.float64),
                                        float(h), float(tx), float(ty), solid, rings)  # fmt: skip
        return solid[:ns], rings[: 4 * nr]
    return outline_fill_rects_numpy(x, y, w, h, tx, ty)


def outline_fill_rects_numpy(x, y, w, h, tx: float, ty: float) -> tuple[np.ndarray, np.ndarray]:
    """:func:`outline_fill_rects` by numpy calls (the tests' reference)."""
    # the ring's pixel edges, all in one array (a few passes over it, not 8 small sets of them): outer
    # [x0, x3), inner [x1, x2), the same in y (the pen reaches 1 pixel either side of the outline)
    x = np.asarray(x, np.float64) + tx
    y = np.asarray(y, np.float64) + ty
    edges = np.empty((8, len(x)), np.float64)
    np.subtract(x, 1.0, out=edges[0])
    np.add(x, 1.0, out=edges[1])
    np.add(x, w, out=edges[3])
    np.subtract(edges[3], 1.0, out=edges[2])
    edges[3] += 1.0
    np.subtract(y, 1.0, out=edges[4])
    np.add(y, 1.0, out=edges[5])
    np.add(y, h, out=edges[7])
    np.subtract(edges[7], 1.0, out=edges[6])
    edges[7] += 1.0
    x0, x1, x2, x3, y0, y1, y2, y3 = stroke_pixels(edges)
    solid = (x2 <= x1) | (y2 <= y1)
    solid_rects = rings = np.zeros((0, 4), np.float64)
    s = np.flatnonzero(solid)
    if len(s):
        sx0, sx3 = np.clip(x0[s], -1e6, 1e7), np.clip(x3[s], -1e6, 1e7)  # (as merge_touching needs them)
        sy0, sw, heights = y0[s], sx3 - sx0, (y3 - y0)[s]
        if len(s) > 1 and np.all(heights == heights[0]):  # touching rings on a row: one rectangle
            sx0, sy0, sw = merge_touching(sx0, sy0, sw)
            heights = heights[: len(sx0)]
        solid_rects = rect_buffer(sx0, sy0, sw, heights)
    r = np.flatnonzero(~solid)
    if len(r):
        x0, x1, x2, x3, y0, y1, y2, y3 = (v[r] for v in (x0, x1, x2, x3, y0, y1, y2, y3))
        n = len(r)
        mem = np.empty((4 * n, 4), np.float64)
        mem[:n, 0], mem[:n, 1], mem[:n, 2], mem[:n, 3] = x0, y0, x3 - x0, y1 - y0  # top
        mem[n : 2 * n, 0], mem[n : 2 * n, 1], mem[n : 2 * n, 2], mem[n : 2 * n, 3] = x0, y2, x3 - x0, y3 - y2
        mem[2 * n : 3 * n, 0], mem[2 * n : 3 * n, 1], mem[2 * n : 3 * n, 2] = x0, y1, x1 - x0  # left
        mem[3 * n :, 0], mem[3 * n :, 1], mem[3 * n :, 2] = x2, y1, x3 - x2  # right
        mem[2 * n :, 3] = np.tile(y2 - y1, 2)
        rings = np.fmin(np.fmax(mem, -1e6, out=mem), 1e7, out=mem)
    return solid_rects, rings


def run_starts(values: np.ndarray) -> np.ndarray:
    """True where a value differs from the one before it (and at the first): the starts of runs."""
    out = np.empty(len(values), bool)
    if len(values):
        out[0] = True
        np.not_equal(values[1:], values[:-1], out=out[1:])
    return out


def merge_touching(x: np.ndarray, y: np.ndarray, w: np.ndarray) -> tuple[np.ndarray, ...]:
    """Boxes of one colour on one row that touch or overlap (within half a pixel) become one box: the
    same pixels with fewer rectangles to fill (zoomed out, runs of merged buckets are the common case)."""
    if len(x) < 32:  # few boxes: merging costs more than it saves
        return x, y, w
    # the boxes usually come row by row, left to right (the model's order): then no sort is needed
    same_row = y[1:] == y[:-1]
    if not (np.all(y[1:] >= y[:-1]) and np.all(x[1:][same_row] >= x[:-1][same_row])):
        order = np.lexsort((x, y))
        x, y, w = x[order], y[order], w[order]
        same_row = y[1:] == y[:-1]
    right = x + w
    first = np.empty(len(x), bool)  # a run starts at a new row, or past the running right edge of its row
    first[0] = True
    np.logical_not(same_row, out=first[1:])
    if same_row.all():
        run_right = np.maximum.accumulate(right)
    else:  # rows shifted apart so that the running max never crosses from one row into the next (pixel
        # coordinates are clipped to [-10, 1e7] by the caller)
        offset = (np.cumsum(first) - 1) * 4e7
        run_right = np.maximum.accumulate(right + offset)
        run_right -= offset
    np.greater(x[1:], run_right[:-1] + 0.5, out=first[1:], where=same_row)
    starts = np.flatnonzero(first)
    left = x[starts]
    with np.errstate(invalid="ignore"):  # (a NaN or infinite box stays one: its width NaN, not a warning)
        return left, y[starts], np.maximum.reduceat(right, starts) - left


def pixels_since(ns: np.ndarray, since: int, sx: float, origin: int) -> np.ndarray:
    """Pixels from time ``since`` to times ``ns`` (int64, none before ``origin``, the trace start) at ``sx``
    pixels a second. The times are taken from ``origin`` modulo 2**64 on uint64, exact even when a corrupt
    trace's span passes int64, and only then turned into float (absolute ns near 1.7e18 would lose 256 ns
    as floats); ``since`` may be before the trace start or far from ``ns`` either way."""
    rel = np.asarray(ns, np.int64).view(np.uint64) - np.uint64(origin & 0xFFFF_FFFF_FFFF_FFFF)
    offset = float(since - origin)
    return (rel.astype(np.float64) - offset) * (sx / 1e9) if offset else rel.astype(np.float64) * (sx / 1e9)


def colour_index(name: str) -> int:
    return zlib.crc32(name.encode("utf-8", "replace")) % len(PALETTE)


class GuardedPaint:
    """``paint`` runs the item's ``draw`` and never lets an exception out of it: Qt calls paint from C++,
    and an exception escaping there (a corrupt trace's absurd timestamps overflowing int64 arithmetic) can
    take the whole process down. The item draws nothing that frame; the first failure of each item class is
    logged."""

    _reported: ClassVar[set[str]] = set()

    def paint(self, painter: QPainter, *args: object) -> None:
        painter.save()
        try:
            self.draw(painter)
        except Exception as exc:  # noqa: BLE001 - any drawing failure: skip this item's frame, keep the window
            name = type(self).__name__
            if name not in GuardedPaint._reported:
                GuardedPaint._reported.add(name)
                logging.getLogger("fxscope.timeline").warning("%s could not draw: %s", name, exc)
        finally:
            painter.restore()

    def draw(self, painter: QPainter) -> None:
        raise NotImplementedError


class LaneItem(GuardedPaint, QGraphicsObject):
    """A track's graphics item: ``rows`` high from ``y0`` (view units), the trace's whole span wide.

    Painting happens in pixels: :meth:`frame` gives the visible time window and the transform, and the
    subclass draws with the painter reset to device coordinates (view x is seconds from a local origin:
    nanosecond timestamps do not survive float32 drawing).

    A plain ``QGraphicsObject``, not pyqtgraph's ``GraphicsObject``: that one runs Python on every item
    change and connects view signals per item, about 0.1 ms an item when a tab opens (0.1 s of stalled UI
    for a thousand threads); the lanes only need their view box, which is their parent's parent."""

    rows = 1

    def __init__(self, model: TraceModel, y0: float) -> None:
        super().__init__()
        self.model = model
        self.y0 = y0
        self.origin = model.start_ns
        self.last_drawn = 0  # what the last paint drew (tests and benchmarks read it)
        self.last_wakeups = 0  # wakeup marks the last paint drew (state strips)
        self.match_mask: np.ndarray | None = None  # search matches, over the rows of this lane's kind
        self.last_matches = 0  # matches the last paint outlined

    def invalidate(self) -> None:
        """Draw from the model again at the next paint: whatever the item keeps between frames goes (the
        benchmark times such cold frames; state changes go through ``update``, which kinds that keep
        pictures override to drop them)."""
        self.update()

    def getViewBox(self):
        """The view box showing this lane (lanes are children of its child group), or None."""
        group = self.parentItem()
        return group.parentItem() if group is not None else None

    def px(self, ns: np.ndarray, sx: float, dx: float) -> np.ndarray:
        """Device x of times ``ns`` (int64, none before the trace start)."""
        return pixels_since(ns, self.origin, sx, self.origin) + dx

    def set_y(self, y0: float) -> None:
        """Move the lane to row ``y0``. What a kind of item keeps between frames stays (its pictures are
        in rows from its top): a pinned lane floats on every vertical scroll."""
        if y0 != self.y0:
            self.prepareGeometryChange()
            self.y0 = y0
            QGraphicsObject.update(self)

    def boundingRect(self) -> QRectF:
        # asked a few times per item per frame: built again only when the lane moves
        key = (self.y0, self.rows)
        if getattr(self, "_rect_key", None) != key:
            span = (self.model.end_ns - self.model.start_ns) / 1e9
            self._rect, self._rect_key = QRectF(0.0, self.y0, max(span, 1e-9), self.rows * ROW_HEIGHT), key
        return self._rect

    def frame(self, painter: QPainter):
        """(t0, t1, sx, dx, sy, dy) of this paint: the visible window in ns and the view-to-pixel
        transform, or None when there is nothing to draw."""
        vb = self.getViewBox()
        if vb is None:
            return None
        # (the view box's own range, not viewRange()'s copy of it: a lane asks at every paint, dozens a frame)
        x0, x1 = vb.state["viewRange"][0]
        tr = painter.transform()
        sx, dx, sy, dy = tr.m11(), tr.dx(), tr.m22(), tr.dy()
        if sx <= 0 or not (math.isfinite(x0) and math.isfinite(x1)):
            return None
        # within int64: a corrupt trace's span can reach past it, and numpy refuses larger Python ints
        lo, hi = -(1 << 63) + 1, (1 << 63) - 2
        t0 = min(max(self.origin + int(x0 * 1e9), lo), hi)
        t1 = min(max(self.origin + int(x1 * 1e9) + 1, lo), hi)
        return t0, t1, sx, dx, sy, dy
