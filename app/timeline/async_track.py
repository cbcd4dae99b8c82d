"""A process's async spans, one row per lane."""

from __future__ import annotations

import numpy as np

from fxscope.app.timeline.box_track import BoxTrackItem, names_of_single
from fxscope.core.trace.lane_boxes import lane_boxes
from fxscope.core.trace.model import TraceModel


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
        rows, lane, count, st, en = lane_boxes(pyramid, bases[self.pid], self.lane_ranges, t.start, t.end,
                                               t0, t1, ns_per_px)  # fmt: skip
        return rows, lane, count, st, en, names_of_single(t.name, rows, count)

    def summary_level(self, ns_per_px: float) -> object:
        # as lane_boxes reads: a level of the async pyramid, or the spans as they are (zoomed in)
        level = self.model.async_pyramid[0].level_for(ns_per_px)
        return "rows" if level is None else level.shift

    def boxes_name(self, rows: np.ndarray) -> np.ndarray:
        return self.table.name[rows]

    def name_label(self, name: int) -> str:
        return self.model.strings[name] if 0 <= name < len(self.model.strings) else "?"
