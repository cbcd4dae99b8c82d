"""What the track items show of the user's picks: the selected box (each item outlines its own rows of the
selected kind) and the search matches (a mask over each kind's table, handed to the items drawing that
kind), with the slices of a clicked flame-graph frame outlined as matches are. The widget calls these after the selection or the search text changes."""

from __future__ import annotations

import numpy as np

from fxscope.app.timeline.counter_track import CounterTrackItem
from fxscope.core.timeline.layout import Lane
from fxscope.core.trace.details import COUNTER_SAMPLE_BITS
from fxscope.core.trace.model import TraceModel
from fxscope.core.trace.search_hits import SearchHits


def mark_selected(lanes: list[Lane], kind: str, row: int) -> None:
    """Row ``row`` of ``kind`` selected on every item drawing that kind (instants and crash marks on the
    thread tracks too), the others cleared; only items whose selection changed repaint."""
    instant = row if kind == "instant" else -1
    for lane in lanes:
        item = lane.item
        new = row if getattr(item, "kind", "") == kind else -1
        changed = getattr(item, "selected_row", -1) != new or new >= 0
        if hasattr(item, "selected_row"):
            item.selected_row = new
        if hasattr(item, "selected_instant"):  # a thread's instants are drawn on its slice track
            changed |= item.selected_instant != instant or instant >= 0
            item.selected_instant = instant
        if hasattr(item, "selected_crash"):  # and its crash reports
            crash = row if kind == "crash" else -1
            changed |= item.selected_crash != crash or crash >= 0
            item.selected_crash = crash
        if changed:
            item.update()


def mark_matches(lanes: list[Lane], model: TraceModel, hits: SearchHits,
                 slices: np.ndarray | None = None) -> None:  # fmt: skip
    """Search matches outlined on the tracks: a mask over each kind's table, a flag on matching counters.
    ``slices``: more slice rows outlined the same way (the slices of a clicked flame-graph frame)."""
    masks = {}
    # each table's size only when it has matches: a table still being built in the background (its tracks
    # draw "building…") is not built here on the UI thread
    for kind, size in (("slice", lambda: len(model.slices)), ("async", lambda: len(model.async_spans.start)),
                       ("instant", lambda: len(model.instants)), ("log", lambda: len(model.logs))):  # fmt: skip
        extra = slices if kind == "slice" and slices is not None and len(slices) else None
        mask = hits.masks.get(kind)  # (the search's own: no pass over the hits, no scatter of their rows)
        if mask is not None:
            if extra is not None:
                mask = mask.copy()
                mask[extra] = True
            masks[kind] = mask
            continue
        rows = hits.kind_rows(kind)  # (in time order: a mask needs no sort of them by row)
        if extra is not None:
            rows = np.concatenate([rows, extra])
        if len(rows):
            mask = np.zeros(size(), bool)
            mask[rows] = True
            masks[kind] = mask
    counters = {int(r) >> COUNTER_SAMPLE_BITS for r in hits.rows_of("counter").tolist()}
    for lane in lanes:
        item = lane.item
        item.match_mask = masks.get(getattr(item, "kind", ""))
        if hasattr(item, "instant_match_mask"):
            item.instant_match_mask = masks.get("instant")
        if isinstance(item, CounterTrackItem) and item.kind == "counter":  # (not a query's debug counter)
            item.matched = item.index in counters
        item.update()
