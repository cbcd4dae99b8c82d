"""The graphics items of debug tracks (query results on the timeline, :mod:`fxscope.core.timeline.debug_tracks`):
the slice and counter items of the trace's own tracks, reading the result's columns instead of the model's.

A box's or sample's selection row is :func:`~fxscope.core.sql.debug_track.debug_row` (the track's id above
its row), so every debug item sees the same selection and outlines it only when the row is one of its own.
"""

from __future__ import annotations

import numpy as np

from fxscope.app.timeline.box_track import BoxTrackItem
from fxscope.app.timeline.counter_track import CounterTrackItem
from fxscope.app.timeline.lane_item import LaneItem, colour_index
from fxscope.core.sql.debug_track import SLICES, DebugCounter, DebugSlices, debug_row, split_debug_row
from fxscope.core.timeline.debug_tracks import KIND
from fxscope.core.timeline.layout import Lane
from fxscope.core.trace.model import TraceModel

#: labels coloured by their text (as the trace's names are) up to this many; more get colours by id
NAMED_COLOURS_MAX = 10_000


class DebugSliceTrackItem(BoxTrackItem):
    """A result's rows as boxes in lanes, labelled by their ``name`` (boxes of a name share the colour the
    trace's slices of that name have)."""

    kind = KIND

    def __init__(self, model: TraceModel, track: DebugSlices, track_id: int, y0: float) -> None:
        super().__init__(model, y0)
        self.debug, self.track_id = track, track_id
        labels = track.labels
        n = len(labels)
        if n <= NAMED_COLOURS_MAX:
            colours = np.array([colour_index(t or "") for t in labels.to_pylist()], np.int64)
        else:
            colours = np.arange(n, dtype=np.int64) % 16
        self._name_ids, self._name_colours, self._direct_colours = np.arange(n, dtype=np.int64), colours, True

    @property
    def rows(self) -> int:
        return max(self.debug.lanes, 1)

    def boxes(self, t0: int, t1: int, ns_per_px: float):
        rows, lane, count, start, end, names = self.debug.boxes(t0, t1, ns_per_px)
        return debug_row(self.track_id, rows), lane, count, start, end, names

    def row_at(self, lane_row: int, t: int) -> int:
        row = self.debug.row_at(lane_row, t)
        return debug_row(self.track_id, row) if row >= 0 else -1

    def boxes_name(self, rows: np.ndarray) -> np.ndarray:
        return self.debug.name[np.asarray(split_debug_row(np.asarray(rows))[1])]

    def name_label(self, name: int) -> str:
        return self.debug.label(name)


class DebugCounterTrackItem(CounterTrackItem):
    """A result's ``value`` over ``ts`` as a counter track (its own one-series counter set)."""

    kind = KIND

    def __init__(self, model: TraceModel, track: DebugCounter, track_id: int, y0: float) -> None:
        super().__init__(model, 0, y0, counters=track.counters)
        self.debug, self.track_id = track, track_id

    def sample_row(self, sample: int) -> int:
        return debug_row(self.track_id, sample)

    def selected_sample(self) -> int:
        if self.selected_row < 0:
            return -1
        track_id, sample = split_debug_row(self.selected_row)
        return sample if track_id == self.track_id and sample < len(self.series) else -1


def make_debug_item(model: TraceModel, lane: Lane) -> LaneItem:
    """The item that draws debug lane ``lane`` (key ``("debug", track id)``, source the track)."""
    track, track_id = lane.source, lane.key[1]
    if track.kind == SLICES:
        return DebugSliceTrackItem(model, track, track_id, 0.0)
    return DebugCounterTrackItem(model, track, track_id, 0.0)
