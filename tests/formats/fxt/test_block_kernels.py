"""The reader's one-pass compiled steps of a block (record_scan.event_fields, generation_refs, code_index) answer
as the numpy steps they stand for, take the usual blocks of real traces, and hand every block that needs a
warning to the numpy path (which the whole-read comparisons of test_record_scan.py then check)."""

from __future__ import annotations

import random

import numpy as np
import pytest

from fxscope.core.synthetic_trace import generate_trace
from fxscope.formats.fxt import assemble, coded_column, compiled, records_events
from fxscope.formats.fxt.coded_column import coded
from fxscope.formats.fxt.reader import read_fxt_bytes
from fxscope.formats.fxt.tables import Lookup
from fxscope.formats.fxt.writer import FxtWriter

scan = compiled.record_scan
pytestmark = pytest.mark.skipif(scan is None, reason="record_scan not built (test_record_scan fails for that)")


def _event(kind: int, size: int, nargs: int = 0, tref: int = 1, cref: int = 1, nref: int = 2) -> int:
    return 4 | size << 4 | kind << 16 | nargs << 20 | tref << 24 | cref << 32 | nref << 48


def _fields(words: list[int], pos: list[int], seg_pos=(0,), seg_tps=(1_000_000_000,)):
    w = np.array(words, np.uint64)
    p = np.array(pos, np.int64)
    m = len(p)
    out = [np.empty(m, dt) for dt in (np.uint8, np.uint8, np.uint8, np.uint16, np.uint16, np.int64, np.int64, np.uint64)]
    got = scan.event_fields(w, p, np.array(seg_pos, np.int64), np.array(seg_tps, np.int64), *out)
    return got, out


def test_event_fields_of_a_usual_block():
    words = [
        _event(2, 2), 100,  # duration begin
        _event(4, 3), 110, 150,  # complete: its end in the last word
        _event(0, 3), 120, 1,  # instant, process scope (not 0: an odd row)
        _event(1, 5, nargs=1), 130, 1 | 2 << 4, 7, 42,  # counter with a two-word argument, its id last
        _event(4, 4), 140, 170, 99,  # complete whose data word is not its last (an odd row)
    ]  # fmt: skip
    got, (kind, nargs, tref, cref, nref, ends, odd_rows, odd_vals) = _fields(words, [0, 2, 5, 8, 13])
    n_complete, n_odd, tmin, tmax = got
    assert (tmin, tmax) == (100, 140)
    assert kind.tolist() == [2, 4, 0, 1, 4] and nargs.tolist() == [0, 0, 0, 1, 0]
    assert tref.tolist() == [1] * 5 and cref.tolist() == [1] * 5 and nref.tolist() == [2] * 5
    assert ends[:n_complete].tolist() == [150, 170]
    assert odd_rows[:n_odd].tolist() == [2, 4] and odd_vals[:n_odd].tolist() == [1, 170]


def test_event_fields_converts_at_each_segments_rate():
    words = [_event(4, 3), 2_000, 4_000, _event(4, 3), 2_000, 4_000]
    got, out = _fields(words, [0, 3], seg_pos=(0, 3), seg_tps=(1_000_000_000, 2_000_000_000))
    assert got == (2, 0, 1_000, 2_000) and out[5][:2].tolist() == [4_000, 2_000]


@pytest.mark.parametrize(
    "record",
    [
        [_event(0, 1)],  # size below 2
        [_event(11, 2), 5],  # unknown event type
        [_event(0, 3, tref=0), 5, 6],  # an inline thread (two words) past the record
        [_event(0, 3, cref=0x8000 | 20), 5, 6],  # an inline category past the record
        [_event(0, 4, nargs=1), 5, 1 | 0 << 4, 0],  # an argument of size 0
        [_event(0, 4, nargs=1), 5, 1 | 3 << 4, 0],  # an argument past the record
        [_event(1, 2), 5],  # a counter without its id word
        [_event(0, 3), 5, 3],  # an instant's scope out of range
    ],
)
def test_event_fields_refuses_blocks_that_need_a_warning(record):
    words = [_event(2, 2), 100, *record, _event(3, 2), 200]
    got, _ = _fields(words, [0, 2, 2 + len(record)])
    assert got is None
    got, _ = _fields(words, [0, 2 + len(record)])  # the same block without that record: read
    assert got is not None


def test_event_fields_refuses_mismatched_buffers():
    w = np.zeros(8, np.uint64)
    p = np.zeros(2, np.int64)
    out = [np.empty(2, dt) for dt in (np.uint8, np.uint8, np.uint8, np.uint16, np.uint16, np.int64, np.int64, np.uint64)]
    seg = np.zeros(1, np.int64), np.full(1, 1_000_000_000, np.int64)
    with pytest.raises(ValueError):
        scan.event_fields(w, p, *seg, *out[:5], np.empty(1, np.int64), *out[6:])
    with pytest.raises(ValueError):
        scan.event_fields(w, p, seg[0], np.zeros(1, np.int64), *out)  # a tick rate of 0


def test_usual_blocks_of_a_generated_trace_take_the_one_pass(monkeypatch):
    monkeypatch.setattr(assemble.Decoder, "BLOCK_RECORDS", 256)
    taken = []
    original = records_events.EventRecords._clean_events

    def spy(self, pos, f):
        taken.append(len(pos))
        return original(self, pos, f)

    monkeypatch.setattr(records_events.EventRecords, "_clean_events", spy)
    cols = read_fxt_bytes(generate_trace(5000, seed=2, scheduling=True))
    assert sum(taken) == len(cols.ev_kind) > 4000


def test_first_event_of_each_provider_with_interleaved_providers(monkeypatch):
    """Three providers without initialization records, their sections interleaved within blocks: each
    warning names its provider's first event record."""
    monkeypatch.setattr(assemble.Decoder, "BLOCK_RECORDS", 16)
    w = FxtWriter()
    firsts = {}
    for pid in (1, 2, 3):
        w.provider_info(pid, f"p{pid}")
    rng = random.Random(4)
    for i in range(200):
        pid = rng.choice((1, 2, 3)) if i > 20 else 1 + (i // 7) % 2  # provider 3 starts late
        w.provider_section(pid)
        firsts.setdefault(pid, len(w.getvalue()))
        w.event(0, 1_000 + i, (1, 2), "cat", "a")
    cols = read_fxt_bytes(w.getvalue())
    said = [line for line in cols.warnings if "no initialization record" in line]
    assert said == [f"offset {firsts[pid]:#x}: provider {pid} ('p{pid}') has no initialization record: assuming 1 tick "
                    "= 1 ns" for pid in sorted(firsts, key=firsts.get)]  # fmt: skip


@pytest.mark.parametrize("distinct", [1, 3, 200, 256, 257, 5000])
def test_code_index_matches_the_numpy_coding(monkeypatch, distinct):
    rng = np.random.default_rng(distinct)
    pool = rng.choice(np.arange(-32768, 32768), size=distinct, replace=False).astype(np.int16)
    codes = pool[rng.integers(0, distinct, 200_000)]
    fast = coded(codes)
    monkeypatch.setattr(compiled, "record_scan", None)
    slow = coded(codes)
    assert type(fast) is type(slow)
    if isinstance(slow, coded_column.CodedColumn):
        assert np.array_equal(fast.values, slow.values) and np.array_equal(fast.index, slow.index)
        assert fast.values.dtype == np.int16
    else:
        assert fast is codes


def test_generation_refs_match_the_numpy_lookup(monkeypatch):
    rng = np.random.default_rng(5)
    width, ngen = 256, 3
    keys, pos, values = [], [], []
    for key in rng.choice(width * ngen, 300, replace=False).tolist():
        for _ in range(rng.integers(1, 3)):  # some keys registered twice (searched)
            keys.append(key)
            pos.append(int(rng.integers(0, 10_000)))
            values.append(int(rng.integers(0, 1000)))
    lookup = Lookup(keys, pos, np.array(values), ngen * width)
    at = np.sort(rng.integers(0, 10_000, 5000)).astype(np.int64)
    for gen in (np.broadcast_to(np.int64(1), (5000,)), np.repeat(np.arange(ngen, dtype=np.int64), [1000, 3000, 1000])):
        for refs in (rng.integers(0, 256, 5000).astype(np.uint8), rng.integers(0, 256, 5000).astype(np.uint16)):
            for rows in (slice(None), slice(4000, None)):  # (all positions, and only late ones)
                fast = lookup.of_generations(gen[rows], refs[rows], at[rows], width)
                with monkeypatch.context() as m:
                    m.setattr(compiled, "record_scan", None)
                    slow = lookup.of_generations(gen[rows], refs[rows], at[rows], width)
                assert fast.dtype == slow.dtype == np.int32 and np.array_equal(fast, slow)
                assert (fast == -1).any() and (fast >= 0).any()
