"""The events' data word column (``FxtColumns.ev_data``), read from the mapped file when indexed.

An event's data word (counter id, async or flow correlation id, a complete event's end time) is the
last word of its record in every well-formed record, so storing it would copy 8 bytes an event of the
file into memory (80 MB at 10M events) for the few consumers that ask. :class:`EventData` keeps what
reads it back instead: the record's header (through ``ev_word``) gives its size, the last word is the
data, a complete event's end converts from ticks with the tick rate in force at the record. Events that
differ from that rule (arguments cut by a size-0 argument: no data word; words after the arguments that
the reader did not use; an instant's legacy scope word, which only the reader can tell from the last
argument word) are kept as exceptions, found by the reader as it decodes (rare, 16 bytes each).

Indexing (``col[rows]``, a mask, a slice, a scalar) returns a numpy array (or scalar) of uint64;
whole-column use (``np.asarray(col)``) builds the whole column, a block at a time.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from fxscope.formats.filled_arrays import array_to_fill, populate
from fxscope.formats.fxt.event_times import EventTimes
from fxscope.formats.fxt.mapped_column import BLOCK, RELEASE_ROWS, MappedColumn
from fxscope.formats.fxt.ticks import ticks_at_rates


class EventData(MappedColumn):
    """``ev_data`` read from the file on demand (see the module docstring)."""

    dtype = np.dtype(np.uint64)

    def __init__(
        self,
        words: np.ndarray,
        kind: np.ndarray,
        record_word: np.ndarray,
        seg_pos: np.ndarray,
        seg_tps: np.ndarray,
        exc_rows: np.ndarray,
        exc_vals: np.ndarray,
        release: Callable[[int, int], None] | None = None,
    ) -> None:
        super().__init__(words, record_word, release)
        self.kind = kind  # ev_kind
        self.seg_pos = np.asarray(seg_pos, np.int64)  # provider segments: first word, ticks per second
        self.seg_tps = np.asarray(seg_tps, np.int64)
        self.exc_rows = np.asarray(exc_rows, np.int64)  # ascending event rows whose value is stored
        self.exc_vals = np.asarray(exc_vals, np.uint64)

    @property
    def nbytes(self) -> int:
        """Bytes this column owns (the exceptions; the rest is the file and other columns)."""
        return self.exc_rows.nbytes + self.exc_vals.nbytes

    def _compiled_into(self, rows: np.ndarray | None, start: int, out: np.ndarray) -> bool:
        """One compiled pass: each row's kind, header, last word, a complete event's rate (record_scan.c)."""
        scan = self._scan()
        kind = self.kind
        if scan is None or not (
            isinstance(kind, np.ndarray) and kind.dtype == np.uint8 and kind.flags.c_contiguous
        ):  # (kind is a plain uint8 column as the reader builds it; anything else: the numpy path)
            return False
        rec = self.record_word
        populate(out)  # (written whole: its pages mapped in one call)
        scan.event_data(self.words, rec, rec.dtype == np.int64, kind, rows, start, self.seg_pos, self.seg_tps, out)
        self._released_after(rows, start, len(out))
        self._put_exceptions(rows, start, out)
        return True

    def _of_run(self, start: int, stop: int) -> np.ndarray:
        out = np.empty(max(stop - start, 0), np.uint64)
        if self._compiled_into(None, start, out):
            return out
        return self._of_rows(np.arange(start, stop, dtype=np.int64))

    def _of_rows(self, rows: np.ndarray) -> np.ndarray:
        out = np.empty(len(rows), np.uint64)
        if self._compiled_into(np.ascontiguousarray(rows, np.int64), 0, out):
            return out
        kind = self.kind[rows]
        out[:] = 0
        sel = np.flatnonzero((kind == 1) | (kind >= 4))  # counters, complete, async and flow events
        if len(sel):
            word = self.record_word[rows[sel]].astype(np.int64)
            size = (self.words[word] >> np.uint64(4)) & np.uint64(0xFFF)
            last = word + size.astype(np.int64) - 1
            out[sel] = self.words[np.clip(last, 0, len(self.words) - 1)]
            if len(sel) >= RELEASE_ROWS:
                self._release_words(int(word.min()), int(last.max()) + 1)
            complete = np.flatnonzero(kind[sel] == 4)
            if len(complete):
                at = sel[complete]
                seg = np.searchsorted(self.seg_pos, word[complete], side="right") - 1
                out[at] = ticks_at_rates(out[at], self.seg_tps[np.maximum(seg, 0)]).view(np.uint64)
        self._put_exceptions(rows, 0, out)
        return out

    _low_bits: np.ndarray | None = None

    def _exception_bits(self) -> np.ndarray:
        """bool of each 16-bit value: whether an exception's row has it as its low 16 bits (a filter: a row
        without a mark is no exception; built once, 64 KB)."""
        if self._low_bits is None:
            bits = np.zeros(1 << 16, bool)
            bits[self.exc_rows.astype(np.uint16)] = True
            self._low_bits = bits
        return self._low_bits

    def _put_exceptions(self, rows: np.ndarray | None, start: int, out: np.ndarray) -> None:
        """Overwrite the values of the stored exceptions among ``rows`` (None: the run of ``len(out)`` rows
        from ``start``). The exceptions are few: ascending rows (as a rule) look them up among the rows, not
        every row among them."""
        exc = self.exc_rows
        if not len(exc) or not len(out):
            return
        if rows is None:
            lo, hi = np.searchsorted(exc, [start, start + len(out)]).tolist()
            out[exc[lo:hi] - start] = self.exc_vals[lo:hi]
            return
        if len(rows) > 1 and not bool((rows[1:] > rows[:-1]).all()):  # (unordered or repeated rows)
            # only the rows whose low 16 bits some exception's have are looked up (a counter's, an instant's
            # rows: one binary search per row was ~25 ms at 10M events, for a few hundred exceptions)
            maybe = np.flatnonzero(np.take(self._exception_bits(), rows.astype(np.uint16)))
            cand = rows[maybe]
            at = np.minimum(np.searchsorted(exc, cand), len(exc) - 1)
            hit = exc[at] == cand
            out[maybe[hit]] = self.exc_vals[at[hit]]
            return
        lo = int(np.searchsorted(exc, rows[0]))
        hi = int(np.searchsorted(exc, rows[-1], side="right"))
        if hi > lo:
            cand = exc[lo:hi]
            # (the exceptions in the rows' range fit their dtype: int32 rows are not widened to a temporary)
            at = np.minimum(np.searchsorted(rows, cand.astype(rows.dtype, copy=False)), len(rows) - 1)
            hit = rows[at] == cand
            out[at[hit]] = self.exc_vals[lo:hi][hit]


def compiled_pair(times, data):
    """The compiled loops (record_scan) when ``times`` and ``data`` (``ev_ts``, ``ev_data``) are the mapped
    columns of one file that they read together (one pass over each row's record), else None."""
    if not (
        isinstance(times, EventTimes)
        and isinstance(data, EventData)
        and times.words is data.words
        and times.record_word is data.record_word
        and np.array_equal(times.seg_pos, data.seg_pos)
        and np.array_equal(times.seg_tps, data.seg_tps)
        and isinstance(data.kind, np.ndarray)
        and data.kind.dtype == np.uint8
        and data.kind.flags.c_contiguous
    ):
        return None
    return data._scan()


def times_and_data(times, data, rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(times[rows], data[rows])`` (``ev_ts``, ``ev_data``): when both are the mapped columns of one file
    and the compiled loops are built, read in one pass over the rows' records (record_scan.event_times_data:
    each record's words fetched once, its file pages faulted in once; the async spans, flows and counters
    each need both columns of one row set), a block at a time; else each column indexed as usual (the
    reference the tests compare it with)."""
    rows = np.asarray(rows)
    n = len(data)
    if (
        rows.ndim == 1
        and rows.dtype.kind in "iu"
        and len(rows)
        and (scan := compiled_pair(times, data)) is not None
        and int(rows.min()) >= 0
        and int(rows.max()) < n
    ):
        if data.before_read is not None:  # (no compiled SIGBUS guard: the file's size checked first)
            data.before_read()
        # (int32 rows as they are: the row sets of kind_rows, no int64 copy)
        rows = np.ascontiguousarray(rows, np.int32 if rows.dtype == np.int32 else np.int64)
        rec = data.record_word
        out_ts, out_data = array_to_fill(len(rows), np.int64), array_to_fill(len(rows), np.uint64)
        for a in range(0, len(rows), BLOCK):
            part = rows[a : a + BLOCK]
            scan.event_times_data(data.words, rec, rec.dtype == np.int64, data.kind, part, rows.dtype == np.int64,
                                  data.seg_pos, data.seg_tps, out_ts[a : a + BLOCK], out_data[a : a + BLOCK])  # fmt: skip
            data._released_after(part, 0, len(part))
        data._put_exceptions(rows, 0, out_data)
        return out_ts, out_data
    return times[rows], data[rows]
