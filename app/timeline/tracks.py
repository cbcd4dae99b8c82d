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
- :mod:`.summary_track`: a collapsed process's busy-time strip.
"""

from __future__ import annotations

from fxscope.app.timeline.async_track import AsyncTrackItem
from fxscope.app.timeline.box_track import BoxTrackItem
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
from fxscope.core.timeline.layout import ROW_HEIGHT

_CRASH_BRUSH = CRASH_BRUSH  # the name tests/app/test_trace_reports.py reads

__all__ = [
    "PALETTE", "ROW_FILL", "ROW_HEIGHT", "AsyncTrackItem", "BoxTrackItem", "CounterTrackItem", "CpuTrackItem",
    "GroupSummaryItem", "GuardedPaint", "LaneItem", "MarkerTrackItem", "SchedLaneItem", "SliceTrackItem",
    "StateTrackItem", "colour_index",
]  # fmt: skip
