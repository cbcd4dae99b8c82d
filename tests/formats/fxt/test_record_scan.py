"""The compiled record loops (formats/fxt/record_scan.c) read every trace exactly as the numpy paths do:
the same columns, tables, warnings and data words (``ev_data``) on the third-party traces, the demo, a big-endian trace and
thousands of truncated and mutated variants; and the extension refuses bad buffers instead of reading
out of bounds."""

from __future__ import annotations

import dataclasses
import random
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fxscope.core.synthetic_trace import generate_trace
from fxscope.formats.errors import FormatError
from fxscope.formats.fxt import compiled
from fxscope.formats.fxt.args import ArgType
from fxscope.formats.fxt.mapped_column import MappedColumn
from fxscope.formats.fxt.reader import read_fxt_bytes
from fxscope.formats.fxt.writer import FxtWriter

DEMO = Path(__file__).resolve().parents[3] / "resources" / "demo" / "demo.fxt"
#: columns holding objects that read the file lazily (compared through what they answer)
_LAZY = {"arg_decoder", "ev_data", "page_hold", "mapped_file"}


def test_extension_is_built():
    """The install built the extension (CI and a developer machine have a C compiler): without it every
    trace reads at the numpy fallback's speed."""
    scan = compiled.record_scan
    assert scan is not None, "fxscope.formats.fxt.record_scan was not built: pip install -e . with gcc"
    assert callable(scan.frame_split) and callable(scan.event_block) and callable(scan.walk_args)


def _read(data: bytes, scan):
    saved = compiled.record_scan
    compiled.record_scan = scan
    try:
        return read_fxt_bytes(data)
    except FormatError as e:
        return f"FormatError: {e}"
    finally:
        compiled.record_scan = saved


def assert_same_read(data: bytes) -> None:
    assert compiled.record_scan is not None
    a, b = _read(data, compiled.record_scan), _read(data, None)
    if isinstance(a, str) or isinstance(b, str):
        assert a == b
        return
    for f in dataclasses.fields(a):
        x, y = getattr(a, f.name), getattr(b, f.name)
        if f.name in _LAZY:
            continue
        if isinstance(x, MappedColumn):  # (ev_ts: read from the file, compared by value)
            x, y = np.asarray(x), np.asarray(y)
        if isinstance(x, np.ndarray):
            assert x.dtype == y.dtype and np.array_equal(x, y), f.name
        else:
            assert repr(x) == repr(y), f.name
    rows = np.arange(len(a.ev_kind))
    saved = compiled.record_scan
    compiled.record_scan = None  # ev_data's own read, the numpy way
    try:
        numpy_read = b.ev_data[rows]
    finally:
        compiled.record_scan = saved
    assert np.array_equal(a.ev_data[rows], numpy_read)  # (the compiled event_data)


def _corpus(testdata: Path) -> list[bytes]:
    files = sorted((testdata / "fxt").glob("*.fxt"))
    assert files, "no FXT traces in the test corpus"
    return [p.read_bytes() for p in files] + [DEMO.read_bytes()]


def test_same_read_of_real_traces(testdata):
    for data in _corpus(testdata):
        assert_same_read(data)


def test_same_read_of_a_big_endian_trace_with_arguments():
    w = FxtWriter(big_endian=True)
    w.event(0, 1_000, (1, 2), "cat", "a", args=[("x", ArgType.INT32, 7), ("s", ArgType.STRING, "text"),
                                                 ("f", ArgType.DOUBLE, 1.5)])  # fmt: skip
    w.event(2, 2_000, (1, 2), "cat", "a", args=[("y", ArgType.INT64, -3)])
    w.event(3, 2_500, (1, 2), "cat", "a")
    assert_same_read(w.getvalue())


def test_same_read_of_truncated_and_mutated_traces(testdata, cut_and_flip):
    """Hostile variants: cut anywhere, bytes overwritten (sizes, argument headers, refs). 1200+ cases."""
    rng = random.Random(18)
    cases = 0
    for data in [*_corpus(testdata), generate_trace(400, seed=3), generate_trace(400, seed=5, scheduling=True)]:
        for _ in range(250):
            assert_same_read(cut_and_flip(data, rng, 5))
            cases += 1
    print(f"{cases} truncated/mutated traces read alike")
    assert cases >= 1450


def test_arguments_of_size_zero_and_past_the_record_warn_alike():
    """The argument walk's two failures, in records of their own: an argument of size 0 ends the
    arguments (the record stays), an argument past the record drops the record."""
    w = FxtWriter()
    two = [("x", ArgType.INT32, 7), ("y", ArgType.INT32, 8)]
    w.event(0, 1_000, (1, 2), "cat", "a", args=two)
    w.event(0, 2_000, (1, 2), "cat", "b", args=two)
    data = bytearray(w.getvalue())
    words = np.frombuffer(bytes(data), "<u8")
    # the argument headers of the two events: int32 arguments with an inline one-word name (2 words each)
    heads = [i for i, h in enumerate(words.tolist()) if h & 0xF == 1 and (h >> 4) & 0xFFF == 2 and (h >> 31) & 1][:4]
    assert len(heads) == 4
    zero_at, past_at = heads[1], heads[3]
    np.frombuffer(data, "<u8")[zero_at] &= ~np.uint64(0xFFF0)  # size 0
    np.frombuffer(data, "<u8")[past_at] |= np.uint64(0xFF0)  # runs past the record
    cols = _read(bytes(data), compiled.record_scan)
    assert any("argument of size 0" in line for line in cols.warnings)
    assert any("arguments run past the record" in line for line in cols.warnings)
    assert_same_read(bytes(data))


def _frame(scan, words, p, stop, ev, other, types, wide=False):
    return scan.frame_split(words, p, stop, ev, 0, other, types, 0, wide)


def test_frame_split_refuses_bad_buffers():
    scan = compiled.record_scan
    assert scan is not None
    words = np.full(16, (1 << 4) | 2, np.uint64)  # one-word string records (not events)
    ev, other, types = np.empty(16, np.uint32), np.empty(16, np.uint32), np.empty(16, np.uint8)
    with pytest.raises(ValueError):
        scan.frame_split(words, 0, 16, ev, 17, other, types, 0, False)  # count past the output's end
    with pytest.raises(ValueError):
        _frame(scan, words, -1, 16, ev, other, types)
    with pytest.raises(ValueError):
        _frame(scan, words, 0, 16, np.empty(3, np.uint8), other, types)  # not whole uint32 items
    read_only = other.copy()
    read_only.setflags(write=False)
    with pytest.raises(TypeError):
        _frame(scan, words, 0, 16, ev, read_only, types)
    # a stop past the words is clamped; a full output stops the walk
    assert _frame(scan, words, 0, 1 << 40, ev, other, types) == (0, 16, 16, 0)
    assert _frame(scan, words, 0, 16, ev, other[:4], types) == (0, 4, 4, 0)
    assert types.tolist()[:4] == [2, 2, 2, 2]


def test_frame_split_of_a_hostile_large_record_size_and_of_size_zero():
    """A large record's 32-bit size far past the file: the walk leaves at once, no read past the words; a
    header of size 0 that is not a zero word ends the walk there, a zero word is padding."""
    scan = compiled.record_scan
    assert scan is not None
    words = np.array([0xFFFFFFFF0 | 15, 0, 0], np.uint64)
    ev, other, types = np.empty(3, np.int64), np.empty(3, np.int64), np.empty(3, np.uint8)
    assert _frame(scan, words, 0, 3, ev, other, types, True) == (0, 1, 0xFFFFFFFF, 0)
    words = np.array([0, (2 << 4) | 4, 7, 5 << 16, 0], np.uint64)  # padding, an event, a bad size-0 header
    assert _frame(scan, words, 0, 5, ev, other, types, True) == (1, 1, 3, 1)
    assert ev[:1].tolist() == [1] and other[:1].tolist() == [0] and types[0] == 16


def test_walk_args_refuses_rows_of_different_lengths():
    scan = compiled.record_scan
    assert scan is not None
    w = np.zeros(4, np.uint64)
    i8, u8 = np.zeros(2, np.int64), np.zeros(2, np.uint8)
    with pytest.raises(ValueError):
        scan.walk_args(w, i8, np.zeros(3, np.uint8), i8, u8, i8.copy(), u8.copy(), u8.copy())


def test_unaligned_words_take_the_numpy_path():
    """Words at an odd address (a buffer slice) are not handed to the C loops (they would refuse them):
    the numpy walk frames them, alike."""
    from fxscope.formats.fxt import framing

    data = DEMO.read_bytes()
    buf = bytearray(len(data) + 1)
    buf[1:] = data
    odd = np.frombuffer(memoryview(buf)[1:], "<u8")
    assert not compiled.contiguous_words(odd)
    assert np.array_equal(framing.record_starts(odd), framing.record_starts(np.frombuffer(data, "<u8")))


def test_event_data_refuses_rows_out_of_range_and_clips_reads():
    scan = compiled.record_scan
    assert scan is not None
    words = np.array([(3 << 4) | 4, 7, 9, (0xFFF << 4) | 4], np.uint64)  # a 3-word record, a huge one at the end
    rec = np.array([0, 3], np.uint32)
    kind = np.array([1, 4], np.uint8)  # a counter; a complete event (its end converted at its segment's rate)
    seg_pos, seg_tps = np.array([0, 3], np.int64), np.array([10**9, 2 * 10**9], np.int64)
    out = np.empty(2, np.uint64)
    scan.event_data(words, rec, False, kind, np.array([0, 1], np.int64), 0, seg_pos, seg_tps, out)
    assert out.tolist() == [9, int(words[3]) // 2]  # the second record's end is past the file: its last word clipped
    scan.event_data(words, rec, False, kind, None, 1, seg_pos, seg_tps, out[:1])  # (a run from row 1)
    assert out[0] == int(words[3]) // 2
    scan.event_data(words, rec, False, np.array([2, 3], np.uint8), None, 0, seg_pos, seg_tps, out)
    assert out.tolist() == [0, 0]  # (kinds without a data word)
    bad = [
        (IndexError, (kind, np.array([2], np.int64), 0, seg_pos, seg_tps, np.empty(1, np.uint64))),
        (IndexError, (kind, np.array([-1], np.int64), 0, seg_pos, seg_tps, np.empty(1, np.uint64))),
        (IndexError, (kind, None, 1, seg_pos, seg_tps, np.empty(2, np.uint64))),  # a run past the rows
        (IndexError, (kind, None, -1, seg_pos, seg_tps, np.empty(1, np.uint64))),
        (ValueError, (kind, np.array([0, 1], np.int64), 0, seg_pos, seg_tps, np.empty(1, np.uint64))),
        (ValueError, (kind[:1], None, 0, seg_pos, seg_tps, np.empty(1, np.uint64))),  # kind shorter than the rows
        (ValueError, (kind, None, 0, seg_pos, seg_tps[:1], np.empty(1, np.uint64))),
        (ValueError, (kind, None, 0, seg_pos, np.array([10**9, 0], np.int64), np.empty(1, np.uint64))),
    ]
    for error, args in bad:
        with pytest.raises(error):
            scan.event_data(words, rec, False, *args)


def _ns_of_ticks(t: int, rate: int) -> int:
    """ticks.convert_rate's formula in Python's integers: below 2**33 ticks a second in uint64 arithmetic
    (its product wrapping, the int64 view of the result), else exact and clamped to 2**63 - 1."""
    if rate < 1 << 33:
        v = ((t // rate) * 10**9 + (t % rate) * 10**9 // rate) % (1 << 64)
        return v - (1 << 64) if v >= 1 << 63 else v
    return min(t * 10**9 // rate, (1 << 63) - 1)


#: tick rates at the edges of the reciprocal division: 1, powers of two and their neighbours up to 2**34,
#: real providers' (24 MHz, 19.2 MHz, 1 GHz +- 1), the 2**33 switch to 128-bit arithmetic and huge ones
_EDGE_RATES = sorted({1, 3, 7, 10, 19_200_000, 24_000_000, 10**9 - 1, 10**9 + 1, 2 * 10**9, 10**12, 2**62,
                      2**63 - 1} | {max(1, 2**k + d) for k in range(35) for d in (-1, 0, 1)})  # fmt: skip
#: ticks at the edges: 0, 2**32, 2**63 and 2**64 and their neighbours
_EDGE_TICKS = [v + d for v in (0, 2**32, 2**63, 2**64 - 1) for d in (-2, -1, 0, 1, 2) if 0 <= v + d < 2**64]


def _compiled_ns(ticks: list[int], rate: int) -> list[int]:
    out = np.empty(len(ticks), np.int64)
    compiled.record_scan.ticks_to_ns(np.array(ticks, np.uint64), rate, out)
    return out.tolist()


def test_tick_division_by_reciprocal_is_exact_at_the_edges():
    """The compiled conversion (a multiply-high by each rate's reciprocal, record_scan.c RateDiv) equals the
    integer formula and ticks.convert_rate for every edge rate, at the edge ticks and at the multiples of
    the rate (and their neighbours) near 2**32, 2**63 and 2**64, where a reciprocal one off would round wrong."""
    from fxscope.formats.fxt.ticks import convert_rate

    assert compiled.record_scan is not None
    for rate in _EDGE_RATES:
        near = [q * rate + d for top in (2**32, 2**63, 2**64) for q in (top // rate - 1, top // rate)
                for d in (-1, 0, 1)]  # fmt: skip
        ticks = sorted({t for t in _EDGE_TICKS + near + [rate - 1, rate, rate + 1] if 0 <= t < 2**64})
        want = [_ns_of_ticks(t, rate) for t in ticks]
        assert _compiled_ns(ticks, rate) == want, rate
        assert convert_rate(np.array(ticks, np.uint64), rate).tolist() == want, rate
    with pytest.raises(ValueError):
        compiled.record_scan.ticks_to_ns(np.zeros(1, np.uint64), 0, np.empty(1, np.int64))
    with pytest.raises(ValueError):
        compiled.record_scan.ticks_to_ns(np.zeros(2, np.uint64), 3, np.empty(1, np.int64))


@settings(max_examples=400, deadline=None, derandomize=True, database=None)
@given(
    st.lists(st.integers(0, 2**64 - 1) | st.sampled_from(_EDGE_TICKS) | st.integers(0, 2**40), min_size=1,
             max_size=40),
    st.integers(1, 2**34) | st.integers(1, 2**63 - 1) | st.sampled_from(_EDGE_RATES),
)  # fmt: skip
def test_tick_division_by_reciprocal_is_exact(ticks, rate):
    """Any ticks at any rate (below and above the 2**33 switch): the compiled conversion is the integer
    formula's (the reciprocal rebuilt when a rate changes: a second rate's conversion after the first's)."""
    assert compiled.record_scan is not None
    assert _compiled_ns(ticks, rate) == [_ns_of_ticks(t, rate) for t in ticks]
    # two segments of different rates read in one pass (each segment's reciprocal in turn, then the first again)
    words = np.zeros(2 * len(ticks), np.uint64)
    words[1::2] = ticks
    rec = np.arange(0, len(words), 2, dtype=np.int64)
    half = len(ticks) // 2
    other = 24_000_000 if rate != 24_000_000 else 19_200_000
    seg_pos, seg_tps = np.array([0, 2 * half], np.int64), np.array([other, rate], np.int64)
    rows = np.concatenate([np.arange(len(ticks)), np.arange(len(ticks))[::-1]]).astype(np.int64)
    out = np.empty(len(rows), np.int64)
    compiled.record_scan.event_times(words, rec, True, rows, 0, seg_pos, seg_tps, out)
    want = [_ns_of_ticks(ticks[r], other if r < half else rate) for r in rows.tolist()]
    assert out.tolist() == want


def test_event_times_refuses_rows_out_of_range_and_converts_as_numpy():
    """Every tick rate's conversion (below and above 2**33 ticks a second, the clamp at 2**63 - 1) equals
    ticks.convert_rate's; rows and runs are bounds-checked, the word after a record at the file's end clipped."""
    from fxscope.formats.fxt.ticks import convert_rate

    scan = compiled.record_scan
    assert scan is not None
    rng = np.random.default_rng(3)
    ticks = np.concatenate([rng.integers(0, 1 << 63, 500, dtype=np.int64).view(np.uint64),
                            np.array([0, 1, (1 << 64) - 1, 1 << 63, 999_999_999], np.uint64)])  # fmt: skip
    words = np.zeros(2 * len(ticks), np.uint64)
    words[1::2] = ticks
    rec = np.arange(0, len(words), 2, dtype=np.int64)
    for rate in (1, 3, 10**9, 2 * 10**9, 24_000_000, (1 << 33) - 1, 1 << 33, 10**12, (1 << 63) - 1):
        out = np.empty(len(ticks), np.int64)
        scan.event_times(words, rec, True, None, 0, np.array([0], np.int64), np.array([rate], np.int64), out)
        assert np.array_equal(out, convert_rate(ticks, rate)), rate
    # two segments (the second from word 6: rows 3..), rows in any order, repeated
    seg_pos, seg_tps = np.array([0, 6], np.int64), np.array([10**9, 3], np.int64)
    rows = np.array([5, 0, 3, 3, 2, 400], np.int64)
    out = np.empty(len(rows), np.int64)
    scan.event_times(words, rec, True, rows, 0, seg_pos, seg_tps, out)
    assert np.array_equal(out, np.where(rows < 3, ticks[rows].view(np.int64), convert_rate(ticks[rows], 3)))
    out = np.empty(1, np.int64)
    scan.event_times(words[:1], np.array([0], np.uint32), False, None, 0, seg_pos[:0], seg_tps[:0], out)
    assert out[0] == 0  # (the time word past the file's end: the last word, clipped; no segments: ns)
    with pytest.raises(IndexError):
        scan.event_times(words, rec, True, np.array([len(rec)], np.int64), 0, seg_pos, seg_tps, out)
    with pytest.raises(IndexError):
        scan.event_times(words, rec, True, None, len(rec), seg_pos, seg_tps, out)
    with pytest.raises(ValueError):
        scan.event_times(words, rec, True, np.array([0, 1], np.int64), 0, seg_pos, seg_tps, out)
    with pytest.raises(ValueError):
        scan.event_times(words, rec, True, None, 0, seg_pos, seg_tps[:1], out)
    with pytest.raises(ValueError):
        scan.event_times(words, rec, True, None, 0, seg_pos, -seg_tps, out)
    with pytest.raises(ValueError):
        scan.event_times(words, rec.astype(np.uint32)[:-1].view(np.uint8)[1:], False, None, 0, seg_pos, seg_tps, out)
