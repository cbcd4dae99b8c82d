"""Coloured, labelled boxes in rows (the drawing shared by slices, async spans, CPU slices and thread
states): one drawRects per colour, merged sub-pixel boxes, names elided to fit, search matches outlined."""

from __future__ import annotations

import numpy as np
import shiboken6
from PySide6.QtCore import QPointF, QRectF, Qt
from PySide6.QtGui import QBrush, QFont, QFontMetrics, QFontMetricsF, QPainter, QStaticText, QTransform

from fxscope.app.timeline.box_fills import box_geometry, colour_fills
from fxscope.app.timeline.lane_image import RowFills
from fxscope.app.timeline.lane_item import (
    BRUSHES,
    LABEL_PEN,
    MERGED_BRUSH,
    ROW_FILL,
    STRING_COLOURS,
    LaneItem,
    colour_index,
    outline_rects,
    outline_selection,
)
from fxscope.core.timeline.layout import ROW_HEIGHT
from fxscope.core.trace.lane_boxes import covering
from fxscope.core.trace.model import TraceModel


def names_of_single(name, rows: np.ndarray, count: np.ndarray) -> np.ndarray:
    """The name ids of boxes ``rows`` (``name``: the table's name column) where a box stands for one row
    (``count`` 1), -1 where it stands for several: a merged box is grey and unlabelled, so its name is never
    read. Zoomed out most boxes are merged, and the name column is a gather through the slices' event rows
    (two random reads of big columns a box: ~0.3 ms a track on a zoomed-out frame)."""
    single = np.flatnonzero(count == 1)
    if len(single) == len(rows):
        return np.asarray(name[rows], np.int64)
    out = np.full(len(rows), -1, np.int64)
    out[single] = name[rows[single]]
    return out


#: pixels an outline of :func:`~fxscope.app.timeline.lane_item.outline_rects` may reach past its box's edge, at
#: most (the pen's pixel and the snapping's), with a pixel to spare
OUTLINE_REACH = 3.0


class BoxTrackItem(LaneItem):
    """Common drawing of coloured, labelled boxes in rows (slices, async spans): one drawRects per colour,
    in pixel coordinates from a local time origin; subclasses say which boxes a frame has."""

    def __init__(self, model: TraceModel, y0: float) -> None:
        super().__init__(model, y0)
        self.selected_row = -1
        self._font = QFont()
        self._font.setPointSizeF(8.0)
        self._metrics = QFontMetrics(self._font)
        self._ascent = QFontMetricsF(self._font).ascent()  # (where a static text's top is above its baseline)
        self._static_texts: dict[str, QStaticText] = {}
        self._name_ids = np.zeros(0, np.int64)
        self._name_colours = np.zeros(0, np.int64)
        self._direct_colours = False
        self._label_cache: dict[int, tuple[str, int]] = {}
        self._elided_cache: dict[tuple[int, int], str] = {}

    def _use_string_colours(self) -> None:
        """Boxes named by string ids: the colour of every string of the trace, computed once per trace
        (strings are few; no per-track pass over the slices)."""
        colours = STRING_COLOURS.get(self.model)
        if colours is None:  # kept per trace (tab), and dropped with its model
            colours = np.array([colour_index(t) for t in self.model.strings], np.int64)
            STRING_COLOURS[self.model] = colours
        self._name_ids = np.arange(len(colours), dtype=np.int64)
        self._name_colours = colours
        self._direct_colours = True

    def _colours_of(self, names: np.ndarray) -> np.ndarray:
        """Colour index of each box's name id (a copy: the caller marks merged boxes in it)."""
        if not len(self._name_colours):
            return np.zeros(len(names), np.int64)
        if self._direct_colours:  # ids are string ids: the table is indexed by them
            return self._name_colours[np.clip(names, 0, len(self._name_colours) - 1)]
        table = self._colour_table()
        if table is not None:
            lo, colours = table
            return colours[np.clip(names, lo, lo + len(colours) - 1) - lo]
        pos = np.searchsorted(self._name_ids, names).clip(0, len(self._name_ids) - 1)
        return self._name_colours[pos]

    #: name ids spanning at most this many values get a colour table (8 bytes a value)
    COLOUR_TABLE_SPAN = 1 << 16

    #: whether a box standing for several slices (zoomed out) is drawn grey rather than in the colour of
    #: the slice that represents it: a thread's slices are (many calls merged, not one long one)
    MERGED_IN_GREY = True

    def _colour_table(self) -> tuple[int, np.ndarray] | None:
        """(smallest name id, the colour of every id from it to the largest) when they span few values:
        one lookup a box instead of a binary search (of thousands of unsorted ids a frame: ~0.2 ms a track
        zoomed out); an id between them that names nothing gets what the search gives it. Built once for
        the item's name ids."""
        ids = self._name_ids
        cached = getattr(self, "_colour_table_of", None)
        if cached is not None and cached[0] is ids:
            return cached[1]
        table = None
        if len(ids) and int(ids[-1]) - int(ids[0]) < self.COLOUR_TABLE_SPAN:
            every = np.arange(int(ids[0]), int(ids[-1]) + 1, dtype=np.int64)
            table = (int(ids[0]), self._name_colours[np.searchsorted(ids, every).clip(0, len(ids) - 1)])
        self._colour_table_of = (ids, table)
        return table

    #: what a selected row of this item is a row of ("slice", "async", "cpu", "state"): rows of one kind
    #: index one table, shared by every item of that kind
    kind = ""

    def boxes(self, t0: int, t1: int, ns_per_px: float):
        """(rows, row index within the track, count, start ns, end ns, name ids) visible in [t0, t1)."""
        raise NotImplementedError

    def summary_level(self, ns_per_px: float) -> object:
        """What :meth:`boxes` reads at ``ns_per_px``, when its boxes in a window are those of any wider
        window that overlap it (a level of the model's pyramid, or its rows as they are): a picture whose
        window holds a new one's, made at the same ``summary_level``, gives the new one its boxes without a
        query (a zoom in mostly stays at a level: levels are 4x apart, a zoom step 1.25-1.7x). None: the
        boxes depend on the window (merged per pixel from its start), always queried."""
        return None

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
        """Row in ``lo:hi`` (sorted by start, not overlapping) whose [start, end) holds ``t``, or -1."""
        return covering(start, end, lo, hi, t)

    def name_label(self, name: int) -> str:
        """The label of boxes whose name value (the last column of :meth:`boxes`) is ``name``."""
        raise NotImplementedError

    def label(self, row: int) -> str:
        """The label of one box, by its row."""
        return self.name_label(int(self.boxes_name(np.array([row]))[0]))

    def boxes_name(self, rows: np.ndarray) -> np.ndarray:
        raise NotImplementedError

    #: a picture covers the view and this fraction of its width on either side: a pan within it draws the
    #: same rectangles moved, without asking the model again
    MARGIN = 0.5

    def update(self, *args) -> None:
        """Repaint, and compute the boxes again: whatever changed (selection, matches, theme, the model the
        item reads) is drawn from scratch."""
        self._picture = None
        super().update(*args)

    def picture(self, t0: int, t1: int, sx: float, sy: float) -> BoxPicture:
        """The boxes of a window around [t0, t1) at this zoom: the last one when it covers [t0, t1) at the
        same zoom (a repaint, a pan within its margin), else a new one."""
        p = getattr(self, "_picture", None)
        if p is not None and p.covers(t0, t1, sx, sy):
            return p
        margin = int((t1 - t0) * self.MARGIN)
        lo, hi = -(1 << 63) + 1, (1 << 63) - 2
        w0, w1 = max(t0 - margin, lo), min(t1 + margin, hi)
        level = self.summary_level(1e9 / sx)
        if p is not None and level is not None and p.level == level and p.t0 <= w0 and w1 <= p.t1:
            boxes = p.boxes_in(w0, w1)  # (a zoom in at the same level: the boxes the query would give)
        else:
            boxes = self.boxes(w0, w1, 1e9 / sx)
        self._picture = p = BoxPicture(w0, w1, sx, sy, *boxes)
        p.level = level
        p.build(self._colours_of(p.names), self.origin, self.MERGED_IN_GREY)
        return p

    def draw(self, painter: QPainter) -> None:
        f = self.frame(painter)
        if f is None:
            return
        self.draw_boxes(painter, f)
        self.draw_marks(painter, f)

    def draw_marks(self, painter: QPainter, f: tuple) -> None:
        """What a kind of track draws over its boxes (a thread's instants, a state strip's wakeups)."""

    def draw_boxes(self, painter: QPainter, f: tuple) -> None:
        """The boxes of the frame ``f`` from :meth:`picture`, the painter moved to where its window starts:
        one drawRects per colour, then match and selection outlines and the labels of this view."""
        t0, t1, sx, dx, sy, dy = f
        p = self.picture(t0, t1, sx, sy)
        # the view in the picture's pixels (x from its window's start, y from the track's top)
        shift = (p.t0 - self.origin) / 1e9 * sx + dx
        view_left, view_right = (t0 - self.origin) / 1e9 * sx + dx - shift, (t1 - self.origin) / 1e9 * sx + dx - shift
        self._last_view = (p, view_left, view_right)  # (what last_drawn counts, when asked)
        if not len(p.rows):
            return
        painter.save()
        painter.setTransform(QTransform.fromTranslate(shift, self.y0 * sy + dy))
        painter.setPen(Qt.PenStyle.NoPen)
        row = p.row_fills()
        if row is None or not row.paint(painter):  # (a lane a pixel a box: one image)
            for brush, rects, n in p.fill_calls():
                painter.setBrush(brush)
                painter.drawRects(rects, n)
        self._paint_matches(painter, p, view_left, view_right)
        if self.selected_row >= 0:
            sel = np.flatnonzero(p.rows == self.selected_row)
            if len(sel):
                i = int(sel[0])
                outline_selection(painter, QRectF(float(p.left[i]), float(p.top[i]), float(p.width[i]), p.height))
        # labels where a box is wide enough to say something
        if p.height >= 10 and len(p.labelled):
            # a box that starts left of the view shows its label at the view's left edge (as Perfetto does)
            idx = p.labelled
            shown_left = np.maximum(p.left[idx], view_left)
            shown = p.left[idx] + p.width[idx] - shown_left
            keep = np.flatnonzero((shown > 24) & (shown_left < view_right))
            self._paint_labels(painter, idx[keep], p.names, shown_left[keep], p.top[idx[keep]], shown[keep], p.height)
        painter.restore()

    @property
    def last_drawn(self) -> int:
        """The boxes the last paint drew in its view (tests and benchmarks read it: counted when asked, not
        at every frame, four passes over a picture's boxes, tens of thousands a track zoomed in)."""
        seen = getattr(self, "_last_view", None)
        if seen is None:
            return self._last_drawn
        p, view_left, view_right = seen
        return int(np.count_nonzero((p.left + p.width > view_left) & (p.left < view_right)))

    @last_drawn.setter
    def last_drawn(self, value: int) -> None:
        self._last_drawn, self._last_view = value, None

    def _paint_matches(self, painter: QPainter, p: BoxPicture, view_left: float = -np.inf,
                       view_right: float = np.inf) -> None:  # fmt: skip
        """Outline the picture's boxes that are search matches (a merged box: when the row it stands for
        is). Which they are is found once per picture and mask (a repaint or a pan draws them again); those
        of the view (``view_left`` to ``view_right``, the picture's pixels) are outlined: a picture is twice
        the view's width, and the outlines past the view are clipped away (thousands a track with a search
        of millions of matches)."""
        mask = self.match_mask
        self.last_matches = 0
        if mask is None or not len(p.rows):
            return
        if p.match_of is not mask:
            hit = np.flatnonzero(mask[np.clip(p.rows, 0, len(mask) - 1)])
            p.match_of, p.match_boxes = mask, (p.left[hit], p.top[hit], p.width[hit])
        left, top, width = p.match_boxes
        self.last_matches = len(left)
        if len(left):  # (an outline reaches a pixel past its box, and snapping another: 3 pixels of slack)
            seen = np.flatnonzero((left + width > view_left - OUTLINE_REACH) & (left < view_right + OUTLINE_REACH))
            left, top, width = left[seen], top[seen], width[seen]
        if len(left):
            outline_rects(painter, left, top, width, p.height)

    def _paint_labels(self, painter: QPainter, idx: np.ndarray, names, left, top, width, height: float) -> None:
        """The names of boxes ``idx``, elided to ``width`` (``left``, ``top``, ``width``: one per label).
        Hundreds of labels a frame: a label's text and width are looked up once per name (and an elided
        form once per name and 8-pixel width step), so most labels cost one drawText at a baseline point."""
        if not len(idx):
            return
        painter.setFont(self._font)
        painter.setPen(LABEL_PEN)
        m = self._metrics
        # the baseline as drawText's, and the top left that puts a static text's baseline there (QStaticText
        # keeps a text's layout: drawText shaped it again at every call, ~10 us a label, hundreds a frame)
        base = (height + m.ascent() - m.descent()) / 2 - self._ascent
        texts, elided, static = self._label_cache, self._elided_cache, self._static_texts
        if len(elided) > 50_000:  # a bound for long sessions; refilled from the frames that follow
            elided.clear()
        if len(static) > 20_000:
            static.clear()
        for n, x, y, w in zip(names[idx].tolist(), left.tolist(), top.tolist(), width.tolist(), strict=True):
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
            shown = static.get(text)
            if shown is None:
                shown = static[text] = QStaticText(text)
                shown.setTextFormat(Qt.TextFormat.PlainText)
            painter.drawStaticText(QPointF(x + 2, y + base), shown)


class BoxPicture:
    """What a box track draws at one zoom (``sx`` pixels a second, ``sy`` a row) over the window [t0, t1),
    in pixels from the window's start (x) and the track's top (y): the model's boxes, their rectangles
    grouped by colour (sub-pixel neighbours merged) and which of them are wide enough for a label. Built
    once per zoom and window; a repaint or a pan inside the window draws it moved."""

    def __init__(self, t0: int, t1: int, sx: float, sy: float, rows, level, count, start, end, names) -> None:
        self.t0, self.t1, self.sx, self.sy = t0, t1, sx, sy
        self.rows, self.count, self.names = rows, count, names
        self.row_level, self.start, self.end = level, start, end  # (kept: a zoom in may read them again)
        self.level: object = None  # the track's summary level the boxes come from (BoxTrackItem.summary_level)
        self.fills: list[tuple[int, np.ndarray]] = []
        self._fill_calls: list[tuple[QBrush, QRectF, int]] | None = None
        self._row_fills: RowFills | bool | None = False  # (False: not made yet)
        self.labelled = np.zeros(0, np.int64)
        self.marks: np.ndarray | None = None  # what a kind of track keeps besides the boxes (a thread's instants)
        self.instant_matches: tuple | None = None  # (match mask, times of the matched instants): a thread's
        self.match_of: np.ndarray | None = None  # the match mask that match_boxes are of (BoxTrackItem._paint_matches)
        self.match_boxes: tuple[np.ndarray, ...] = ()  # (left, top, width) of the boxes that are matches

    def fill_calls(self) -> list[tuple[QBrush, QRectF, int]]:
        """(brush, rectangles as Qt reads them, count) of each colour's fill: a drawRects call each, their
        wrappers made once per picture (a repaint or a pan draws them again: ~10 us a colour saved)."""
        calls = self._fill_calls
        if calls is None:
            calls = self._fill_calls = [
                (MERGED_BRUSH if colour < 0 else BRUSHES[colour], shiboken6.wrapInstance(rects.ctypes.data, QRectF),
                 len(rects)) for colour, rects in self.fills if len(rects)]  # fmt: skip
        return calls

    def row_fills(self) -> RowFills | None:
        """The fills as one row of pixels (:mod:`~fxscope.app.timeline.lane_image`) when the picture is one
        row of many rectangles (a CPU lane, a state strip zoomed out), else None; made once per picture."""
        if self._row_fills is False:
            self._row_fills = RowFills.of([(MERGED_BRUSH if colour < 0 else BRUSHES[colour], rects)
                                           for colour, rects in self.fills if len(rects)])  # fmt: skip
        return self._row_fills

    def covers(self, t0: int, t1: int, sx: float, sy: float) -> bool:
        """Whether this picture holds the view [t0, t1) at zoom (sx, sy)."""
        return self.t0 <= t0 and t1 <= self.t1 and abs(sx - self.sx) <= 1e-9 * sx and sy == self.sy

    def boxes_in(self, t0: int, t1: int) -> tuple[np.ndarray, ...]:
        """The boxes (as :meth:`BoxTrackItem.boxes` gives them) that overlap [t0, t1), a window within this
        picture's: those the same summary level's query of that window returns, in the same order."""
        keep = np.flatnonzero((self.end > t0) & (self.start < t1))
        return (self.rows[keep], self.row_level[keep], self.count[keep], self.start[keep], self.end[keep],
                self.names[keep])  # fmt: skip

    def build(self, colours: np.ndarray, origin: int, merged_in_grey: bool = True) -> None:
        """Pixel geometry, colour groups and label candidates (``colours``: each box's colour index;
        ``origin``: the trace start, the item's; ``merged_in_grey``: boxes counting several slices grey)."""
        sx, sy = self.sx, self.sy
        right_edge = (self.t1 - self.t0) / 1e9 * sx + 10.0
        self.left, self.top, self.width, labelled = box_geometry(
            self.start, self.end, self.row_level, self.count, colours, self.t0, origin, sx, ROW_HEIGHT * sy,
            right_edge, merged_in_grey)  # fmt: skip
        self.height = ROW_FILL * ROW_HEIGHT * sy
        if not len(self.rows):
            return
        self.fills = colour_fills(self.left, self.top, self.width, colours, self.height)
        self.labelled = labelled
