"""Debug tracks in the timeline's layout, without Qt: query results of the demo trace get a "Debug tracks"
group at the top, their boxes are found under a y and a time, selection rows lead back to the result's rows,
and removing them (pinned or not) leaves the layout as it was."""

from __future__ import annotations

from pathlib import Path

import pytest

from fxscope.core.sql.debug_track import debug_row, debug_track
from fxscope.core.sql.engine import TraceSQL
from fxscope.core.timeline.debug_tracks import DEBUG_GROUP, KIND, DebugTracks
from fxscope.core.timeline.layout import PROCESS_HEADER_ROWS, TrackLayout
from fxscope.core.timeline.track_order import COUNTER_ROWS, build_groups
from fxscope.core.trace.model import TraceModel
from fxscope.formats.fxt.reader import read_fxt

DEMO = Path(__file__).resolve().parents[3] / "resources" / "demo" / "demo.fxt"


@pytest.fixture(scope="module")
def demo() -> tuple[TraceModel, TraceSQL]:
    model = TraceModel(read_fxt(DEMO))
    return model, TraceSQL(model)


def test_debug_tracks_go_on_top_and_come_off_again(demo) -> None:
    model, sql = demo
    layout = TrackLayout(build_groups(model))
    before = [(g.pid, [lane.key for lane in g.lanes]) for g in layout.groups]
    tracks = DebugTracks()
    track = max(model.tracks, key=lambda t: t.max_depth)
    slices = debug_track(sql.query(f"SELECT ts, dur, name FROM thread_slice WHERE utid = {track.thread}"), "q1", model.start_ns, model.end_ns)
    counter = debug_track(sql.query("SELECT ts, value FROM counter WHERE track_id = (SELECT min(id) FROM counter_track)"),
                          "q2", model.start_ns, model.end_ns)  # fmt: skip
    a, b = tracks.add(layout, slices), tracks.add(layout, counter)
    assert layout.groups[0].pid == DEBUG_GROUP and layout.groups[0].lanes == [a, b]
    assert a.key == (KIND, 1) and b.key == (KIND, 2) and a.rows == slices.lanes == track.max_depth + 1
    assert b.rows == COUNTER_ROWS and layout.lane(a.key) is a
    layout.place()
    assert a.y0 == PROCESS_HEADER_ROWS and layout.headers[0] == (0.0, DEBUG_GROUP)
    # a box of the deepest lane, found under its y and time, and back to its result row
    r = int(slices.lane_ranges[-1][0])
    lane_row = int(slices.lane[r])
    assert layout.lane_at(a.y0 + lane_row + 0.5, 0.0) is a
    row = debug_row(1, slices.row_at(lane_row, int(slices.start[r])))
    assert tracks.lane_of(row) == (a.key, float(lane_row))
    assert tracks.span(row, model.end_ns) == (int(slices.start[r]), int(slices.end[r]))
    title, values = tracks.row_values(row)
    assert title == "q1" and values["ts"] == int(slices.start[r]) and values["name"] == tracks.text(row).split("  ")[0]
    # a counter sample holds until the next one
    sample = debug_row(2, 0)
    ts = counter.series.ts
    assert tracks.span(sample, model.end_ns) == (int(ts[0]), int(ts[1]))
    assert tracks.text(sample).startswith("q2 = ")
    # removed: a pinned one is unpinned, the group goes with its last lane, the rows lead nowhere
    layout.pin(b.key)
    assert tracks.remove(layout, b.key) is b and b.key not in layout.pinned
    assert tracks.span(sample, model.end_ns) is None and tracks.text(sample) == "" and len(tracks) == 1
    assert tracks.remove(layout, ("thread", 0)) is None  # not a debug track: left alone
    tracks.remove(layout, a.key)
    assert [(g.pid, [lane.key for lane in g.lanes]) for g in layout.groups] == before
    layout.place()
    assert layout.headers[0][1] != DEBUG_GROUP
    # ids are not reused: a row of a removed track never selects a new one
    assert tracks.add(layout, slices).key == (KIND, 3)
