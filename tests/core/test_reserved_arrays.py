"""Reserved arrays (core/reserved_arrays.py): zero-filled and writable at the size asked, and only the pages
written are resident (the LOD pyramid's one-pass fill relies on it)."""

from __future__ import annotations

import sys

import numpy as np
import pytest

from fxscope.core.reserved_arrays import reserved_array


def _rss_anon() -> int:
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("RssAnon:"):
                return int(line.split()[1]) * 1024
    raise AssertionError("no RssAnon")


def test_a_reserved_array_is_zeroed_writable_and_of_its_size():
    a = reserved_array(1000, np.int32)
    assert a is not None and a.dtype == np.int32 and a.shape == (1000,) and a.flags.writeable
    assert not a.any()
    a[:] = np.arange(1000)
    assert a.sum() == 999 * 1000 // 2
    assert len(reserved_array(0, np.int64)) == 0


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc/self/status")
def test_only_the_written_pages_of_a_reserved_array_are_resident():
    """A 1 GB reserved array of which 8 MB are written adds about 8 MB to the resident memory (not 1 GB); it
    all goes when the array and its views do."""
    before = _rss_anon()
    a = reserved_array(1 << 30, np.uint8)
    assert a is not None
    a[: 8 << 20] = 1
    a[-4096:] = 2
    grown = _rss_anon() - before
    assert (8 << 20) <= grown < (24 << 20), grown
    view = a[: 8 << 20]
    del a
    assert view[0] == 1  # (a view keeps the mapping)
    del view
    assert _rss_anon() - before < (4 << 20)
