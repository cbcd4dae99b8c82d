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

from fxscope.formats.fxt import compiled
from fxscope.formats.fxt.mapped_column import RELEASE_ROWS, MappedColumn
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

    def _of_rows(self, rows: np.ndarray) -> np.ndarray:
        kind = self.kind[rows]
        out = np.zeros(len(rows), np.uint64)
        sel = np.flatnonzero((kind == 1) | (kind >= 4))  # counters, complete, async and flow events
        if len(sel):
            scan = compiled.record_scan
            rec = self.record_word
            if scan is not None and compiled.contiguous_words(self.words) and rec.flags.c_contiguous and (
                rec.dtype in (np.uint32, np.int64)
            ):  # one compiled pass: header, size, last word
                picked = np.ascontiguousarray(rows[sel], np.int64)
                vals = np.empty(len(picked), np.uint64)
                scan.last_words(self.words, rec, rec.dtype == np.int64, picked, vals)
                out[sel] = vals
                word = None
                if len(sel) >= RELEASE_ROWS:
                    self._release_rows(int(picked.min()), int(picked.max()))
            else:
                word = rec[rows[sel]].astype(np.int64)
                size = (self.words[word] >> np.uint64(4)) & np.uint64(0xFFF)
                last = word + size.astype(np.int64) - 1
                out[sel] = self.words[np.clip(last, 0, len(self.words) - 1)]
                if len(sel) >= RELEASE_ROWS:
                    self._release_words(int(word.min()), int(last.max()) + 1)
            complete = np.flatnonzero(kind[sel] == 4)
            if len(complete):
                at = sel[complete]
                cword = word[complete] if word is not None else rec[rows[at]].astype(np.int64)
                seg = np.searchsorted(self.seg_pos, cword, side="right") - 1
                out[at] = ticks_at_rates(out[at], self.seg_tps[np.maximum(seg, 0)]).view(np.uint64)
        if len(self.exc_rows) and len(rows):
            at = np.minimum(np.searchsorted(self.exc_rows, rows), len(self.exc_rows) - 1)
            hit = self.exc_rows[at] == rows
            out[hit] = self.exc_vals[at[hit]]
        return out

