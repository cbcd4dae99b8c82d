"""Zoomed out, a CPU lane's box that stands for many context switches is drawn in the colour of its
longest slice's thread (and a state strip's in its longest state's), not the grey of merged thread slices:
on a trace with a schedule, a CPU lane at the full view was one grey band that said only "busy"."""

from __future__ import annotations

import itertools

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


def test_zoomed_in_past_the_finest_level_a_pixel_of_many_switches_is_one_box(sched_model, monkeypatch) -> None:
    """Past the sched pyramid's finest level a CPU lane's or a state strip's rows under a pixel are merged per
    pixel (the longest one and their count), as a thread's slices are: the boxes equal the per-pixel reference,
    and every row of the window is counted once (the pyramid's levels hidden, so that pixels of a few ms
    hold many context switches of this small trace)."""
    from fxscope.app.timeline.sched_tracks import _sched_boxes
    from tests.core.trace.test_lane_boxes import _merged_reference

    model = sched_model
    merged = 0
    for which, table, key in (("cpu", model.sched.cpu_slices, model.sched.cpu_slices.cpu),
                              ("state", model.sched.thread_states, model.sched.thread_states.tid)):  # fmt: skip
        pyramid, _lanes = model.sched_pyramid(which)
        monkeypatch.setattr(pyramid, "level_for", lambda ns_per_px: None)
        bounds = [*np.flatnonzero(np.diff(np.asarray(key))).tolist(), len(key) - 1]  # (each lane's last row)
        lo, hi = max(itertools.pairwise([0, *(b + 1 for b in bounds)]), key=lambda r: r[1] - r[0])  # the busiest
        start, end = np.asarray(table.start), np.asarray(table.end)
        span = int(end[lo:hi].max() - start[lo:hi].min())
        for ns_per_px in (span / 100, span / 1920):  # (a lane of this trace holds a few hundred rows)
            t0 = int(start[lo]) + span // 7
            t1 = t0 + min(int(ns_per_px * 1920), span // 2)
            rows, count, st, en = _sched_boxes(model, which, table, lo, hi, t0, t1, ns_per_px)
            hit = np.flatnonzero((end[lo:hi] > t0) & (start[lo:hi] < t1)) + lo
            window = (int(hit[0]), int(hit[-1]) + 1)
            got = set(zip(rows.tolist(), [0] * len(rows), count.tolist(), st.tolist(), en.tolist(), strict=True))
            assert got == _merged_reference(start, end, [window], t0, max(ns_per_px, 1.0))
            assert int(count.sum()) == window[1] - window[0]
            merged += int(np.count_nonzero(count > 1))
    assert merged > 40, merged
