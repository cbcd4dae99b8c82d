"""formats/filled_arrays.py: an array's pages mapped by one madvise call, its contents kept."""

from __future__ import annotations

import resource
import sys

import numpy as np
import pytest

from fxscope.core.freed_memory import use_small_pages
from fxscope.formats import filled_arrays


def _faults() -> int:
    return resource.getrusage(resource.RUSAGE_THREAD).ru_minflt


@pytest.mark.skipif(not sys.platform.startswith("linux") or not filled_arrays.enabled,
                    reason="MADV_POPULATE_WRITE is Linux 5.14+")  # fmt: skip
def test_populated_array_is_written_without_page_faults() -> None:
    """After array_to_fill, writing the whole array faults (almost) no page in: the call mapped them."""
    use_small_pages()  # (as a read does: numpy's huge pages would fault 2 MB at a time)
    n = 64 << 20  # (above glibc's mmap threshold: a fresh mapping, not heap memory resident already)
    plain = np.empty(n, np.uint8)
    before = _faults()
    plain.fill(1)
    plain_faults = _faults() - before
    filled = filled_arrays.array_to_fill(n, np.uint8)
    before = _faults()
    filled.fill(1)
    assert _faults() - before < plain_faults // 100
    assert plain_faults >= n // 4096 // 2  # (the comparison means something: the plain one did fault)


def test_populate_keeps_contents_and_skips_what_it_cannot_map() -> None:
    a = np.arange(1 << 20, dtype=np.int64)
    want = a.copy()
    filled_arrays.populate(a)
    assert np.array_equal(a, want)
    assert not filled_arrays.populate(np.empty(100, np.int64))  # small: left to fault in
    assert not filled_arrays.populate(np.empty(1 << 21, np.int64)[::2])  # not contiguous
    assert filled_arrays.array_to_fill(0, np.int32).shape == (0,)


def test_turned_off_leaves_arrays_to_fault_in(monkeypatch) -> None:
    monkeypatch.setattr(filled_arrays, "enabled", False)
    assert not filled_arrays.populate(np.empty(1 << 21, np.int64))


@pytest.mark.skipif(filled_arrays._huge_advice is None or not filled_arrays.enabled,
                    reason="no transparent huge pages, or no MADV_POPULATE_WRITE")  # fmt: skip
def test_an_array_numpy_gives_huge_pages_is_left_to_fault_in() -> None:
    """With numpy's advice of huge pages on (a load's read and build), an array of 4 MB and more faults in 2 MB
    at a time anyway: not populated; a smaller one, or any with the advice off, is."""
    from fxscope.core.freed_memory import _numpy_advice

    was = filled_arrays._huge_advice()
    try:
        _numpy_advice(True)
        assert not filled_arrays.populate(np.empty(1 << 19, np.int64))  # 4 MB
        assert filled_arrays.populate(np.empty((1 << 19) - 512, np.int64))  # just under
        _numpy_advice(False)
        assert filled_arrays.populate(np.empty(1 << 19, np.int64))
    finally:
        _numpy_advice(bool(was))
