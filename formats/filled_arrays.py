"""Arrays that a pass is about to write whole, their pages mapped by one call instead of one fault a page.

The model's build writes hundreds of MB of fresh arrays (at 30M events ~1.5 GB of first-touched pages,
~400,000 page faults: about a quarter of the build's CPU time). A fresh page costs the kernel its
allocation, zeroing and accounting whoever maps it, but a first touch also costs a trap into the kernel
per 4 KB page, which on a virtual machine is a large part of it. ``madvise(MADV_POPULATE_WRITE)`` (Linux
5.14+) maps a whole range as writes would, in one call: measured on the development machine (a VM), 200 MB
faulted in by a fill took 65 ms of CPU, populated first 48 ms. In the build it pays most for arrays written
out of order (the slices' grouping by thread, counting sorts: 0.47 -> 0.43 s for the slices step at 30M
events) and for large ones (the flows' times and ids at 100M events: system time 0.6 -> 0.25 s); an array
written front to back gains less (the pages zeroed ahead are out of the cache when written: part of the
system time saved comes back as user time).

Not for an array that numpy advised transparent huge pages for (4 MB and more, while its advice is on:
:func:`fxscope.core.freed_memory.use_huge_pages`, a large trace's read and build): it faults in 2 MB at a time
anyway, and populated ahead its pages are out of the cache when written. Measured on the development
machine at 10M / 30M / 100M events (read and build, huge pages, three alternating pairs): the build 0.77-0.97
/ 2.16-2.67 / 7.53-8.18 s populating every array against 0.70-0.90 / 1.98-2.24 / 7.58-8.21 s populating none.

Only for arrays that are certainly written whole (a kernel's output of an exact size, a gather): a page
populated and never written is memory held for nothing. Where the advice is missing (not Linux, an older
kernel) the array is returned as it is and its pages fault in as before; nothing depends on it for
correctness (populating keeps the contents).
"""

from __future__ import annotations

import ctypes
import ctypes.util
import os
import sys

import numpy as np

#: madvise advice: map a range's pages as a write of each would (Linux 5.14+)
MADV_POPULATE_WRITE = 23
#: arrays smaller than this are left to fault in (most come from the allocator's heap, resident already)
MIN_BYTES = 1 << 20
#: set to 0 to leave every array to fault in (to compare)
ENV = "FXSCOPE_POPULATE"
#: arrays from this size on get numpy's advice of huge pages while it is on (numpy's own threshold)
HUGE_ADVICE_FROM = 1 << 22

_PAGE = 4096
#: the C library (ctypes, errno kept: its calls release the interpreter's lock) and its madvise(addr, len,
#: advice) -> int, on Linux; None elsewhere or where it lacks them (shared with core/released_rows.py)
LIBC = None
madvise = None
if sys.platform.startswith("linux"):
    try:
        LIBC = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)
        madvise = LIBC.madvise
        madvise.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int]
        madvise.restype = ctypes.c_int
    except (OSError, AttributeError):
        LIBC = madvise = None
enabled = madvise is not None and os.environ.get(ENV, "1") != "0"


def _thp_never() -> bool:
    """Whether the kernel makes no transparent huge pages at all (then numpy's advice does nothing)."""
    try:
        with open("/sys/kernel/mm/transparent_hugepage/enabled") as f:
            return "[never]" in f.read()
    except OSError:
        return True


def _numpy_multiarray():
    """numpy's module that holds its huge page advice (``_get_madvise_hugepage`` / ``_set_madvise_hugepage``:
    numpy 2's, or numpy 1's), or None."""
    for name in ("numpy._core.multiarray", "numpy.core.multiarray"):
        module = sys.modules.get(name)
        if module is not None and hasattr(module, "_set_madvise_hugepage"):
            return module
    return None


#: numpy's module of the advice (:mod:`fxscope.core.freed_memory` switches it for a load), or None
NUMPY_MULTIARRAY = _numpy_multiarray()
_huge_advice = (None if NUMPY_MULTIARRAY is None or not sys.platform.startswith("linux") or _thp_never()
                else NUMPY_MULTIARRAY._get_madvise_hugepage)  # fmt: skip


def gets_huge_pages(array: np.ndarray) -> bool:
    """Whether numpy advises huge pages for an allocation like ``array``: its advice is on now (an array made
    while it was off does not know; the load switches it only between its phases) and the array is large
    enough (by its own size: a view of part of a larger array is judged as if it were that large alone)."""
    return _huge_advice is not None and array.nbytes >= HUGE_ADVICE_FROM and bool(_huge_advice())


def populate(array: np.ndarray) -> bool:
    """Map the whole pages of contiguous ``array`` for writing (its contents unchanged); False where the
    system cannot (then it stops trying) or the array is small, not contiguous or in huge pages."""
    global enabled
    if not enabled or array.nbytes < MIN_BYTES or not array.flags.c_contiguous or gets_huge_pages(array):
        return False
    base = array.ctypes.data
    lo = -(-base // _PAGE) * _PAGE
    hi = (base + array.nbytes) // _PAGE * _PAGE
    if hi <= lo:
        return False
    if madvise(lo, hi - lo, MADV_POPULATE_WRITE) != 0:
        if ctypes.get_errno() in (22, 38):  # EINVAL / ENOSYS: a kernel without the advice, no more tries
            enabled = False
        return False
    return True


def array_to_fill(n: int, dtype) -> np.ndarray:
    """``np.empty(n, dtype)`` with its pages mapped at once (:func:`populate`): for an array the caller
    writes whole before reading it."""
    array = np.empty(n, dtype)
    populate(array)
    return array
