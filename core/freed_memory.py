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

It also limits the heaps the threads allocate from (``M_ARENA_MAX`` 1: threads started after it share the
heaps made before): the model's steps are built on two threads at once (:mod:`fxscope.core.concurrent_steps`),
and with a heap of each thread's own the resident size after a 10M-event load was 366-394 MB instead of
359 (their few large allocations share a heap's lock at no measurable cost); :func:`return_freed_memory`
also trims the free top of the calling thread's heap.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import importlib
import os
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

#: set to 1 to keep numpy's advice of transparent huge pages for its large arrays (:func:`use_small_pages`)
HUGE_PAGES_ENV = "FXSCOPE_HUGE_PAGES"

#: the block freed to trim a thread's heap (:func:`_return_thread_heap_top`)
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
    """Give back the free top of the heap the calling thread allocates from: a block freed next to it while
    the trim threshold is low makes glibc shrink that heap (each thread that is not the process's first
    allocates from a heap of its own, an "arena", or shares one of those made before
    :func:`hold_freed_memory`'s limit). Measured with the model's steps on worker threads
    (:mod:`fxscope.core.concurrent_steps`), the resident size after a 10M-event load was 359-361 MB with
    it, and 359-389 MB with ``malloc_trim`` alone, which left the free top of such a heap in some runs
    (one small freed run is given back by either: it depends on where the long-lived tables landed)."""
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


def use_small_pages() -> bool:
    """Stop numpy advising transparent huge pages (``madvise(MADV_HUGEPAGE)``) for the arrays it allocates
    from now on (those of 4 MB and more, its default on Linux); True when numpy took the setting. Process-wide
    and idempotent; with ``FXSCOPE_HUGE_PAGES=1`` in the environment it does nothing.

    Why: a trace's load allocates and first-touches a few bytes an event for every table and temporary
    (~1.4 GB of fresh pages over the build of a 30M-event trace), and on the development machine (a
    virtual machine: ``thp_fault_alloc`` rose by 707 huge pages in that build) each fresh 2 MB page cost far
    more than the 512 small pages that replace it: the kernel zeroing huge pages (``clear_page_erms``) was a
    quarter of the build's CPU time. Measured there at 30M events, four alternating pairs: read 2.3-3.1 ->
    2.0-2.2 s, model build 5.1-6.7 -> 3.4-3.8 s (system time 2.2-2.9 -> 1.0-1.1 s), and the window's first
    frame 5.3 -> 3.9 s, its frames' p95 26.8 -> 23.5 ms (the pictures' arrays are fresh memory too). A free
    2 MB block that the hypervisor has taken back (free page reporting works on such blocks) must be
    faulted in again by the host before the guest zeroes it; the small pages come from memory freed
    recently (the likely cause; measured is the difference). The compiled kernels' own hash tables keep their advice (span_kernels.c: they are probed at
    random, and measured no slower or faster either way)."""
    if os.environ.get(HUGE_PAGES_ENV) == "1":
        return False
    for name in ("numpy._core.multiarray", "numpy.core.multiarray"):  # (numpy 2, numpy 1)
        try:
            setter = getattr(importlib.import_module(name), "_set_madvise_hugepage", None)
        except ImportError:
            continue
        if setter is not None:
            setter(False)
            return True
    return False
