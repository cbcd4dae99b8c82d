"""The search's argument index (:mod:`fxscope.core.trace.arg_string_index`), built a batch of slices at a time,
holds the (string, slice) pairs of the former build (every slice's arguments read at once, the pairs sorted and
deduplicated: kept here as the reference) on real, generated and hostile traces, for any batch size; its
columns are as narrow as their values allow; and its temporaries stay bounded by a batch."""

from __future__ import annotations

import random
import tracemalloc
from pathlib import Path

import numpy as np
import pytest

from fxscope.core.synthetic_trace import generate_trace
from fxscope.core.trace import arg_string_index, query
from fxscope.core.trace.arg_string_index import ArgStringIndex, build_arg_string_index
from fxscope.core.trace.model import TraceModel
from fxscope.core.trace.sorting import lexsort
from fxscope.formats.fxt.arg_columns import event_arg_columns
from fxscope.formats.fxt.args import ArgType
from fxscope.formats.fxt.columns import EventKind
from fxscope.formats.fxt.reader import read_fxt_bytes
from fxscope.formats.fxt.writer import FxtWriter
from tests.compiled_loops import choose_loops


@pytest.fixture(params=["compiled", "numpy"])
def arg_loops(request, monkeypatch) -> str:
    """The arguments read by the compiled one-pass kernel (record_scan.string_arg_refs) and by the numpy walk."""
    from fxscope.formats.fxt import compiled

    return choose_loops(request.param, monkeypatch, compiled, "record_scan")


def _reference(model: TraceModel) -> tuple[np.ndarray, np.ndarray]:
    """The former build's pairs: every slice's arguments in event order, then all (string, slice) pairs sorted
    at once (lexsort) and deduplicated; (string ids, slice rows), int64, by string then row."""
    s, cols = model.slices, model.cols
    event = np.asarray(s.event)
    order = np.argsort(event, kind="stable")
    order = order[cols.nargs_of(event[order]) > 0]
    ev = event[order].astype(np.int64)
    args = event_arg_columns(cols, ev)
    row = order[np.searchsorted(ev, args.event)]
    string = np.flatnonzero(args.type == ArgType.STRING)
    refs = (args.raw[string] & np.uint64(0xFFFF)).astype(np.int64)
    values = cols.arg_decoder.string_ids(refs, args.value_word[string], cols.ev_word[args.event[string]])
    sid = np.concatenate([args.name, values])
    srow = np.concatenate([row, row[string]])
    keep = sid >= 0
    return _distinct_pairs(sid[keep], srow[keep])


def _distinct_pairs(sid: np.ndarray, row: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    sid, row = np.asarray(sid, np.int64), np.asarray(row, np.int64)
    o = lexsort((row, sid))
    sid, row = sid[o], row[o]
    new = np.ones(len(sid), bool)
    new[1:] = (sid[1:] != sid[:-1]) | (row[1:] != row[:-1])
    return sid[new], row[new]


def _pairs(index: ArgStringIndex) -> tuple[np.ndarray, np.ndarray]:
    """The index's pairs, each slice's row found from its batch's first row: (string ids, slice rows)."""
    if not index.sid:
        return np.zeros(0, np.int64), np.zeros(0, np.int64)
    return (np.concatenate([x.astype(np.int64) for x in index.sid]),
            np.concatenate([a + r.astype(np.int64) for a, r in zip(index.row_start, index.row, strict=True)]))


def _assert_same(got: ArgStringIndex, want: tuple[np.ndarray, np.ndarray]) -> None:
    """The same pairs (the index may hold a pair twice: a slice that uses a string twice), the same strings."""
    sid, row = _distinct_pairs(*_pairs(got))
    assert np.array_equal(sid, want[0]) and np.array_equal(row, want[1])
    assert np.array_equal(got.arg_ids, np.unique(want[0])) and got.arg_ids.dtype == np.int64
    assert len(got.row_start) == len(got.sid) == len(got.row) and np.all(np.diff(got.row_start) > 0)
    assert all(len(s) == len(r) and len(s) for s, r in zip(got.sid, got.row, strict=True))


def _check(model: TraceModel, batch: int, monkeypatch) -> ArgStringIndex:
    """The batched build of ``model`` (first: it interns the inline strings, which the reference then finds
    with the same ids) has the reference's pairs; its rows in a batch and string ids are 16-bit where they fit
    (the string ids of a batch read while the table had at most 2**16 strings)."""
    monkeypatch.setattr(arg_string_index, "INDEX_BATCH", batch)
    got = build_arg_string_index(model.slices, model.cols, model.strings)
    _assert_same(got, _reference(model))
    narrow = arg_string_index.NARROW
    assert all(r.dtype == (np.uint16 if batch <= narrow else np.int32) for r in got.row)
    for sid in got.sid:
        assert sid.dtype in (np.uint16, np.int32) and (sid.dtype == np.int32 or sid.max() < narrow)
    if len(model.strings) <= narrow:
        assert all(sid.dtype == np.uint16 for sid in got.sid)
    return got


@pytest.mark.parametrize("batch", [3, 1000, 1 << 16])
def test_real_trace_index_equals_the_reference(testdata: Path, monkeypatch, batch: int, arg_loops: str) -> None:
    from fxscope.formats.fxt.reader import read_fxt

    model = TraceModel(read_fxt(testdata / "fxt" / "richiesams_fxt-python_trace.fxt"))
    got = _check(model, batch, monkeypatch)
    # MANIFEST: 17,314 string arguments on 17,296 slices: each slice's argument names and values
    assert got.pairs >= 17296 and len(got.arg_ids) > 100


def _inline_strings_trace() -> bytes:
    """Slices on three threads whose argument names and string values are written inline (the index interns
    them as it reads each batch: the string table grows during the build), an indexed one, a value equal to
    its own name and the same string twice on a slice, and slices without arguments."""
    w = FxtWriter()
    w.initialization(1_000_000_000)
    w.string(1, "indexed")
    rng = random.Random(4)
    for i in range(3000):
        thread = (1, 10 + i % 3)
        k = rng.randrange(40)
        args = [(f"key{k % 7}", ArgType.STRING, f"value {k}"), ("same", ArgType.STRING, "same"),
                (f"key{k % 7}", ArgType.STRING, f"value {k}"), (1, ArgType.STRING, 1), ("n", ArgType.INT32, k)]
        w.event(EventKind.DURATION_COMPLETE, 100 * i, thread, "cat", f"slice {i % 11}",
                args[: rng.randrange(len(args) + 1)], data=100 * i + 50)  # fmt: skip
    return w.getvalue()


@pytest.mark.parametrize(("batch", "narrow"), [(3, 1 << 16), (500, 1 << 16), (1 << 16, 1 << 16), (3, 8), (500, 8)])
def test_inline_strings_index_equals_the_reference(monkeypatch, batch: int, narrow: int, arg_loops: str) -> None:
    """(``narrow`` 8: the string ids and rows held in 32 bits, as for a table of 2**16 strings or more.)"""
    monkeypatch.setattr(arg_string_index, "NARROW", narrow)
    model = TraceModel(read_fxt_bytes(_inline_strings_trace()))
    before = len(model.strings)
    got = _check(model, batch, monkeypatch)
    assert len(model.strings) > before + 40  # the inline texts were interned by the build
    assert got.pairs > 3000
    # the same string twice on a slice: two pairs, the search's mask marks the slice once
    sid, row = _pairs(got)
    assert len(_distinct_pairs(sid, row)[0]) < len(sid)


@pytest.mark.parametrize("batch", [3, 500, 1 << 16])
def test_generated_trace_index_equals_the_reference(monkeypatch, batch: int, arg_loops: str) -> None:
    """Every argument type, inline and indexed names."""
    model = TraceModel(read_fxt_bytes(generate_trace(20_000, seed=3)))
    got = _check(model, batch, monkeypatch)
    assert got.pairs > 1000


def test_hostile_traces_index_equals_the_reference(monkeypatch, damaged_models, partial_80: bytes, arg_loops: str,
                                                   ) -> None:  # fmt: skip
    """Truncated, byte-flipped and mutated copies (argument sizes, inline lengths running past their record,
    unresolved refs) of the real traces and of a generated one, and the 80-byte partial trace."""
    rng = random.Random(11)
    compared = 0
    for model in damaged_models(rng, 800, 5, 40, originals=False, extra=(partial_80,)):
        _check(model, rng.choice([5, 64, 1 << 16]) if len(model.slices) < 2000 else 1 << 16, monkeypatch)
        compared += 1
    assert compared >= 150


def test_build_temporaries_are_bounded_by_a_batch(monkeypatch) -> None:
    """The build's traced peak is the index (its batches' pairs, 4 bytes each) and a few batches'
    temporaries: not a multiple of the slice count (the former build's argsort of every slice's event, its
    argument counts in int64, and the sort of all pairs took ~40 bytes a slice at its peak)."""
    model = TraceModel(read_fxt_bytes(generate_trace(200_000, seed=1)))
    monkeypatch.setattr(arg_string_index, "INDEX_BATCH", 1 << 11)
    build_arg_string_index(model.slices, model.cols, model.strings)  # (inline strings interned: not counted)

    def peak(build) -> tuple[int, ArgStringIndex]:
        tracemalloc.start()
        try:
            index = build(model)
            return tracemalloc.get_traced_memory()[1], index
        finally:
            tracemalloc.stop()

    new, index = peak(lambda m: build_arg_string_index(m.slices, m.cols, m.strings))
    old, _ = peak(_reference)
    pairs, slices = index.pairs, len(model.slices)
    assert slices > 30_000 and pairs > 30_000
    bound = 16 * pairs + 512 * arg_string_index.INDEX_BATCH + 256 * 1024
    assert new < bound < old, (new, bound, old, slices, pairs)


def test_more_than_2_16_strings(monkeypatch) -> None:
    """70,000 distinct inline values (the string table passes 2**16 during the build: the later batches hold
    their string ids in 32 bits), in batches of 2**16 slices and of 5,000."""
    w = FxtWriter()
    w.initialization(1_000_000_000)
    for i in range(70_000):
        w.event(EventKind.DURATION_COMPLETE, 10 * i, (1, 10 + i % 2), "cat", "s",
                [("v", ArgType.STRING, f"value {i}")], data=10 * i + 5)  # fmt: skip
    for batch in (5000, 1 << 16):
        model = TraceModel(read_fxt_bytes(w.getvalue()))  # (its inline strings not interned yet)
        assert len(model.strings) < 1 << 16
        got = _check(model, batch, monkeypatch)
        assert len(model.strings) > 70_000 and len(got.arg_ids) == 70_001 and got.pairs == 140_000
        # the index's batches of 16-bit ids and (once the table passed 2**16) of 32-bit ones, searched
        assert {x.dtype for x in got.sid} == ({np.dtype(np.uint16), np.dtype(np.int32)} if batch == 5000
                                              else {np.dtype(np.int32)})  # fmt: skip
        table = np.zeros(len(model.strings) + 1, bool)
        for text in ("value 7", "value 69999"):
            table[model.strings.index(text)] = True
        rows = np.unique(query._argument_rows(got, table))  # (each value is one slice's)
        assert sorted(dict(model.slice_details(int(r))["args"])["v"] for r in rows) == ["value 69999", "value 7"]
