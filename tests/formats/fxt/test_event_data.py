"""ev_data, read from the mapped file when indexed (EventData), gives each event's data word as the spec defines
it, including the records where it is not the record's last word (kept by the reader as exceptions)."""

from __future__ import annotations

import random

import numpy as np
import pytest

from fxscope.core.trace.gathered import Gathered
from fxscope.formats.errors import FormatError
from fxscope.formats.fxt import compiled
from fxscope.formats.fxt import event_data as fxscope_event_data
from fxscope.formats.fxt.args import ArgType as A
from fxscope.formats.fxt.columns import EventKind as K
from fxscope.formats.fxt.event_data import EventData
from fxscope.formats.fxt.reader import read_fxt, read_fxt_bytes
from fxscope.formats.fxt.writer import FxtWriter


def _words(*values: int) -> bytes:
    return b"".join(v.to_bytes(8, "little") for v in values)


def _trace(big_endian: bool = False) -> tuple[bytes, list[int]]:
    """Events of every kind with a data word, and the data each must read as."""
    w = FxtWriter(big_endian=big_endian)
    w.thread(1, 10, 11)
    want = []
    w.event(K.COUNTER, 5, 1, "c", "n", args=[("v", A.INT32, 3)], data=77)
    want.append(77)
    w.event(K.DURATION_COMPLETE, 6, 1, "c", "n", data=90)  # 1 tick = 1 ns here
    want.append(90)
    w.event(K.ASYNC_BEGIN, 7, 1, "c", "n", data=0xFFFF_FFFF_FFFF_FFF0)
    want.append(0xFFFF_FFFF_FFFF_FFF0)
    w.event(K.FLOW_END, 8, (3, 4), "inline cat", "inline name", data=12345)  # inline refs shift the fields
    want.append(12345)
    w.event(K.INSTANT, 9, 1, "c", "global", extra_words=(2,))  # legacy scope word: global
    want.append(2)
    w.event(K.INSTANT, 10, 1, "c", "process", args=[("a", A.UINT64, 1 << 40)], extra_words=(1,))
    want.append(1)
    w.event(K.INSTANT, 11, 1, "c", "thread")  # no scope word: 0 (the last word is the name's)
    want.append(0)
    w.event(K.INSTANT, 12, 1, "c", "bad scope", extra_words=(9,))  # out of range: thread scope (warned)
    want.append(0)
    w.event(K.DURATION_BEGIN, 13, 1, "c", "n", args=[("x", A.INT32, 5)])
    want.append(0)
    w.event(K.COUNTER, 14, 1, "c", "n", data=55, extra_words=(66,))  # a word after the data: not the last
    want.append(55)
    w.initialization(2_000_000_000)  # 2 ticks a ns from here on (T1)
    w.event(K.DURATION_COMPLETE, 30, 1, "c", "n", data=91)
    want.append(45)  # 91 ticks = 45.5 ns, truncated
    w.event(K.DURATION_COMPLETE, 32, 1, "c", "n", data=101, extra_words=(7,))  # exception at another rate
    want.append(50)
    return w.getvalue(), want


@pytest.mark.parametrize("big_endian", [False, True])
def test_data_words_of_every_kind(big_endian, fxt_loops):
    data, want = _trace(big_endian)
    cols = read_fxt_bytes(data)
    assert isinstance(cols.ev_data, EventData)
    assert np.asarray(cols.ev_data).tolist() == want
    assert cols.ev_scope.tolist()[4:8] == [2, 1, 0, 0]
    assert cols.ev_end_ts[cols.ev_kind == K.DURATION_COMPLETE].tolist() == [90, 45, 50]
    assert any("scope out of range" in x for x in cols.warnings)
    # only the records whose data word is not their last one are stored
    assert cols.ev_data.nbytes == 16 * 4  # two scope words, the counter and the complete event with extra words


def test_an_argument_of_size_zero_leaves_no_data_word():
    w = FxtWriter()
    w.string(1, "n")
    # a counter with two arguments announced, the second of size 0 (A2: later arguments dropped), then its id
    w.raw(_words(4 | (6 << 4) | (1 << 16) | (2 << 20) | (1 << 48), 6, 1, 2,
                 1 | (1 << 4) | (1 << 16) | (7 << 32), 0, 99))  # fmt: skip
    cols = read_fxt_bytes(w.getvalue())
    assert cols.ev_kind.tolist() == [K.COUNTER]
    assert np.asarray(cols.ev_data).tolist() == [0]  # as the reader decided: the data word is not read


def test_every_way_of_indexing(fxt_loops):
    data, want = _trace()
    col = read_fxt_bytes(data).ev_data
    ref = np.array(want, np.uint64)
    assert len(col) == len(ref) and col.shape == ref.shape and col.dtype == np.uint64
    assert col[0] == ref[0] and col[-1] == ref[-1] and isinstance(col[3], np.uint64)
    assert np.array_equal(col[2:9:3], ref[2:9:3]) and np.array_equal(col[:], ref)
    mask = np.arange(len(ref)) % 2 == 0
    assert np.array_equal(col[mask], ref[mask])
    rows = np.array([11, 0, 4, 4, -1])
    assert np.array_equal(col[rows], ref[rows])
    assert np.array_equal(col[[3, 1]], ref[[3, 1]])
    assert len(col[np.zeros(0, np.int64)]) == 0
    assert col.tolist() == want and np.array_equal(col.view(np.int64), ref.view(np.int64))
    assert np.array_equal(Gathered(col, np.array([4, 0]))[:], ref[[4, 0]])
    for rows in (np.array([4, 5, 9, 11]), np.array([5, 6, 7]), np.array([9, 9, 4, 11]), np.array([0, 10])):
        assert np.array_equal(col[rows], ref[rows]), rows  # (the exceptions: rows 4, 5, 9, 11; ascending or not)
    with pytest.raises(IndexError):
        col[len(ref)]
    with pytest.raises(IndexError):
        col[np.array([0, len(ref)])]


def test_a_generated_trace_matches_its_records(tmp_path, fxt_loops):
    """Against a per-record reference walk: each counter/async/flow/complete event's data is its last word."""
    from fxscope.core.synthetic_trace import generate_trace

    path = tmp_path / "t.fxt"
    path.write_bytes(generate_trace(20_000, seed=7, scheduling=True))
    cols = read_fxt(path)
    words = np.frombuffer(path.read_bytes(), "<u8")
    got = np.asarray(cols.ev_data)
    tps = np.asarray(cols.ticks_per_second)[cols.ev_provider]
    checked = 0
    for row in range(0, len(cols.ev_ts), 7):
        kind, word = int(cols.ev_kind[row]), int(cols.ev_word[row])
        size = (int(words[word]) >> 4) & 0xFFF
        if kind in (K.COUNTER, K.ASYNC_BEGIN, K.ASYNC_INSTANT, K.ASYNC_END, K.FLOW_BEGIN, K.FLOW_STEP,
                    K.FLOW_END):  # fmt: skip
            assert int(got[row]) == int(words[word + size - 1])
            checked += 1
        elif kind == K.DURATION_COMPLETE:
            assert int(got[row]) == int(words[word + size - 1]) * 10**9 // int(tps[row])  # (T1)
            checked += 1
    assert checked > 1000


def test_a_large_read_releases_the_pages_it_mapped(tmp_path):
    """Reading many rows drops the file pages they mapped (as the reader does after each block); the values
    stay the same (the pages come back from the page cache when read again)."""
    from fxscope.core.synthetic_trace import generate_trace

    path = tmp_path / "t.fxt"
    path.write_bytes(generate_trace(150_000, seed=3))
    cols = read_fxt(path)
    assert cols.ev_data.release is not None  # a memory-mapped file
    calls = []
    release = cols.ev_data.release
    cols.ev_data.release = lambda a, b: (calls.append((a, b)), release(a, b))
    first = np.asarray(cols.ev_data)
    assert calls and all(0 <= a < b <= len(path.read_bytes()) // 8 + 1 for a, b in calls)
    assert np.array_equal(np.asarray(cols.ev_data), first)
    few = len(calls)
    cols.ev_data[np.arange(100)]  # a few rows: no release
    assert len(calls) == few


@pytest.mark.parametrize("big_endian", [False, True])
def test_the_complete_ends_decoded_with_the_events_are_ev_datas(big_endian, tmp_path):
    """``ev_complete_end`` (read as the blocks are decoded, for the model build) holds what ``ev_data`` reads
    back for every complete event: at each tick rate, with words after the data (an exception), with an
    argument of size 0 (no data word: 0), and over a generated trace; it is handed over once."""
    from fxscope.core.synthetic_trace import generate_trace

    data, _want = _trace(big_endian)
    w = FxtWriter()  # (raw little-endian words)
    w.string(1, "n")
    w.raw(_words(4 | (6 << 4) | (4 << 16) | (2 << 20) | (1 << 48), 6, 1, 2,
                 1 | (1 << 4) | (1 << 16) | (7 << 32), 0, 99))  # fmt: skip
    cut = read_fxt_bytes(w.getvalue())
    assert cut.ev_kind.tolist() == [K.DURATION_COMPLETE] and cut.ev_complete_end.tolist() == [0]
    path = tmp_path / "t.fxt"
    path.write_bytes(generate_trace(20_000, seed=3))
    for cols in (read_fxt_bytes(data), read_fxt(path)):
        rows = np.flatnonzero(cols.ev_kind == K.DURATION_COMPLETE)
        assert len(rows) >= 3
        want = cols.ev_data[rows].view(np.int64)
        got = cols.take_complete_ends()
        assert got.dtype == np.int64 and np.array_equal(got, want)
        assert cols.take_complete_ends() is None and cols.ev_complete_end is None
    assert read_fxt_bytes(data).ev_complete_end.tolist() == [90, 45, 50]


def test_unordered_rows_find_exceptions_past_the_low_bits_filter(tmp_path):
    """Rows asked for out of order look the exceptions up only where a row's low 16 bits are an exception's:
    rows that share them with an exception (65,536 apart) and rows that are exceptions, in any order,
    repeated, read the same values as a whole-column read (which takes the exceptions by range)."""
    from fxscope.core.synthetic_trace import generate_trace

    path = tmp_path / "t.fxt"
    path.write_bytes(generate_trace(150_000, seed=3))
    col = read_fxt(path).ev_data
    n = len(col)
    assert n > 2 * 65_536 + 10
    # exceptions of our own at rows that alias each other's low bits, with values no record has
    col.exc_rows = np.array([7, 65_536 + 9, 2 * 65_536 + 7], np.int64)
    col.exc_vals = np.array([11, 22, 33], np.uint64)
    col._low_bits = None
    ref = np.asarray(col)
    assert ref[7] == 11 and ref[65_536 + 9] == 22 and ref[2 * 65_536 + 7] == 33
    rng = np.random.default_rng(1)
    aliases = np.array([7, 9, 65_536 + 7, 65_536 + 9, 2 * 65_536 + 7, 2 * 65_536 + 9, 8, n - 1], np.int64)
    for _ in range(20):
        rows = rng.permutation(np.r_[aliases, rng.integers(0, n, 200), aliases[:3]])
        assert np.array_equal(col[rows], ref[rows])


class _Counting:
    """record_scan with its calls of one function counted (the one-pass read must be the one taken)."""

    def __init__(self, scan, name: str) -> None:
        self._scan, self._name, self.calls = scan, name, 0

    def __getattr__(self, attr):
        if attr == self._name:
            self.calls += 1
        return getattr(self._scan, attr)


def test_times_and_data_in_one_pass_are_each_column_read_alone(tmp_path, monkeypatch, cut_and_flip):
    """``cols.times_and_data(rows)`` (record_scan.event_times_data: both words of each row's record in one
    pass) is ``(ev_ts[rows], ev_data[rows])`` as the numpy reads give them: on a generated trace with several
    tick rates, complete events and exceptions, and on cut, byte-flipped copies of it (records cut at the
    file's end, sizes that point past it); rows (int64 or int32) ascending, shuffled, repeated, and more than
    a block."""
    from fxscope.core.synthetic_trace import generate_trace
    from fxscope.formats.fxt import mapped_column

    monkeypatch.setattr(mapped_column, "BLOCK", 1000)  # (several blocks, and a block's rows split)
    monkeypatch.setattr(fxscope_event_data, "BLOCK", 1000)
    scan = compiled.record_scan
    if scan is None:
        pytest.skip("record_scan is not built (or FXSCOPE_NO_COMPILED is set)")
    data = generate_trace(4000, seed=5, scheduling=True)
    rng, nrng = random.Random(6), np.random.default_rng(6)
    compared = 0
    for i in range(80):
        try:
            cols = read_fxt_bytes(data if i == 0 else cut_and_flip(data, rng, 6))
        except FormatError:
            continue
        n = len(cols.ev_ts)
        if n == 0:
            continue
        if i == 0:
            assert len(set(cols.ticks_per_second)) > 1 and len(cols.ev_data.exc_rows)
        int64_sets = (np.arange(n), nrng.permutation(n), nrng.integers(0, n, 3 * n), np.arange(n)[::-3].copy())
        for rows in (*int64_sets, *(r.astype(np.int32) for r in int64_sets)):  # (int32: kind_rows' row sets)
            counting = _Counting(scan, "event_times_data")
            monkeypatch.setattr(compiled, "record_scan", counting)
            ts, dat = cols.times_and_data(rows)
            assert counting.calls > 0
            monkeypatch.setattr(compiled, "record_scan", None)
            assert ts.dtype == np.int64 and dat.dtype == np.uint64
            assert np.array_equal(ts, cols.ev_ts[rows]) and np.array_equal(dat, cols.ev_data[rows])
            compared += 1
    assert compared > 100
    monkeypatch.setattr(compiled, "record_scan", scan)
    cols = read_fxt_bytes(data)
    with pytest.raises(IndexError):  # (out of range: as each column's own indexing)
        cols.times_and_data(np.array([0, len(cols.ev_ts)]))
    ts, dat = cols.times_and_data(np.zeros(0, np.int64))
    assert len(ts) == len(dat) == 0
