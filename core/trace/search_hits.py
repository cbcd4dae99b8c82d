"""The timeline's search over every kind of thing a trace shows, as Perfetto's omnibox finds them.

Thread slices (name, category, argument names and string values: :func:`fxscope.core.trace.query.search`), async
spans and instant events (name or category), counters (by series name: one hit per series, at its first
sample) and log records (message text as the Logs tab shows it, without terminal escapes). Like the slice search, a text test runs once per distinct string
id and spreads to the rows with one gather; the hits of all kinds come back in time order as columns.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from fxscope.core.trace.details import counter_row
from fxscope.core.trace.log_filter import strip_ansi
from fxscope.core.trace.query import search

if TYPE_CHECKING:
    from fxscope.core.trace.model import TraceModel

#: the kinds of :attr:`SearchHits.kind`, by code (the timeline's selection kinds)
KINDS = ("slice", "async", "instant", "counter", "log")


@dataclass
class SearchHits:
    """Matches in time order: ``kind`` (index into :data:`KINDS`), ``row`` (in that kind's table; a
    counter hit is a :func:`~fxscope.core.trace.details.counter_row`) and ``ts`` (ns)."""

    kind: np.ndarray  # uint8
    row: np.ndarray  # int64
    ts: np.ndarray  # int64

    def __len__(self) -> int:
        return len(self.row)

    def rows_of(self, kind: str) -> np.ndarray:
        """The rows of one kind, ascending."""
        return np.sort(self.row[self.kind == KINDS.index(kind)])


def _matching_strings(model: TraceModel, ids: np.ndarray, needle: str, shown=lambda text: text) -> np.ndarray:
    """A bool table over string ids: True for the ids among ``ids`` whose text (as ``shown`` makes it
    readable) contains ``needle``."""
    strings = model.strings
    match = np.zeros(max(len(strings), 1), bool)
    ids = np.unique(np.asarray(ids, np.int64))
    ids = ids[(ids >= 0) & (ids < len(strings))]
    if len(ids):
        hit = np.fromiter((needle in shown(strings[i]).casefold() for i in ids.tolist()), bool, len(ids))
        match[ids[hit]] = True
    return match


def _by_string(model: TraceModel, needle: str, *columns, shown=lambda text: text) -> np.ndarray:
    """Rows where any of the string-id ``columns`` names a string containing ``needle``."""
    out = np.zeros(len(columns[0]) if columns else 0, bool)
    for col in columns:
        ids = np.asarray(col, np.int64)
        if not len(ids):
            continue
        match = _matching_strings(model, ids, needle, shown)
        out |= match[np.clip(ids, 0, len(match) - 1)] & (ids >= 0)
    return np.flatnonzero(out)


def search_all(model: TraceModel, text: str) -> SearchHits:
    """Everything whose name, category or text contains ``text`` (case-insensitive), in time order."""
    needle = text.strip().casefold()
    kinds: list[np.ndarray] = []
    rows: list[np.ndarray] = []
    times: list[np.ndarray] = []

    def add(kind: str, r: np.ndarray, ts: np.ndarray) -> None:
        kinds.append(np.full(len(r), KINDS.index(kind), np.uint8))
        rows.append(np.asarray(r, np.int64))
        times.append(np.asarray(ts, np.int64))

    if needle:
        s = model.slices
        slice_rows = search(model, needle)
        by_category = _by_string(model, needle, s.category) if len(s) else np.zeros(0, np.int64)
        slice_rows = np.union1d(slice_rows, by_category).astype(np.int64)
        add("slice", slice_rows, s.ts[slice_rows])
        a = model.async_spans
        if len(a.start):
            r = _by_string(model, needle, a.name, a.category)
            add("async", r, a.start[r])
        inst = model.instants
        if len(inst):
            r = _by_string(model, needle, inst.name, inst.category)
            add("instant", r, inst.ts[r])
        for index, series in enumerate(model.counters.series):
            if len(series.ts) and needle in series.label.casefold():
                add("counter", np.array([counter_row(index, 0)]), series.ts[:1])
        logs = model.logs
        if len(logs):
            r = _by_string(model, needle, logs.message, shown=strip_ansi)  # as the Logs tab shows them
            add("log", r, logs.ts[r])
    if not rows:
        z = np.zeros(0, np.int64)
        return SearchHits(z.astype(np.uint8), z, z)
    kind, row, ts = np.concatenate(kinds), np.concatenate(rows), np.concatenate(times)
    order = np.lexsort((row, kind, ts))
    return SearchHits(kind[order], row[order], ts[order])
