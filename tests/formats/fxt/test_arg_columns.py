"""Argument columns (the compiled walk and the numpy one: ``fxt_loops``) agree with the reader's per-record
decoder on real and generated traces, and with each other on hostile ones."""

from __future__ import annotations

import dataclasses
import math
import random

import numpy as np
import pytest

from fxscope.core.synthetic_trace import generate_trace
from fxscope.formats.errors import FormatError
from fxscope.formats.fxt import compiled
from fxscope.formats.fxt.arg_columns import (
    event_arg_columns,
    numeric_args,
    python_values,
    resolve_special_sids,
    string_arg_ids,
    string_arg_refs,
    string_arg_sids,
)
from fxscope.formats.fxt.args import ArgType
from fxscope.formats.fxt.columns import EventKind
from fxscope.formats.fxt.reader import read_fxt, read_fxt_bytes
from fxscope.formats.fxt.tables import STRING_KEYS
from fxscope.formats.fxt.writer import FxtWriter


def _check_against_event_args(cols, rows: np.ndarray) -> int:
    got = event_arg_columns(cols, rows)
    values = got.values()
    py, fallback = python_values(cols, got)
    expect = [(int(r), k, a) for r in rows.tolist() for k, a in enumerate(cols.event_args(int(r)))]
    assert len(got) == len(expect)
    for i, (row, k, arg) in enumerate(expect):
        assert (int(got.event[i]), int(got.index[i])) == (row, k)
        assert cols.strings[int(got.name[i])] == arg.name
        assert int(got.type[i]) == int(arg.type)
        assert fallback[i] == (arg.type == ArgType.BLOB)
        if not fallback[i]:
            assert py[i] == arg.value and type(py[i]) is type(arg.value)
        if arg.type in (ArgType.INT32, ArgType.UINT32, ArgType.INT64, ArgType.UINT64, ArgType.DOUBLE):
            assert values[i] == float(arg.value)
        else:
            assert math.isnan(values[i])
        if arg.type in (ArgType.POINTER, ArgType.KOID):
            assert int(got.raw[i]) == arg.value
        if arg.type == ArgType.BOOL:
            assert bool(int(got.raw[i]) & 1) == arg.value
    return len(expect)


def test_generated_trace_every_argument_type_and_inline_names(fxt_loops) -> None:
    cols = read_fxt_bytes(generate_trace(30_000))
    rows = np.flatnonzero(cols.ev_nargs > 0)
    n = _check_against_event_args(cols, rows[:: max(1, len(rows) // 4000)])
    rich = np.flatnonzero(cols.ev_nargs >= 10)  # the every-arg-type instants (inline and indexed names)
    assert len(rich) and _check_against_event_args(cols, rich) >= 10 * len(rich)
    assert n > 1000


def test_big_endian_trace(fxt_loops) -> None:
    cols = read_fxt_bytes(generate_trace(3_000, big_endian=True))
    rows = np.flatnonzero(cols.ev_nargs > 0)
    assert _check_against_event_args(cols, rows) > 100


def test_real_trace_pointer_and_string_arguments(testdata, fxt_loops) -> None:
    cols = read_fxt(testdata / "fxt" / "richiesams_fxt-python_trace.fxt")
    rows = np.arange(len(cols.ev_ts))
    got = event_arg_columns(cols, rows)
    # MANIFEST: 17,296 pointer and 17,314 string arguments
    assert np.bincount(got.type, minlength=11)[[ArgType.POINTER, ArgType.STRING]].tolist() == [17296, 17314]
    assert _check_against_event_args(cols, rows[::7]) > 4000


def _mutated(testdata, cut_and_flip, rng: random.Random, generated: bytes):
    """The readable ones of 100 truncated and mutated copies of each real trace and of ``generated``."""
    sources = [p.read_bytes() for p in sorted((testdata / "fxt").glob("*.fxt"))] + [generated]
    for data in sources:
        for _ in range(100):
            try:
                yield read_fxt_bytes(cut_and_flip(data, rng, 6))
            except FormatError:
                continue


def test_compiled_walk_equals_numpy_walk_on_hostile_traces(testdata, cut_and_flip) -> None:
    """Truncated and mutated traces (argument sizes, inline name lengths, counts): the compiled walk keeps
    the same arguments, with the same fields, as the numpy walk (400 traces)."""
    scan = compiled.record_scan
    assert scan is not None
    compared = 0
    for cols in _mutated(testdata, cut_and_flip, random.Random(5), generate_trace(500, seed=4)):
        rows = np.arange(len(cols.ev_ts))
        a = event_arg_columns(cols, rows)
        compiled.record_scan = None
        try:
            b = event_arg_columns(cols, rows)
        finally:
            compiled.record_scan = scan
        for f in dataclasses.fields(a):
            x, y = getattr(a, f.name), getattr(b, f.name)
            assert x.dtype == y.dtype and np.array_equal(x, y), f.name
        compared += 1
    assert compared >= 300


def test_compiled_arg_blocks_equal_the_numpy_ones(testdata) -> None:
    """FxtColumns.arg_blocks_of (record, first argument, end, count with the reader's cuts), compiled and
    numpy, on generated, real and mutated traces; the compiled pass refuses rows out of range."""
    scan = compiled.record_scan
    assert scan is not None
    rng = random.Random(9)
    w = FxtWriter()
    w.string(1, "n")
    w.thread(1, 10, 11)
    w.event(EventKind.INSTANT, 5, 1, 1, 1, args=[("a", ArgType.INT32, 3)])
    # a counter with two arguments announced, the second of size 0 (A2: the reader cuts its count to 1)
    w.raw(b"".join(v.to_bytes(8, "little") for v in (4 | (6 << 4) | (1 << 16) | (2 << 20) | (1 << 48), 6, 1, 2,
                   1 | (1 << 4) | (1 << 16) | (7 << 32), 0, 99)))  # fmt: skip
    w.event(EventKind.INSTANT, 7, (3, 4), "inline cat", "inline name", args=[("b", ArgType.INT32, 4)])
    sources = [w.getvalue(), generate_trace(3_000, seed=2)]
    sources += [p.read_bytes() for p in sorted((testdata / "fxt").glob("*.fxt"))]
    compared = cut = 0
    for data in sources:
        for trial in range(30):
            d = bytearray(data)
            for _ in range(rng.randrange(4) if trial else 0):
                d[rng.randrange(len(d))] = rng.randrange(256)
            try:
                cols = read_fxt_bytes(bytes(d))
            except FormatError:
                continue
            rows = np.arange(len(cols.ev_word))[:: rng.choice([1, 3])]
            a = cols.arg_blocks_of(rows)
            compiled.record_scan = None
            try:
                b = cols.arg_blocks_of(rows)
            finally:
                compiled.record_scan = scan
            for x, y in zip(a, b, strict=True):
                assert x.dtype == y.dtype and np.array_equal(x, y)
            compared += 1
            cut += len(cols.ev_nargs_cut[0]) > 0
    assert compared >= 50 and cut >= 1
    cols = read_fxt_bytes(sources[1])
    out = [np.empty(1, np.int64) for _ in range(3)]
    rec = cols.ev_word
    with pytest.raises(IndexError):
        scan.arg_blocks(cols.arg_decoder.w, rec, rec.dtype == np.int64, np.array([len(rec)], np.int64), *out,
                        np.empty(1, np.uint8))  # fmt: skip
    with pytest.raises(ValueError):
        scan.arg_blocks(cols.arg_decoder.w, rec, rec.dtype == np.int64, np.array([0, 1], np.int64), *out,
                        np.empty(1, np.uint8))  # fmt: skip


def _compiled_and_numpy(read, cols, rows, per_row: float):
    """``read(cols, rows)`` by the compiled pass (its outputs first sized for ``per_row`` arguments a row) and by
    the numpy path (the reference)."""
    scan = compiled.record_scan
    assert scan is not None
    a = read(cols, rows, per_row=per_row)
    compiled.record_scan = None
    try:
        b = read(cols, rows)
    finally:
        compiled.record_scan = scan
    return a, b


def _numeric_both(cols, rows, per_row: float = 1.25):
    """numeric_args of ``rows`` compiled (one pass a record) and by the numpy composition (the reference)."""
    return _compiled_and_numpy(numeric_args, cols, rows, per_row)


def _assert_same_numeric(a, b) -> None:
    assert a.non_numeric == b.non_numeric
    for f in ("record", "name", "value", "ts", "data"):
        x, y = getattr(a, f), getattr(b, f)
        assert x.dtype == y.dtype and np.array_equal(x, y, equal_nan=f == "value"), f


def test_numeric_args_one_pass_equals_the_argument_walk(testdata, cut_and_flip) -> None:
    """The compiled numeric_args (arguments, time and data word of each record in one pass) keeps the numeric
    arguments the argument walk keeps, with the same values, names and records, and the rows' times and data
    words (counters' ids, complete events' ends): on generated and real traces, every row and the counters
    alone, outputs sized too small (the pass made again), the reader's cut counts, and 200+ mutated traces."""
    w = FxtWriter()
    w.string(1, "n")
    w.thread(1, 10, 11)
    w.event(EventKind.COUNTER, 5, 1, 1, 1, args=[("a", ArgType.INT32, -3), ("b", ArgType.DOUBLE, 2.5)], data=4)
    # a counter with two arguments announced, the second of size 0 (A2: the reader cuts its count to 1)
    w.raw(b"".join(v.to_bytes(8, "little") for v in (4 | (6 << 4) | (1 << 16) | (2 << 20) | (1 << 48), 6, 1, 2,
                   1 | (1 << 4) | (1 << 16) | (7 << 32), 0, 99)))  # fmt: skip
    cols = read_fxt_bytes(w.getvalue())
    a, b = _numeric_both(cols, np.arange(len(cols.ev_word)))
    _assert_same_numeric(a, b)
    assert a.value.tolist()[:2] == [-3.0, 2.5] and a.data.tolist()[0] == 4
    cols = read_fxt_bytes(generate_trace(30_000, seed=3))
    counters = np.flatnonzero(cols.ev_kind == EventKind.COUNTER).astype(np.int32)
    assert len(counters) > 100
    for rows, per_row in ((counters, 1.25), (counters, 0.0), (np.arange(len(cols.ev_word)), 1.25),
                          (np.arange(len(cols.ev_word)), 0.1)):  # fmt: skip
        a, b = _numeric_both(cols, rows, per_row)
        _assert_same_numeric(a, b)
        assert len(a.value) > 100
    real = read_fxt(testdata / "fxt" / "richiesams_fxt-python_trace.fxt")
    _assert_same_numeric(*_numeric_both(real, np.arange(len(real.ev_word))))
    rng = random.Random(12)
    compared = 0
    for cols in _mutated(testdata, cut_and_flip, rng, generate_trace(500, seed=6)):
        if len(cols.ev_word):
            _assert_same_numeric(*_numeric_both(cols, np.arange(len(cols.ev_word)), rng.choice([0.0, 1.25])))
            compared += 1
    assert compared >= 200


def test_numeric_args_refuses_rows_out_of_range() -> None:
    """The compiled pass checks every row before reading a record (IndexError), and its columns' sizes."""
    cols = read_fxt_bytes(generate_trace(2_000, seed=1))
    scan = compiled.record_scan
    assert scan is not None
    d = cols.ev_data
    m = 2

    def call(rows, out_rows=m, kind=d.kind):
        e = np.empty(out_rows, np.int64)
        return scan.numeric_args(d.words, cols.ev_word, cols.ev_word.dtype == np.int64, kind, rows, rows.dtype == np.int64,
                                 np.zeros(0, np.int64), np.zeros(0, np.uint8), d.seg_pos, d.seg_tps, e, e.copy(),
                                 np.empty(out_rows, np.uint64), np.empty(4, np.int64), np.empty(4, np.int64),
                                 np.empty(4, np.int64), np.empty(4))  # fmt: skip

    n = len(cols.ev_word)
    assert call(np.array([0, 1], np.int64))[0] >= 0
    with pytest.raises(IndexError):
        call(np.array([0, n], np.int64))
    with pytest.raises(IndexError):
        call(np.array([-1, 0], np.int32))
    with pytest.raises(ValueError):  # outputs not one a row
        call(np.array([0, 1], np.int64), out_rows=3)
    with pytest.raises(ValueError):  # a kind column not one a record
        call(np.array([0, 1], np.int64), kind=d.kind[:-1].copy())


def _cut_count_trace() -> bytes:
    """An instant with an inline, an indexed and an int argument, and an event with two arguments announced,
    the second of size 0 (A2: the reader cuts its count to 1)."""
    w = FxtWriter()
    w.string(1, "n")
    w.thread(1, 10, 11)
    w.event(EventKind.INSTANT, 5, 1, 1, 1, args=[("a", ArgType.STRING, "x"), (1, ArgType.STRING, 1),
                                                ("b", ArgType.INT32, 3)])  # fmt: skip
    w.raw(b"".join(v.to_bytes(8, "little") for v in (4 | (6 << 4) | (1 << 16) | (2 << 20) | (1 << 48), 6, 1, 2,
                   6 | (1 << 4) | (1 << 16) | (1 << 32), 0, 99)))  # fmt: skip
    return w.getvalue()


def test_string_arg_refs_resolved_equal_the_argument_columns() -> None:
    """string_arg_refs (the numpy walk: the index's reader without the compiled pass) keeps each argument's
    name ref and string value's ref, and string_arg_ids resolves them to event_arg_columns' names and string
    values: the reader's cut count, every row and the slices alone of a generated trace."""
    cut = read_fxt_bytes(_cut_count_trace())
    a = string_arg_refs(cut, np.arange(len(cut.ev_word)))
    assert a.value_ref.tolist() == [a.value_ref[0], 1, -1, 1] and a.value_ref[0] >= 0x8000  # inline, ref, int, cut
    gen = read_fxt_bytes(generate_trace(30_000, seed=3))
    slices = np.flatnonzero(np.isin(gen.ev_kind, (EventKind.DURATION_BEGIN, EventKind.DURATION_COMPLETE)))
    for cols, rows in ((cut, np.arange(len(cut.ev_word))), (gen, slices), (gen, np.arange(len(gen.ev_word)))):
        got = string_arg_ids(cols, string_arg_refs(cols, rows))  # the names, then the string values
        args = event_arg_columns(cols, rows)
        string = args.type == ArgType.STRING
        refs = (args.raw[string] & np.uint64(0xFFFF)).astype(np.int64)
        values = cols.arg_decoder.string_ids(refs, args.value_word[string], cols.ev_word[args.event[string]])
        assert np.array_equal(got.sid, np.concatenate([args.name, values]))
        assert np.array_equal(got.record, np.concatenate([args.record, args.record[string]]))
    assert len(got.sid) > 1000


def _sids_from_refs(cols, rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The reference of string_arg_sids: string_arg_refs (numpy walk) resolved by string_arg_ids (names first,
    then the string values), put in the pass's order: each argument's name, then its string value."""
    saved = compiled.record_scan
    compiled.record_scan = None  # (the walk and the refs' resolution both numpy's)
    try:
        refs = string_arg_refs(cols, rows)
        ids = string_arg_ids(cols, refs)
    finally:
        compiled.record_scan = saved
    n = len(refs.act)
    string = np.flatnonzero(refs.value_ref >= 0)
    # the name of argument k lands after the names and values of the arguments before it
    name_at = np.arange(n) + np.searchsorted(string, np.arange(n))
    act = np.empty(len(ids.sid), np.int64)
    sid = np.empty(len(ids.sid), np.int64)
    act[name_at], sid[name_at] = refs.act, ids.sid[:n]
    act[name_at[string] + 1], sid[name_at[string] + 1] = refs.act[string], ids.sid[n:]
    return act, sid


def _assert_sids_equal_refs(cols, rows: np.ndarray, per_row: float = 2.0) -> int:
    got = string_arg_sids(cols, rows, per_row)
    assert got is not None
    sid = resolve_special_sids(cols, got)
    act, want = _sids_from_refs(cols, rows)  # (after: the inline texts interned, the ids are the same)
    assert got.act.dtype == got.sid.dtype == np.int32
    assert np.array_equal(got.act, act) and np.array_equal(sid, want)
    return len(got.special_at)


def _registrations_trace() -> bytes:
    """Two providers (two string tables), a string index registered again with another text (its key
    registered twice: left to the lookup's search), a ref used before its registration (unresolved) and
    after, inline names and values, ref 0 (the empty string), and events without arguments."""
    w = FxtWriter()
    w.initialization(1_000_000_000)
    w.thread(1, 10, 11)
    for p in (1, 2):
        w.provider_info(p, f"provider {p}")
    for i in range(400):
        w.provider_section(1 + i % 2)
        if i == 7:
            w.string(5, "five")
        if i == 200:
            w.string(5, "five again")
        if i % 50 == 3:
            w.string(6 + i % 2, f"late {i}")
        args = [(5, ArgType.STRING, 6), ("inline name", ArgType.STRING, f"inline value {i % 9}"),
                (6, ArgType.INT32, i), (7, ArgType.STRING, 0)]
        w.event(EventKind.INSTANT, 10 * i, 1, "cat", "n", args=args[: i % 5])
    return w.getvalue()


def test_string_arg_sids_one_pass_equals_the_refs_resolved(testdata, cut_and_flip) -> None:
    """The compiled string_arg_sids (each record's argument strings read and resolved in one pass, the inline
    ones and keys registered twice left to resolve_special_sids) gives the ids string_arg_ids gives the numpy
    walk's refs, in the pass's order: on registrations in two providers' tables, generated and real traces,
    outputs sized too small (the pass resumed at the row that did not fit), the reader's cut counts, a table
    without a dense lookup, and 200+ mutated traces."""
    cols = read_fxt_bytes(_cut_count_trace())  # (the reader's cut count honoured)
    _assert_sids_equal_refs(cols, np.arange(len(cols.ev_word)))
    cols = read_fxt_bytes(_registrations_trace())
    rows = np.arange(len(cols.ev_word))
    specials = _assert_sids_equal_refs(cols, rows)
    sid = resolve_special_sids(cols, string_arg_sids(cols, rows))
    texts = {cols.strings[i] if i >= 0 else None for i in sid.tolist()}
    assert {"five", "five again", "", None, "inline name"} <= texts and specials > 100
    assert _assert_sids_equal_refs(cols, rows[rows % 3 == 0], 0.0) > 10
    # a string table without a dense lookup (thousands of provider generations): every indexed ref left to it
    lookup = cols.arg_decoder.str_lookup
    dense, lookup._dense = lookup._dense, None
    try:
        refs = string_arg_refs(cols, rows)  # (every string but those of ref 0, the empty string's)
        assert _assert_sids_equal_refs(cols, rows) == (refs.ref != 0).sum() + (refs.value_ref > 0).sum() > specials
    finally:
        lookup._dense = dense
    cols = read_fxt_bytes(generate_trace(30_000, seed=3))
    slices = np.flatnonzero(np.isin(cols.ev_kind, (EventKind.DURATION_BEGIN, EventKind.DURATION_COMPLETE)))
    for rows, per_row in ((slices, 2.0), (slices, 0.0), (np.arange(len(cols.ev_word)), 0.1)):
        _assert_sids_equal_refs(cols, rows, per_row)
    real = read_fxt(testdata / "fxt" / "richiesams_fxt-python_trace.fxt")
    _assert_sids_equal_refs(real, np.arange(len(real.ev_word)))
    rng = random.Random(17)
    compared = 0
    for cols in _mutated(testdata, cut_and_flip, rng, generate_trace(500, seed=8)):
        if len(cols.ev_word) and string_arg_sids(cols, np.zeros(0, np.int64)) is not None:
            _assert_sids_equal_refs(cols, np.arange(len(cols.ev_word)), rng.choice([0.0, 2.0]))
            compared += 1
    assert compared >= 200


def test_string_arg_sids_is_left_to_the_numpy_path_without_the_compiled_pass(monkeypatch) -> None:
    cols = read_fxt_bytes(generate_trace(2_000, seed=3))
    monkeypatch.setattr(compiled, "record_scan", None)
    assert string_arg_sids(cols, np.arange(len(cols.ev_word))) is None


def _assert_string_ids_equal_numpy(cols) -> int:
    """ArgDecoder.string_ids (one compiled pass, record_scan.ref_ids, with what it leaves resolved by numpy)
    gives the ids of its numpy path for every argument name and string value of every row; the refs left."""
    dec = cols.arg_decoder
    left = 0
    for ref, stream, record in _refs_of(cols):
        want = dec._string_ids(ref, stream, record)  # (first: the inline texts interned, ids then the same)
        got = dec.string_ids(ref, stream, record)
        assert got.dtype == np.int64 and np.array_equal(got, want)
        if len(ref) and dec.str_lookup.dense is not None:
            out = np.empty(len(ref), np.int64)
            first, value, single_last = dec.str_lookup.dense
            left += compiled.record_scan.ref_ids(np.ascontiguousarray(ref, np.int64), record, *dec.segments, value,
                                                 first, STRING_KEYS, int(record.min()) <= single_last, out)  # fmt: skip
    return left


def test_string_ids_one_pass_equals_the_numpy_resolution(testdata, cut_and_flip) -> None:
    """The string refs of arguments resolved by one compiled pass (the provider segment, key and dense
    table of each, as the counter tracks' names are) equal the numpy resolution: on two providers' tables
    with a key registered twice, a ref used before its registration and inline strings (left to numpy), a
    table without a dense lookup (every ref left), generated and real traces, and 200+ mutated traces."""
    cols = read_fxt_bytes(_registrations_trace())
    left = _assert_string_ids_equal_numpy(cols)
    names, values = (cols.arg_decoder.string_ids(*q).tolist() for q in _refs_of(cols))
    assert {"five", "five again", "inline name", "late 3"} <= {cols.strings[i] for i in names if i >= 0}
    assert {"", "inline value 1"} <= {cols.strings[i] for i in values if i >= 0}
    assert -1 in names and -1 in values and left > 100  # (ref 6: never registered)
    w = FxtWriter()  # a ref used before its one registration (unresolved), then after it
    w.initialization(1_000_000_000)
    w.thread(1, 10, 11)
    w.event(EventKind.INSTANT, 1, 1, "cat", "n", args=[(9, ArgType.INT32, 1)])
    w.string(9, "nine")
    w.event(EventKind.INSTANT, 2, 1, "cat", "n", args=[(9, ArgType.INT32, 2)])
    cols = read_fxt_bytes(w.getvalue())
    _assert_string_ids_equal_numpy(cols)
    assert [cols.strings[i] if i >= 0 else None for i in cols.arg_decoder.string_ids(*_refs_of(cols)[0])] == [None, "nine"]
    lookup = cols.arg_decoder.str_lookup
    dense, lookup._dense = lookup._dense, None
    try:  # (no dense table: the numpy path, whose search answers every key)
        assert _assert_string_ids_equal_numpy(cols) == 0
    finally:
        lookup._dense = dense
    for data in (generate_trace(30_000, seed=3), (testdata / "fxt" / "richiesams_fxt-python_trace.fxt").read_bytes()):
        _assert_string_ids_equal_numpy(read_fxt_bytes(data))
    compared = 0
    for cols in _mutated(testdata, cut_and_flip, random.Random(23), generate_trace(500, seed=9)):
        if len(cols.ev_word):
            _assert_string_ids_equal_numpy(cols)
            compared += 1
    assert compared >= 200


def _refs_of(cols) -> list[tuple[np.ndarray, np.ndarray, np.ndarray]]:
    """The string refs of every argument of ``cols``: (refs, stream words, record words) of the names, then
    of the string values."""
    refs = string_arg_refs(cols, np.arange(len(cols.ev_word)))
    string = np.flatnonzero(refs.value_ref >= 0)
    return [(refs.ref, refs.stream, refs.record[refs.act]),
            (refs.value_ref[string], refs.value_at[string], refs.record[refs.act[string]])]  # fmt: skip


def test_ref_ids_checks_its_buffers() -> None:
    scan = compiled.record_scan
    z8, z4 = np.zeros(3, np.int64), np.zeros(2, np.int32)
    with pytest.raises(ValueError):  # (refs and record words differ in length)
        scan.ref_ids(z8, z8[:2], z8[:1], z8[:1], z4, z8[:2], 4, False, z8)
    with pytest.raises(ValueError):  # (the dense table's value and first differ)
        scan.ref_ids(z8, z8, z8[:1], z8[:1], z4, z8, 4, False, z8)
    out = np.full(3, 7, np.int64)  # no segments, no keys: -2 (no dense table) for an indexed ref, 0 for ref 0
    assert scan.ref_ids(np.array([0, 3, 0x8001]), z8, z8[:0], z8[:0], z4[:0], z8[:0], 4, False, out) == 2
    assert out.tolist() == [0, -2, -3]
