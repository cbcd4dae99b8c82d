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

It also keeps every thread's allocations in one heap (``M_ARENA_MAX`` 1): the model's steps are built on two
threads at once (:mod:`fxscope.core.concurrent_steps`), and glibc gave a thread of its own its own heap, whose
tables and free holes interleaved so that the resident size after a 10M-event load was ~20 MB (5%) higher;
the steps' allocations are few and large, so sharing the heap's lock costs nothing measurable.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import sys
import threading

#: mallopt parameters (glibc's malloc.h)
_M_TRIM_THRESHOLD = -1
_M_MMAP_THRESHOLD = -3
_M_ARENA_MAX = -8
#: free memory at the heap's top kept on free (returned by return_freed_memory): more than a block's temporaries
HELD_BYTES = 1 << 30
#: arrays from this size on get their own mapping (glibc's largest mmap threshold on 64-bit systems)
MMAP_THRESHOLD = 32 << 20

#: what a thread's heap is trimmed with (:func:`return_thread_heap`): a block from the top of its heap
_TOP_BLOCK = 1 << 20

_trim = None
_mallopt = None
_malloc = _free = None
if sys.platform.startswith("linux"):
    try:
        _libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
        _trim = _libc.malloc_trim
        _trim.argtypes = [ctypes.c_size_t]
        _trim.restype = ctypes.c_int
        _mallopt = _libc.mallopt
        _mallopt.argtypes = [ctypes.c_int, ctypes.c_int]
        _mallopt.restype = ctypes.c_int
        _malloc, _free = _libc.malloc, _libc.free
        _malloc.argtypes, _malloc.restype = [ctypes.c_size_t], ctypes.c_void_p
        _free.argtypes, _free.restype = [ctypes.c_void_p], None
    except (OSError, AttributeError):  # not glibc (musl has no malloc_trim)
        _trim = _mallopt = _malloc = _free = None
_threshold_lock = threading.Lock()


def return_freed_memory() -> bool:
    """Release the allocator's free memory to the system (the free top of the calling thread's heap too);
    True when something was released."""
    if _trim is None:
        return False
    _return_thread_heap_top()
    return bool(_trim(0))


def _return_thread_heap_top() -> None:
    """Give back the free top of the calling thread's own heap. glibc gives a thread that is not the process's
    first a heap of its own (an "arena") when it first allocates (unless :func:`hold_freed_memory`'s limit
    came first: then it shares one of those made before); ``malloc_trim`` gives back the free pages inside
    every heap, but the free top of the first one only. Such a heap shrinks when a block next to its top is
    freed while the trim threshold is low: the temporaries of a model step built on a worker thread
    (:mod:`fxscope.core.concurrent_steps`) otherwise stayed at the top of its heap, through the next steps
    (a 10M-event load's peak was ~60 MB higher, its resident size after ~10-35 MB)."""
    if _mallopt is None or _malloc is None or _free is None:
        return
    with _threshold_lock:  # (the threshold is the process's: lowered only for this free)
        block = _malloc(_TOP_BLOCK)  # (from this thread's heap: below the mmap threshold)
        if not block:
            return
        _mallopt(_M_TRIM_THRESHOLD, 0)
        _free(block)
        _mallopt(_M_TRIM_THRESHOLD, HELD_BYTES)


def hold_freed_memory() -> bool:
    """Keep freed memory in the process for reuse until :func:`return_freed_memory` (see the module
    docstring); True when the allocator took the settings. Process-wide and idempotent."""
    if _mallopt is None:
        return False
    return (bool(_mallopt(_M_MMAP_THRESHOLD, MMAP_THRESHOLD)) & bool(_mallopt(_M_TRIM_THRESHOLD, HELD_BYTES))
            & bool(_mallopt(_M_ARENA_MAX, 1)))  # fmt: skip
