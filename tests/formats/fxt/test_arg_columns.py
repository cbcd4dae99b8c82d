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
from fxscope.formats.fxt.arg_columns import event_arg_columns, python_values
from fxscope.formats.fxt.args import ArgType
from fxscope.formats.fxt.columns import EventKind
from fxscope.formats.fxt.reader import read_fxt, read_fxt_bytes
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


def test_compiled_walk_equals_numpy_walk_on_hostile_traces(testdata, cut_and_flip) -> None:
    """Truncated and mutated traces (argument sizes, inline name lengths, counts): the compiled walk keeps
    the same arguments, with the same fields, as the numpy walk (400 traces)."""
    scan = compiled.record_scan
    assert scan is not None
    rng = random.Random(5)
    sources = [p.read_bytes() for p in sorted((testdata / "fxt").glob("*.fxt"))] + [generate_trace(500, seed=4)]
    compared = 0
    for data in sources:
        for _ in range(100):
            try:
                cols = read_fxt_bytes(cut_and_flip(data, rng, 6))
            except FormatError:
                continue
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
