"""Code columns with few distinct values (CodedColumn): one byte a row, read back as the int16 codes they
replace, whichever way they are indexed; columns with more values, or wider, stay arrays."""

from __future__ import annotations

import numpy as np
import pytest

from fxscope.core.trace.gathered import Gathered
from fxscope.formats.fxt.coded_column import MAX_VALUES, CodedColumn, coded
from fxscope.formats.fxt.columns import EventKind as K
from fxscope.formats.fxt.reader import read_fxt_bytes
from fxscope.formats.fxt.writer import FxtWriter


def _ref() -> np.ndarray:
    rng = np.random.default_rng(4)
    values = np.array([-1, 0, 7, 300, -32768, 32767], np.int16)
    return values[rng.integers(0, len(values), 5000)]


def test_few_values_are_coded_and_read_back(fxt_loops):
    ref = _ref()
    col = coded(ref.copy())
    assert isinstance(col, CodedColumn)
    assert col.index.dtype == np.uint8 and col.nbytes == len(ref) + col.values.nbytes
    assert col.dtype == np.int16 and len(col) == len(ref) and col.shape == ref.shape and col.ndim == 1
    got = np.asarray(col)
    assert got.dtype == np.int16 and np.array_equal(got, ref)
    assert np.asarray(col, np.int64).dtype == np.int64 and np.array_equal(col.astype(np.int32), ref)
    assert col.tolist() == ref.tolist() and list(col)[:5] == ref[:5].tolist()
    assert (col.min(), col.max()) == (ref.min(), ref.max())


def test_every_way_of_indexing(fxt_loops):
    ref = _ref()
    col = coded(ref.copy())
    assert col[0] == ref[0] and col[-1] == ref[-1] and isinstance(col[3], np.int16)
    for key in (slice(None), slice(10, 50), slice(3, 900, 7), slice(None, None, -1), slice(5, 2)):
        assert np.array_equal(col[key], ref[key]), key
    mask = ref > 0
    assert np.array_equal(col[mask], ref[mask])
    many = np.random.default_rng(1).integers(-len(ref), len(ref), 3000)  # (enough rows for the compiled loop)
    assert np.array_equal(col[many], ref[many]) and np.array_equal(col[::-1], ref[::-1])
    rows = np.array([4999, 0, 17, 17, -3])
    assert np.array_equal(col[rows], ref[rows]) and np.array_equal(col[rows.astype(np.int32)], ref[rows])
    assert np.array_equal(col[[[1, 2], [3, 4]]], ref[[[1, 2], [3, 4]]])
    assert len(col[np.zeros(0, np.int64)]) == 0
    # as numpy sees it: comparisons, arithmetic (after widening), an index of another array, a Gathered source
    assert np.array_equal(col == 7, ref == 7) and np.array_equal(col >= 0, ref >= 0)
    assert np.array_equal(col.astype(np.int64) + 1, ref.astype(np.int64) + 1)
    seen = np.zeros(1 << 16, bool)
    seen[col] = True
    assert np.array_equal(np.flatnonzero(seen), np.flatnonzero(np.isin(np.arange(1 << 16), ref.astype(np.int64) % (1 << 16))))
    assert np.array_equal(Gathered(col, np.array([3, 1]))[:], ref[[3, 1]])
    assert np.array_equal(Gathered(col, np.array([-1, 2]), missing=9)[:], [9, ref[2]])
    with pytest.raises(IndexError):
        col[len(ref)]
    with pytest.raises(TypeError):
        col[0] = 1  # read-only, as the reader's columns are to their consumers


def test_many_values_wide_codes_and_empty_columns_stay_arrays():
    many = np.arange(MAX_VALUES + 1, dtype=np.int16)
    assert coded(many) is many
    assert isinstance(coded(many[:MAX_VALUES]), CodedColumn)
    wide = np.zeros(10, np.int32)
    assert coded(wide) is wide
    empty = np.zeros(0, np.int16)
    assert coded(empty) is empty


def test_the_reader_codes_the_columns_with_few_values():
    """Three threads and two categories: coded; 300 names: an int16 array; every value as written."""
    w = FxtWriter()
    threads = [(10, 11), (10, 12), (20, 21)]
    for i, (pid, tid) in enumerate(threads, 1):
        w.thread(i, pid, tid)
    want = []
    for n in range(300):
        thread, cat = 1 + n % 3, ("a", "b")[n % 2]
        w.event(K.INSTANT, n, thread, cat, f"name {n}")
        want.append((threads[thread - 1], cat, f"name {n}"))
    cols = read_fxt_bytes(w.getvalue())
    assert isinstance(cols.ev_thread, CodedColumn) and isinstance(cols.ev_category, CodedColumn)
    assert isinstance(cols.ev_name, np.ndarray) and cols.ev_name.dtype == np.int16
    thread = np.asarray(cols.ev_thread)
    got = [((int(cols.threads_pid[t]), int(cols.threads_tid[t])), cols.strings[c], cols.strings[n])
           for t, c, n in zip(thread.tolist(), np.asarray(cols.ev_category).tolist(), cols.ev_name.tolist(),
                              strict=True)]  # fmt: skip
    assert got == want


def test_the_compiled_decoding_refuses_indexes_past_the_values():
    from fxscope.formats.fxt import compiled

    scan = compiled.record_scan
    assert scan is not None
    values = np.array([5, -7, 9], np.int16)
    out = np.empty(4, np.int16)
    scan.decode_codes(np.array([2, 0, 1, 2], np.uint8), values, out)
    assert out.tolist() == [9, 5, -7, 9]
    wide = np.empty(4, np.int32)
    scan.decode_codes(np.array([2, 0, 1, 2], np.uint8), values.astype(np.int32), wide)
    assert wide.tolist() == [9, 5, -7, 9]
    with pytest.raises(IndexError):
        scan.decode_codes(np.array([0, 3, 0, 0], np.uint8), values, out)
    with pytest.raises(ValueError):
        scan.decode_codes(np.array([0, 1, 0], np.uint8), values, out)  # out is not one item an index
    with pytest.raises(ValueError):
        scan.decode_codes(np.zeros(4, np.uint8), np.zeros(257, np.int16), out)  # more values than a byte names
    with pytest.raises(ValueError):
        scan.decode_codes(np.zeros(2, np.uint8), values, np.empty(2, np.int64))  # 8-byte items


def test_a_coded_column_says_every_value_is_some_rows(fxt_loops):
    """coded() (the compiled loop and numpy) codes the values the rows hold: each is some row's, and the column
    says so; a column made of some rows' codes does not claim it."""
    rng = np.random.default_rng(9)
    for ref in (_ref(), np.repeat(np.array([5, -1, 9], np.int16), 700), rng.integers(-3, 250, 4000).astype(np.int16)):
        col = coded(ref.copy())
        assert isinstance(col, CodedColumn) and col.every_value_used
        assert np.array_equal(col.values, np.unique(ref))
        assert np.array_equal(np.bincount(col.index, minlength=len(col.values)) > 0, np.ones(len(col.values), bool))
    assert not CodedColumn(col.index[:10], col.values).every_value_used
