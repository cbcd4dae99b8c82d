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

import contextlib
import ctypes
import ctypes.util
import os
import sys
import threading

from fxscope.formats.filled_arrays import NUMPY_MULTIARRAY, madvise

#: mallopt parameters (glibc's malloc.h)
_M_TRIM_THRESHOLD = -1
_M_MMAP_THRESHOLD = -3
_M_ARENA_MAX = -8
#: free memory at the heap's top kept on free (returned by return_freed_memory): more than a block's temporaries
HELD_BYTES = 1 << 30
#: arrays from this size on get their own mapping (glibc's largest mmap threshold on 64-bit systems)
MMAP_THRESHOLD = 32 << 20

#: 1: numpy's advice of transparent huge pages for its large arrays always on; 0: always off (small pages);
#: unset: on for a large trace's read and build, off after it and for smaller traces (:func:`use_huge_pages`,
#: :func:`use_small_pages`)
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
#: numpy's advice of huge pages is on for a load (:func:`use_huge_pages` until :func:`use_small_pages`) and
#: for the whole-trace queries of large traces running (:func:`huge_pages_for_query`); guarded by the lock
_advice_lock = threading.Lock()
_load_huge = False
_query_holders = 0


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


def _numpy_advice(on: bool) -> bool:
    """Set numpy's advice of transparent huge pages (``madvise(MADV_HUGEPAGE)`` on the arrays of 4 MB and
    more it allocates from now on); True when numpy took the setting."""
    if NUMPY_MULTIARRAY is None:
        return False
    NUMPY_MULTIARRAY._set_madvise_hugepage(on)
    return True


def use_huge_pages() -> bool:
    """numpy's advice of transparent huge pages on (its default on Linux), for a large trace's read and
    build (:data:`fxscope.core.trace.reading.HUGE_PAGES_FROM`); True when numpy took the setting.
    Process-wide and idempotent; with ``FXSCOPE_HUGE_PAGES=0`` in the environment it turns the advice off
    instead (small pages throughout) and returns False.

    Why: the read and the build allocate and first-touch a few bytes an event for every table and
    temporary in large arrays, each written in a few passes: a fresh 2 MB page costs one fault for 512 small
    pages' traps. Measured on the development machine (a virtual machine) on 2026-11-27, bench_scale at 10M /
    30M / 100M events, four rounds each way: with huge pages the build took 0.69-0.72 / 2.27-2.31 / 7.53-7.60 s
    against 0.86-0.99 / 2.12-2.40 / 8.57-9.09 s with small pages (system time at 100M 4.0-4.2 against 6.2-6.4
    s), the read no slower (7.6-7.8 against 7.9-8.7 s at 100M). A fresh small page there cost 3.1-3.9 us; a
    fresh huge one 0.8-0.9 us a 4 KB part when the guest had freed it recently, 4-7 us when the host had to
    fault it in again. Earlier measurements on a machine of the same kind had found the opposite (huge pages
    1.5-1.8x the build's time at 30M events; the likely cause, 2 MB blocks the host had taken back), so the
    environment variable keeps the choice open: ``0`` small pages throughout, ``1`` huge pages throughout."""
    global _load_huge
    if os.environ.get(HUGE_PAGES_ENV) == "0":
        _numpy_advice(False)
        return False
    with _advice_lock:
        _load_huge = True
        return _numpy_advice(True)


def use_small_pages() -> bool:
    """Stop numpy advising transparent huge pages for the arrays it allocates from now on, and take the advice
    off the allocator's heap (:func:`_heap_without_huge_pages`); True when numpy took the setting. Process-wide
    and idempotent; with ``FXSCOPE_HUGE_PAGES=1`` in the environment it does nothing.

    For a small trace's read (:data:`fxscope.core.trace.reading.HUGE_PAGES_FROM`), and once a load's tables are
    built (:mod:`fxscope.core.trace.prepare`), for what the window allocates after it (the search index, the
    pictures of its frames): huge pages were measured to pay in the load's build only, and the window's peak
    and frames were alike either way at 30M and 100M events (bench_scale, four rounds each way); small pages
    keep what the window holds afterwards to what it uses (khugepaged fills a 2 MB range of advised memory
    around a single live page: ``max_ptes_none`` 511 here). A load in another tab turns the advice on again
    for its own read and build: the setting is the process's, advice only. The compiled kernels' own hash
    tables keep their advice (span_kernels.c: they are probed at random, and measured no slower or faster
    either way). Huge pages were later measured to pay in a large trace's whole-trace queries too: while one
    runs (:func:`huge_pages_for_query`) the advice stays on until it ends."""
    global _load_huge
    if os.environ.get(HUGE_PAGES_ENV) == "1":
        return False
    with _advice_lock:
        _load_huge = False
        if _query_holders:  # (the last query to end turns it off)
            return NUMPY_MULTIARRAY is not None
        took = _numpy_advice(False)
        _heap_without_huge_pages()
        return took


@contextlib.contextmanager
def huge_pages_for_query(large: bool):
    """``with huge_pages_for_query(large):`` numpy's advice of huge pages on for the block when ``large`` (a
    whole-trace query of a trace read on huge pages: :mod:`fxscope.core.trace.query_pages`), back to small pages
    when the last such block ends, unless a load turned them on meanwhile. Nested and concurrent blocks
    (a search on one thread, the analysis panel's job on another) count; the environment variable
    (:data:`HUGE_PAGES_ENV`) overrides it as it does a load's choice.

    Why: a query of a large trace allocates masks and gathers over every slice or event (tens of MB each), and
    after a load the allocator's free memory was given back (:func:`return_freed_memory`), so a process's
    first queries first-touch them: on small pages, a fault each 4 KB. Measured on the development machine
    at 100M events (each query's first run in a fresh process after the load, three alternating pairs of
    processes): the search without the argument index 29,000-35,000 -> 5,700-8,300 page faults and 0.42-0.54
    -> 0.36-0.48 s, each slice's flame-graph node 24,400 -> 400-900 faults and 0.38-0.40 -> 0.35-0.43 s, the
    search with the index 2,100-12,300 -> 1,000-2,500 faults in the same time; the memory resident after
    them unchanged. A query run again reuses the allocator's memory either way. The argument index's build
    took the same time either way (its faults are the mapped file's pages): not run here."""
    global _query_holders
    if not large or NUMPY_MULTIARRAY is None or os.environ.get(HUGE_PAGES_ENV) in ("0", "1"):
        yield
        return
    with _advice_lock:
        _query_holders += 1
        if _query_holders == 1 and not _load_huge:
            _numpy_advice(True)
    try:
        yield
    finally:
        with _advice_lock:
            _query_holders -= 1
            if not _query_holders and not _load_huge:
                _numpy_advice(False)
                _heap_without_huge_pages()


#: madvise advice: no transparent huge pages for the range, khugepaged's collapsing included (Linux)
_MADV_NOHUGEPAGE = 15


def _heap_without_huge_pages() -> None:
    """Take the advice of huge pages off the allocator's heap (``[heap]`` in /proc/self/maps; with
    :func:`hold_freed_memory`'s one arena, every thread's): numpy's advice on an array it allocated there
    stays on that part of the heap after the array is freed, so the next arrays placed there would get huge
    pages anyway. Huge pages the heap has stay (the advice takes no page away); nothing is done where the
    system lacks it."""
    if madvise is None:
        return
    try:
        with open("/proc/self/maps") as f:
            heaps = [line.split()[0] for line in f if line.rstrip().endswith("[heap]")]
    except OSError:
        return
    for span in heaps:
        lo, hi = (int(x, 16) for x in span.split("-"))
        madvise(lo, hi - lo, _MADV_NOHUGEPAGE)
