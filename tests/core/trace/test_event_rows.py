"""Event rows and kind counts found a block at a time: the same as the whole-column numpy expressions."""

from __future__ import annotations

import numpy as np
import pytest

from fxscope.core.trace import event_rows
from fxscope.core.trace.event_rows import event_kind_counts, kind_count, kind_counts, kind_rows
from fxscope.formats.fxt.columns import EventKind
from fxscope.formats.fxt.reader import read_fxt
from fxscope.resources import DEMO_TRACE
from tests.compiled_loops import choose_loops


def _compiled():
    """The compiled kernels' holder, with span_kernels built (choose_loops: not built fails, FXSCOPE_NO_COMPILED
    skips)."""
    from fxscope.core.trace import compiled

    choose_loops("compiled", None, compiled, "span_kernels")
    return compiled


@pytest.mark.parametrize("block", [7, 1 << 20])
def test_rows_and_counts_match_numpy(block: int, monkeypatch, span_paths) -> None:
    """(span_paths: the rows found by the compiled kernel, span_kernels.kind_rows, and by numpy blocks)"""
    monkeypatch.setattr(event_rows, "BLOCK", block)
    rng = np.random.default_rng(4)
    kind = rng.integers(0, 11, 1000).astype(np.uint8)
    for first, last in ((2, 4), (5, 7), (8, 10), (0, 0), (10, 10)):
        rows = kind_rows(kind, first, last)
        assert rows.dtype == np.int32
        assert kind_count(kind, first, last) == len(rows) == int(np.count_nonzero((kind >= first) & (kind <= last)))
        assert rows.tolist() == np.flatnonzero((kind >= first) & (kind <= last)).tolist()
    assert kind_counts(kind, 11).tolist() == np.bincount(kind, minlength=11).tolist()
    assert kind_counts(kind, 3).tolist() == np.bincount(kind, minlength=3).tolist()  # longer than asked
    assert kind_rows(kind[:0], 2, 4).tolist() == [] and kind_counts(kind[:0], 4).tolist() == [0] * 4
    assert kind_count(kind[:0], 2, 4) == 0 and kind_count(kind, 11, 255) == 0


def test_rows_kernel_refuses_a_wrong_count() -> None:
    """span_kernels.kind_rows writes only into rows holding exactly the rows found (never past them); the
    kernel's own checks, so the compiled kernel only (not built is a failure, as for span_paths)."""
    compiled = _compiled()
    kind = np.array([5, 1, 6, 7, 5], np.uint8)
    rows = np.full(4, -9, np.int64)
    assert compiled.span_kernels.kind_rows(kind, 5, 7, None, False) == 4
    assert compiled.span_kernels.kind_rows(kind, 5, 7, rows, True) == 4 and rows.tolist() == [0, 2, 3, 4]
    for wrong in (np.zeros(3, np.int32), np.zeros(5, np.int32)):
        with pytest.raises(ValueError):
            compiled.span_kernels.kind_rows(kind, 5, 7, wrong, False)


def test_long_columns_and_wrapped_kind_ranges(span_paths) -> None:
    """Columns past the compiled count's 16-byte steps and 255-step sums (lengths around their edges), every
    kind of row matching or none."""
    rng = np.random.default_rng(8)
    for n in (15, 16, 17, 31, 32, 33, 63, 64, 65, 4079, 4080, 4081, 16 * 255 * 3 + 5, 200_003):  # (and the AVX2 fill's 32)
        kind = rng.integers(0, 256 if n % 2 else 11, n).astype(np.uint8)
        for first, last in ((2, 4), (0, 255), (200, 210), (255, 255), (7, 7)):
            want = np.flatnonzero((kind >= first) & (kind <= last))
            assert np.array_equal(kind_rows(kind, first, last), want), (n, first, last)


def test_rows_kernel_writes_nothing_past_a_short_buffer() -> None:
    """A rows buffer shorter than the rows found is filled and refused, the memory after it untouched (the
    compiled kernel's own checks)."""
    compiled = _compiled()
    kind = np.random.default_rng(9).integers(0, 4, 100_000).astype(np.uint8)
    found = int(np.count_nonzero(kind == 1))
    for wide, dtype in ((False, np.int32), (True, np.int64)):
        for short in (1, 5, 8, 31, 32, 33, 100):  # (the AVX2 fill stores 8 rows at once: never past the buffer)
            buffer = np.full(found + 40, -9, dtype)
            with pytest.raises(ValueError):
                compiled.span_kernels.kind_rows(kind, 1, 1, buffer[: found - short], wide)
            assert buffer[found - short :].tolist() == [-9] * (short + 40)


@pytest.fixture(params=["compiled", "numpy"])
def summary_loops(request, monkeypatch) -> str:
    """Once with the compiled byte counts (core/trace/summary_kernels.c), once with the numpy blocks."""
    from fxscope.core.trace import compiled
    from tests.compiled_loops import choose_loops

    return choose_loops(request.param, monkeypatch, compiled, "summary_kernels")


def test_counts_of_every_byte_value(summary_loops: str) -> None:
    """Counts of values up to 255 (any length, every value, runs of one value), a minimum length past 256,
    a column that is not uint8 (the numpy path), an empty one: np.bincount's results."""
    rng = np.random.default_rng(18)
    for kind in (rng.integers(0, 256, 100_003).astype(np.uint8), np.full(37, 200, np.uint8), np.zeros(0, np.uint8),
                 rng.integers(0, 9, 5000).astype(np.uint8)[::3], rng.integers(0, 300, 1000)):  # fmt: skip
        for minlength in (0, 11, 256, 300):
            want = np.bincount(kind, minlength=minlength)
            got = kind_counts(kind, minlength)
            assert got.dtype == np.int64 and got.tolist() == want.tolist(), (len(kind), minlength)


def test_event_kind_counts_are_kept_for_the_columns_kind_column() -> None:
    """The kinds are counted once per kind column: the same counts again without a count (the kept array,
    read only), and counted anew when the columns' kind column is another."""
    cols = read_fxt(DEMO_TRACE)
    counts = event_kind_counts(cols)
    assert counts.tolist()[: len(EventKind)] == np.bincount(cols.ev_kind, minlength=len(EventKind)).tolist()
    assert event_kind_counts(cols) is counts and not counts.flags.writeable
    cols.ev_kind = cols.ev_kind[: len(cols.ev_kind) // 2].copy()
    again = event_kind_counts(cols)
    assert again is not counts
    assert again.tolist()[: len(EventKind)] == np.bincount(cols.ev_kind, minlength=len(EventKind)).tolist()
