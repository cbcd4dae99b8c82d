"""column_matches (core.trace.query): a string-id column looked up in a search's match table, against a row by
row lookup, for every id type a column may have, ids out of range either way (negative ids, ids past the
table: read False), tables shorter and longer than a 16-bit id's range, and batches cut across."""

from __future__ import annotations

import random

import numpy as np
import pytest

from fxscope.core.trace import compiled, query
from fxscope.core.trace.gathered import Gathered
from fxscope.core.trace.query import column_matches, string_matches
from fxscope.formats.fxt.coded_column import coded
from fxscope.formats.fxt.frequent_codes import frequent_coded
from tests.compiled_loops import choose_loops


def _expected(table: np.ndarray, ids) -> np.ndarray:
    """Row by row: the id's entry when it names one of the table's strings (the last entry is the sentinel)."""
    return np.array([0 <= int(i) < len(table) - 1 and bool(table[int(i)]) for i in ids], bool)


def _table(strings: int, seed: int) -> np.ndarray:
    """A match table as string_matches makes it: ``strings`` entries, then the sentinel (False)."""
    table = np.zeros(strings + 1, bool)
    table[:strings] = np.random.default_rng(seed).random(strings) < 0.3
    table[: min(strings, 4)] = True  # (ids 0..3 match: a wrong lookup of small ids shows)
    return table


def _hostile_ids(dtype: np.dtype, strings: int, n: int, seed: int) -> np.ndarray:
    """Ids of ``dtype``: mostly valid, plus the type's extremes, -1, the sentinel's id and ids just past it."""
    info = np.iinfo(dtype)
    rng = np.random.default_rng(seed)
    valid = rng.integers(0, min(strings, int(info.max) + 1), n)
    edges = [info.min, info.max, 0, min(strings - 1, int(info.max)), min(strings, int(info.max)),
             min(strings + 1, int(info.max))]  # fmt: skip
    if info.min < 0:
        edges += [-1, -2, info.min + 1]
    ids = np.concatenate([valid.astype(dtype), np.array(edges * 3, dtype=dtype)])
    rng.shuffle(ids)
    return ids


@pytest.mark.parametrize("dtype", [np.int8, np.uint8, np.int16, np.uint16, np.int32, np.uint32, np.int64, np.uint64])
@pytest.mark.parametrize("strings", [1, 300, 40_000, 70_000])
def test_each_id_type_reads_its_entry_and_out_of_range_ids_read_false(dtype, strings: int, monkeypatch) -> None:
    monkeypatch.setattr(query, "MATCH_BATCH", 97)  # (batches cut across: the lookup kept between them)
    table = _table(strings, seed=strings)
    ids = _hostile_ids(np.dtype(dtype), strings, 1000, seed=7)
    got = column_matches(table, ids)
    assert got.dtype == np.bool_ and got.shape == ids.shape
    np.testing.assert_array_equal(got, _expected(table, ids))


def test_a_signed_16_bit_id_below_zero_never_reads_a_string_past_32767() -> None:
    """Read unsigned, -1 of an int16 column is 65535: a table of 70,000 strings has an entry there (True),
    which the id must not read."""
    table = np.ones(70_001, bool)
    table[-1] = False
    ids = np.array([-1, -32768, 32767, 0, -2], np.int16)
    np.testing.assert_array_equal(column_matches(table, ids), [False, False, True, True, False])


def test_coded_and_gathered_columns_as_the_model_stores_names(monkeypatch) -> None:
    """The slices' names and categories: a Gathered over the reader's coded columns (one-byte codes, and
    codes with escaped rare values), some values past the table or negative."""
    monkeypatch.setattr(query, "MATCH_BATCH", 1000)
    rng = np.random.default_rng(3)
    strings = 900
    table = _table(strings, seed=11)
    frequent = rng.integers(0, 40, 20_000)
    frequent[rng.integers(0, 20_000, 200)] = rng.integers(-5, strings + 50, 200)  # rare: escaped values
    names = frequent_coded(frequent.astype(np.int16))
    categories = coded(rng.choice(np.array([-1, 2, 5, strings, strings + 3], np.int16), 20_000))
    rows = rng.integers(0, 20_000, 7_000)
    for column in (names, categories):
        plain = np.asarray(column)
        assert not isinstance(column, np.ndarray)  # (the coded forms are what is tested here)
        gathered = Gathered(column, rows)
        np.testing.assert_array_equal(column_matches(table, gathered), _expected(table, plain[rows]))
        np.testing.assert_array_equal(column_matches(table, column), _expected(table, plain))


def test_a_column_of_no_rows_and_a_table_of_no_strings() -> None:
    assert len(column_matches(_table(5, 1), np.zeros(0, np.int16))) == 0
    ids = np.array([-1, 0, 1, 7], np.int32)
    np.testing.assert_array_equal(column_matches(np.zeros(1, bool), ids), [False] * 4)
    np.testing.assert_array_equal(column_matches(np.zeros(1, bool), ids.astype(np.int16)), [False] * 4)


@pytest.fixture(params=["compiled", "numpy"])
def match_loops(request, monkeypatch) -> str:
    """Both implementations of a gathered code column's matches (summary_kernels.coded_matches, numpy)."""
    return choose_loops(request.param, monkeypatch, compiled, "summary_kernels")


def test_both_paths_match_a_gathered_code_column_row_by_row(match_loops, monkeypatch) -> None:
    """Codes, escaped rare values (negative ids, ids past the table), rows in any order, int32 and int64 rows,
    batches cut across: the compiled loop and numpy give the row-by-row lookup."""
    monkeypatch.setattr(query, "MATCH_RUN", 333)
    monkeypatch.setattr(query, "MATCH_WINDOW", 1000)
    monkeypatch.setattr(query, "MATCH_BATCH", 777)
    rng = np.random.default_rng(8)
    strings = 600
    table = _table(strings, seed=2)
    frequent = rng.integers(0, 30, 30_000)
    frequent[rng.integers(0, 30_000, 300)] = rng.integers(-3, strings + 40, 300)  # escaped: rare
    names = frequent_coded(frequent.astype(np.int16))
    categories = coded(rng.choice(np.array([-1, 3, 9, strings - 1, strings + 2], np.int16), 30_000))
    assert names is not None and not isinstance(categories, np.ndarray)
    for rows in (rng.integers(0, 30_000, 5_000), np.arange(30_000), np.zeros(0, np.int64)):
        for dtype in (np.int32, np.int64):
            for column in (names, categories):
                gathered = Gathered(column, rows.astype(dtype))
                got = column_matches(table, gathered)
                np.testing.assert_array_equal(got, _expected(table, np.asarray(column)[rows]))


def test_rows_or_codes_out_of_range_take_the_numpy_paths_answer(match_loops) -> None:
    """A row past the events, a code naming no value, a row coded 255 that is not a rare row: the compiled
    loop refuses (ValueError inside), and the numpy path's answer (an IndexError, or its values) is what comes."""
    table = _table(50, seed=4)
    categories = coded(np.array([1, 2, 3, 1, 2], np.int16))
    with pytest.raises(IndexError):
        column_matches(table, Gathered(categories, np.array([0, 5], np.int64)))
    with pytest.raises(IndexError):
        column_matches(table, Gathered(categories, np.array([0, -9], np.int32)))
    many = coded(np.tile(np.array([1, 2, 3], np.int16), 400))  # rows far past a long batch's end: the
    for bad in (10**12, -(10**12), 1200):  # compiled loop's read-ahead skips them, its check refuses them
        rows = np.arange(1000, dtype=np.int64)
        rows[600] = bad
        with pytest.raises(IndexError):
            column_matches(table, Gathered(many, rows))
    broken = type(categories)(np.array([0, 1, 7], np.uint8), categories.values)  # code 7: no such value
    with pytest.raises(IndexError):
        column_matches(table, Gathered(broken, np.array([2, 0], np.int64)))
    rng = np.random.default_rng(1)
    values = np.concatenate([np.repeat(np.arange(255), 150), np.arange(1000, 1020)])  # (20 values rare)
    rng.shuffle(values)
    names = frequent_coded(values.astype(np.int16))
    assert names is not None and len(names.rare_rows)
    lost = type(names)(names.codes, names.values, names.rare_rows[1:], names.rare_values[1:])  # a rare row lost
    rows = np.array([int(names.rare_rows[0]), 1], np.int64)
    try:
        want = lost[rows]  # (what the numpy path reads)
    except IndexError:
        with pytest.raises(IndexError):
            column_matches(table, Gathered(lost, rows))
    else:
        np.testing.assert_array_equal(column_matches(table, Gathered(lost, rows)), _expected(table, want))


def _event_columns(rng, events: int, strings: int, threads: int) -> tuple:
    """(names coded by frequency with rare values among them, categories coded, some rows ascending, those
    rows as a table sorted by thread has them: each thread's ascending) of ``events`` generated events, the
    ids around a table of ``strings`` (-1 and ids past it among them)."""
    frequent = rng.integers(0, 35, events)
    frequent[rng.integers(0, events, 200)] = rng.integers(-2, strings + 40, 200)
    names = frequent_coded(frequent.astype(np.int16))
    categories = coded(rng.choice(np.array([-1, 2, 5, strings - 1, strings + 100], np.int16), events))
    assert names is not None and not isinstance(categories, np.ndarray)
    thread = rng.integers(0, threads, events)
    chosen = np.flatnonzero(rng.random(events) < 0.35)
    return names, categories, chosen, chosen[np.argsort(thread[chosen], kind="stable")]


def test_rows_by_thread_read_a_window_at_a_time_match_row_by_row(match_loops, monkeypatch) -> None:
    """A table's rows as the models have them (sorted by thread, each thread's event rows ascending, spread
    over the whole column), pieces that cross threads, a thread whose rows are not ascending, rows in no order:
    the compiled loop's windows (pieces and windows small, many calls) give the row-by-row lookup, and so does
    numpy."""
    monkeypatch.setattr(query, "MATCH_RUN", 97)
    monkeypatch.setattr(query, "MATCH_WINDOW", 1 << 10)
    rng = np.random.default_rng(12)
    events = 50_000
    table = _table(600, seed=5)
    names, categories, chosen, by_thread = _event_columns(rng, events, 600, threads=7)
    unsorted_thread = by_thread.copy()
    unsorted_thread[100:400] = unsorted_thread[100:400][::-1]
    for rows in (by_thread, unsorted_thread, rng.permutation(chosen), np.arange(events)[::-1].copy()):
        for dtype in (np.int32, np.int64):
            for column in (names, categories):
                got = column_matches(table, Gathered(column, rows.astype(dtype)))
                np.testing.assert_array_equal(got, _expected(table, np.asarray(column)[rows]))


def test_a_row_out_of_range_in_a_late_window_is_refused(match_loops, monkeypatch) -> None:
    """A row past the column or negative, anywhere among rows by thread (the last window's rows, the first
    one's): the compiled loop refuses it (the numpy path's IndexError comes), never reads past the column."""
    monkeypatch.setattr(query, "MATCH_RUN", 50)
    monkeypatch.setattr(query, "MATCH_WINDOW", 256)
    table = _table(50, seed=4)
    many = coded(np.tile(np.array([1, 2, 3], np.int16), 2000))
    base = np.r_[np.arange(0, 6000, 3), np.arange(1, 6000, 3)].astype(np.int64)
    for at in (0, 1999, 2000, len(base) - 1):
        for bad in (6000, 10**12, -(10**12)):
            rows = base.copy()
            rows[at] = bad
            with pytest.raises(IndexError):
                column_matches(table, Gathered(many, rows))
        rows = base.copy()
        rows[at] = -1  # (refused by the loop; numpy's path reads it as the last row)
        np.testing.assert_array_equal(column_matches(table, Gathered(many, rows)),
                                      _expected(table, np.asarray(many)[rows]))  # fmt: skip


def test_the_windowed_loop_refuses_runs_that_do_not_cover_the_index() -> None:
    """summary_kernels.coded_matches checks its runs and cursors: ends past the index, not ascending, a last
    end short of it, a cursor outside its run: ValueError, nothing read; a second column without its lookups
    too."""
    kernels = compiled.summary_kernels
    if kernels is None:
        pytest.skip("summary_kernels not built")
    index = np.arange(10, dtype=np.int32)
    codes, lut, out = np.zeros(10, np.uint8), np.zeros(256, np.uint8), np.zeros(10, np.uint8)
    no_rare = (np.zeros(0, np.int64), np.zeros(0, np.uint8))
    for ends, cursor in (([11], [0]), ([6, 4, 10], [0, 6, 4]), ([5], [0]), ([5, 10], [0, 11]),
                         ([5, 10], [6, 5]), ([], [])):  # fmt: skip
        with pytest.raises(ValueError):
            kernels.coded_matches(index, False, np.array(ends, np.int64), np.array(cursor, np.int64), 1 << 40,
                                  1 << 40, 8, out, codes, lut, *no_rare)  # fmt: skip
    whole, start = np.array([10], np.int64), np.zeros(1, np.int64)
    with pytest.raises(ValueError):
        kernels.coded_matches(index, False, whole, start, 1 << 40, 1 << 40, 8, out, codes, lut, *no_rare, codes)
    for first, below, window in ((5, 4, 1), (1, 5, 0), (1, 5, -3)):  # (limits that do not rise)
        with pytest.raises(ValueError):
            kernels.coded_matches(index, False, whole, start, first, below, window, out, codes, lut, *no_rare)
    ends, cursor = np.array([4, 10], np.int64), np.array([0, 4], np.int64)
    kernels.coded_matches(index, False, ends, cursor, 6, 6, 1, out, codes, lut, *no_rare)
    assert cursor.tolist() == [4, 6]  # (each run up to its first row past the window)
    index = np.array([0, 5, 9, 1, 2, 8, 3], np.int32)  # (three runs: the windows 3, 6, 8 in one call)
    ends, cursor = np.array([3, 6, 7], np.int64), np.array([0, 3, 6], np.int64)
    kernels.coded_matches(index, False, ends, cursor, 3, 8, 3, np.zeros(7, np.uint8), codes, lut, *no_rare)
    assert cursor.tolist() == [2, 5, 7]


def test_names_and_categories_in_one_pass_match_each_ored(match_loops, monkeypatch) -> None:
    """A table's names (coded by frequency, rare rows among them) and categories read through the same rows
    in one pass: the OR of each one's matches; rows out of range still refused (numpy's answer comes);
    columns through different rows each alone."""
    monkeypatch.setattr(query, "MATCH_RUN", 101)
    monkeypatch.setattr(query, "MATCH_WINDOW", 700)
    rng = np.random.default_rng(21)
    events = 20_000
    table = _table(500, seed=9)
    names, categories, _chosen, rows = _event_columns(rng, events, 500, threads=5)
    for dtype in (np.int32, np.int64):
        index = rows.astype(dtype)
        pair = (Gathered(names, index), Gathered(categories, index))
        want = _expected(table, np.asarray(names)[rows]) | _expected(table, np.asarray(categories)[rows])
        np.testing.assert_array_equal(query.columns_matches(table, pair), want)
        np.testing.assert_array_equal(query.columns_matches(table, pair[::-1]), want)
        apart = (Gathered(names, index), Gathered(categories, index.copy()))  # (other rows' object: each alone)
        np.testing.assert_array_equal(query.columns_matches(table, apart), want)
    bad = rows.astype(np.int64)
    bad[len(bad) // 2] = events + 5
    with pytest.raises(IndexError):
        query.columns_matches(table, (Gathered(names, bad), Gathered(categories, bad)))


def test_real_generated_and_hostile_traces_match_as_numpy_does(monkeypatch, damaged_models) -> None:
    """The names and categories (each, and both in one pass) of the slices, async spans and instants of the
    real traces, a generated one and damaged copies of them: the compiled loop's windows (small, many calls)
    give numpy's matches."""
    monkeypatch.setattr(query, "MATCH_RUN", 61)
    monkeypatch.setattr(query, "MATCH_WINDOW", 512)
    compared = 0
    for model in damaged_models(random.Random(7), 3000, 3, 10):
        for needle in ("a", "e", "frame"):
            table = string_matches(model, needle)
            for tab in (model.slices, model.async_spans, model.instants):
                for columns in ((tab.name,), (tab.category,), (tab.name, tab.category)):
                    got = query.columns_matches(table, columns)
                    with monkeypatch.context() as numpy_only:
                        numpy_only.setattr(compiled, "summary_kernels", None)
                        want = query.columns_matches(table, columns)
                    np.testing.assert_array_equal(got, want)
                    compared += len(got)
    assert compared > 100_000
