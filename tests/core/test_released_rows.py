"""release_rows gives back the whole pages of the rows asked for, and nothing else of the array."""

from __future__ import annotations

import mmap
import sys

import numpy as np
import pytest

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
