"""release_rows gives back the whole pages of the rows asked for, and nothing else of the array."""

from __future__ import annotations

import mmap
import sys

import numpy as np
import pytest

from fxscope.core import released_rows
from fxscope.core.released_rows import release_rows

linux_only = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="madvise: Linux only")


def _rss_anon_kb() -> int:
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("RssAnon:"):
                return int(line.split()[1])
    raise AssertionError("no RssAnon")


@linux_only
def test_the_rows_pages_are_freed_and_the_other_rows_kept() -> None:
    n = 8 << 20  # 64 MB of int64
    a = np.arange(n, dtype=np.int64)
    before = _rss_anon_kb()
    start, stop = 1001, n // 2 + 7
    released = release_rows(a, start, stop)
    after = _rss_anon_kb()
    page = mmap.PAGESIZE
    assert 0 < released <= (stop - start) * 8 and released % page == 0
    assert before - after >= released // 1024 // 2  # (the kernel took the pages: the resident size fell)
    # the whole pages inside the rows read as zeros now; every row outside them keeps its value
    first = (-(-(a.ctypes.data + start * 8) // page) * page - a.ctypes.data) // 8
    last = first + released // 8
    assert start <= first < start + page // 8 and stop - page // 8 < last <= stop
    assert not a[first:last].any()
    assert np.array_equal(a[:first], np.arange(first)) and np.array_equal(a[last:], np.arange(last, n))


@linux_only
def test_nothing_is_released_of_a_view_or_an_empty_range() -> None:
    a = np.arange(1 << 20, dtype=np.int64)
    assert release_rows(a[::2], 0, 1 << 18) == 0  # (not its own memory, not contiguous)
    assert release_rows(a[10:], 0, 1 << 18) == 0  # (a view: the rows are the base's to give)
    assert release_rows(a, 500, 500) == 0 and release_rows(a, 600, 100) == 0
    assert release_rows(a, 3, 5) == 0  # (less than a page: nothing)
    assert np.array_equal(a, np.arange(1 << 20))


@pytest.mark.skipif(released_rows._mremap is None, reason="mremap is Linux's")
def test_recycled_pages_move_under_rows_to_write_and_leave_zeros_behind() -> None:
    """RecycledPages.fill moves the whole pages given (their contents) under the rows of another array: the
    rows around them keep their values, the rows given read zeros (as released), and what is not moved is
    released."""
    n = 1 << 18  # (2 MB of int64: arrays of their own mappings)
    a = np.arange(n, dtype=np.int64) + 1_000_000
    b = np.full(n, -1, np.int64)
    pages = released_rows.RecycledPages()
    given = pages.give(a, 1000, 200_000)
    assert given >= (199_000 * 8 // 4096 - 1) * 4096
    moved = pages.fill(b, 5000, 105_000)
    assert moved >= (100_000 * 8 // 4096 - 1) * 4096 and pages.moved == moved
    pages.release()
    # b: -1 outside the moved pages; inside, values of a (a page moved whole: its 512 rows consecutive)
    inside = np.flatnonzero(b != -1)
    assert len(inside) * 8 == moved and inside[0] >= 5000 and inside[-1] < 105_000
    page_values = b[inside].reshape(-1, 512)
    assert np.all(np.diff(page_values, axis=1) == 1) and np.all(page_values >= 1_000_000 + 1000)
    # a: the given rows' whole pages read zeros (moved or released), the rows around them are kept
    zero = np.flatnonzero(a == 0)
    assert len(zero) * 8 == given and zero[0] >= 1000 and zero[-1] < 200_000
    keep = np.ones(n, bool)
    keep[zero] = False
    assert np.array_equal(a[keep], (np.arange(n) + 1_000_000)[keep])


def test_recycled_pages_without_mremap_release_what_is_given(monkeypatch) -> None:
    monkeypatch.setattr(released_rows, "_mremap", None)
    a = np.arange(1 << 18, dtype=np.int64) + 7
    pages = released_rows.RecycledPages()
    assert not pages.usable
    released = pages.give(a, 0, 100_000)
    assert released == int(np.count_nonzero(a[:100_000] == 0)) * 8 > 0  # (released at once)
    assert pages.fill(np.empty(1 << 18, np.int64), 0, 1000) == 0


def test_recycled_pages_refused_by_mremap_are_released(monkeypatch) -> None:
    """A kernel without MREMAP_DONTUNMAP refuses the move: nothing moves, what was given is released and
    later rows are released at once (the rows of the array written are untouched)."""
    monkeypatch.setattr(released_rows, "_mremap", lambda *args: released_rows._MAP_FAILED)
    a = np.arange(1 << 18, dtype=np.int64) + 7
    b = np.full(1 << 18, -1, np.int64)
    pages = released_rows.RecycledPages()
    assert pages.give(a, 0, 100_000) > 0
    assert pages.fill(b, 0, 100_000) == 0 and not pages.usable
    assert np.all(b == -1)
    pages.release()
    assert int(np.count_nonzero(a[:100_000] == 0)) > 0  # (released)
    assert pages.give(a, 100_000, 200_000) == int(np.count_nonzero(a[100_000:200_000] == 0)) * 8 > 0
