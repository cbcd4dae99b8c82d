"""Every complete event's end time, for the whole model build, got once.

A complete event's end is the last word of its record. The reader decodes it with the event's block,
while the block's pages are mapped (``FxtColumns.ev_complete_end``), and the model build takes that
column. Without it (a second model of the same columns) it is read from ``ev_data``, which reads it
back from the mapped file: a header and a data word gathered per event, from pages the reader released,
so each read faults them in again. The model's time extent needs every end and the slice build needs
them again, a batch of whole threads at a time; a thread's events are spread over the whole file, so
each batch's own read faulted in (and released) most of the file again. Got once, they cost 12 bytes a
complete event while the model is built (10M-event benchmark trace: ~0.9 s of ``ev_data`` reads in
``fxscope stacks`` gone, peak RSS 603 MB -> 507 MB).
"""

from __future__ import annotations

import numpy as np

from fxscope.core.trace.event_rows import kind_count, kind_rows
from fxscope.formats.fxt.columns import EventKind, FxtColumns


class CompleteEnds:
    """The complete events' rows (ascending) and their ends (int64 ns)."""

    def __init__(self, cols: FxtColumns) -> None:
        # (int32 rows below 2**31 events; one streaming pass, not a mask and an int64 index of every event)
        rows = kind_rows(cols.ev_kind, EventKind.DURATION_COMPLETE, EventKind.DURATION_COMPLETE)
        decoded = cols.take_complete_ends()
        #: ends in row order: as the reader decoded them, else ev_data read in file order (each page
        #: faulted in once)
        self.ends: np.ndarray = (
            decoded if decoded is not None and len(decoded) == len(rows)
            else np.asarray(cols.ev_data[rows]).view(np.int64)
        )  # fmt: skip
        #: the rows, int32 when every event row fits (half the memory of the index)
        self.rows: np.ndarray = rows

    def __len__(self) -> int:
        return len(self.rows)

    def latest(self) -> int | None:
        """The latest end (ns), None without complete events."""
        return int(self.ends.max()) if len(self.ends) else None

    def of(self, rows: np.ndarray) -> np.ndarray:
        """int64 ns ends of event ``rows``, each the row of a complete event."""
        at = np.searchsorted(self.rows, np.asarray(rows).astype(self.rows.dtype, copy=False))
        return self.ends[at]


def decoded_ends(cols: FxtColumns) -> np.ndarray | None:
    """The complete events' ends as the reader decoded them (not taken: :class:`CompleteEnds` takes them
    later), when they are the ones :class:`CompleteEnds` would take (one a complete event), else None. The
    model's time extent reads their extremes at the cost of a count of the kinds, so that its constructor
    leaves the complete events' rows (4 bytes each, a pass writing them) to the slices' build."""
    decoded = cols.ev_complete_end
    if decoded is None:
        return None
    count = kind_count(cols.ev_kind, EventKind.DURATION_COMPLETE, EventKind.DURATION_COMPLETE)
    return decoded if len(decoded) == count else None
