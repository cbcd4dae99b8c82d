"""The search's argument index: which slices use which strings through their arguments (as an argument's name or
string value): :class:`ArgStringIndex`, read by :func:`fxscope.core.trace.query.slice_matches`.

It is built in the window's background after the first frame, beside what the window already holds, so its
build's temporaries are the window's peak memory (issue 18: at most 1.5x the file). Every temporary is bounded
by a batch of :data:`INDEX_BATCH` slices, never a multiple of the slice count: the slices are read a batch of
rows at a time (their events sorted within the batch for the argument reader), and each batch keeps its pairs
(string id, slice row in the batch) as they were read, 4 bytes a pair as a rule (a 16-bit string id and a
16-bit row). That is the index: a search looks up each batch's string ids in its table of matching strings
(one gather a batch) and finds the marked pairs' slices from the batch's first row.

The index was a string's slices, by string (its build sorted each batch's pairs, deduplicated them, then
scattered them by string id, a counting sort): a search read only its strings' slices, but at 100M events
the sort and the scatter were a third of the build, which a search typed after the load waits for, and a
search's gather of every pair costs ~0.1 s there. Unsorted, a slice that uses a string twice has two pairs
(the search marks its rows in a mask).

A batch's argument strings are read and resolved in one compiled pass over each slice's record
(:func:`~fxscope.formats.fxt.arg_columns.string_arg_sids`), on :data:`READERS` worker threads, a batch each,
ahead of this thread (:mod:`fxscope.core.computed_ahead`), which interns the inline strings (on one thread:
the table grows) and keeps the pairs. Measured on the benchmark's traces (standalone, one process, the model
loaded; wall time): at 30M events 0.54 s (the pairs sorted and scattered, the refs read on one worker and
resolved here) -> 0.34 s (unsorted) -> 0.19-0.25 s (resolved in the pass, two readers); at 100M 1.73 -> 1.17-1.33
-> 0.71-0.84 s; in the window at 100M a search typed once the load is done counted every match after 3.12 ->
1.91 s (0.66-0.70 s of it the search without the arguments, which holds the build). There the build takes
~1.0 s (1.1 s with its batches joined into one array each), ~0.25 s more than standalone: the window's load
dropped the file's pages from the process, and mapping them again is most of its ~57,000 page faults.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from fxscope.core.computed_ahead import computed_ahead
from fxscope.core.trace.slices import SliceTable
from fxscope.formats.fxt.arg_columns import (
    StringArgRefs,
    StringArgSids,
    resolve_special_sids,
    string_arg_ids,
    string_arg_refs,
    string_arg_sids,
)
from fxscope.formats.fxt.columns import FxtColumns


def _no_check() -> None:
    """A ``check`` that never cancels."""


@dataclass
class ArgStringIndex:
    """Which strings the slices use through their arguments, a batch of slices at a time: pair ``k`` of batch
    ``b`` says that the slice of row ``row_start[b] + row[b][k]`` has an argument whose name or string value is
    string ``sid[b][k]`` (:func:`fxscope.core.trace.query.argument_matches` finds the slices of the strings a
    search matches). The batches stay apart as they were read: joined, their pairs were copied once more into fresh
    pages (at 100M events 2 x 33 MB, ~16,000 page faults of the build, and those twice at its peak)."""

    sid: list[np.ndarray]  # per batch: uint16 (a table of at most 2**16 strings then) or int32 string ids
    row: list[np.ndarray]  # per batch: uint16 (batches of at most 2**16 slices) or int32, the slice's row in it
    row_start: np.ndarray  # int64, each batch's first slice row
    arg_ids: np.ndarray  # int64, the distinct string ids used by arguments, ascending

    @property
    def pairs(self) -> int:
        """The (string, slice) pairs held, every batch's."""
        return sum(len(x) for x in self.sid)


#: slices whose arguments are read together while building the search index (their events and order, 16 bytes
#: a slice, and their strings' outputs, ~50 bytes a string at most, are a batch's temporaries)
INDEX_BATCH = 1 << 16
#: string ids and rows below this are held in 16 bits
NARROW = 1 << 16
#: the threads that read the batches' arguments (the build's own thread interns what they leave: inline
#: strings); two on this 2-core machine: the reading, resolution included, is nearly all the build
READERS = 2


def _grown(a: np.ndarray, n: int) -> np.ndarray:
    """``a`` with at least ``n`` entries (zero-filled past its end): the string table grows while the index
    is built (inline strings are interned into it)."""
    if len(a) >= n:
        return a
    out = np.zeros(max(n, 2 * len(a)), a.dtype)
    out[: len(a)] = a
    return out


def _batch_read(s: SliceTable, cols: FxtColumns, a: int, b: int) -> tuple[np.ndarray, StringArgSids | StringArgRefs]:
    """The strings the arguments of slice rows ``[a, b)`` use, resolved where the compiled pass can
    (:func:`string_arg_sids`), else their refs (:func:`string_arg_refs`), and the order of their events (the
    results' ``act`` are positions in it): reads only, on the build's worker threads."""
    ev = np.asarray(s.event[a:b], np.int64)
    order = np.argsort(ev, kind="stable")  # the argument reader wants ascending event rows
    ev = ev[order]
    sids = string_arg_sids(cols, ev)
    return order, (sids if sids is not None else string_arg_refs(cols, ev))


def _batch_pairs(cols: FxtColumns, strings: list[str], order: np.ndarray, read: StringArgSids | StringArgRefs,
                 ) -> tuple[np.ndarray, np.ndarray]:  # fmt: skip
    """The (string id, slice row - ``a``) pairs of a batch of slice rows ``[a, b)`` read by :func:`_batch_read`,
    unresolved strings left out (uint16 columns where they fit, else int32). A slice that uses a string twice
    has two pairs: a search marks its rows in a mask. Inline strings are interned into ``strings`` (on the
    build's own thread)."""
    if isinstance(read, StringArgSids):
        sid, srow = resolve_special_sids(cols, read), order[read.act]
    else:
        args = string_arg_ids(cols, read)
        sid, srow = args.sid, order[args.record]
        del args
    keep = sid >= 0
    if not keep.all():
        sid, srow = sid[keep], srow[keep]
    sid_type = np.uint16 if len(strings) <= NARROW else np.int32
    return sid.astype(sid_type), srow.astype(np.uint16 if len(order) <= NARROW else np.int32)


def build_arg_string_index(
    s: SliceTable, cols: FxtColumns, strings: list[str], check: Callable[[], None] = _no_check
) -> ArgStringIndex:
    """Read every slice's argument strings (:func:`~fxscope.formats.fxt.arg_columns.string_arg_sids`), a batch of
    slices at a time, into an :class:`ArgStringIndex` (see the module docstring); ``check()`` is called between
    the batches and may raise to cancel the build.

    Inline strings (argument names or values written in the record rather than as string refs) are
    interned into the trace's string table here, one Python string per distinct text, like every other
    bulk argument reader; string refs that do not resolve (-1) are left out.
    """
    n = len(s.event)
    used = np.zeros(len(strings), bool)  # the string ids the arguments use
    sids: list[np.ndarray] = []
    rows: list[np.ndarray] = []
    row_start: list[int] = []
    starts = range(0, n, INDEX_BATCH)
    # a batch of slices at a time (bounded temporaries), the next batches' argument strings read and resolved
    # on the reader threads meanwhile (what they leave, the inline strings, interned here, in batch order)
    read = computed_ahead(lambda a: _batch_read(s, cols, a, min(n, a + INDEX_BATCH)), starts,
                          "fxscope-arg-index", check, workers=READERS)  # fmt: skip
    for a, (order, batch) in zip(starts, read, strict=True):
        check()
        sid, srow = _batch_pairs(cols, strings, order, batch)
        del order, batch
        if not len(sid):
            continue
        used = _grown(used, len(strings))
        used[sid] = True
        sids.append(sid)
        rows.append(srow)
        row_start.append(a)
    check()
    return ArgStringIndex(sid=sids, row=rows, row_start=np.asarray(row_start, np.int64),
                          arg_ids=np.flatnonzero(used).astype(np.int64))  # fmt: skip
