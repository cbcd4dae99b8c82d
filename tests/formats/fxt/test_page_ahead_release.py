"""The pages the reader faulted in ahead for event starts that never came are given back: the framing's
event-starts buffer (one slot a word of the file; the model keeps it) had the rest of its last part
resident (~2.9 MB at any trace size). Measured with ``mincore`` (Linux): the pages of a range resident."""

from __future__ import annotations

import ctypes
import ctypes.util
import sys
import time

import numpy as np
import pytest

from fxscope.core.synthetic_trace import generate_trace
from fxscope.formats.fxt import compiled, framing, page_ahead

pytestmark = pytest.mark.skipif(
    not sys.platform.startswith("linux") or page_ahead._madvise is None, reason="madvise and mincore: Linux"
)

_PAGE = 4096
_libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
_libc.mincore.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_void_p]


def _resident_pages(array: np.ndarray, start: int, end: int) -> int:
    """Resident whole pages of ``array``'s bytes ``[start, end)``."""
    a = (array.ctypes.data + start + _PAGE - 1) // _PAGE * _PAGE
    b = (array.ctypes.data + end) // _PAGE * _PAGE
    if b <= a:
        return 0
    vec = (ctypes.c_ubyte * ((b - a) // _PAGE))()
    assert _libc.mincore(a, b - a, vec) == 0
    return sum(v & 1 for v in vec)


def _settled(count, want, timeout: float = 10.0) -> int:
    """``count()`` once it is ``want`` (the page worker runs the queued jobs in order: polled), or after
    ``timeout`` seconds."""
    end = time.monotonic() + timeout
    n = count()
    while n != want and time.monotonic() < end:
        time.sleep(0.01)
        n = count()
    return n


@pytest.fixture
def small_pages():
    """numpy's arrays without its advice of huge pages (as the application's, freed_memory.use_small_pages):
    the kernel's collapsing of a range into huge pages would map released pages again."""
    try:
        from numpy._core import multiarray
    except ImportError:  # (numpy 1)
        from numpy.core import multiarray
    was = multiarray._set_madvise_hugepage(False)
    yield
    multiarray._set_madvise_hugepage(was)


def test_release_after_a_fill_gives_the_pages_back(small_pages):
    buf = np.empty(64 << 18, np.uint32)  # 64 MB: a mapping of its own
    part = buf[: 4 << 18]  # 4 MB
    with page_ahead.PageAhead(None) as pages:
        if not pages.enabled:
            pytest.skip("no madvise")
        whole = part.nbytes // _PAGE - (part.ctypes.data % _PAGE != 0)
        resident = lambda: _resident_pages(part, 0, part.nbytes)  # noqa: E731
        pages.fill(part)
        assert _settled(resident, whole) == whole
        pages.fill(part)
        pages.release(part)  # after the fill queued before it
        assert _settled(resident, 0) == 0


@pytest.mark.skipif(compiled.record_scan is None, reason="the compiled framing walk fills ahead")
def test_the_unfilled_rest_of_the_event_starts_is_released(monkeypatch):
    monkeypatch.setattr(framing, "SUPER_WORDS", 1 << 16)  # parts of 64 K starts (256 KB)
    words = np.frombuffer(generate_trace(60_000, seed=3), np.uint64)
    filled, released = [], []
    split = framing.split_records(words, fill_ahead=filled.append, release_ahead=released.append)
    starts = split[0]
    whole = starts.base
    assert whole is not None and len(whole) == len(words)
    # once, the rest of the last part faulted in: right after the starts, up to that part's end
    assert len(released) == 1
    rest, last = released[0], filled[-1]
    assert rest.ctypes.data == starts.ctypes.data + starts.nbytes and len(rest) > 0
    assert rest.ctypes.data + rest.nbytes == last.ctypes.data + last.nbytes
    # the starts themselves as the plain walk's
    assert np.array_equal(starts, framing.split_records(words)[0])
