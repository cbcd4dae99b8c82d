"""Queries over a model's slices: the area-selection summary and the search.

Both work per distinct string id, never per slice in Python: a text test runs once per distinct string,
then spreads to the slices with one gather; the summary groups with a sort and ``reduceat``.

The search matches what Perfetto's omnibox matches for slices: the slice's name, and its arguments' names
(keys) and string values. The arguments are read once, on the first search, into :class:`ArgStringIndex`
(each slice's argument strings as (string id, row) pairs: 4 bytes per string, as a rule).

Area summary numbers, and why (Perfetto's area selection is what users compare with): Perfetto sums the
*full* durations of the slices that overlap the selected area (``sum(dur)``, its "Wall duration"), and
likewise their self times. fxscope reports that as ``wall_total`` and ``self_total``, plus ``total``, the
wall time clipped to the window, which is what the window actually contains (so totals of a window
split in two add up). ``avg``/``min``/``max`` describe the slices themselves: full durations.
"""

from __future__ import annotations

import threading
import weakref
from collections.abc import Callable, Iterable
from typing import Protocol

import numpy as np

from fxscope.core.trace import compiled
from fxscope.core.trace.arg_string_index import ArgStringIndex, build_arg_string_index  # noqa: F401 (re-exported)
from fxscope.core.trace.gathered import Gathered
from fxscope.core.trace.slices import SliceTable
from fxscope.formats.fxt.coded_column import CodedColumn
from fxscope.formats.fxt.frequent_codes import FrequentCodedColumn


class SliceSource(Protocol):
    """What the queries read of a trace (a :class:`fxscope.core.trace.model.TraceModel`): a protocol, not the model
    class, because the model imports this module to build its search index."""

    slices: SliceTable
    strings: list[str]

    @property
    def search_index(self) -> ArgStringIndex: ...


def _no_check() -> None:
    """A ``check`` that never cancels."""


def _thread_rows(thread_col: np.ndarray, threads: Iterable[int] | None) -> np.ndarray:
    """Rows of the slices of ``threads`` (all rows for None); slices are sorted by thread."""
    if threads is None:
        return np.arange(len(thread_col))
    wanted = np.unique(np.fromiter((int(t) for t in threads), np.int64))
    lo = np.searchsorted(thread_col, wanted, "left")
    hi = np.searchsorted(thread_col, wanted, "right")
    if len(wanted) == 0:
        return np.zeros(0, np.int64)
    return np.concatenate([np.arange(a, b) for a, b in zip(lo.tolist(), hi.tolist(), strict=True)])


def _group_order(ids: np.ndarray) -> np.ndarray:
    """A stable order grouping equal ``ids`` (string ids, >= -1), ascending. The ids are renumbered densely
    first: a few thousand distinct names fit 16 bits, and numpy sorts 16-bit keys by radix, ~10x faster
    than the comparison sort of the raw int32 ids (60 ms for the 2.5M slices of a 10M-event trace)."""
    ids = np.asarray(ids, np.int64)
    if not len(ids):
        return np.zeros(0, np.int64)
    shifted = ids + 1  # -1 (unresolved) -> 0
    used = np.bincount(shifted) > 0
    dense = np.cumsum(used) - 1
    if int(dense[-1]) < (1 << 16):
        return np.argsort(dense[shifted].astype(np.uint16), kind="stable")
    return np.argsort(ids, kind="stable")


def aggregate(model: SliceSource, t0: int, t1: int, threads: Iterable[int] | None = None) -> list[dict]:
    """Per slice name, over the slices of ``threads`` (reader thread indexes; None = all) overlapping
    [t0, t1): ``name``, ``name_id``, ``count``, ``total`` (wall time inside the window), ``wall_total``
    and ``self_total`` (full durations, as Perfetto sums them), ``avg``, ``min``, ``max`` (full
    durations, ns). Sorted by ``total``, largest first, then by name.
    """
    s = model.slices
    rows = _thread_rows(s.thread, threads)
    # the tracks of an area are often neighbours (or all of them): a contiguous run of rows is a view
    whole = len(rows) and int(rows[-1]) - int(rows[0]) + 1 == len(rows)
    pick = slice(int(rows[0]), int(rows[-1]) + 1) if whole else rows
    ts, dur = s.ts[pick], s.dur[pick]
    end = ts + dur
    # zero-length slices count when they sit inside the window
    hit = (ts < t1) & ((end > t0) | ((dur == 0) & (ts >= t0)))
    if not hit.all():
        rows, ts, dur, end = rows[hit], ts[hit], dur[hit], end[hit]
    if len(rows) == 0:
        return []
    clipped = np.minimum(end, t1) - np.maximum(ts, t0)
    names = s.name[rows]
    order = _group_order(names)
    names = names[order]
    first = np.flatnonzero(np.r_[True, names[1:] != names[:-1]])
    count = np.diff(np.r_[first, len(names)])
    total = np.add.reduceat(clipped[order], first)  # int64 sums: exact, unlike bincount's float weights
    d = dur[order]
    wall = np.add.reduceat(d, first)
    self_total = np.add.reduceat(s.self_dur_of(rows)[order], first)
    lo, hi = np.minimum.reduceat(d, first), np.maximum.reduceat(d, first)
    strings = model.strings
    out = [
        {
            "name": strings[n] if 0 <= n < len(strings) else "<unresolved>",
            "name_id": n,
            "count": c,
            "total": t,
            "wall_total": w,
            "self_total": st,
            "avg": w / c,
            "min": a,
            "max": b,
        }
        for n, c, t, w, st, a, b in zip(
            names[first].tolist(), count.tolist(), total.tolist(), wall.tolist(), self_total.tolist(),
            lo.tolist(), hi.tolist(), strict=True,
        )
    ]  # fmt: skip
    out.sort(key=lambda r: (-r["total"], r["name"]))
    return out


def search_index(model: SliceSource) -> ArgStringIndex:
    """The model's argument-string index for :func:`search` (its ``search_index`` table, built on first use;
    the loader builds it off the UI thread, so that the first keystroke in the search box does not wait)."""
    return model.search_index


class FoldedStrings:
    """A string table's texts case-folded, kept per model and extended as the table grows (the argument
    index interns inline strings into it, possibly in another thread while a search runs): each search
    then tests every distinct string once without folding it again (a few ms for 100k strings)."""

    def __init__(self) -> None:
        self._texts: list[str] = []
        self._lock = threading.Lock()

    def upto(self, strings: list[str]) -> list[str]:
        """The folded texts of ``strings`` as it is now (the returned list may grow later, never change)."""
        with self._lock:
            n = len(strings)
            if len(self._texts) < n:
                self._texts.extend(t.casefold() for t in strings[len(self._texts) : n])
            return self._texts[:n]


_FOLDED: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
_FOLDED_LOCK = threading.Lock()


def folded_strings(model: SliceSource) -> list[str]:
    """``model.strings`` case-folded (cached per model)."""
    try:
        with _FOLDED_LOCK:
            folded = _FOLDED.setdefault(model, FoldedStrings())
    except TypeError:  # a model that cannot be weakly referenced: folded each time
        folded = FoldedStrings()
    return folded.upto(model.strings)


def string_matches(model: SliceSource, needle: str) -> np.ndarray:
    """A bool table over string ids, True where the (case-folded) text contains ``needle`` (itself folded),
    one entry longer than the string table: that last entry, False, is where :func:`column_matches` sends
    the ids that do not resolve (-1, or past the table)."""
    texts = folded_strings(model)
    table = np.zeros(len(texts) + 1, bool)
    table[: len(texts)] = np.fromiter((needle in t for t in texts), bool, len(texts))
    return table


#: rows gathered at a time by :func:`column_matches`: bounded temporaries, and a cancel check between. Small
#: enough that a batch's temporaries (numpy casts the ids to its 8-byte index type for every gather: 512 KB)
#: are reused from the allocator's free memory batch after batch: with 2M rows they were 16 MB arrays that
#: the window's other threads' trims gave back meanwhile, and in the window at 100M events the first
#: search faulted 67,000-240,000 fresh pages (8,500-18,000 at 30M). The search's CPU time is the same
#: from 16K to 2M rows a batch (0.76-0.86 s at 100M events); at 10M events 2**21 rows took the window's
#: names-only search to +60-70 MB while the argument index was built beside it, 2**18 to +18 MB
MATCH_BATCH = 1 << 16


def column_matches(table: np.ndarray, column, check: Callable[[], None] = _no_check) -> np.ndarray:
    """``table[column]`` as a bool mask over the column's rows (a string-id column, an array or a
    :class:`~fxscope.core.trace.gathered.Gathered`), ids outside ``table`` (negative, or past its sentinel
    last entry) reading False; a batch of rows at a time, ``check()`` between the batches.

    Each batch is looked up where it lies, without widening its ids: 8- and 16-bit ids (a trace's names and
    categories) through a table over every value of their type (:func:`_small_id_table`), 32-bit ids read
    unsigned (negative ones are then past the table: clipped to its sentinel). Widened to int64 first, a
    batch of 2M ids made three 16 MB temporaries (the ids, their minimum, numpy's cast of them to its index
    type) and numpy's buffered output: in the window at 100M events, with the argument index's build
    beside it, those fresh pages were ~240,000 page faults of the first search (~18,000 at 30M)."""
    n = len(column)
    compiled_out = _compiled_matches(table, column, check)
    if compiled_out is not None:
        return compiled_out
    out = np.empty(n, bool)
    small: dict[np.dtype, np.ndarray] = {}
    sentinel = len(table) - 1
    for a in range(0, n, MATCH_BATCH):
        check()
        ids = np.asarray(column[a : a + MATCH_BATCH])
        if ids.dtype.kind not in "iu":
            ids = ids.astype(np.int64)
        unsigned = ids.view(f"u{ids.dtype.itemsize}")
        # (mode "clip": no index out of range raises, so numpy writes ``out`` directly, unbuffered)
        if ids.dtype.itemsize <= 2:
            lookup = small.get(ids.dtype)
            if lookup is None:
                lookup = small[ids.dtype] = _small_id_table(table, ids.dtype)
            np.take(lookup, unsigned, out=out[a : a + MATCH_BATCH], mode="clip")
        else:
            if ids.dtype.itemsize > 4:  # (past 2**63 read as a negative index: bounded first)
                unsigned = np.minimum(unsigned, unsigned.dtype.type(sentinel))
            np.take(table, unsigned, out=out[a : a + MATCH_BATCH], mode="clip")  # (the rest: the sentinel)
    return out


#: event rows of the code column whose matches one call of the compiled loop reads, of every run together (a
#: cancel check between calls): 1 MB of codes, in the caches while each run reads its rows there (256 KB to
#: 4 MB measured alike; at 100M events 1 MB the best by a little)
MATCH_WINDOW = 1 << 20
#: windows one call of the compiled loop reads (a cancel check between calls): each call takes the
#: interpreter's lock back as it returns, which a search in a background thread waits for while the UI thread
#: runs (up to its 5 ms switch interval): a call a window was ~100 such waits at 100M events
MATCH_WINDOWS_A_CALL = 16
#: rows of the index a run of the compiled loop: a table sorted by thread then time has its rows of one thread
#: ascending, each such piece read a window at a time beside the others (a piece across two threads is read
#: all the same, its second thread's rows at once; a few thousand pieces are a few thousand reads a window)
MATCH_RUN = 1 << 13
#: a row past any window: the last call reads every row left (rows past the column then refused)
_ALL_ROWS = (1 << 63) - 1


def _compiled_matches(table: np.ndarray, column, check: Callable[[], None], column2=None) -> np.ndarray | None:
    """:func:`column_matches` of a gathered one-byte code column (the names and categories of the slices,
    async spans and instants: :class:`~fxscope.core.trace.gathered.Gathered` over a
    :class:`~fxscope.formats.fxt.coded_column.CodedColumn` or
    :class:`~fxscope.formats.fxt.frequent_codes.FrequentCodedColumn`) by the compiled loop
    (summary_kernels.c coded_matches): each row's code read through its event row and looked up in the
    match of the column's at most 256 values, one pass, where numpy gathered the codes, decoded them to ids
    (patching the rare rows) and looked the ids up, a pass each, ~0.29 s of the first search at 100M
    events; None when the loop is not built or the column is another (the numpy path). With ``column2``
    (gathered through the same rows: a table's categories beside its names), the match of either, in the
    same pass (the rows read once, no second mask to OR in).

    The rows of a table sorted by thread then time are an ascending run a thread, each spread over the whole
    code column (one byte an event: 100 MB at 100M events, past the caches). Read run after run, each run
    brought the column's cache lines in again; read a window of :data:`MATCH_WINDOW` event rows at a time,
    every run's rows in it (:func:`_match_runs`), each line comes in once. Measured at 100M events (one
    process, the six gathers of a search: names and categories of the slices, async spans and instants):
    218 -> 170 ms; at 30M alike (their growth 4.4 -> 3.5x; the events grow 3.33x)."""
    kernels = compiled.summary_kernels
    first = _coded_lookup(table, column)
    if kernels is None or first is None:
        return None
    index = column.index
    second: tuple = ()
    if column2 is not None:
        looked = _coded_lookup(table, column2)
        if looked is None or column2.index is not index:
            return None
        second = looked
    out = np.empty(len(index), bool)
    try:
        _match_runs(kernels, index, first + second, out.view(np.uint8), check)
    except ValueError:  # (a row out of range, or a rare row missing: the numpy path decides)
        return None
    return out


def _coded_lookup(table: np.ndarray, column) -> tuple | None:
    """(codes, lut, rare rows, their match) of a gathered one-byte code column as the compiled loop takes
    them (see :func:`_compiled_matches`), or None when it does not take the column."""
    if not isinstance(column, Gathered) or column.missing is not None:
        return None
    index, source = column.index, column.source
    if not compiled.plain(index, np.int32, np.int64):
        return None
    if isinstance(source, CodedColumn):
        codes, values, rare = source.index, source.values, None
    elif isinstance(source, FrequentCodedColumn):
        codes, values, rare = source.codes, source.table, (source.rare_rows, source.rare_values)
        if not compiled.plain(source.rare_rows, np.int64):
            return None
    else:
        return None
    if not compiled.plain(codes, np.uint8) or len(values) > 256 or values.dtype.kind not in "iu":
        return None
    lut = np.full(256, 2, np.uint8)  # (2: a code past the values, refused by the loop)
    lut[: len(values)] = column_matches(table, values)
    if rare is None:
        return codes, lut, np.zeros(0, np.int64), np.zeros(0, np.uint8)
    return codes, lut, rare[0], column_matches(table, rare[1]).view(np.uint8)


def _match_runs(kernels, index: np.ndarray, lookups: tuple, out: np.ndarray, check: Callable[[], None]) -> None:
    """The compiled loop's matches of ``index`` into ``out`` (``lookups``: one or two columns'
    :func:`_coded_lookup`): its pieces of :data:`MATCH_RUN` rows together, a window of :data:`MATCH_WINDOW`
    code rows per call (see :func:`_compiled_matches`); ``check()`` between calls. ValueError for a row out
    of range (or any the loop refuses)."""
    n = len(index)
    if n == 0:
        return
    wide = index.dtype == np.int64
    ends = np.r_[np.arange(MATCH_RUN, n, MATCH_RUN, dtype=np.int64), np.int64(n)]
    cursor = np.r_[np.int64(0), ends[:-1]]
    rows = max(len(lookups[0]), len(lookups[4]) if len(lookups) > 4 else 0)
    step = MATCH_WINDOW * MATCH_WINDOWS_A_CALL
    for first in range(MATCH_WINDOW, rows + MATCH_WINDOW, step):
        check()
        kernels.coded_matches(index, wide, ends, cursor, first, first + step - MATCH_WINDOW, MATCH_WINDOW, out,
                              *lookups)  # fmt: skip
    # (rows past the codes: refused)
    kernels.coded_matches(index, wide, ends, cursor, _ALL_ROWS, _ALL_ROWS, MATCH_WINDOW, out, *lookups)


def columns_matches(table: np.ndarray, columns, check: Callable[[], None] = _no_check) -> np.ndarray:
    """:func:`column_matches` of each of ``columns`` (of one table: the same rows), OR'd: where any names a
    string ``table`` marks. Two gathered code columns read through the same rows (a table's names and
    categories) are matched in one pass of the compiled loop (the rows and the window of each column's
    codes read once)."""
    if len(columns) == 2:
        out = _compiled_matches(table, columns[0], check, columns[1])
        if out is not None:
            return out
    out = column_matches(table, columns[0], check)
    for column in columns[1:]:
        out |= column_matches(table, column, check)
    return out


def _small_id_table(table: np.ndarray, dtype: np.dtype) -> np.ndarray:
    """``table`` (with its sentinel last entry) over every bit pattern of 8- or 16-bit ids of ``dtype`` read
    unsigned: the ids' entries, False past the table's strings and for negative ids (64 KB at most)."""
    lookup = np.zeros(1 << (8 * dtype.itemsize), bool)
    valid = min(len(table) - 1, int(np.iinfo(dtype).max) + 1)
    lookup[:valid] = table[:valid]
    return lookup


def slice_matches(model: SliceSource, needle: str, check: Callable[[], None] = _no_check,
                  arguments: bool = True, categories: bool = False) -> np.ndarray:  # fmt: skip
    """A bool mask over the slices: name (with ``categories``, or category) containing ``needle`` (folded),
    and with ``arguments`` one of their arguments' names or string values (from the argument index,
    built or waited for here: :attr:`search_index`)."""
    s = model.slices
    index = search_index(model) if arguments else None  # first: its build may add strings to the table
    check()
    table = string_matches(model, needle)
    hit = columns_matches(table, (s.name, s.category) if categories else (s.name,), check)
    if index is not None:
        check()
        hit[_argument_rows(index, table, check)] = True
    return hit


def _argument_rows(index: ArgStringIndex, table: np.ndarray, check: Callable[[], None] = _no_check) -> np.ndarray:
    """The slice rows (int64, unordered, repeated when a slice uses several such strings) that use a string
    ``table`` (:func:`string_matches`) marks through an argument: each batch's string ids looked up (16-bit
    ids in one table over every 16-bit value, made once; wider ones by :func:`column_matches`), ``check()``
    every few batches, each marked pair's row found from its batch's first row."""
    found: list[np.ndarray] = []
    small: np.ndarray | None = None
    for b, (sid, row) in enumerate(zip(index.sid, index.row, strict=True)):
        if b % 16 == 0:
            check()
        if sid.dtype == np.uint16:
            if small is None:
                small = _small_id_table(table, sid.dtype)
            hit = np.take(small, sid)
        else:
            hit = column_matches(table, sid)
        pos = np.flatnonzero(hit)
        if len(pos):
            found.append(row[pos] + index.row_start[b])  # (int64: the batch's first row is)
    return np.concatenate(found) if found else np.zeros(0, np.int64)


def argument_matches(model: SliceSource, needle: str, check: Callable[[], None] = _no_check) -> np.ndarray:
    """The slice rows (int64, unordered, possibly repeated) one of whose arguments' names or string values
    contains ``needle`` (folded): :func:`slice_matches`' argument part alone, from the argument index (built or
    waited for here), for a search whose name matches are already found."""
    index = search_index(model)  # first: its build may add strings to the table
    check()
    return _argument_rows(index, string_matches(model, needle), check)


def search(model: SliceSource, text: str, check: Callable[[], None] = _no_check, arguments: bool = True) -> np.ndarray:
    """Rows of the slices whose name, or one of whose arguments' names or string values, contains
    ``text`` (case-insensitive), by start time.

    Each distinct string is tested once; the slices follow from the names (one gather) and from the
    argument index (:func:`build_arg_string_index`, built on the first search and kept by the model).
    Without ``arguments``, the names only (what a search shows while that index is being built).
    """
    needle = text.casefold()
    s = model.slices
    if not needle or len(s) == 0:
        return np.zeros(0, np.int64)
    rows = np.flatnonzero(slice_matches(model, needle, check, arguments))
    return rows[np.argsort(s.ts[rows], kind="stable")]
