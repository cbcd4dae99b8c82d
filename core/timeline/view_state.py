"""What the user has picked on the timeline, without Qt: the selected box, the measured or marked span,
the area selection's lanes and the search position; and the rules that turn them into times and lanes
(where a selection is, what F fits, where W/S zoom to, which slice edge a measure snaps to).

The horizontal counterpart of :mod:`fxscope.core.timeline.layout` (Hotspot keeps both in its
filter-and-zoom stack). View x is seconds from the trace start, as the widget's axis is; times are ns.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from fxscope.core.timeline.layout import GLOBAL_GROUP
from fxscope.core.trace.details import COUNTER_SAMPLE_BITS, counter_details
from fxscope.core.trace.instants import SCOPE_GLOBAL, SCOPE_PROCESS
from fxscope.core.trace.model import ThreadTrack, TraceModel
from fxscope.core.trace.search_hits import KINDS, SearchHits, search_all

#: lane kinds an area selection sums up (the aggregate panel's tabs)
AREA_KINDS = ("thread", "async", "cpu", "state")


def selection_span(model: TraceModel, kind: str, row: int) -> tuple[int, int] | None:
    """(start ns, end ns) of row ``row`` of ``kind`` (a point in time: start == end), from its table;
    None when nothing is selected."""
    m = model
    if row < 0:
        return None
    if kind == "slice":
        return int(m.slices.ts[row]), int(m.slices.ts[row]) + int(m.slices.dur[row])
    if kind in ("async", "cpu", "state"):
        table = {"async": lambda: m.async_spans, "cpu": lambda: m.sched.cpu_slices,
                 "state": lambda: m.sched.thread_states}[kind]()  # fmt: skip
        return int(table.start[row]), int(table.end[row])
    if kind == "counter":
        d = counter_details(m, row)
        return int(d["ts_ns"]), int(d["ts_ns"]) + int(d["duration_ns"])
    if kind == "crash":
        ts = m.logs.report_marks()[0]
        return int(ts[row]), int(ts[row])
    ts = m.instants.ts if kind == "instant" else m.logs.ts
    return int(ts[row]), int(ts[row])


def lane_key_of(model: TraceModel, kind: str, row: int) -> tuple[tuple | None, float]:
    """(key of the lane that draws row ``row`` of ``kind``, the row within it: depth, async lane). The key
    is None for CPU slices and thread states: their lane is the one whose rows hold ``row``."""
    m = model
    if kind == "slice":
        return ("thread", int(m.slices.thread[row])), float(m.slices.depth[row])
    if kind == "async":
        return ("async", int(m.async_spans.pid[row])), float(m.async_spans.lane[row])
    if kind == "counter":
        return ("counter", row >> COUNTER_SAMPLE_BITS), 0.0
    if kind == "log":
        return ("logs", int(m.logs.pid[row])), 0.0
    if kind == "crash":  # a crash report's mark: on its thread's track
        return ("thread", int(m.logs.report_marks()[1][row])), 0.0
    if kind == "instant":
        scope = int(m.instants.scope[row])
        key = (("instants", GLOBAL_GROUP) if scope == SCOPE_GLOBAL else ("instants", int(m.instants.pid[row]))
               if scope == SCOPE_PROCESS else ("thread", int(m.instants.thread[row])))  # fmt: skip
        return key, 0.0
    return None, 0.0


def fit_range(span: tuple[int, int]) -> tuple[int, int]:
    """What F shows for a selection's span: it with a tenth on each side; a point in time gets 10 us."""
    start, end = span
    dur = max(end - start, 10_000 if end == start else 1)
    if end == start:
        start -= dur // 2
    return start - dur // 10, start + dur + dur // 10


def zoomed(x0: float, x1: float, factor: float, anchor: float | None) -> tuple[float, float]:
    """The view range [x0, x1] scaled by ``factor`` keeping ``anchor`` in place (the centre when None or
    outside the range)."""
    if anchor is None or not x0 <= anchor <= x1:
        anchor = (x0 + x1) / 2
    return anchor - (anchor - x0) * factor, anchor + (x1 - anchor) * factor


def centred(x0: float, x1: float, mid: float) -> tuple[float, float]:
    """The view range [x0, x1] moved so that ``mid`` is in its middle, keeping the zoom."""
    half = (x1 - x0) / 2
    return mid - half, mid + half


def nearest_edge(model: TraceModel, track: ThreadTrack, t: int, tol_s: float) -> int | None:
    """The slice start or end of ``track`` nearest ``t`` (ns) within ``tol_s`` seconds, or None: what a measure
    snaps to. In integers from the trace start: a float of an absolute time hours (or 2**62 ns) after boot
    is off by up to a microsecond."""
    s = model.slices
    best, best_d = None, tol_s
    for rows in track.by_depth:
        i = int(np.searchsorted(s.ts[rows], t))
        for j in (i - 1, i):
            if 0 <= j < len(rows):
                r = int(rows[j])
                for edge in (int(s.ts[r]), int(s.ts[r]) + int(s.dur[r])):
                    d = abs(edge - t) / 1e9
                    if d < best_d:
                        best, best_d = edge, d
    return best


@dataclass
class SearchState:
    """The search's hits (every kind, in time order) and the one the user stepped to (-1: none yet)."""

    model: TraceModel
    text: str = ""
    hits: SearchHits = field(init=False)
    index: int = -1

    def __post_init__(self) -> None:
        self.hits = search_all(self.model, self.text)

    def set_text(self, text: str) -> None:
        self.set_hits(text, search_all(self.model, text))

    def set_hits(self, text: str, hits: SearchHits) -> None:
        """``hits``: :func:`search_all` of ``text``, made elsewhere (a large trace's, in a background thread)."""
        self.text = text
        self.hits = hits
        self.index = -1

    def step(self, direction: int, mid_ns: int) -> tuple[str, int] | None:
        """Move to the next (1) or previous (-1) hit; the first step goes to the first hit at or after
        ``mid_ns`` (the middle of the view; before it, going back). Returns (kind, row), None without hits."""
        if not len(self.hits):
            return None
        if self.index < 0:
            k = int(np.searchsorted(self.hits.ts, mid_ns))
            self.index = (k if direction > 0 else k - 1) % len(self.hits)
        else:
            self.index = (self.index + direction) % len(self.hits)
        return KINDS[int(self.hits.kind[self.index])], int(self.hits.row[self.index])

    def status(self) -> str:
        """The count shown beside the box: "N matches" after typing, "i of N" after a step; "N+ matches,
        indexing arguments…" while the hits leave the slices' argument matches out (their index is built)."""
        more, note = ("", "") if self.hits.complete else ("+", ", indexing arguments…")
        if self.index >= 0:
            return f"{self.index + 1} of {len(self.hits)}{more}{note}"
        return f"{len(self.hits)}{more} matches{note}" if self.text.strip() else ""


@dataclass
class ViewState:
    """The selection (kind, row), the measured span and the area selection's lane keys of one timeline."""

    model: TraceModel
    selection: tuple[str, int] = ("", -1)
    measured: tuple[int, int] | None = None
    area_keys: list[tuple] = field(default_factory=list)

    def select(self, kind: str, row: int) -> None:
        self.selection = (kind, row) if row >= 0 else ("", -1)

    @property
    def selected_slice(self) -> int:
        """The selected thread slice's row, -1 when the selection is something else (or nothing)."""
        kind, row = self.selection
        return row if kind == "slice" else -1

    def span(self) -> tuple[int, int] | None:
        return selection_span(self.model, *self.selection)
