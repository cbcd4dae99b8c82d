"""The search's argument index: for each string id used by a slice argument (as its name or string value),
the slices that use it (:class:`ArgStringIndex`, read by :func:`fxscope.core.trace.query.slice_matches`).

It is built in the window's background after the first frame, beside what the window already holds, so its
build's temporaries are the window's peak memory (issue 18: at most 1.5x the file). Every temporary is bounded
by a batch of :data:`INDEX_BATCH` slices, never a multiple of the slice count: the slices are read a batch of
rows at a time (their events sorted within the batch for the argument reader), each batch keeps its pairs
(string id, slice row) deduplicated and by row, and a counting sort by string id (ids are
dense: a count per id gives each string's range) scatters them into the index, batch by batch (a pair is held
as 4 bytes until then: a 16-bit string id and the slice's 16-bit row in its batch, as a rule). The batches
come by row and the scatter is stable, so each string's rows are ascending. The index itself is 4 bytes a
pair (int32 rows) and 8 bytes a distinct argument string.

Measured on the 10M-event benchmark trace (2.5M slices, 1.7M pairs; RssAnon sampled every ms, three
alternating runs each): the build's peak above the model was +100-105 MB with the former build (a stable
argsort of every slice's event, its int64 order, each slice's argument count read in int64 temporaries, then
a lexsort of all pairs and sorted copies), +21 MB with this one (the index 6.7 MB, its pairs 6.7 MB), and its
CPU time 0.50-0.58 -> 0.35-0.48 s; at 30M events +272-314 -> +49 MB, 1.58-1.59 -> 1.07-1.38 s. (Batches of 2**17 slices: +33 MB; 2**15: as 2**16, no faster.)

A batch's arguments are read in one compiled pass over each slice's record
(:func:`~fxscope.formats.fxt.arg_columns.string_arg_refs`: the records were read three times, their headers for
the argument counts, again for the blocks, then the arguments), on a worker thread one batch ahead of the
strings' resolution, sort and count here (:mod:`fxscope.core.computed_ahead`; the strings must be interned on
one thread). The build at 30M events 0.96 -> 0.33 s, at 100M 2.9 -> 1.15 s (the benchmark's load child, idle
machine), its temporaries two batches' worth.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from fxscope.core.computed_ahead import computed_ahead
from fxscope.core.trace.slices import SliceTable
from fxscope.formats.fxt.arg_columns import StringArgRefs, string_arg_ids, string_arg_refs
from fxscope.formats.fxt.columns import FxtColumns


@dataclass
class ArgStringIndex:
    """The strings a search tests, and which slices use them through their arguments.

    ``ids`` are the string ids of the slices' names and of their arguments' names and string values
    (``folded``: their texts case-folded, tested once per search); the slices that use string
    ``arg_ids[k]`` as an argument name or string value are ``rows[ptr[k]:ptr[k + 1]]``.
    """

    ids: np.ndarray  # int64 string ids to test, ascending
    folded: list[str]  # their texts, case-folded
    arg_ids: np.ndarray  # int64 string ids used by arguments, ascending
    ptr: np.ndarray  # int64, len(arg_ids) + 1
    rows: np.ndarray  # int32 slice rows, ascending within each string


#: slices whose arguments are read together while building the search index (their argument columns, ~40
#: bytes an argument, and each slice's event and argument count, are the build's largest temporaries)
INDEX_BATCH = 1 << 16
#: string ids and rows in a batch below this are held in 16 bits until the scatter (numpy sorts them by radix)
NARROW = 1 << 16


def _no_check() -> None:
    """A ``check`` that never cancels."""


def _grown(a: np.ndarray, n: int) -> np.ndarray:
    """``a`` with at least ``n`` entries (zero-filled past its end): the string table grows while the index
    is built (inline strings are interned into it)."""
    if len(a) >= n:
        return a
    out = np.zeros(max(n, 2 * len(a)), a.dtype)
    out[: len(a)] = a
    return out


def _batch_refs(s: SliceTable, cols: FxtColumns, a: int, b: int) -> tuple[np.ndarray, StringArgRefs]:
    """The argument string refs of slice rows ``[a, b)`` (:func:`string_arg_refs`) and the order of their
    events (the refs' ``act`` are positions in it): reads only, on the build's worker thread."""
    ev = np.asarray(s.event[a:b], np.int64)
    order = np.argsort(ev, kind="stable")  # the argument reader wants ascending event rows
    return order, string_arg_refs(cols, ev[order])


def _batch_pairs(cols: FxtColumns, strings: list[str], order: np.ndarray, refs: StringArgRefs,
                 ) -> tuple[np.ndarray, np.ndarray] | None:  # fmt: skip
    """The distinct (string id, slice row - ``a``) pairs of a batch of slice rows ``[a, b)`` read by
    :func:`_batch_refs`, by row then string id (uint16 columns where they fit, else int32); None when none of
    those slices has an argument. Inline strings are interned into ``strings`` (on the build's own thread)."""
    args = string_arg_ids(cols, refs)
    sid, srow = args.sid, order[args.record]  # (rows relative to a)
    del args
    keep = sid >= 0
    if not keep.all():
        sid, srow = sid[keep], srow[keep]
    if not len(sid):
        return None
    m = max(len(strings), int(sid.max()) + 1)
    key = srow * m + sid
    del sid, srow
    key.sort()  # by row then string (numpy's sort; np.unique would hash first, 5x slower here)
    if len(key) > 1:
        new = np.empty(len(key), bool)  # one pair per (slice, string)
        new[0] = True
        np.not_equal(key[1:], key[:-1], out=new[1:])
        if not new.all():
            key = key[new]
        del new
    # held until the scatter: 2 bytes a string id below 2**16 (a trace's strings, as a rule) and 2 bytes a row
    # in its batch of at most 2**16 slices, else 4 each
    sid_type = np.uint16 if m <= NARROW else np.int32
    return (key % m).astype(sid_type), (key // m).astype(np.uint16 if len(order) <= NARROW else np.int32)


def _stable_order(ids: np.ndarray, n_ids: int) -> np.ndarray:
    """A stable order grouping equal non-negative ``ids`` (< ``n_ids``), ascending: numpy sorts keys of 16
    bits by radix."""
    if n_ids <= NARROW:
        return np.argsort(ids.astype(np.uint16), kind="stable")
    return np.argsort(ids, kind="stable")


def build_arg_string_index(
    s: SliceTable, cols: FxtColumns, strings: list[str], check: Callable[[], None] = _no_check
) -> ArgStringIndex:
    """Read every slice's arguments (:func:`~fxscope.formats.fxt.arg_columns.event_arg_columns`), a batch of
    slices at a time, into an :class:`ArgStringIndex` (see the module docstring); ``check()`` is called between
    the batches and may raise to cancel the build.

    Inline strings (argument names or values written in the record rather than as string refs) are
    interned into the trace's string table here, one Python string per distinct text, like every other
    bulk argument reader; string refs that do not resolve (-1) are left out.
    """
    n = len(s.event)
    counts = np.zeros(len(strings), np.int64)  # pairs per string id
    named = np.zeros(len(strings), bool)  # the ids of the slices' names
    batches: list[tuple[int, np.ndarray, np.ndarray]] = []
    starts = range(0, n, INDEX_BATCH)
    # a batch of slices at a time (bounded temporaries), the next batch's arguments read on a worker thread
    # meanwhile (the strings are resolved and interned here, in batch order)
    read = computed_ahead(lambda a: _batch_refs(s, cols, a, min(n, a + INDEX_BATCH)), starts,
                          "fxscope-arg-index", check)  # fmt: skip
    for a, (order, refs) in zip(starts, read, strict=True):
        check()
        b = min(n, a + INDEX_BATCH)
        names = np.asarray(s.name[a:b], np.int64)
        names = names[names >= 0]
        if len(names):
            named = _grown(named, int(names.max()) + 1)
            named[names] = True
        del names
        pairs = _batch_pairs(cols, strings, order, refs)
        del order, refs
        if pairs is None:
            continue
        per = np.bincount(pairs[0])
        counts = _grown(counts, len(per))
        counts[: len(per)] += per
        batches.append((a, *pairs))
    check()
    n_ids = len(counts)
    start = np.zeros(n_ids + 1, np.int64)
    np.cumsum(counts, out=start[1:])
    total = int(start[-1])
    rows = np.empty(total, np.int32)
    cursor = start[:-1].copy()  # where each string's next row goes
    batches.reverse()
    while batches:  # the counting sort's scatter, in batch (= row) order; each batch freed once placed
        a, sid, srow = batches.pop()
        order = _stable_order(sid, n_ids)
        sid, srow = sid[order].astype(np.int64), srow[order]
        del order
        first = np.flatnonzero(np.r_[True, sid[1:] != sid[:-1]])
        size = np.diff(np.r_[first, len(sid)])
        rank = np.arange(len(sid)) - np.repeat(first, size)  # position among the batch's pairs of its string
        rows[cursor[sid] + rank] = srow.astype(np.int32) + a
        cursor[sid[first]] += size
        del sid, srow, first, size, rank
    arg_ids = np.flatnonzero(counts)
    ptr = np.append(start[arg_ids], total)
    name_ids = np.flatnonzero(named)
    ids = np.union1d(name_ids, arg_ids).astype(np.int64)
    return ArgStringIndex(
        ids=ids,
        folded=[strings[i].casefold() for i in ids.tolist()],
        arg_ids=arg_ids.astype(np.int64),
        ptr=ptr,
        rows=rows,
    )
