"""A per-event column read back from the memory-mapped trace when indexed, rather than stored.

Some event fields are a fixed word of the event's record (its time, its data word): storing them would copy
8 bytes an event of the file into memory, while the reader already keeps each record's position
(``ev_word``) and the file stays mapped. A :class:`MappedColumn` reads the rows asked for from the map
instead; subclasses say which word and how it converts (:mod:`~fxscope.formats.fxt.event_times`,
:mod:`~fxscope.formats.fxt.event_data`).

It behaves as a read-only numpy column for its consumers: ``col[rows]`` (integer array, boolean mask,
slice, scalar) returns a numpy array (or scalar), ``np.asarray(col)`` builds the whole column a block at a
time, ``len``, ``min``/``max`` (a block at a time, no full-size temporary). Large reads drop the file pages
they mapped from the resident set again (as the reader does after each block), so a whole-column read does
not leave most of the file resident, except while a :class:`PageHold` is held: a build step reading the
columns several times (the model's constructor, each table of the loader's steps) keeps the pages it mapped
until it ends, then they are dropped at once (faulting them in again after every read cost ~0.5 s of CPU at
10M events).
"""

from __future__ import annotations

import threading
from collections.abc import Callable

import numpy as np

from fxscope.formats.fxt import compiled
from fxscope.formats.fxt.column_view import ColumnView

#: rows read at once (bounds the temporaries of a whole-column read)
BLOCK = 1 << 20
#: rows from which a read drops the file pages it mapped again: a whole-column read would otherwise map
#: most of the file back into the resident set
RELEASE_ROWS = 1 << 15
#: words an event record spans at most (its header's 12-bit size)
MAX_RECORD_WORDS = 0xFFF


class PageHold:
    """While held (``with hold:``, from any number of threads at once), the mapped columns sharing it keep
    the file pages their reads map; when the last holder leaves, ``release_all()`` drops every page of the map."""

    def __init__(self, release_all: Callable[[], object] | None) -> None:
        self._release_all = release_all
        self._holders = 0
        self._lock = threading.Lock()

    @property
    def held(self) -> bool:
        return self._holders > 0

    def __enter__(self) -> PageHold:
        with self._lock:
            self._holders += 1
        return self

    def __exit__(self, *exc) -> None:
        with self._lock:
            self._holders -= 1
            last = self._holders == 0
        if last and self._release_all is not None:
            self._release_all()


class MappedColumn(ColumnView):
    """A read-only column of ``len(record_word)`` rows whose values :meth:`_of_rows` reads from ``words``."""

    dtype: np.dtype = np.dtype(np.uint64)

    def __init__(
        self, words: np.ndarray, record_word: np.ndarray, release: Callable[[int, int], None] | None = None
    ) -> None:
        self.words = words  # the file's native-order words (memory-mapped)
        self.record_word = record_word  # ev_word: each event record's first word
        self.release = release  # release(first word, end word): drop those mapped pages (see RELEASE_ROWS)
        #: the reads keep their pages while this is held (shared by the columns of one file; None: never)
        self.hold: PageHold | None = None
        #: called before each read when the map has no compiled SIGBUS guard (mapped_file.py: zero-maps the
        #: pages a truncation took away); None with the guard: nothing per read
        self.before_read: Callable[[], None] | None = None

    @property
    def nbytes(self) -> int:
        """Bytes this column owns (the file and ``ev_word`` are not its own)."""
        return 0

    def __len__(self) -> int:
        return len(self.record_word)

    def __getitem__(self, key):
        if self.before_read is not None:
            self.before_read()
        n = len(self)
        if isinstance(key, (int, np.integer)):
            i = int(key) + (n if key < 0 else 0)
            if not 0 <= i < n:
                raise IndexError(f"index {int(key)} is out of bounds for a column of length {n}")
            return self._of_rows(np.array([i], np.int64))[0]
        if isinstance(key, slice):
            start, stop, step = key.indices(n)
            if step == 1:  # (a run of rows: no row numbers built)
                return self._run(start, max(stop, start))
            return self._blockwise(np.arange(start, stop, step, dtype=np.int64))
        key = np.asarray(key)
        if key.dtype == bool:
            if key.shape != (n,):
                raise IndexError("boolean index does not match the column's length")
            return self._blockwise(np.flatnonzero(key))
        if key.dtype.kind not in "iu":
            raise IndexError("only integers, slices and boolean arrays are valid indices")
        rows = key.astype(np.int64, copy=False)
        if rows.ndim == 0:
            return self[int(rows)]
        if rows.size and (int(rows.min()) < -n or int(rows.max()) >= n):
            raise IndexError(f"index out of bounds for a column of length {n}")
        if rows.size and int(rows.min()) < 0:
            rows = np.where(rows < 0, rows + n, rows)
        return self._blockwise(rows.reshape(-1)).reshape(rows.shape)

    def min(self):
        """The smallest value (found with :meth:`max` in one pass, once); ValueError when empty, as numpy's."""
        return self._extremes()[0]

    def max(self):
        """The largest value (found with :meth:`min` in one pass, once); ValueError when empty, as numpy's."""
        return self._extremes()[1]

    _minmax: tuple | None = None

    def set_extremes(self, low, high) -> None:
        """Give :meth:`min` and :meth:`max` (when whoever built the column found them already: the reader)."""
        self._minmax = (self.dtype.type(low), self.dtype.type(high))

    def _extremes(self) -> tuple:
        """(min, max) of the column, a block at a time, remembered (the column never changes; the model's
        extent, the statistics and the track builds each ask)."""
        if self._minmax is None:
            if self.before_read is not None:
                self.before_read()
            n = len(self)
            if n == 0:
                raise ValueError("zero-size column has no minimum or maximum")
            lo, hi = [], []
            for a in range(0, n, BLOCK):
                part = self._of_run(a, min(a + BLOCK, n))
                lo.append(part.min())
                hi.append(part.max())
            self._minmax = (min(lo), max(hi))
        return self._minmax

    def _run(self, start: int, stop: int) -> np.ndarray:
        """Rows ``start..stop-1``, a block at a time (:meth:`_of_run` of each, or the compiled read)."""
        if stop - start <= BLOCK:
            return self._of_run(start, stop)
        out = np.empty(stop - start, self.dtype)
        for a in range(start, stop, BLOCK):
            part = out[a - start : min(a + BLOCK, stop) - start]
            if not self._compiled_into(None, a, part):
                part[:] = self._of_run(a, min(a + BLOCK, stop))
        return out

    def _of_run(self, start: int, stop: int) -> np.ndarray:
        """The values of rows ``start..stop-1`` (at most :data:`BLOCK`); a subclass may read a run faster."""
        return self._of_rows(np.arange(start, stop, dtype=np.int64))

    def _blockwise(self, rows: np.ndarray) -> np.ndarray:
        if len(rows) <= BLOCK:
            return self._of_rows(rows)
        out = np.empty(len(rows), self.dtype)
        for a in range(0, len(rows), BLOCK):
            part = out[a : a + BLOCK]
            if not self._compiled_into(rows[a : a + BLOCK], 0, part):
                part[:] = self._of_rows(rows[a : a + BLOCK])
        return out

    def _scan(self):
        """The compiled loops (:mod:`~fxscope.formats.fxt.compiled`) when they can read these columns as they
        are (the words one native uint64 buffer, ``record_word`` contiguous uint32 or int64), else None."""
        scan = compiled.record_scan
        rec = self.record_word
        if scan is None or not compiled.contiguous_words(self.words):
            return None
        if not (isinstance(rec, np.ndarray) and rec.flags.c_contiguous and rec.dtype in (np.uint32, np.int64)):
            return None
        return scan

    def _compiled_into(self, rows: np.ndarray | None, start: int, out: np.ndarray) -> bool:
        """Write the values of ``rows`` (int64, in range; None: the run of ``len(out)`` rows from ``start``)
        into ``out`` with the compiled loops and return True, or return False (not built here, or this column
        has no compiled read: the caller takes the numpy path). The base class has none."""
        return False

    def _released_after(self, rows: np.ndarray | None, start: int, count: int) -> None:
        """After a compiled read of ``count`` rows (``rows``, or the run from ``start``): drop their pages as
        the numpy reads do (from :data:`RELEASE_ROWS` rows)."""
        if count >= RELEASE_ROWS:
            if rows is None:
                self._release_rows(start, start + count - 1)
            else:
                self._release_rows(int(rows.min()), int(rows.max()))

    def _release_rows(self, first_row: int, last_row: int) -> None:
        """Drop the mapped pages of the records of rows ``first_row..last_row`` (record words ascend with the
        rows) after a read of at least :data:`RELEASE_ROWS` rows."""
        rec = self.record_word
        self._release_words(int(rec[first_row]), min(int(rec[last_row]) + MAX_RECORD_WORDS, len(self.words)))

    def _release_words(self, first_word: int, end_word: int) -> None:
        """Drop the mapped pages of words ``[first_word, end_word)`` unless :attr:`hold` is held."""
        if self.release is not None and not (self.hold is not None and self.hold.held):
            self.release(first_word, end_word)

    def _of_rows(self, rows: np.ndarray) -> np.ndarray:
        """The values of ``rows`` (int64, in range, at most :data:`BLOCK` of them)."""
        raise NotImplementedError
