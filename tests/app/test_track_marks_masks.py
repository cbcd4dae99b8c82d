"""The tracks' match masks (track_marks.mark_matches) from the search's own masks are those made from the
hits' rows, with a flame-graph frame's slices added to a copy (the search's mask unchanged)."""

from __future__ import annotations

import dataclasses

import numpy as np

from fxscope.app.timeline.track_marks import mark_matches
from fxscope.core.trace.search_hits import search_all


def _lane_masks(timeline) -> list:
    return [(getattr(lane.item, "match_mask", None), getattr(lane.item, "instant_match_mask", None))
            for lane in timeline.lanes()]  # fmt: skip


def _same(a, b) -> bool:
    return (a is None and b is None) or (a is not None and b is not None and np.array_equal(a, b))


def test_the_search_masks_outline_what_the_rows_do(qtbot, sched_model, shown_timeline) -> None:
    timeline = shown_timeline(sched_model)
    hits = search_all(sched_model, sched_model.strings[int(sched_model.slices.name[0])][:3])
    assert len(hits.masks.get("slice", ())) and len(hits)
    without = dataclasses.replace(hits, masks={})
    frame = np.array([0, 5, len(sched_model.slices) - 1], np.int64)
    for extra in (None, frame):
        own = hits.masks["slice"].copy()
        mark_matches(timeline.lanes(), sched_model, hits, extra)
        got = _lane_masks(timeline)
        mark_matches(timeline.lanes(), sched_model, without, extra)
        want = _lane_masks(timeline)
        assert any(m is not None for m, _ in want)
        assert all(_same(g[0], w[0]) and _same(g[1], w[1]) for g, w in zip(got, want, strict=True))
        np.testing.assert_array_equal(hits.masks["slice"], own)  # (the frame's slices went to a copy)
