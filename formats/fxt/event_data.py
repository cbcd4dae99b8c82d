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
from fxscope.formats.fxt.ticks import ticks_at_rates

#: rows read at once (bounds the temporaries of a whole-column read)
_BLOCK = 1 << 20
#: rows from which a read drops the file pages it mapped again (as the reader does after each block): a
#: whole-column read would otherwise map most of the file back into the resident set
_RELEASE_ROWS = 1 << 15


class EventData:
    """``ev_data`` read from the file on demand (see the module docstring)."""

    ndim = 1
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
        self.words = words  # the file's native-order words (memory-mapped)
        self.kind = kind  # ev_kind
        self.record_word = record_word  # ev_word
        self.seg_pos = np.asarray(seg_pos, np.int64)  # provider segments: first word, ticks per second
        self.seg_tps = np.asarray(seg_tps, np.int64)
        self.exc_rows = np.asarray(exc_rows, np.int64)  # ascending event rows whose value is stored
        self.exc_vals = np.asarray(exc_vals, np.uint64)
        self.release = release  # release(first word, end word): drop those mapped pages (see _RELEASE_ROWS)

    @property
    def nbytes(self) -> int:
        """Bytes this column owns (the exceptions; the rest is the file and other columns)."""
        return self.exc_rows.nbytes + self.exc_vals.nbytes

    def __len__(self) -> int:
        return len(self.kind)

    @property
    def shape(self) -> tuple[int]:
        return (len(self),)

    def __getitem__(self, key):
        if isinstance(key, (int, np.integer)):
            i = int(key) + (len(self) if key < 0 else 0)
            if not 0 <= i < len(self):
                raise IndexError(f"index {int(key)} is out of bounds for ev_data of length {len(self)}")
            return self._of_rows(np.array([i], np.int64))[0]
        if isinstance(key, slice):
            return self._blockwise(np.arange(len(self))[key])
        key = np.asarray(key)
        if key.dtype == bool:
            if key.shape != (len(self),):
                raise IndexError("boolean index does not match ev_data's length")
            return self._blockwise(np.flatnonzero(key))
        rows = key.astype(np.int64, copy=False)
        if rows.ndim == 0:
            return self[int(rows)]
        if len(rows) and (int(rows.min()) < -len(self) or int(rows.max()) >= len(self)):
            raise IndexError("index out of bounds for ev_data")
        if len(rows) and int(rows.min()) < 0:
            rows = np.where(rows < 0, rows + len(self), rows)
        return self._blockwise(rows.reshape(-1)).reshape(rows.shape)

    def __array__(self, dtype=None, copy=None) -> np.ndarray:
        out = self[:]
        return out if dtype is None else out.astype(dtype, copy=False)

    def __iter__(self):
        return iter(np.asarray(self))

    def tolist(self) -> list:
        return np.asarray(self).tolist()

    def astype(self, dtype, copy: bool = True) -> np.ndarray:
        return np.asarray(self).astype(dtype)

    def view(self, dtype) -> np.ndarray:
        return np.asarray(self).view(dtype)

    def _blockwise(self, rows: np.ndarray) -> np.ndarray:
        if len(rows) <= _BLOCK:
            return self._of_rows(rows)
        out = np.empty(len(rows), np.uint64)
        for a in range(0, len(rows), _BLOCK):
            out[a : a + _BLOCK] = self._of_rows(rows[a : a + _BLOCK])
        return out

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
                if self.release is not None and len(sel) >= _RELEASE_ROWS:
                    # (record words ascend with the rows, and an event record is at most 4095 words)
                    end = min(int(rec[int(picked.max())]) + 0xFFF, len(self.words))
                    self.release(int(rec[int(picked.min())]), end)
            else:
                word = rec[rows[sel]].astype(np.int64)
                size = (self.words[word] >> np.uint64(4)) & np.uint64(0xFFF)
                last = word + size.astype(np.int64) - 1
                out[sel] = self.words[np.clip(last, 0, len(self.words) - 1)]
                if self.release is not None and len(sel) >= _RELEASE_ROWS:
                    self.release(int(word.min()), int(last.max()) + 1)
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

