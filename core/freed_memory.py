"""Give the memory a big build freed back to the system, so that the resident size after a load is what
the model holds.

Building a model of tens of millions of events allocates and frees hundreds of MB of numpy temporaries.
glibc's allocator serves arrays below its (dynamic, up to 32 MB) mmap threshold from its heap and keeps
what they free there, so after the build the process stayed ~100 MB (at 10M events) above what its tables
hold. ``malloc_trim`` returns those free pages; elsewhere (other C libraries, other systems) this does
nothing.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import sys

_trim = None
if sys.platform.startswith("linux"):
    try:
        _trim = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6").malloc_trim
        _trim.argtypes = [ctypes.c_size_t]
        _trim.restype = ctypes.c_int
    except (OSError, AttributeError):  # not glibc (musl has no malloc_trim)
        _trim = None


def return_freed_memory() -> bool:
    """Release the allocator's free memory to the system; True when something was released."""
    return bool(_trim(0)) if _trim is not None else False
