"""Give the memory a big build freed back to the system, so that the resident size after a load is what
the model holds, and keep it in the process while the build runs.

Building a model of tens of millions of events allocates and frees hundreds of MB of numpy temporaries.
glibc's allocator serves arrays below its (dynamic, up to 32 MB) mmap threshold from its heap and keeps
what they free there, so after the build the process stayed ~100 MB (at 10M events) above what its tables
hold. ``malloc_trim`` returns those free pages; elsewhere (other C libraries, other systems) this does
nothing.

While a build runs, the opposite matters: its temporaries are freed and allocated again block after block
(the reader's blocks of 65,536 records, each a few MB of arrays). With glibc's defaults the heap's top is
trimmed when a block frees its arrays and every next block faults the same pages in again: at 100M events
that was 1.4 million page faults and ~8 s of system time in one read (~55,000 at 30M: it depends on where
long-lived arrays land in the heap). :func:`hold_freed_memory` turns the trim on free off (and fixes the
mmap threshold at its 32 MB maximum, so block-sized arrays come from the heap): freed memory stays for the
next block, and the explicit :func:`return_freed_memory` after each step still gives it back.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import sys

#: mallopt parameters (glibc's malloc.h)
_M_TRIM_THRESHOLD = -1
_M_MMAP_THRESHOLD = -3
#: free memory at the heap's top kept on free (returned by return_freed_memory): more than a block's temporaries
HELD_BYTES = 1 << 30
#: arrays from this size on get their own mapping (glibc's largest mmap threshold on 64-bit systems)
MMAP_THRESHOLD = 32 << 20

_trim = None
_mallopt = None
if sys.platform.startswith("linux"):
    try:
        _libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
        _trim = _libc.malloc_trim
        _trim.argtypes = [ctypes.c_size_t]
        _trim.restype = ctypes.c_int
        _mallopt = _libc.mallopt
        _mallopt.argtypes = [ctypes.c_int, ctypes.c_int]
        _mallopt.restype = ctypes.c_int
    except (OSError, AttributeError):  # not glibc (musl has no malloc_trim)
        _trim = _mallopt = None


def return_freed_memory() -> bool:
    """Release the allocator's free memory to the system; True when something was released."""
    return bool(_trim(0)) if _trim is not None else False


def hold_freed_memory() -> bool:
    """Keep freed memory in the process for reuse until :func:`return_freed_memory` (see the module
    docstring); True when the allocator took the settings. Process-wide and idempotent."""
    if _mallopt is None:
        return False
    return bool(_mallopt(_M_MMAP_THRESHOLD, MMAP_THRESHOLD)) & bool(_mallopt(_M_TRIM_THRESHOLD, HELD_BYTES))
