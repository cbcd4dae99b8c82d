"""Code columns of more than 256 values whose most frequent values cover nearly every row (a trace's names):
one byte a row plus the rare rows apart (FrequentCodedColumn), read back as the int16 column they replace,
whichever way they are indexed; the reader stores its name column so, and the model's tables, searches and
details read the same names as from the int16 column."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fxscope.core.trace.gathered import Gathered
from fxscope.core.trace.model import TraceModel
from fxscope.core.trace.query import search
from fxscope.formats.fxt import compiled, frequent_codes
from fxscope.formats.fxt.coded_column import CodedColumn, coded
from fxscope.formats.fxt.columns import EventKind as K
from fxscope.formats.fxt.frequent_codes import ESCAPE, RARE_SHARE, FrequentCodedColumn, frequent_coded
from fxscope.formats.fxt.reader import read_fxt_bytes
from fxscope.formats.fxt.writer import FxtWriter


def _skewed(n: int = 20_000, frequent: int = 300, rare: int = 60, seed: int = 7) -> np.ndarray:
    """``frequent`` values drawn often (unevenly), then ``rare`` others placed once each at random rows:
    more than 256 values, the rare ones far under RARE_SHARE of the rows."""
    rng = np.random.default_rng(seed)
    pool = rng.choice(np.arange(-32768, 32768), size=frequent + rare, replace=False).astype(np.int16)
    weights = rng.pareto(1.0, frequent) + 1e-3
    col = pool[:frequent][rng.choice(frequent, n, p=weights / weights.sum())]
    col[rng.choice(n, rare, replace=False)] = pool[frequent:]
    return col


def test_the_frequent_values_are_coded_and_the_rest_kept_apart(fxt_loops):
    ref = _skewed()
    assert coded(ref) is ref  # (more than 256 values: no CodedColumn)
    col = frequent_coded(ref.copy())
    assert isinstance(col, FrequentCodedColumn) and not isinstance(col, CodedColumn)
    assert col.codes.dtype == np.uint8 and len(col.values) == ESCAPE and np.all(np.diff(col.values) > 0)
    assert np.array_equal(col.rare_rows, np.flatnonzero(col.codes == ESCAPE))
    assert np.array_equal(col.rare_values, ref[col.rare_rows]) and not np.isin(col.rare_values, col.values).any()
    # the coded values are the most frequent ones: none rarer than a value left out
    values, counts = np.unique(ref, return_counts=True)
    kept = np.isin(values, col.values)
    assert counts[kept].min() >= counts[~kept].max()
    assert col.nbytes < ref.nbytes * 0.6  # (1 byte a row and a few rare rows, against 2 bytes a row)
    assert col.dtype == np.int16 and len(col) == len(ref) and col.shape == ref.shape
    got = np.asarray(col)
    assert got.dtype == np.int16 and np.array_equal(got, ref)
    assert (col.min(), col.max()) == (ref.min(), ref.max())
    assert col.tolist() == ref.tolist()


def test_the_compiled_and_numpy_codings_agree(monkeypatch):
    ref = _skewed(seed=11)
    fast = frequent_coded(ref)
    monkeypatch.setattr(compiled, "record_scan", None)
    slow = frequent_coded(ref)
    for name in ("codes", "values", "rare_rows", "rare_values"):
        assert np.array_equal(getattr(fast, name), getattr(slow, name)), name


def test_every_way_of_indexing(fxt_loops):
    ref = _skewed(seed=3)
    col = frequent_coded(ref)
    rare = int(col.rare_rows[len(col.rare_rows) // 2])
    assert col[rare] == ref[rare] and col[rare - len(ref)] == ref[rare] and isinstance(col[rare], np.int16)
    assert col[0] == ref[0] and col[-1] == ref[-1]
    for key in (slice(None), slice(10, 5000), slice(3, 19_000, 7), slice(None, None, -1), slice(5, 2),
                slice(rare, rare + 1), slice(-300, None)):  # fmt: skip
        assert np.array_equal(col[key], ref[key]), key
    for mask in (ref > 0, np.isin(np.arange(len(ref)), col.rare_rows[::3]), np.zeros(len(ref), bool)):
        assert np.array_equal(col[mask], ref[mask])
    many = np.random.default_rng(1).integers(-len(ref), len(ref), 3000)
    many[:40] = col.rare_rows[:40] - len(ref) * (np.arange(40) % 2)  # (rare rows, some counted from the end)
    assert np.array_equal(col[many], ref[many]) and np.array_equal(col[many.astype(np.int32)], ref[many])
    assert np.array_equal(col[[[1, rare], [3, 4]]], ref[[[1, rare], [3, 4]]])
    assert len(col[np.zeros(0, np.int64)]) == 0
    assert np.array_equal(col == ref[rare], ref == ref[rare]) and np.array_equal(col.astype(np.int64) + 1, ref + 1)
    assert np.array_equal(Gathered(col, col.rare_rows)[:], col.rare_values)
    for key in (len(ref), -len(ref) - 1):
        with pytest.raises(IndexError):
            col[key]
    with pytest.raises(IndexError):
        col[np.array([0, len(ref)])]
    with pytest.raises(TypeError):
        col[0] = 1  # read-only, as the reader's columns are to their consumers


@settings(max_examples=60, deadline=None)
@given(
    n=st.integers(1, 3000),
    n_values=st.integers(200, 700),
    skew=st.floats(0.3, 4.0),
    seed=st.integers(0, 2**32 - 1),
)
def test_any_column_reads_back_as_it_was(n, n_values, skew, seed):
    """Whatever the distribution: coded with rare rows when they are few enough (none when there are at most
    255 values), else not; read back equal through a whole read, rows, a mask and a range."""
    rng = np.random.default_rng(seed)
    pool = rng.choice(np.arange(-32768, 32768), size=n_values, replace=False).astype(np.int16)
    p = rng.pareto(skew, n_values) + 1e-6
    ref = pool[rng.choice(n_values, n, p=p / p.sum())]
    col = frequent_coded(ref.copy())
    counts = np.unique(ref, return_counts=True)[1]
    rare = np.sort(counts)[::-1][ESCAPE:].sum()
    if rare > n * RARE_SHARE:
        assert col is None
        return
    assert isinstance(col, FrequentCodedColumn) and len(col.rare_rows) == rare
    rows = rng.integers(-n, n, 50)
    mask = rng.random(n) < 0.3
    a, b = sorted(rng.integers(0, n + 1, 2).tolist())
    assert np.array_equal(np.asarray(col), ref) and np.array_equal(col[rows], ref[rows])
    assert np.array_equal(col[mask], ref[mask]) and np.array_equal(col[a:b], ref[a:b])


def test_evenly_used_values_and_other_columns_stay_as_they_are():
    even = np.tile(np.arange(400, dtype=np.int16), 10)  # (every value as frequent: 145 of 400 would be rare)
    assert frequent_coded(even) is None
    wide = _skewed().astype(np.int32)
    assert frequent_coded(wide) is None and frequent_coded(np.zeros(0, np.int16)) is None


def test_the_compiled_escape_pass_checks_its_buffers():
    scan = compiled.record_scan
    assert scan is not None
    codes = np.array([5, -3, 5, 7], np.int16)
    lut = np.full(1 << 16, ESCAPE, np.uint8)
    lut[5] = 0
    index, rare = np.empty(4, np.uint8), np.empty(2, np.int64)
    assert scan.code_escape(codes, lut, index, rare) == 2 and index.tolist() == [0, 255, 0, 255]
    assert rare.tolist() == [1, 3]
    assert scan.code_escape(codes, lut, index, np.empty(1, np.int64)) == -1  # (more rare rows than room)
    with pytest.raises(ValueError):
        scan.code_escape(codes, lut[:100], index, rare)  # a table short of 65,536 entries
    with pytest.raises(ValueError):
        scan.code_escape(codes, lut, np.empty(3, np.uint8), rare)  # not one index a code
    counts = np.zeros(1 << 16, np.int64)
    scan.code_counts(codes, counts)
    assert counts[5] == 2 and counts[np.uint16(np.int16(-3).view(np.uint16))] == 1 and counts.sum() == 4
    with pytest.raises(ValueError):
        scan.code_counts(codes, np.zeros(100, np.int64))


def _trace_with_rare_names() -> bytes:
    """A trace of 240 frequent slice names (16 events each) and 30 rare ones (2 events each): 270 names, so
    15 of the rare ones (30 rows, 0.6%) are not among the 255 coded."""
    w = FxtWriter()
    w.thread(1, 10, 11)
    w.thread(2, 10, 12)
    t = 0
    names = [f"frequent {n}" for n in range(240)] * 8 + [f"rare {k}" for k in range(30)]
    for n, name in enumerate(names):
        thread = 1 + n % 2
        w.event(K.DURATION_BEGIN, t, thread, "cat", name)
        w.event(K.DURATION_END, t + 5, thread, "cat", name)
        t += 10
    w.event(K.INSTANT, t, 1, "cat", "rare 3")
    return w.getvalue()


def test_the_reader_stores_a_trace_s_names_so_and_the_model_reads_them(monkeypatch):
    data = _trace_with_rare_names()
    cols = read_fxt_bytes(data)
    assert isinstance(cols.ev_name, FrequentCodedColumn) and len(cols.ev_name.rare_rows) == 30
    rare = sorted({cols.strings[v] for v in cols.ev_name.rare_values.tolist()})
    assert len(rare) == 15 and all(name.startswith("rare ") for name in rare)
    monkeypatch.setattr(frequent_codes, "RARE_SHARE", 0.0)  # the same trace read with int16 names
    plain = read_fxt_bytes(data)
    assert isinstance(plain.ev_name, np.ndarray) and np.array_equal(np.asarray(cols.ev_name), plain.ev_name)
    model, ref = TraceModel(cols), TraceModel(plain)
    assert np.array_equal(np.asarray(model.slices.name), np.asarray(ref.slices.name))
    assert np.array_equal(np.asarray(model.instants.name), np.asarray(ref.instants.name))
    for text in [*rare, "frequent 239", "rare", "rare 3"]:
        found = search(model, text)
        assert len(found) and np.array_equal(found, search(ref, text)), text
    for name in rare:
        row = int(search(model, name)[0])
        assert model.name_of(row) == name


@pytest.mark.parametrize("block", [7, 1 << 20])
def test_async_events_with_rare_names_pair_by_their_names(monkeypatch, block):
    """Async begins and ends of two rare names under one id and category (their one-byte codes are the same
    escape): each end closes its own name's begin, as with the int16 names, walked in blocks of ``block``
    events (the names expanded a block at a time) or in one."""
    from fxscope.core.trace import async_spans

    w = FxtWriter()
    w.thread(1, 10, 11)
    t = 0
    for _rep in range(8):  # 255 frequent names (8 slices each) and 20 rare ones
        for n in range(255):
            w.event(K.DURATION_BEGIN, t, 1, "cat", f"frequent {n}")
            w.event(K.DURATION_END, t + 5, 1, "cat", f"frequent {n}")
            t += 10
    for k in range(10):  # rare "a k" and "b k" interleaved on the same id: a stack of one key would swap them
        w.event(K.ASYNC_BEGIN, t, 1, "cat", f"rare a {k}", data=7)
        w.event(K.ASYNC_BEGIN, t + 1, 1, "cat", f"rare b {k}", data=7)
        w.event(K.ASYNC_END, t + 2, 1, "cat", f"rare a {k}", data=7)
        w.event(K.ASYNC_END, t + 9, 1, "cat", f"rare b {k}", data=7)
        t += 10
    data = w.getvalue()
    monkeypatch.setattr(async_spans, "PAIR_BLOCK", block)
    cols = read_fxt_bytes(data)
    assert isinstance(cols.ev_name, FrequentCodedColumn) and len(cols.ev_name.rare_rows) == 40
    spans = TraceModel(cols).async_spans
    names = [cols.strings[int(v)] for v in np.asarray(spans.name)]
    assert sorted(names) == sorted(f"rare {c} {k}" for c in "ab" for k in range(10))
    durations = dict(zip(names, (np.asarray(spans.end) - np.asarray(spans.start)).tolist(), strict=True))
    assert all(durations[f"rare a {k}"] == 2 and durations[f"rare b {k}"] == 8 for k in range(10))
    monkeypatch.setattr(frequent_codes, "RARE_SHARE", 0.0)
    plain = read_fxt_bytes(data)
    ref = TraceModel(plain).async_spans
    for column in ("start", "end", "event", "lane"):
        assert np.array_equal(np.asarray(getattr(spans, column)), np.asarray(getattr(ref, column))), column


def test_the_analysis_of_names_coded_by_frequency(monkeypatch):
    """The analysis panel's statistics and flame graph of the whole trace: the same with names coded by
    frequency as with int16 names, the compiled renumbering of the names taking the rare rows (not the
    slower numpy path), and refusing rare rows that do not hold a row coded as rare."""
    from fxscope.core.analysis import selection
    from fxscope.core.analysis.call_tree import top_down
    from fxscope.core.analysis.selection import Area, area_rows
    from fxscope.core.analysis.stats import name_stats
    from fxscope.core.trace import compiled as trace_compiled

    data = _trace_with_rare_names()
    model = TraceModel(read_fxt_bytes(data))
    assert isinstance(model.cols.ev_name, FrequentCodedColumn)
    ar = area_rows(model, Area())
    assert selection._compiled_dense(model, ar) is not None
    got = name_stats(model, ar=ar), top_down(model, ar=ar)
    monkeypatch.setattr(frequent_codes, "RARE_SHARE", 0.0)
    ref_model = TraceModel(read_fxt_bytes(data))
    ref_ar = area_rows(ref_model, Area())
    ref = name_stats(ref_model, ar=ref_ar), top_down(ref_model, ar=ref_ar)
    assert got[0].names == ref[0].names and any(n.startswith("rare ") for n in got[0].names)
    for column in ("count", "total_ns", "self_ns", "min_ns", "p50_ns", "max_ns"):
        assert np.array_equal(getattr(got[0], column), getattr(ref[0], column)), column
    assert [model.strings[int(i)] for i in got[1].name] == [ref_model.strings[int(i)] for i in ref[1].name]
    assert np.array_equal(got[1].total, ref[1].total) and np.array_equal(got[1].count, ref[1].count)
    kernels = trace_compiled.summary_kernels
    col = model.cols.ev_name
    rows = np.asarray(model.slices.event, np.int64)
    out = np.empty(len(rows), np.int16)
    kernels.dense_names(col.table, False, rows, True, out, col.codes, col.rare_rows, col.rare_values)
    with pytest.raises(ValueError):  # a row coded as rare missing from the rare rows
        kernels.dense_names(col.table, False, rows, True, out, col.codes, col.rare_rows[1:], col.rare_values[1:])
    with pytest.raises(ValueError):  # rare rows without their values
        kernels.dense_names(col.table, False, rows, True, out, col.codes, col.rare_rows)
