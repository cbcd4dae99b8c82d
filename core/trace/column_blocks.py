"""A column read a block of rows at a time, the next block read on a second thread meanwhile.

The model's build passes over every event's time once (grouping the duration events by thread, counting
the overview's density). The times are not stored: each block is read back from the memory-mapped file
(:class:`~fxscope.formats.fxt.event_times.EventTimes`, a compiled loop that releases the GIL), about a third
of the pass's work. Read block by block, no whole-column copy is made (8 bytes an event: 240 MB at 30M
events, and the page faults of a fresh allocation that size); read ahead on a worker, the reading overlaps
the consumer's work on the block before (the machine has at least two cores to give the build).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator

import numpy as np

from fxscope.core.computed_ahead import computed_ahead
from fxscope.formats.fxt.column_view import ColumnView


def _read(column, start: int, stop: int, dtype) -> np.ndarray:
    return np.ascontiguousarray(column[start:stop], dtype)


def column_blocks(column, n: int, block: int, dtype, check: Callable[[], None] | None = None,
                  ) -> Iterator[tuple[int, np.ndarray]]:  # fmt: skip
    """(first row, values) of rows ``0..n-1`` of ``column`` in blocks of ``block`` rows, in row order, each a
    contiguous array of ``dtype``. A :class:`ColumnView` (values computed when read) of more than one block
    has the next block read on a worker thread while the caller uses this one; an array's blocks are views.
    ``check()``, when given, is called before each block (a Cancel raises from it and stops the reading)."""
    if not isinstance(column, ColumnView) or n <= block:
        for a in range(0, n, block):
            if check is not None:
                check()
            yield a, _read(column, a, min(a + block, n), dtype)
        return
    starts = range(0, n, block)
    blocks = computed_ahead(lambda a: _read(column, a, min(a + block, n), dtype), starts, "fxscope-blocks", check)
    yield from zip(starts, blocks, strict=True)
