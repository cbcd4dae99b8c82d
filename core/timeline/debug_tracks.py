"""The debug tracks of one timeline: query results drawn as tracks (Perfetto's "add debug track").

A result becomes a track in :mod:`fxscope.core.sql.debug_track`; here it gets its place: one lane per track
in a "Debug tracks" group at the top of the timeline (above the CPUs and processes, where Perfetto puts
them), removable one by one. A selected box or sample is one number, :func:`debug_row` (the track's id and
its row), so the timeline's selection, hover text and "go to" work on it as on the trace's own tracks.
Qt-free: the widget makes a graphics item per lane.
"""

from __future__ import annotations

from fxscope.core.sql.debug_track import SLICES, DebugCounter, DebugSlices, debug_row, split_debug_row
from fxscope.core.timeline.layout import Lane, TrackLayout
from fxscope.core.timeline.track_order import COUNTER_ROWS

#: the group key of the debug tracks (no process has this koid; the CPUs are -1, global instants -2)
DEBUG_GROUP = -3
DEBUG_GROUP_NAME = "Debug tracks"
KIND = "debug"  # the selection kind of their boxes and samples

DebugTrack = DebugSlices | DebugCounter


class DebugTracks:
    """The debug tracks added to one timeline, by id (ids are not reused while the trace is open)."""

    def __init__(self) -> None:
        self.tracks: dict[int, DebugTrack] = {}
        self._next_id = 1

    def __len__(self) -> int:
        return len(self.tracks)

    def add(self, layout: TrackLayout, track: DebugTrack) -> Lane:
        """Give ``track`` a lane at the end of the debug group (the group made first, at the top)."""
        track_id = self._next_id
        self._next_id += 1
        self.tracks[track_id] = track
        rows = max(track.lanes, 1) if track.kind == SLICES else COUNTER_ROWS
        lane = Lane((KIND, track_id), track.title, DEBUG_GROUP, rows=rows, source=track,
                    match=f"{DEBUG_GROUP_NAME} {track.title}".casefold())  # fmt: skip
        layout.add_lane(DEBUG_GROUP, DEBUG_GROUP_NAME, lane, at=0)
        return lane

    def remove(self, layout: TrackLayout, key: tuple) -> Lane | None:
        """Take the track of lane ``key`` away (its lane, or None when it is no debug track)."""
        if key[0] != KIND:
            return None
        self.tracks.pop(key[1], None)
        return layout.remove_lane(key)

    def find(self, row: int) -> tuple[int, DebugTrack, int] | None:
        """(track id, track, row within it) of a selection row, or None when its track was removed."""
        track_id, r = split_debug_row(row)
        track = self.tracks.get(track_id)
        return (track_id, track, r) if track is not None and 0 <= r < len(track) else None

    def span(self, row: int, end_ns: int) -> tuple[int, int] | None:
        """(start, end) ns of a selected box (a counter sample: until the next one)."""
        found = self.find(row)
        if found is None:
            return None
        _id, track, r = found
        return track.span(r) if track.kind == SLICES else track.span(r, end_ns)

    def text(self, row: int) -> str:
        """The hover text of a box or sample: its label and, for a box, how long it lasts."""
        from fxscope.core.units import format_duration_ns

        found = self.find(row)
        if found is None:
            return ""
        _id, track, r = found
        if track.kind != SLICES:
            return track.text(r)
        start, end = track.span(r)
        return f"{track.text(r)}  {format_duration_ns(end - start)}  ·  {track.title}"

    def lane_of(self, row: int) -> tuple[tuple, float] | None:
        """(lane key, row within the lane) that draws a selection row."""
        found = self.find(row)
        if found is None:
            return None
        track_id, track, r = found
        return (KIND, track_id), float(track.lane[r]) if track.kind == SLICES else 0.0

    def row_values(self, row: int) -> tuple[str, dict[str, object]] | None:
        """(track title, the result row the box came from) for the details."""
        found = self.find(row)
        return None if found is None else (found[1].title, found[1].row_values(found[2]))


__all__ = ["DEBUG_GROUP", "KIND", "DebugTracks", "debug_row"]
