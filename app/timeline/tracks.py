"""Track graphics items: one item per thread track, never one per slice.

Each frame a track asks the model for the slices visible at the current zoom (sub-pixel slices are merged
by the model), then paints them in pixel coordinates with one ``drawRects`` call per colour. View
coordinates are seconds relative to the trace start (a local origin: absolute nanosecond timestamps do not
survive float32 drawing) and rows on the y axis.
"""

from __future__ import annotations

import logging
import weakref
import zlib

import numpy as np
from pyqtgraph.Qt import internals
from PySide6.QtCore import QPointF, QRectF, Qt
from PySide6.QtGui import QBrush, QColor, QFont, QFontMetrics, QPainter, QPen, QPolygonF
from PySide6.QtWidgets import QGraphicsObject

from fxscope.core.timeline.layout import ROW_HEIGHT
from fxscope.core.trace.details import COUNTER_SAMPLE_BITS, counter_row
from fxscope.core.trace.model import ThreadTrack, TraceModel

#: Perfetto-like muted palette; a name always gets the same colour (hash of the name, not of its index).
PALETTE = [
    "#4e79a7", "#f28e2b", "#e15759", "#76b7b2", "#59a14f", "#edc948", "#b07aa1", "#ff9da7",
    "#9c755f", "#7f8fa6", "#3d9970", "#c45d8a", "#5f8dd3", "#d4a017", "#6a8e3f", "#a05195",
]
_BRUSHES = [QBrush(QColor(c)) for c in PALETTE] + [
    QBrush(QColor(c))
    for c in ("#c9d1d9", "#2e9e5b", "#c9a227", "#9aa3ad", "#b0413e", "#6e6e6e", "#9fd6a4", "#bfe3c2")
]  # after the palette: thread states NEW, RUNNING, SUSPENDED, BLOCKED, DYING, DEAD, RUNNABLE, PREEMPTED
_MERGED_BRUSH = QBrush(QColor("#8a8f98"))
#: per trace (tab): the colour index of every string of the trace, computed once; dropped with the model
_STRING_COLOURS: weakref.WeakKeyDictionary[TraceModel, np.ndarray] = weakref.WeakKeyDictionary()
_INSTANT_BRUSH = QBrush(QColor("#222222"))
_CRASH_BRUSH = QBrush(QColor("#d62728"))  # crash reports in the thread's log records
_LABEL_PEN = QPen(QColor("#ffffff"))
_WAKEUP_BRUSH = QBrush(QColor("#1b1b1b"))
_MATCH_PEN = QPen(QColor("#f5b400"), 2.0)  # search matches: an amber outline (a selection is near-black)
_MATCH_PEN.setCosmetic(True)
ROW_FILL = 0.86  # fraction of a row a slice fills (a gap shows nesting)


def draw_rects(painter: QPainter, x: np.ndarray, y: np.ndarray, w: np.ndarray, h) -> None:
    """One drawRects call over numpy columns (pixel coordinates): the rectangles are written straight
    into a QRectF array's memory (pyqtgraph's PrimitiveArray), no Python object per rectangle."""
    if not len(x):
        return
    rects = internals.PrimitiveArray(QRectF, 4)
    rects.resize(len(x))
    mem = rects.ndarray()
    mem[:, 0], mem[:, 1], mem[:, 2], mem[:, 3] = x, y, w, h
    # Qt's rasterizer crashes on NaN or astronomically large coordinates, which a corrupt trace can produce
    # (a counter of 1e308, a timestamp near 2**63): keep every rectangle finite and near the screen
    # (fmax/fmin return the non-NaN operand: NaN becomes -1e6, infinities the bounds; two ufunc calls, where
    # nan_to_num + clip cost ~20 us a call, which runs per colour per track per frame)
    np.fmin(np.fmax(mem, -1e6, out=mem), 1e7, out=mem)
    painter.drawRects(*rects.drawargs())


def _changes(values: np.ndarray) -> np.ndarray:
    """True where a value differs from the one before it (and at the first): the starts of runs."""
    out = np.empty(len(values), bool)
    if len(values):
        out[0] = True
        np.not_equal(values[1:], values[:-1], out=out[1:])
    return out


def _merge_touching(x: np.ndarray, y: np.ndarray, w: np.ndarray) -> tuple[np.ndarray, ...]:
    """Boxes of one colour on one row that touch or overlap (within half a pixel) become one box: the
    same pixels with fewer rectangles to fill (zoomed out, runs of merged buckets are the common case)."""
    if len(x) < 32:  # few boxes: merging costs more than it saves
        return x, y, w
    order = np.lexsort((x, y))
    x, y, w = x[order], y[order], w[order]
    new_row = _changes(y)
    # running right edge within each row: rows are shifted apart so that the running max never crosses
    # from one row into the next (pixel coordinates are clipped to [-10, 1e7] by the caller)
    offset = (np.cumsum(new_row) - 1) * 4e7
    right = np.maximum.accumulate(x + w + offset) - offset
    gap = np.empty(len(x), bool)  # (np.r_ costs ~20 us a call: this runs per colour per track per frame)
    gap[0] = True
    np.greater(x[1:], right[:-1] + 0.5, out=gap[1:])
    first = np.flatnonzero(new_row | gap)
    run_right = np.maximum.reduceat(x + w, first)
    return x[first], y[first], run_right - x[first]


def colour_index(name: str) -> int:
    return zlib.crc32(name.encode("utf-8", "replace")) % len(PALETTE)


class GuardedPaint:
    """``paint`` runs the item's ``draw`` and never lets an exception out of it: Qt calls paint from C++,
    and an exception escaping there (a corrupt trace's absurd timestamps overflowing int64 arithmetic) can
    take the whole process down. The item draws nothing that frame; the first failure of each item class is
    logged."""

    _reported: set[str] = set()

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

    def getViewBox(self):  # noqa: N802 - pyqtgraph's name, for code that treats lanes as its items
        """The view box showing this lane (lanes are children of its child group), or None."""
        group = self.parentItem()
        return group.parentItem() if group is not None else None

    def px(self, ns: np.ndarray, sx: float, dx: float) -> np.ndarray:
        """Device x of times ``ns`` (int64, none before the trace start). The difference from the origin
        is taken modulo 2**64 on uint64, exact even when a corrupt trace's span passes int64, and only then
        turned into float (absolute ns near 1.7e18 would lose 256 ns as floats)."""
        since = np.asarray(ns, np.int64).view(np.uint64) - np.uint64(self.origin & 0xFFFF_FFFF_FFFF_FFFF)
        return since.astype(np.float64) * (sx / 1e9) + dx

    def set_y(self, y0: float) -> None:
        if y0 != self.y0:
            self.prepareGeometryChange()
            self.y0 = y0
            self.update()

    def boundingRect(self) -> QRectF:  # noqa: N802 - Qt API
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
        (x0, x1), _ = vb.viewRange()
        tr = painter.transform()
        sx, dx, sy, dy = tr.m11(), tr.dx(), tr.m22(), tr.dy()
        if sx <= 0 or not (np.isfinite(x0) and np.isfinite(x1)):
            return None
        # within int64: a corrupt trace's span can reach past it, and numpy refuses larger Python ints
        lo, hi = -(1 << 63) + 1, (1 << 63) - 2
        t0 = min(max(self.origin + int(x0 * 1e9), lo), hi)
        t1 = min(max(self.origin + int(x1 * 1e9) + 1, lo), hi)
        return t0, t1, sx, dx, sy, dy


class BoxTrackItem(LaneItem):
    """Common drawing of coloured, labelled boxes in rows (slices, async spans): one drawRects per colour,
    in pixel coordinates from a local time origin; subclasses say which boxes a frame has."""

    def __init__(self, model: TraceModel, y0: float) -> None:
        super().__init__(model, y0)
        self.selected_row = -1
        self._font = QFont()
        self._font.setPointSizeF(8.0)
        self._metrics = QFontMetrics(self._font)
        self._name_ids = np.zeros(0, np.int64)
        self._name_colours = np.zeros(0, np.int64)
        self._direct_colours = False
        self._label_cache: dict[int, tuple[str, int]] = {}
        self._elided_cache: dict[tuple[int, int], str] = {}

    def _use_string_colours(self) -> None:
        """Boxes named by string ids: the colour of every string of the trace, computed once per trace
        (strings are few; no per-track pass over the slices)."""
        colours = _STRING_COLOURS.get(self.model)
        if colours is None:  # kept per trace (tab), and dropped with its model
            colours = np.array([colour_index(t) for t in self.model.strings], np.int64)
            _STRING_COLOURS[self.model] = colours
        self._name_ids = np.arange(len(colours), dtype=np.int64)
        self._name_colours = colours
        self._direct_colours = True

    def _colours_of(self, names: np.ndarray) -> np.ndarray:
        """Colour index of each box's name id (a copy: the caller marks merged boxes in it)."""
        if not len(self._name_colours):
            return np.zeros(len(names), np.int64)
        if self._direct_colours:  # ids are string ids: the table is indexed by them
            return self._name_colours[np.clip(names, 0, len(self._name_colours) - 1)]
        pos = np.searchsorted(self._name_ids, names).clip(0, len(self._name_ids) - 1)
        return self._name_colours[pos]

    #: what a selected row of this item is a row of ("slice", "async", "cpu", "state"): rows of one kind
    #: index one table, shared by every item of that kind
    kind = ""

    def boxes(self, t0: int, t1: int, ns_per_px: float):
        """(rows, row index within the track, count, start ns, end ns, name ids) visible in [t0, t1)."""
        raise NotImplementedError

    def row_at(self, lane_row: int, t: int) -> int:
        """The table row of the box covering time ``t`` in row ``lane_row`` of this item, or -1."""
        raise NotImplementedError

    def hit(self, lane_y: float, t: int, tol_ns: float) -> tuple[str, int]:
        """What a click at ``lane_y`` rows below the item's top and time ``t`` selects: (kind, row) or
        ("", -1). ``tol_ns``: a few pixels, for points in time."""
        row = self.row_at(int(lane_y // ROW_HEIGHT), t)
        return (self.kind, row) if row >= 0 else ("", -1)


    @staticmethod
    def _covering(start: np.ndarray, end: np.ndarray, lo: int, hi: int, t: int) -> int:
        """Row in ``lo:hi`` (sorted by start, not overlapping) whose [start, end) holds ``t``, or -1; a
        zero-length box counts as 1 ns so that it can be clicked."""
        i = lo + int(np.searchsorted(start[lo:hi], t, side="right")) - 1
        if i < lo:
            return -1
        return i if t < max(int(end[i]), int(start[i]) + 1) else -1

    def name_label(self, name: int) -> str:
        """The label of boxes whose name value (the last column of :meth:`boxes`) is ``name``."""
        raise NotImplementedError

    def label(self, row: int) -> str:
        """The label of one box, by its row."""
        return self.name_label(int(self.boxes_name(np.array([row]))[0]))

    def boxes_name(self, rows: np.ndarray) -> np.ndarray:
        raise NotImplementedError

    def draw(self, painter: QPainter) -> None:
        f = self.frame(painter)
        if f is None:
            return
        t0, t1, sx, dx, sy, dy = f
        rows, level, count, start, end, names = self.boxes(t0, t1, 1e9 / sx)
        self.last_drawn = len(rows)
        if len(rows) == 0:
            return
        painter.save()
        painter.resetTransform()
        painter.setPen(Qt.PenStyle.NoPen)
        left = np.clip(self.px(start, sx, dx), -10.0, 1e7)
        right = np.clip(self.px(end, sx, dx), -10.0, 1e7)
        width = np.maximum(right - left, 1.0)
        top = (self.y0 + level * ROW_HEIGHT) * sy + dy
        height = ROW_FILL * ROW_HEIGHT * sy
        colours = self._colours_of(names)
        colours[count > 1] = -1
        # one pass groups the boxes by colour (a stable sort keeps their order within a colour)
        order = np.argsort(colours, kind="stable")
        sorted_colours = colours[order]
        cuts = np.append(np.flatnonzero(_changes(sorted_colours)), len(sorted_colours))
        for a, z in zip(cuts[:-1].tolist(), cuts[1:].tolist(), strict=True):
            idx = order[a:z]
            c = int(sorted_colours[a])
            x, y, w = _merge_touching(left[idx], top[idx], width[idx])
            painter.setBrush(_MERGED_BRUSH if c < 0 else _BRUSHES[c])
            draw_rects(painter, x, y, w, height)
        self._paint_matches(painter, rows, count, left, top, width, height)
        if self.selected_row >= 0:
            sel = np.flatnonzero(rows == self.selected_row)
            if len(sel):
                i = int(sel[0])
                painter.setBrush(Qt.BrushStyle.NoBrush)
                painter.setPen(QPen(QColor("#111111"), 2.0))
                painter.drawRect(QRectF(float(left[i]), float(top[i]), float(width[i]), height))
                painter.setPen(Qt.PenStyle.NoPen)
        # labels where a box is wide enough to say something
        if height >= 10:
            # a box that starts left of the view shows its label at the view's left edge (as Perfetto does)
            view_left = (t0 - self.origin) / 1e9 * sx + dx
            shown_left = np.maximum(left, view_left)
            shown = left + width - shown_left
            idx = np.flatnonzero((shown > 24) & (count == 1))
            self._paint_labels(painter, idx, names, shown_left, top, shown, height)
        painter.restore()

    def _paint_matches(self, painter: QPainter, rows, count, left, top, width, height: float) -> None:
        """Outline the drawn boxes that are search matches (a merged box: when the row it stands for is)."""
        mask = self.match_mask
        self.last_matches = 0
        if mask is None or not len(rows):
            return
        hit = np.flatnonzero(mask[np.clip(rows, 0, len(mask) - 1)])
        self.last_matches = len(hit)
        if not len(hit):
            return
        painter.setBrush(Qt.BrushStyle.NoBrush)
        painter.setPen(_MATCH_PEN)
        draw_rects(painter, left[hit], top[hit], width[hit], height)
        painter.setPen(Qt.PenStyle.NoPen)

    def _paint_labels(self, painter: QPainter, idx: np.ndarray, names, left, top, width, height: float) -> None:
        """Each box's name, elided to its width. Hundreds of labels a frame: a label's text and width are
        looked up once per name (and an elided form once per name and 8-pixel width step), so most labels
        cost one drawText at a baseline point."""
        if not len(idx):
            return
        painter.setFont(self._font)
        painter.setPen(_LABEL_PEN)
        m = self._metrics
        base = (height + m.ascent() - m.descent()) / 2
        texts, elided = self._label_cache, self._elided_cache
        if len(elided) > 50_000:  # a bound for long sessions; refilled from the frames that follow
            elided.clear()
        for n, x, y, w in zip(names[idx].tolist(), left[idx].tolist(), top[idx].tolist(), width[idx].tolist(), strict=True):
            entry = texts.get(n)
            if entry is None:
                text = self.name_label(n)
                entry = texts[n] = (text, m.horizontalAdvance(text))
            text, advance = entry
            avail = w - 4
            if advance > avail:
                step = int(avail) & ~7
                key = (n, step)
                text = elided.get(key)
                if text is None:
                    text = elided[key] = m.elidedText(entry[0], Qt.TextElideMode.ElideRight, step)
                if not text or text == "…":  # nothing but an ellipsis says nothing
                    continue
            painter.drawText(QPointF(x + 2, y + base), text)


class SliceTrackItem(BoxTrackItem):
    """Draws the slices of one thread track between rows ``y0`` and ``y0 + depth count``."""

    def __init__(self, model: TraceModel, track: ThreadTrack, y0: float) -> None:
        super().__init__(model, y0)
        self.track = track
        self._use_string_colours()
        self._instants: np.ndarray | None = None
        self._instants_lo = 0
        self.selected_instant = -1  # a row of the model's instants, when one of this thread's is selected
        self.instant_brush = _INSTANT_BRUSH  # the theme's mark colour
        self.instant_match_mask: np.ndarray | None = None  # search matches over the model's instants
        self._crashes: tuple[np.ndarray, np.ndarray] | None = None
        self.selected_crash = -1  # a crash report (index into the log table's reports) of this thread

    kind = "slice"

    @property
    def rows(self) -> int:
        return self.track.max_depth + 1

    def row_at(self, lane_row: int, t: int) -> int:
        return self.model.slice_at(self.track, lane_row, t)

    def hit(self, lane_y: float, t: int, tol_ns: float) -> tuple[str, int]:
        """The thread's instant marks sit on the top edge: a click there, near one, selects the instant."""
        if lane_y < 0.3:
            crash_ts, crash_index = self._crash_marks()
            found = _nearest_point(crash_ts, crash_index, t, tol_ns, "crash")
            if found[1] >= 0:
                return found
            ts = self._instant_times()
            lo = self._instants_lo
            found = _nearest_point(ts, np.arange(lo, lo + len(ts)), t, tol_ns, "instant")
            if found[1] >= 0:
                return found
        return super().hit(lane_y, t, tol_ns)

    def _instant_times(self) -> np.ndarray:
        if self._instants is None:  # this thread's instant times, sorted (once)
            inst = self.model.instants
            lo, hi = inst.thread_rows(self.track.thread)
            self._instants_lo = lo
            self._instants = inst.ts[lo:hi]
        return self._instants


    def _crash_marks(self) -> tuple[np.ndarray, np.ndarray]:
        """This thread's crash reports: their times (sorted) and indices (once)."""
        if self._crashes is None:
            ts, thread = self.model.logs.report_marks()
            mine = np.flatnonzero(thread == self.track.thread)
            order = np.argsort(ts[mine], kind="stable")
            self._crashes = ts[mine][order], mine[order].astype(np.int64)
        return self._crashes

    def _paint_crashes(self, painter: QPainter) -> None:
        """A red triangle on the top edge of the track at each crash report of the thread."""
        ts, index = self._crash_marks()
        f = self.frame(painter)
        if f is None or not len(ts):
            return
        t0, t1, sx, dx, sy, dy = f
        a, b = np.searchsorted(ts, [t0, t1])
        if b <= a:
            return
        top = self.y0 * sy + dy - 1.0
        painter.save()
        painter.resetTransform()
        painter.setPen(QPen(QColor("#7a0000"), 1.0))
        painter.setBrush(_CRASH_BRUSH)
        for k in range(int(a), min(int(b), int(a) + 1000)):  # a few per thread; capped all the same
            x = (int(ts[k]) - self.origin) / 1e9 * sx + dx
            painter.drawPolygon(QPolygonF([QPointF(x - 5.0, top), QPointF(x + 5.0, top), QPointF(x, top + 9.0)]))
            if int(index[k]) == self.selected_crash:
                painter.save()
                painter.setBrush(Qt.BrushStyle.NoBrush)
                painter.setPen(QPen(QColor("#111111"), 2.0))
                painter.drawRect(QRectF(x - 7.0, top - 2.0, 14.0, 13.0))
                painter.restore()
        painter.restore()

    def boxes(self, t0: int, t1: int, ns_per_px: float):
        vis = self.model.visible(self.track, t0, t1, ns_per_px)
        return vis.rows, vis.depth, vis.count, vis.start, vis.end, self.model.slices.name[vis.rows]

    def boxes_name(self, rows: np.ndarray) -> np.ndarray:
        return self.model.slices.name[rows]

    def name_label(self, name: int) -> str:
        strings = self.model.strings
        return strings[name] if 0 <= name < len(strings) else "<unresolved>"

    def draw(self, painter: QPainter) -> None:
        super().draw(painter)
        self._paint_instants(painter)
        self._paint_crashes(painter)

    def _paint_instants(self, painter: QPainter) -> None:
        """The thread's instant events as small marks on the top edge of the track (one per pixel)."""
        f = self.frame(painter)
        if f is None:
            return
        t0, t1, sx, dx, sy, dy = f
        ts = self._instant_times()
        a, b = np.searchsorted(ts, [t0, t1])
        if b <= a:
            return
        ns_per_px = 1e9 / sx
        if b - a > 4 * (t1 - t0) / ns_per_px:
            # more instants than pixels: the pixels that have any, found by searching the pixel edges
            edges = np.arange(t0, t1 + ns_per_px, ns_per_px)
            idx = np.searchsorted(ts, edges)
            first = idx[:-1][np.diff(idx) > 0]
            times = ts[first]
        else:
            times = ts[a:b]
        x = self.px(times, sx, dx)
        painter.save()
        painter.resetTransform()
        painter.setPen(Qt.PenStyle.NoPen)
        painter.setBrush(self.instant_brush)
        draw_rects(painter, x - 1.5, np.full(len(x), self.y0 * sy + dy - 1.0), np.full(len(x), 3.0), 4.0)
        self.last_instant_matches = 0
        if self.instant_match_mask is not None:  # matched instants: an amber outline
            lo = self._instants_lo
            hit = np.flatnonzero(self.instant_match_mask[lo + a : lo + b])
            self.last_instant_matches = len(hit)
            if len(hit):
                mx = np.unique(np.floor(self.px(ts[a:b][hit], sx, dx)))
                painter.setBrush(Qt.BrushStyle.NoBrush)
                painter.setPen(_MATCH_PEN)
                draw_rects(painter, mx - 3.0, np.full(len(mx), self.y0 * sy + dy - 2.0), np.full(len(mx), 6.0), 6.0)
                painter.setPen(Qt.PenStyle.NoPen)
        sel = self.selected_instant - self._instants_lo
        if 0 <= sel < len(ts) and t0 <= ts[sel] < t1:
            painter.setBrush(Qt.BrushStyle.NoBrush)
            painter.setPen(QPen(QColor("#111111"), 2.0))
            xs = (int(ts[sel]) - self.origin) / 1e9 * sx + dx
            painter.drawRect(QRectF(xs - 3.5, self.y0 * sy + dy - 3.0, 7.0, 8.0))
        painter.restore()


class AsyncTrackItem(BoxTrackItem):
    """The async spans of one process, one row per lane; zoomed out, the model's async pyramid gives one
    box per pixel per lane (as for slices), zoomed in the spans of the window are read directly."""

    def __init__(self, model: TraceModel, table, pid: int, lanes: int, y0: float) -> None:
        super().__init__(model, y0)
        self.table, self.pid, self.lanes = table, pid, lanes
        self.lane_ranges = [table.lane_rows(pid, lane) for lane in range(lanes)]  # once: rows per lane
        self._use_string_colours()

    kind = "async"

    @property
    def rows(self) -> int:
        return self.lanes

    def row_at(self, lane_row: int, t: int) -> int:
        if not 0 <= lane_row < len(self.lane_ranges):
            return -1
        lo, hi = self.lane_ranges[lane_row]
        return self._covering(self.table.start, self.table.end, lo, hi, t)


    def boxes(self, t0: int, t1: int, ns_per_px: float):
        t = self.table
        pyramid, bases = self.model.async_pyramid
        level = pyramid.level_for(ns_per_px)
        parts = []
        for lane, (lo, hi) in enumerate(self.lane_ranges):
            if level is not None:
                r, count, st, en = pyramid.query(level, bases[self.pid] + lane, t0, t1)
            else:  # zoomed in: the lane's spans in the window, ends ascending within a lane
                a = lo + int(np.searchsorted(t.end[lo:hi], t0, "right"))
                b = lo + int(np.searchsorted(t.start[lo:hi], t1, "left"))
                r = np.arange(a, max(a, b))
                count, st, en = np.ones(len(r), np.int64), t.start[r], t.end[r]
            if len(r):
                parts.append((r, np.full(len(r), lane, np.int64), count, st, en))
        if not parts:
            z = np.zeros(0, np.int64)
            return z, z, z, z, z, z
        rows, lane, count, st, en = (np.concatenate([p[k] for p in parts]) for k in range(5))
        return rows, lane, count, st, en, t.name[rows]

    def boxes_name(self, rows: np.ndarray) -> np.ndarray:
        return self.table.name[rows]

    def name_label(self, name: int) -> str:
        return self.model.strings[name] if 0 <= name < len(self.model.strings) else "?"


class MarkerTrackItem(LaneItem):
    """Points in time (log records, instant events) as thin ticks in one row, one tick per pixel at most.

    ``rows`` are the points' rows in their table (``kind``: "instant" rows of the model's instants, "log"
    rows of its log table), so that a click selects one."""

    def __init__(self, model: TraceModel, ts: np.ndarray, y0: float, colour: str = "#6b7a90", kind: str = "",
                 rows: np.ndarray | None = None) -> None:  # fmt: skip
        super().__init__(model, y0)
        order = np.argsort(ts, kind="stable")
        self.ts = np.asarray(ts)[order]
        self.point_rows = (np.asarray(rows)[order] if rows is not None else order).astype(np.int64)
        self.kind = kind
        self.selected_row = -1
        self._brush = QBrush(QColor(colour))
        self._selected_pen = QPen(QColor("#111111"), 2.0)

    def hit(self, lane_y: float, t: int, tol_ns: float) -> tuple[str, int]:
        """The point nearest ``t`` within ``tol_ns`` (a few pixels), as (kind, row), or ("", -1)."""
        return _nearest_point(self.ts, self.point_rows, t, tol_ns, self.kind)


    def draw(self, painter: QPainter) -> None:
        f = self.frame(painter)
        if f is None or not len(self.ts):
            return
        t0, t1, sx, dx, sy, dy = f
        a, b = np.searchsorted(self.ts, [t0, t1])
        px = np.unique(np.floor(self.px(self.ts[a:b], sx, dx)))
        self.last_drawn = len(px)
        if not len(px):
            return
        painter.save()
        painter.resetTransform()
        painter.setPen(Qt.PenStyle.NoPen)
        painter.setBrush(self._brush)
        top = self.y0 * sy + dy
        height = ROW_FILL * ROW_HEIGHT * sy
        draw_rects(painter, px - 0.5, np.full(len(px), top), np.full(len(px), 2.0), height)
        self.last_matches = 0
        if self.match_mask is not None:
            hit = self.match_mask[np.clip(self.point_rows[a:b], 0, len(self.match_mask) - 1)]
            mx = np.unique(np.floor(self.px(self.ts[a:b][hit], sx, dx)))
            self.last_matches = len(mx)
            painter.setBrush(Qt.BrushStyle.NoBrush)
            painter.setPen(_MATCH_PEN)
            draw_rects(painter, mx - 2.0, np.full(len(mx), top - 1.0), np.full(len(mx), 5.0), height + 2.0)
            painter.setPen(Qt.PenStyle.NoPen)
        if self.selected_row >= 0:
            at = np.flatnonzero(self.point_rows == self.selected_row)
            if len(at):
                x = (int(self.ts[int(at[0])]) - self.origin) / 1e9 * sx + dx
                painter.setBrush(Qt.BrushStyle.NoBrush)
                painter.setPen(self._selected_pen)
                painter.drawRect(QRectF(x - 3.0, top - 1.0, 6.0, height + 2.0))
        painter.restore()


def _nearest_point(ts: np.ndarray, rows: np.ndarray, t: int, tol_ns: float, kind: str) -> tuple[str, int]:
    """(kind, row) of the point of sorted ``ts`` nearest ``t`` if within ``tol_ns``, else ("", -1)."""
    if not len(ts) or not kind:
        return "", -1
    i = int(np.searchsorted(ts, t))
    best = min((j for j in (i - 1, i) if 0 <= j < len(ts)), key=lambda j: abs(int(ts[j]) - t))
    return (kind, int(rows[best])) if abs(int(ts[best]) - t) <= tol_ns else ("", -1)


class CounterTrackItem(LaneItem):
    """One counter series as an area chart on a scale that holds zero: per pixel, a dark band over exactly
    the min..max of the samples in force during that pixel, and a light area between the band and the
    zero line (negative values hang below it); from the model's per-pixel summary, never an item per
    sample."""

    rows = 2
    kind = "counter"

    def __init__(self, model: TraceModel, index: int, y0: float) -> None:
        super().__init__(model, y0)
        self.index = index
        self.series = model.counters.series[index]
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
        start, vmin, vmax, _last = self.model.counters.lod(self.index, t0, t1, 1e9 / sx)
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
        left, width, y_max, y_min, zero = self.bands(t0, t1, sx, dx, base, full)
        self.last_drawn = len(left)
        if not len(left):
            return
        painter.save()
        painter.resetTransform()
        painter.setPen(Qt.PenStyle.NoPen)
        # the area between zero and the band (light), then the band itself: min..max of the pixel (dark,
        # at least a pixel high so that a flat stretch shows its value as a line)
        near = np.where(y_min > zero, y_max, y_min)  # the band's edge nearest the zero line
        painter.setBrush(self._fill)
        area_top = np.minimum(near, zero)
        draw_rects(painter, left, area_top, np.maximum(width, 1.0), np.abs(near - zero))
        painter.setBrush(self._min_fill)
        draw_rects(painter, left, y_max, np.maximum(width, 1.0), np.maximum(y_min - y_max, 1.0))
        if self.selected_row >= 0 and self.selected_row >> COUNTER_SAMPLE_BITS == self.index:
            i = self.selected_row & ((1 << COUNTER_SAMPLE_BITS) - 1)
            ts = self.series.ts
            a, b = int(ts[i]), int(ts[i + 1]) if i + 1 < len(ts) else self.model.end_ns
            xa = min(max((a - self.origin) / 1e9 * sx + dx, -10.0), 1e7)
            xb = min(max((b - self.origin) / 1e9 * sx + dx, -10.0), 1e7)
            painter.setBrush(Qt.BrushStyle.NoBrush)
            painter.setPen(QPen(QColor("#111111"), 2.0))
            painter.drawRect(QRectF(xa, base - full, max(xb - xa, 2.0), full))
        self._paint_scale(painter, base - full, (t1 - self.origin) / 1e9 * sx + dx)
        painter.restore()

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

    def _paint_scale(self, painter: QPainter, top: float, right: float) -> None:
        """The scale on the track's top left (device coordinates, painter reset), over a light band."""
        text = self.scale_text()
        width = self._metrics.horizontalAdvance(text) + 6
        x = 4.0
        painter.setPen(Qt.PenStyle.NoPen)
        painter.setBrush(QColor(255, 255, 255, 190))
        painter.drawRect(QRectF(x - 2, top, width, self._metrics.height()))
        painter.setFont(self._font)
        painter.setPen(QColor("#d08a00") if self.matched else QColor("#303036"))
        painter.drawText(QPointF(x + 1, top + self._metrics.ascent()), text)

    def hit(self, lane_y: float, t: int, tol_ns: float) -> tuple[str, int]:
        """The sample in force at ``t`` (the last one at or before it), as a ``counter_row``."""
        i = int(np.searchsorted(self.series.ts, t, side="right")) - 1
        return ("counter", counter_row(self.index, i)) if i >= 0 else ("", -1)


def _sched_boxes(model: TraceModel, which: str, table, lo: int, hi: int, t0: int, t1: int, ns_per_px: float):
    """(rows, count, start, end) of one CPU lane or thread-state strip (rows ``lo:hi`` of ``table``, sorted
    by start, not overlapping) in [t0, t1): zoomed out, from the model's sched pyramid (one box per pixel,
    merged boxes counting their slices); zoomed in past its finest level, the rows in the window."""
    if hi > lo:
        pyramid, lanes = model.sched_pyramid(which)
        level = pyramid.level_for(ns_per_px)
        if level is not None:
            return pyramid.query(level, int(lanes[lo]), t0, t1)
    a = lo + int(np.searchsorted(table.end[lo:hi], t0, "right"))
    b = lo + int(np.searchsorted(table.start[lo:hi], t1, "left"))
    r = np.arange(a, max(a, b))
    return r, np.ones(len(r), np.int64), table.start[r], table.end[r]


class SchedLaneItem(BoxTrackItem):
    """A lane of scheduling rows ``lo:hi`` of one table (sorted by start, never overlapping): a CPU's slices
    or a thread's states, drawn from the model's sched pyramid zoomed out, named by one of its columns."""

    #: the model's sched pyramid ("cpu" or "state") and the table column that names a box
    which = ""
    name_column = ""

    def boxes(self, t0: int, t1: int, ns_per_px: float):
        r, count, st, en = _sched_boxes(self.model, self.which, self.table, self.lo, self.hi, t0, t1, ns_per_px)
        return r, np.zeros(len(r), np.int64), count, st, en, self.boxes_name(r)

    def boxes_name(self, rows: np.ndarray) -> np.ndarray:
        return getattr(self.table, self.name_column)[rows].astype(np.int64)

    def row_at(self, lane_row: int, t: int) -> int:
        return self._covering(self.table.start, self.table.end, self.lo, self.hi, t) if lane_row == 0 else -1


class CpuTrackItem(SchedLaneItem):
    """One CPU: the threads it ran, coloured by thread; sub-pixel slices merged per pixel."""

    kind = which = "cpu"
    name_column = "tid"

    def __init__(self, model: TraceModel, cpu: int, y0: float) -> None:
        super().__init__(model, y0)
        self.cpu = cpu
        self.table = model.sched.cpu_slices
        self.lo, self.hi = model.sched.cpu_rows(cpu)
        tids = self.table.tid[self.lo : self.hi].astype(np.int64)
        self._name_ids = np.unique(tids)
        self._name_colours = np.array([colour_index(f"tid {t}") for t in self._name_ids.tolist()], np.int64)

    def name_label(self, name: int) -> str:
        return self.model.objects.koid_label(name)


class StateTrackItem(SchedLaneItem):
    """A thread's scheduling states as a thin strip (running, runnable, blocked...)."""

    kind = which = "state"
    name_column = "state"

    def __init__(self, model: TraceModel, tid: int, y0: float) -> None:
        super().__init__(model, y0)
        self.tid = tid
        self.table = model.sched.thread_states
        self.lo, self.hi = model.sched.state_rows(tid)
        self._name_ids = np.arange(8, dtype=np.int64)
        self._name_colours = np.arange(8, dtype=np.int64) + len(PALETTE)  # beyond the palette: state colours

    def name_label(self, name: int) -> str:
        from fxscope.core.trace.sched import STATE_NAMES

        return STATE_NAMES.get(name, "?")

    def draw(self, painter: QPainter) -> None:
        super().draw(painter)
        self._paint_wakeups(painter)

    def _paint_wakeups(self, painter: QPainter) -> None:
        """The thread's wakeups as small dark wedges on the strip's top edge (one per pixel at most): the
        moments it became runnable; selecting the state or the CPU slice after one draws who woke it."""
        f = self.frame(painter)
        if f is None:
            return
        t0, t1, sx, dx, sy, dy = f
        ts = self.model.sched.wakeups.ts[self.model.sched.wakeups.rows_in(t0, t1, tid=self.tid)]
        if not len(ts):
            return
        px = np.unique(np.floor(self.px(ts, sx, dx)))
        if len(px) * 12 > (t1 - t0) / 1e9 * sx:  # closer than 12 px apart on average: clutter, not marks
            self.last_wakeups = 0  # (the runnable stretches of the strip show them at this zoom)
            return
        top = self.y0 * sy + dy
        painter.save()
        painter.resetTransform()
        painter.setPen(Qt.PenStyle.NoPen)
        painter.setBrush(_WAKEUP_BRUSH)
        for x in px.tolist():  # a few dozen at most (see above)
            painter.drawPolygon([QPointF(x - 3.0, top - 1.0), QPointF(x + 3.0, top - 1.0), QPointF(x, top + 4.0)])
        self.last_wakeups = len(px)
        painter.restore()


class GroupSummaryItem(LaneItem):
    """A collapsed process's header row: its threads' busy time as one density strip (per pixel, the
    fraction of its threads inside a top-level slice, as a bar), not an empty row.

    Busy time up to ``t`` is exact from sorted starts and ends and their prefix sums
    (``sum(min(t - start, dur))`` over the slices begun by ``t``), so a frame costs two searches per pixel
    edge whatever the zoom, never a pass over the slices."""

    kind = "summary"

    def __init__(self, model: TraceModel, tracks: list[ThreadTrack], y0: float) -> None:
        super().__init__(model, y0)
        self.tracks = tracks
        self._sums: tuple[np.ndarray, ...] | None = None
        self._brush = QBrush(QColor("#6b7a90"))

    def set_colour(self, colour: str) -> None:
        self._brush = QBrush(QColor(colour))
        self.update()

    def _prefix(self) -> tuple[np.ndarray, ...]:
        if self._sums is None:  # once, on the first paint: the top-level slices of the process's threads
            s = self.model.slices
            rows = np.concatenate([t.by_depth[0] for t in self.tracks if t.by_depth]) if self.tracks else []
            rows = np.asarray(rows, np.int64)
            since = (s.ts[rows].view(np.uint64) - np.uint64(self.origin & 0xFFFF_FFFF_FFFF_FFFF)).astype(np.float64)
            start = np.sort(since)
            end = np.sort(since + s.dur[rows].astype(np.float64))
            self._sums = (start, np.r_[0.0, np.cumsum(start)], end, np.r_[0.0, np.cumsum(end)])
        return self._sums

    def busy(self, edges_rel_ns: np.ndarray) -> np.ndarray:
        """Busy thread-time (ns, summed over threads) from the trace start to each edge (ns since it)."""
        start, start_sum, end, end_sum = self._prefix()
        n_start = np.searchsorted(start, edges_rel_ns, "right")
        n_end = np.searchsorted(end, edges_rel_ns, "right")
        return (n_start * edges_rel_ns - start_sum[n_start]) - (n_end * edges_rel_ns - end_sum[n_end])

    def draw(self, painter: QPainter) -> None:
        f = self.frame(painter)
        if f is None or not self.tracks:
            return
        t0, t1, sx, dx, sy, dy = f
        # the window may start before the trace (Python ints: px() counts times from the start only)
        x_left = max((t0 - self.origin) / 1e9 * sx + dx, dx, -10.0)
        x_right = min((t1 - self.origin) / 1e9 * sx + dx, 1e7)
        n = int(min(max(x_right - x_left, 0.0), 20_000))
        if n < 1:
            return
        ns_per_px = 1e9 / sx
        edges = (np.floor(x_left) + np.arange(n + 1) - dx) * ns_per_px  # pixel edges, ns since the start
        fraction = np.diff(self.busy(edges)) / (ns_per_px * len(self.tracks))
        px = np.flatnonzero(fraction > 0.002)
        self.last_drawn = len(px)
        if not len(px):
            return
        height = ROW_FILL * ROW_HEIGHT * sy
        # square root: one busy thread in twenty still shows as a fifth of the row, and full stays full
        bar = np.clip(np.sqrt(fraction[px]), 0.1, 1.0) * height
        bottom = (self.y0 + ROW_FILL * ROW_HEIGHT) * sy + dy
        painter.save()
        painter.resetTransform()
        painter.setPen(Qt.PenStyle.NoPen)
        painter.setBrush(self._brush)
        draw_rects(painter, np.floor(x_left) + px, bottom - bar, np.ones(len(px)), bar)
        painter.restore()
