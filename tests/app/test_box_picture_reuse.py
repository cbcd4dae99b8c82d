"""A zoom in that stays at a summary level takes its boxes from the picture it replaces, without a query:
the boxes, their pixels and colour groups must be exactly those a query of the new window gives, on every
kind of box track (thread slices, async spans, CPU slices, thread states) of a trace with a schedule."""

from __future__ import annotations

import numpy as np

from fxscope.app.timeline.box_track import BoxPicture, BoxTrackItem


def _fresh(item: BoxTrackItem, p: BoxPicture) -> BoxPicture:
    """The picture of ``p``'s window and zoom from a query."""
    q = BoxPicture(p.t0, p.t1, p.sx, p.sy, *item.boxes(p.t0, p.t1, 1e9 / p.sx))
    q.build(item._colours_of(q.names), item.origin, item.MERGED_IN_GREY)
    return q


def test_a_zoom_in_at_the_same_level_reuses_the_boxes_a_query_would_give(qtbot, sched_model, shown_timeline,
                                                                         monkeypatch) -> None:  # fmt: skip
    timeline = shown_timeline(sched_model)
    qtbot.wait(10)
    queries = []
    real = BoxTrackItem.picture

    def counting(self, *args):
        before = getattr(self, "_picture", None)
        p = real(self, *args)
        if p is not before:  # a new picture: from a query, or from the one before
            queries.append((type(self).__name__, p.level, before is not None and before.level == p.level))
        return p

    monkeypatch.setattr(BoxTrackItem, "picture", counting)
    kinds, checked, reused = set(), 0, 0
    for _ in range(24):
        timeline.zoom(0.7)
        queries.clear()
        timeline.plot.viewport().repaint()
        qtbot.wait(1)
        reused += sum(same for *_, same in queries)
        for lane in timeline.lanes():
            item = lane.item
            p = getattr(item, "_picture", None)
            if not isinstance(item, BoxTrackItem) or p is None:
                continue
            q = _fresh(item, p)
            for name in ("rows", "row_level", "count", "start", "end", "names", "left", "width", "labelled"):
                np.testing.assert_array_equal(getattr(p, name), getattr(q, name), err_msg=name)
            assert [c for c, _ in p.fills] == [c for c, _ in q.fills]
            for (_, a), (_, b) in zip(p.fills, q.fills, strict=True):
                np.testing.assert_array_equal(a, b)
            kinds.add(type(item).__name__)
            checked += 1
    assert {"SliceTrackItem", "AsyncTrackItem", "CpuTrackItem", "StateTrackItem"} <= kinds
    assert checked and reused  # (the zooms did stay at levels: the reuse was exercised)
