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


def test_release_after_a_fill_gives_the_pages_back():
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
@pytest.mark.parametrize("release", [True, False])
def test_the_unfilled_rest_of_the_event_starts_is_given_back(monkeypatch, release):
    monkeypatch.setattr(framing, "SUPER_WORDS", 1 << 16)  # parts of 64 K starts (256 KB)
    words = np.frombuffer(generate_trace(60_000, seed=3), np.uint64)
    with page_ahead.PageAhead(None) as pages:
        if not pages.enabled:
            pytest.skip("no madvise")
        split = framing.split_records(words, fill_ahead=pages.fill,
                                      release_ahead=pages.release if release else None)  # fmt: skip
        starts = split[0]
        whole = starts.base
        assert whole is not None and len(whole) == len(words)
        rest = lambda: _resident_pages(whole, starts.nbytes, whole.nbytes)  # noqa: E731
        time.sleep(0.1)  # (the fills done)
        left = _settled(rest, 0, timeout=10.0 if release else 0.5)
        if release:
            assert left == 0
        else:  # (the test's other half: without the release the last part stays)
            assert left > 0
        # the starts themselves untouched: the same as the plain walk's
        assert np.array_equal(starts, framing.split_records(words)[0])
