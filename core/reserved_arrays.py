"""Arrays sized for the most a pass can write, of which only the part written takes memory.

A pass whose output size is known only once it has run (the LOD pyramid's entries per level) either runs
twice, once to count and once to fill arrays of the counted sizes, or fills arrays of an upper bound. The
second costs no memory beyond what is written if the arrays are fresh anonymous mappings: the system gives
a page only when it is first written, and a page never written is never resident. Arrays from the
allocator's heap would not do: a heap block may be memory freed earlier and still resident, and the part
of it never written would stay resident as long as the array lives (past the allocator's trim after each
build step, :mod:`fxscope.core.freed_memory`).

The mapping is reserved without a commitment of swap space (``MAP_NORESERVE``, Linux): an upper bound is
often many times what is written. Where a mapping of that size is refused (address space, a system that
commits it), :func:`reserved_array` returns None and the caller counts first.
"""

from __future__ import annotations

import mmap
import sys

import numpy as np

#: mmap flag: no swap space reserved for the mapping (Linux's MAP_NORESERVE; Python's mmap lacks the name)
_MAP_NORESERVE = 0x4000 if sys.platform.startswith("linux") else 0


def reserved_array(n: int, dtype) -> np.ndarray | None:
    """A writable array of ``n`` items of ``dtype`` on an anonymous mapping of its own (zero-filled, each
    page resident only once written; unmapped when the array and every view of it are gone), or None when
    the system refuses a mapping of that size."""
    dtype = np.dtype(dtype)
    size = max(int(n), 1) * dtype.itemsize
    if not hasattr(mmap, "MAP_ANONYMOUS"):  # (not a POSIX system: the caller counts first)
        return None
    try:
        mapping = mmap.mmap(-1, size, flags=mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS | _MAP_NORESERVE)
    except (OSError, ValueError, OverflowError):
        return None
    return np.frombuffer(mapping, dtype, count=max(int(n), 0))
