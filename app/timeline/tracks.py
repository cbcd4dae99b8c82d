"""Track graphics items: one item per lane (a thread's slices, a CPU, a counter...), never one per slice.

Each frame a track asks the model for the boxes visible at the current zoom (sub-pixel ones merged by the
model), then paints them in pixel coordinates with one ``drawRects`` call per colour. View coordinates are
seconds relative to the trace start (a local origin: absolute nanosecond timestamps do not survive float32
drawing) and rows on the y axis.

One module per kind of item; this one names them all in one place:

- :mod:`.lane_item`: the palette, rectangle drawing, guarded painting and :class:`LaneItem` they all are;
- :mod:`.box_track`: coloured labelled boxes in rows (:class:`BoxTrackItem`, the base of the next three);
- :mod:`.slice_track`: a thread's slices, instants and crash marks; :mod:`.async_track`: async spans;
- :mod:`.sched_tracks`: CPU lanes and thread-state strips;
- :mod:`.marker_track`: instants and log records as ticks; :mod:`.counter_track`: a counter's curve;
- :mod:`.summary_track`: a collapsed process's busy-time strip; :mod:`.building_track`: a track whose
  table the background build is still making;

and :func:`make_item` makes the item that draws a lane of :mod:`fxscope.core.timeline.track_order`.
"""

from __future__ import annotations

from fxscope.app.timeline.async_track import AsyncTrackItem
from fxscope.app.timeline.box_track import BoxTrackItem
from fxscope.app.timeline.building_track import BuildingTrackItem
from fxscope.app.timeline.counter_track import CounterTrackItem
from fxscope.app.timeline.lane_item import (
    CRASH_BRUSH,
    PALETTE,
    ROW_FILL,
    GuardedPaint,
    LaneItem,
    colour_index,
)
from fxscope.app.timeline.marker_track import MarkerTrackItem
from fxscope.app.timeline.sched_tracks import CpuTrackItem, SchedLaneItem, StateTrackItem
from fxscope.app.timeline.slice_track import SliceTrackItem
from fxscope.app.timeline.summary_track import GroupSummaryItem
from fxscope.core.timeline.layout import ROW_HEIGHT, Lane
from fxscope.core.timeline.track_order import BUILDING
from fxscope.core.trace.model import TraceModel


def make_item(model: TraceModel, lane: Lane) -> LaneItem:
    """The graphics item that draws ``lane`` (its kind is its key's first element)."""
    kind = lane.key[0]
    if kind == BUILDING:  # a kind of track whose table the background build is still making
        return BuildingTrackItem(model, lane.source, 0.0, lane.rows)
    if kind == "thread":
        return SliceTrackItem(model, lane.source, 0.0)
    if kind == "state":
        return StateTrackItem(model, lane.source, 0.0)
    if kind == "counter":
        return CounterTrackItem(model, lane.source, 0.0)
    if kind == "async":
        pid, n_lanes = lane.source
        return AsyncTrackItem(model, model.async_spans, pid, n_lanes, 0.0)
    if kind == "cpu":
        return CpuTrackItem(model, lane.source, 0.0)
    if kind == "instants":
        rows = lane.source
        return MarkerTrackItem(model, model.instants.ts[rows], 0.0, "#222222", kind="instant", rows=rows)
    if kind == "logs":
        rows = lane.source
        return MarkerTrackItem(model, model.logs.ts[rows], 0.0, "#8a5300", kind="log", rows=rows)
    raise ValueError(f"no track item for lane {lane.key!r}")


_CRASH_BRUSH = CRASH_BRUSH  # the name tests/app/test_trace_reports.py reads

__all__ = [
    "PALETTE", "ROW_FILL", "ROW_HEIGHT", "AsyncTrackItem", "BoxTrackItem", "CounterTrackItem", "CpuTrackItem",
    "GroupSummaryItem", "GuardedPaint", "LaneItem", "MarkerTrackItem", "SchedLaneItem", "SliceTrackItem",
    "StateTrackItem", "colour_index", "make_item",
]  # fmt: skip
