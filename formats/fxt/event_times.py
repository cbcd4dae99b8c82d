"""The events' time column (``FxtColumns.ev_ts``), read from the mapped file when indexed.

An event's time is the second word of its record (spec E1: header, then the timestamp), in ticks of the
provider whose section the record is in. Stored, it is 8 bytes an event (80 MB at 10M events: a fifth of
what a loaded model holds), and once the model's tables are built few readers need it (the statistics,
exports, a selected event). :class:`EventTimes` reads the rows asked for back from the file through
``ev_word`` and converts them with the tick rate in force at each record (T1), as the reader does.

There are no exceptions to store: the reader keeps only event records of at least two words (a shorter one
is dropped with a warning), so every kept record's second word is its time, and the provider segments
(first word, ticks per second) are the ones the reader converted with.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from fxscope.formats.filled_arrays import populate
from fxscope.formats.fxt.mapped_column import RELEASE_ROWS, MappedColumn
from fxscope.formats.fxt.ticks import convert_rate

#: ticks per second of a provider that says nothing else (1 tick = 1 ns)
NS_RATE = 1_000_000_000


class EventTimes(MappedColumn):
    """``ev_ts`` (int64 ns) read from the file on demand (see the module docstring)."""

    dtype = np.dtype(np.int64)

    def __init__(
        self,
        words: np.ndarray,
        record_word: np.ndarray,
        seg_pos: np.ndarray,
        seg_tps: np.ndarray,
        release: Callable[[int, int], None] | None = None,
    ) -> None:
        super().__init__(words, record_word, release)
        self.seg_pos = np.asarray(seg_pos, np.int64)  # provider segments: first word, ticks per second
        self.seg_tps = np.asarray(seg_tps, np.int64)
        #: the tick rates other than 1e9 (a time at 1e9 is its word as it is), and each segment's position in
        #: that list (-1: nanoseconds), so that a read converts each rate's rows once
        self._rates = sorted(set(self.seg_tps.tolist()) - {NS_RATE})
        self._seg_rate = np.searchsorted(np.asarray(self._rates, np.int64), self.seg_tps).astype(np.int16)
        self._seg_rate[self.seg_tps == NS_RATE] = -1
        self._ns_only = not self._rates

    def _compiled_into(self, rows: np.ndarray | None, start: int, out: np.ndarray) -> bool:
        """One compiled pass: each row's record word, the word after it, its segment's rate (record_scan.c)."""
        scan = self._scan()
        if scan is None:
            return False
        rec = self.record_word
        populate(out)  # (written whole: its pages mapped in one call)
        scan.event_times(self.words, rec, rec.dtype == np.int64, rows, start, self.seg_pos, self.seg_tps, out)
        self._released_after(rows, start, len(out))
        return True

    def _of_rows(self, rows: np.ndarray) -> np.ndarray:
        if not len(rows):
            return np.zeros(0, np.int64)
        out = np.empty(len(rows), np.int64)
        if self._compiled_into(np.ascontiguousarray(rows, np.int64), 0, out):
            return out
        word = np.take(self.record_word, rows).astype(np.int64)
        word += 1
        ticks = np.take(self.words, word)
        if len(rows) >= RELEASE_ROWS:
            self._release_rows(int(rows.min()), int(rows.max()))
        if self._ns_only:
            return ticks.view(np.int64)
        word -= 1  # (each record's segment: the one its first word is in)
        seg = np.searchsorted(self.seg_pos, word, side="right") - 1
        return self._convert(ticks, np.take(self._seg_rate, np.maximum(seg, 0)))

    def _of_run(self, start: int, stop: int) -> np.ndarray:
        """Rows ``start..stop-1``: their records ascend, so each provider segment is one run of them."""
        if stop <= start:
            return np.zeros(0, np.int64)
        out = np.empty(stop - start, np.int64)
        if self._compiled_into(None, start, out):
            return out
        word = self.record_word[start:stop].astype(np.int64)
        word += 1
        ticks = np.take(self.words, word)
        if stop - start >= RELEASE_ROWS:
            self._release_rows(start, stop - 1)
        if self._ns_only:
            return ticks.view(np.int64)
        lo = int(np.searchsorted(self.seg_pos, word[0] - 1, side="right")) - 1
        hi = int(np.searchsorted(self.seg_pos, word[-1] - 1, side="right"))
        # (the first row of each later segment: its record word, word - 1, is at or past the segment's start)
        bounds = [0, *np.searchsorted(word, self.seg_pos[lo + 1 : hi], side="right").tolist(), len(word)]
        out = ticks.view(np.int64)  # (converted in place: each run's ticks are read before it is written)
        for a, b, rate in zip(bounds[:-1], bounds[1:], self.seg_tps[lo:hi].tolist(), strict=True):
            if rate != NS_RATE and b > a:
                out[a:b] = convert_rate(ticks[a:b], rate)
        return out

    def _convert(self, ticks: np.ndarray, rate_of: np.ndarray) -> np.ndarray:
        """Nanoseconds from ``ticks`` (converted in place), each row at rate ``self._rates[rate_of]`` (-1: 1e9)."""
        out = ticks.view(np.int64)
        if len(self._rates) == 1:
            at = np.flatnonzero(rate_of >= 0)
            out[at] = convert_rate(ticks[at], self._rates[0])
            return out
        for k, rate in enumerate(self._rates):
            at = np.flatnonzero(rate_of == k)
            if len(at):
                out[at] = convert_rate(ticks[at], rate)
        return out
