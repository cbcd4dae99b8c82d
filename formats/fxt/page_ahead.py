"""Fault memory in on a second thread, ahead of the reader, so that the kernel's part of a page's first touch
runs on the other core.

Why: a read of tens of millions of events writes hundreds of MB of fresh output columns and maps the
file's pages block after block. The first touch of each page is kernel time on the thread that touches it,
and on a virtual machine whose host takes back free memory (balloon free page reporting) fresh anonymous
memory costs ~1-2 ms per MB: seconds at 100M events, a third of the read. :class:`PageAhead` asks the
kernel to map those pages (``madvise`` ``MADV_POPULATE_WRITE`` for arrays about to be filled,
``MADV_POPULATE_READ`` for file pages about to be read) on a worker thread while the reader decodes the
block before them; ``ctypes`` releases the GIL around the call (Python's ``mmap.madvise`` holds it).

Nothing depends on it for correctness: populating leaves the contents as they are (a page the reader
wrote first stays as written), a job the worker has not reached yet is just a page the reader faults in
itself, and where the advice is missing (not Linux, a kernel before 5.14) the worker stops trying.
"""

from __future__ import annotations

import threading
from collections import deque

import numpy as np

from fxscope.formats.filled_arrays import madvise

#: madvise advice (Linux 5.14+): map the pages of a range as a read / a write of each would
MADV_POPULATE_READ = 22
MADV_POPULATE_WRITE = 23
#: madvise advice: drop the pages of a range (anonymous memory reads as zeros again, unmapped until written)
MADV_DONTNEED = 4
#: bytes per madvise call: a job is split so that close() waits for at most one such call
_STEP = 8 << 20

_madvise = madvise  # (the C library's, releasing the interpreter's lock; None: not Linux)

_PAGE = 4096


class PageAhead:
    """A worker thread that populates the ranges it is given, in order (see the module docstring): byte
    ranges of the file's map (``file_bytes``, a uint8 view of it; None: bytes in memory, nothing to map)
    and arrays about to be filled (kept alive until done). :meth:`close` drops what is left and joins the
    thread. ``enabled=False`` (a small file: not worth a thread) makes every call a no-op."""

    def __init__(self, file_bytes: np.ndarray | None, enabled: bool = True) -> None:
        self._file = file_bytes
        self._jobs: deque[tuple[np.ndarray, int, int, int]] = deque()
        self._cv = threading.Condition()
        self._closed = False
        self._floor = 0  # file bytes below this are done with: a queued map of them is dropped
        self._thread: threading.Thread | None = None
        self.enabled = enabled and _madvise is not None

    def map_file(self, start: int, end: int) -> None:
        """Queue the file's bytes ``[start, end)`` to be mapped (the next block's, while this one decodes)."""
        if self._file is not None:
            end = min(end, len(self._file))
            if end > start:
                self._put(self._file, MADV_POPULATE_READ, start, end)

    def passed(self, end: int) -> None:
        """The reader is done with the file's bytes below ``end`` (it reads the file front to back): a queued
        map of them is dropped (it would make pages resident again that the reader released)."""
        self._floor = max(self._floor, end)

    def clear(self) -> None:
        """Drop the queued jobs, before the reader's next pass over the file (from its start again)."""
        with self._cv:
            self._jobs.clear()
            self._floor = 0

    def fill(self, array: np.ndarray) -> None:
        """Queue the pages of ``array`` (contiguous, writable, about to be filled) to be faulted in."""
        self._put(array, MADV_POPULATE_WRITE, 0, array.nbytes)

    def release(self, array: np.ndarray) -> None:
        """Queue the whole pages of ``array`` (contiguous, its contents no longer wanted: a part of a buffer
        that :meth:`fill` faulted in and nothing wrote) to be given back, after the jobs queued before it:
        a fill still queued or running would make them resident again."""
        self._put(array, MADV_DONTNEED, 0, array.nbytes)

    def _put(self, array: np.ndarray, advice: int, start: int, end: int) -> None:
        if not self.enabled or end - start < _PAGE:
            return
        with self._cv:
            if self._closed:
                return
            self._jobs.append((array, advice, start, end))
            if self._thread is None:
                self._thread = threading.Thread(target=self._work, name="fxscope-page-ahead", daemon=True)
                self._thread.start()
            self._cv.notify()

    def _work(self) -> None:
        while True:
            with self._cv:
                while not self._jobs and not self._closed:
                    self._cv.wait()
                if self._closed:
                    return
                array, advice, start, end = self._jobs.popleft()
            if advice == MADV_POPULATE_READ and end <= self._floor:
                continue
            base = array.ctypes.data
            a = (base + start + _PAGE - 1) // _PAGE * _PAGE  # whole pages inside the range only
            stop = base + end
            while a + _PAGE <= stop and not self._closed:
                length = min(_STEP, (stop - a) // _PAGE * _PAGE)
                if _madvise(a, length, advice) != 0:  # (EINVAL: a kernel without the advice) no more tries
                    self.enabled = False
                    break
                a += length
            del array

    def close(self) -> None:
        """Drop the jobs not started and wait for the worker (at most one madvise call of :data:`_STEP`)."""
        with self._cv:
            self._closed = True
            self._jobs.clear()
            self._cv.notify()
        if self._thread is not None:
            self._thread.join()

    def __enter__(self) -> PageAhead:
        return self

    def __exit__(self, *exc) -> None:
        self.close()
