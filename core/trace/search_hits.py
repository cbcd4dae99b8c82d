"""The timeline's search over every kind of thing a trace shows, as Perfetto's omnibox finds them.

Thread slices (name, category, argument names and string values: :func:`fxscope.core.trace.query.search`), async
spans and instant events (name or category), counters (by series name: one hit per series, at its first
sample) and log records (message text as the Logs tab shows it, without terminal escapes). Like the slice search,
a text test runs once per distinct string id and spreads to the rows with one gather
(:func:`~fxscope.core.trace.query.column_matches`); the hits of all kinds come back in time order as columns.

A search can leave the slices' argument matches out (``arguments=False``: the argument index is still being
built, 3-12 s at 30M-100M events) and say so (:attr:`SearchHits.complete`): the window shows the rest at once
and searches again once the index is built. ``check()`` is called between the steps (a new keystroke or Esc
cancels a running search through it).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np

from fxscope.core.trace.details import counter_row
from fxscope.core.trace.log_filter import strip_ansi
from fxscope.core.trace.query import argument_matches, columns_matches, slice_matches, string_matches
from fxscope.core.trace.query_pages import whole_trace_query

if TYPE_CHECKING:
    from fxscope.core.trace.model import TraceModel

#: the kinds of :attr:`SearchHits.kind`, by code (the timeline's selection kinds)
KINDS = ("slice", "async", "instant", "counter", "log")


def _no_check() -> None:
    """A ``check`` that never cancels."""


@dataclass
class SearchHits:
    """Matches in time order: ``kind`` (index into :data:`KINDS`), ``row`` (in that kind's table; a
    counter hit is a :func:`~fxscope.core.trace.details.counter_row`) and ``ts`` (ns). ``complete`` is
    False when the slices' argument matches were left out (their index was not built yet). ``masks``: per
    kind with hits among the slices, async spans, instants and logs, the bool mask over its table that the
    search made (:func:`search_all`; what the tracks outline matches with, not made again from the rows)."""

    kind: np.ndarray  # uint8
    row: np.ndarray  # int64
    ts: np.ndarray  # int64
    complete: bool = True
    masks: dict[str, np.ndarray] = field(default_factory=dict)

    def __len__(self) -> int:
        return len(self.row)

    def rows_of(self, kind: str) -> np.ndarray:
        """The rows of one kind, ascending."""
        return np.sort(self.kind_rows(kind))

    def kind_rows(self, kind: str) -> np.ndarray:
        """The rows of one kind in the hits' (time) order: what a mask over the kind's table is set from,
        without the sort of :meth:`rows_of` (~0.05 s for 2M hits)."""
        return self.row[self.kind == KINDS.index(kind)]


def _log_matches(model: TraceModel, ids: np.ndarray, needle: str) -> np.ndarray:
    """A bool table over string ids (with :func:`string_matches`' sentinel): True for the log messages among
    ``ids`` whose text as the Logs tab shows it (terminal escapes stripped) contains ``needle``."""
    strings = model.strings
    match = np.zeros(len(strings) + 1, bool)
    ids = np.unique(np.asarray(ids, np.int64))
    ids = ids[(ids >= 0) & (ids < len(strings))]
    if len(ids):
        hit = np.fromiter((needle in strip_ansi(strings[i]).casefold() for i in ids.tolist()), bool, len(ids))
        match[ids[hit]] = True
    return match


def _matches(table: np.ndarray, check: Callable[[], None], *columns) -> np.ndarray:
    """A bool mask over the rows: where any of the string-id ``columns`` names a string that ``table`` marks
    (a table's names and categories in one pass: :func:`~fxscope.core.trace.query.columns_matches`)."""
    return columns_matches(table, columns, check)


@whole_trace_query
def search_all(model: TraceModel, text: str, check: Callable[[], None] = _no_check, arguments: bool = True,
               without_arguments: SearchHits | None = None) -> SearchHits:  # fmt: skip
    """Everything whose name, category or text contains ``text`` (case-insensitive), in time order; without
    ``arguments``, the slices' argument names and values are not searched (``complete`` says so).
    ``check()`` between the steps may raise to cancel the search.

    ``without_arguments``: the hits of this ``text`` found without the arguments (``complete`` False), once the
    argument index is built: when the arguments match no slice those hits do not already hold (a search by a
    name, as a rule), they come back complete, no other kind searched again (at 100M events 0.3 s saved
    between the count and the last matches); else everything is searched."""
    needle = text.strip().casefold()
    if without_arguments is not None and arguments and needle and len(model.slices):
        found = without_arguments.masks.get("slice")
        extra = argument_matches(model, needle, check)
        if (found is None and not len(extra)) or (found is not None and found[extra].all()):
            w = without_arguments
            return SearchHits(w.kind, w.row, w.ts, complete=True, masks=w.masks)
    kinds: list[np.ndarray] = []
    rows: list[np.ndarray] = []
    times: list[np.ndarray] = []
    masks: dict[str, np.ndarray] = {}

    def add(kind: str, r: np.ndarray, ts: np.ndarray, mask: np.ndarray | None = None) -> None:
        kinds.append(np.full(len(r), KINDS.index(kind), np.uint8))
        rows.append(np.asarray(r, np.int64))
        times.append(np.asarray(ts, np.int64))
        if mask is not None and len(r):
            masks[kind] = mask

    def add_matches(kind: str, mask: np.ndarray, ts) -> None:
        r = np.flatnonzero(mask)
        add(kind, r, ts[r], mask)

    if needle:
        s = model.slices
        if len(s):
            add_matches("slice", slice_matches(model, needle, check, arguments, categories=True), s.ts)
        check()
        table = string_matches(model, needle)  # (after the slices': their argument index may add strings)
        a = model.async_spans
        if len(a.start):
            add_matches("async", _matches(table, check, a.name, a.category), a.start)
        inst = model.instants
        if len(inst):
            add_matches("instant", _matches(table, check, inst.name, inst.category), inst.ts)
        for index, series in enumerate(model.counters.series):
            if len(series.ts) and needle in series.label.casefold():
                add("counter", np.array([counter_row(index, 0)]), series.ts[:1])
        logs = model.logs
        if len(logs):
            check()
            # (as the Logs tab shows them)
            add_matches("log", _matches(_log_matches(model, logs.message, needle), check, logs.message), logs.ts)
    check()
    if not rows:
        z = np.zeros(0, np.int64)
        return SearchHits(z.astype(np.uint8), z, z, complete=arguments)
    kind, row, ts = np.concatenate(kinds), np.concatenate(rows), np.concatenate(times)
    del kinds[:], rows[:], times[:]  # (their blocks freed now: the sort and the columns below reuse them)
    # the parts come by kind, each by row: a stable sort by time orders by (time, kind, row)
    order = np.argsort(ts, kind="stable")
    # one column at a time, each freeing its unsorted self before the next is made (the allocator hands the
    # next the block just freed): at 100M events, 2.1M hits, the first search after a load faulted in 39k
    # fresh pages with every temporary alive until the return, 29-31k so (the masks and the per-kind parts
    # are most of the rest)
    row = row[order]
    ts = ts[order]
    kind = kind[order]
    return SearchHits(kind, row, ts, complete=arguments, masks=masks)
