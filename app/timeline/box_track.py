"""Coloured, labelled boxes in rows (the drawing shared by slices, async spans, CPU slices and thread
states): one drawRects per colour, merged sub-pixel boxes, names elided to fit, search matches outlined."""

from __future__ import annotations

import numpy as np
from PySide6.QtCore import QPointF, QRectF, Qt
from PySide6.QtGui import QColor, QFont, QFontMetrics, QPainter, QPen

from fxscope.app.timeline.lane_item import (
    BRUSHES,
    LABEL_PEN,
    MATCH_PEN,
    MERGED_BRUSH,
    ROW_FILL,
    STRING_COLOURS,
    LaneItem,
    colour_index,
    draw_rects,
    merge_touching,
    run_starts,
)
from fxscope.core.timeline.layout import ROW_HEIGHT
from fxscope.core.trace.lane_boxes import covering
from fxscope.core.trace.model import TraceModel


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
        cuts = np.append(np.flatnonzero(run_starts(sorted_colours)), len(sorted_colours))
        for a, z in zip(cuts[:-1].tolist(), cuts[1:].tolist(), strict=True):
            idx = order[a:z]
            c = int(sorted_colours[a])
            x, y, w = merge_touching(left[idx], top[idx], width[idx])
            painter.setBrush(MERGED_BRUSH if c < 0 else BRUSHES[c])
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
        painter.setPen(MATCH_PEN)
        draw_rects(painter, left[hit], top[hit], width[hit], height)
        painter.setPen(Qt.PenStyle.NoPen)

    def _paint_labels(self, painter: QPainter, idx: np.ndarray, names, left, top, width, height: float) -> None:
        """Each box's name, elided to its width. Hundreds of labels a frame: a label's text and width are
        looked up once per name (and an elided form once per name and 8-pixel width step), so most labels
        cost one drawText at a baseline point."""
        if not len(idx):
            return
        painter.setFont(self._font)
        painter.setPen(LABEL_PEN)
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
