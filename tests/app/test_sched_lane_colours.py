"""Zoomed out, a CPU lane's box that stands for many context switches is drawn in the colour of its
longest slice's thread (and a state strip's in its longest state's), not the grey of merged thread slices:
on a trace with a schedule, a CPU lane at the full view was one grey band that said only "busy"."""

from __future__ import annotations

import numpy as np

from fxscope.app.timeline.box_track import BoxTrackItem
from fxscope.app.timeline.sched_tracks import CpuTrackItem, StateTrackItem


def _pictures(timeline) -> list[tuple[BoxTrackItem, object]]:
    return [(lane.item, lane.item._picture) for lane in timeline.lanes()
            if isinstance(lane.item, BoxTrackItem) and getattr(lane.item, "_picture", None) is not None]  # fmt: skip


def test_merged_cpu_and_state_boxes_take_their_longest_slice_colour(qtbot, sched_model, shown_timeline) -> None:
    timeline = shown_timeline(sched_model)
    timeline.plot.viewport().repaint()
    qtbot.wait(10)
    seen, shown_threads = set(), 0
    for item, p in _pictures(timeline):
        merged = p.count > 1
        if not merged.any():
            continue
        colours = {c for c, _ in p.fills}
        if isinstance(item, CpuTrackItem | StateTrackItem):
            assert -1 not in colours  # no grey group
            # each merged box's colour is its representative row's (the thread it ran, the state it was in)
            expected = item._colours_of(p.names[merged])
            assert set(expected.tolist()) <= colours
            if isinstance(item, CpuTrackItem):
                shown_threads = max(shown_threads, len(np.unique(item.table.tid[p.rows[merged]])))
        else:  # thread slices and async spans: merged calls stay grey
            assert -1 in colours
        seen.add(type(item).__name__)
    assert {"CpuTrackItem", "StateTrackItem", "SliceTrackItem"} <= seen
    assert shown_threads > 1  # a busy lane's merged boxes show several threads, not one band
