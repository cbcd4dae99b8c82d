"""A thread's matched instants are found once per picture (its window's instants against the match mask);
a pan inside the picture outlines those in its view from them. The frames must be the pixels a fresh scan
of the mask draws."""

from __future__ import annotations

import numpy as np

from fxscope.app.timeline.slice_track import SliceTrackItem


def test_kept_instant_matches_draw_what_a_fresh_scan_draws(qtbot, sched_model, shown_timeline) -> None:
    timeline = shown_timeline(sched_model)
    qtbot.wait(10)
    mask = np.random.default_rng(2).random(len(sched_model.instants)) < 0.3
    items = [lane.item for lane in timeline.lanes() if isinstance(lane.item, SliceTrackItem)]
    assert items
    for item in items:
        item.instant_match_mask = mask
        item.update()
    timeline.zoom(0.05)
    kept = compared = 0
    for step in (0.0, 0.1, -0.05, 0.2, -0.3, 0.15):
        timeline.pan(step)
        before = {id(item): item._picture for item in items if getattr(item, "_picture", None) is not None}
        cached = timeline.plot.grab().toImage()
        matches = sum(getattr(item, "last_instant_matches", 0) for item in items if item.isVisible())
        for item in items:  # the same frame from a fresh scan of the mask
            p = getattr(item, "_picture", None)
            if p is not None:
                kept += before.get(id(item)) is p and p.instant_matches is not None
                p.instant_matches = None
        fresh = timeline.plot.grab().toImage()
        assert cached == fresh
        assert sum(getattr(item, "last_instant_matches", 0) for item in items if item.isVisible()) == matches
        compared += matches
    assert compared > 0 and kept > 0
