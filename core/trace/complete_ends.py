"""Every complete event's end time, read from the reader's ``ev_data`` once for the whole model build.

A complete event's end is the last word of its record, which ``ev_data`` reads back from the mapped file
when asked (:mod:`fxscope.formats.fxt.event_data`): a header and a data word gathered per event, whose
file pages the reader released, so each read faults them in again. The model's time extent needs every
end, and the slice build needs them again, a batch of whole threads at a time: a thread's events are
spread over the whole file, so each batch's read faulted in (and released) most of the file again. Read
once, in file order, they cost one pass over the file and 12 bytes a complete event while the model is
built (measured on the 10M-event benchmark trace: 0.5 s of reads down to 0.2 s).
"""

from __future__ import annotations

import numpy as np

from fxscope.formats.fxt.columns import EventKind, FxtColumns


class CompleteEnds:
    """The complete events' rows (ascending) and their ends (int64 ns)."""

    def __init__(self, cols: FxtColumns) -> None:
        rows = np.flatnonzero(cols.ev_kind == EventKind.DURATION_COMPLETE)
        #: ends in row order: ev_data read in file order (each page faulted in once)
        self.ends: np.ndarray = np.asarray(cols.ev_data[rows]).view(np.int64)
        #: the rows, int32 when every event row fits (half the memory of the index)
        self.rows: np.ndarray = rows.astype(np.int32) if len(cols.ev_kind) < 1 << 31 else rows

    def __len__(self) -> int:
        return len(self.rows)

    def latest(self) -> int | None:
        """The latest end (ns), None without complete events."""
        return int(self.ends.max()) if len(self.ends) else None

    def of(self, rows: np.ndarray) -> np.ndarray:
        """int64 ns ends of event ``rows``, each the row of a complete event."""
        at = np.searchsorted(self.rows, np.asarray(rows).astype(self.rows.dtype, copy=False))
        return self.ends[at]
