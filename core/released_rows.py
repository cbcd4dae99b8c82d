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
import mmap

import numpy as np

from fxscope.formats.filled_arrays import LIBC, madvise

#: madvise's advice that frees private anonymous pages (Linux's MADV_DONTNEED)
_MADV_DONTNEED = 4

_madvise = madvise  # (None: no madvise in this C library, the rows stay)


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


#: mremap flags (Linux): move to the address given, leaving the source range mapped and empty (5.7+)
_MREMAP_MAYMOVE, _MREMAP_FIXED, _MREMAP_DONTUNMAP = 1, 2, 4
_MAP_FAILED = ctypes.c_void_p(-1).value

_mremap = None
if _madvise is not None and LIBC is not None:
    try:
        _mremap = LIBC.mremap
        _mremap.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_size_t, ctypes.c_int, ctypes.c_void_p]
        _mremap.restype = ctypes.c_void_p
    except (OSError, AttributeError):
        _mremap = None


def _whole_pages(array: np.ndarray, start: int, stop: int) -> tuple[int, int] | None:
    """The addresses [lo, hi) of the whole pages inside rows ``start:stop`` of the contiguous ``array`` (its own
    memory), or None when there is none or the array is not one."""
    if not array.flags.c_contiguous or array.ndim != 1 or not array.flags.owndata:
        return None
    start, stop = max(start, 0), min(stop, len(array))
    if stop <= start:
        return None
    page = mmap.PAGESIZE
    base = array.ctypes.data
    lo = -(-(base + start * array.itemsize) // page) * page
    hi = (base + stop * array.itemsize) // page * page
    return (lo, hi) if hi > lo else None


class RecycledPages:
    """The pages of rows read for the last time, moved into rows about to be written instead of freed.

    A build that consumes a temporary front to back while it writes a table front to back (the slices' build:
    the grouped events of the threads matched, the slice columns) gave the consumed rows' pages back
    (:func:`release_rows`) and faulted fresh, zeroed pages in for the table's rows: at 30M events ~45,000
    page faults. ``mremap`` moves pages from one address to another (their page table entries: no copy, no
    zeroing, no fault): :meth:`give` takes the whole pages of consumed rows, :meth:`fill` moves them under rows
    not written yet (their contents are then whatever the pages held: only for rows the caller writes before
    reading), :meth:`release` gives back what was not moved. The memory held is the same as releasing and
    faulting in (a page moved is not freed but not faulted in either). The source range stays mapped and
    reads as zeros afterwards, as after :func:`release_rows` (``MREMAP_DONTUNMAP``, Linux 5.7+); where
    ``mremap`` is missing or refuses, the pages are released as before."""

    def __init__(self) -> None:
        self._pool: list[list[int]] = []  # [address, bytes] of whole pages given and not moved yet
        self.moved = 0  # (bytes moved so far: what a test reads)
        self.usable = _mremap is not None

    def give(self, array: np.ndarray, start: int, stop: int) -> int:
        """Take the whole pages of rows ``start:stop`` of ``array`` (never read again); returns their bytes."""
        if not self.usable:
            return release_rows(array, start, stop)
        span = _whole_pages(array, start, stop)
        if span is None:
            return 0
        self._pool.append([span[0], span[1] - span[0]])
        return span[1] - span[0]

    def fill(self, array: np.ndarray, start: int, stop: int) -> int:
        """Move pages given under the whole pages of rows ``start:stop`` of ``array`` (not written yet, its own
        memory); returns the bytes moved (fewer when fewer were given)."""
        span = _whole_pages(array, start, stop) if self.usable else None
        if span is None:
            return 0
        lo, hi = span
        moved = 0
        while lo < hi and self._pool:
            entry = self._pool[-1]
            take = min(entry[1], hi - lo)
            source = entry[0] + entry[1] - take  # (the entry's last pages: it shrinks from its end)
            flags = _MREMAP_MAYMOVE | _MREMAP_FIXED | _MREMAP_DONTUNMAP
            if _mremap(source, take, take, flags, lo) in (None, _MAP_FAILED):  # (refused: release instead)
                self.usable = False
                break
            lo += take
            moved += take
            entry[1] -= take
            if not entry[1]:
                self._pool.pop()
        self.moved += moved
        return moved

    def release(self) -> None:
        """Give back the pages given and not moved."""
        for address, length in self._pool:
            if length:
                _madvise(address, length, _MADV_DONTNEED)
        self._pool.clear()
