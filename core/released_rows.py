"""Give the pages of an array's leading rows back to the system once they are read for the last time.

A build that consumes a large temporary front to back (the slices' build matches the duration events
grouped by thread, thread after thread, while it writes the slice table) holds both the whole temporary and
the growing table at its end: at 10M events ~70 MB of grouped events beside the table's ~55 MB. Dropping
the pages of the rows already consumed (``madvise(MADV_DONTNEED)``: the kernel frees them; a later read
would see zeros, so only rows never read again may go) makes that peak the larger of the two instead of
their sum. Only whole pages inside the rows are dropped (never the allocator's bookkeeping next to the
array). Elsewhere than Linux it does nothing.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import mmap
import sys

import numpy as np

#: madvise's advice that frees private anonymous pages (Linux's MADV_DONTNEED)
_MADV_DONTNEED = 4

_madvise = None
if sys.platform.startswith("linux"):
    try:
        _madvise = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True).madvise
        _madvise.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int]
        _madvise.restype = ctypes.c_int
    except (OSError, AttributeError):  # (no madvise in this C library: the rows stay)
        _madvise = None


def release_rows(array: np.ndarray, start: int, stop: int) -> int:
    """Free the whole pages of rows ``start:stop`` of the contiguous ``array`` (its own memory, never read
    again: their values become zeros); returns the bytes released (0 where it cannot)."""
    if _madvise is None or not array.flags.c_contiguous or array.ndim != 1 or not array.flags.owndata:
        return 0
    start, stop = max(start, 0), min(stop, len(array))
    if stop <= start:
        return 0
    page = mmap.PAGESIZE
    base = array.ctypes.data
    lo = -(-(base + start * array.itemsize) // page) * page  # (rounded in: whole pages of these rows only)
    hi = (base + stop * array.itemsize) // page * page
    if hi <= lo:
        return 0
    return hi - lo if _madvise(lo, hi - lo, _MADV_DONTNEED) == 0 else 0
