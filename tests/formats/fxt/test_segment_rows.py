"""FxtColumns.segment_rows: the event rows where a provider section begins (what the async pairing merges a
one-shot trace's sections by), against the records walked one by one."""

from __future__ import annotations

import numpy as np

from fxscope.core.synthetic_trace import generate_trace
from fxscope.formats.fxt.columns import EventKind
from fxscope.formats.fxt.reader import read_fxt_bytes
from fxscope.formats.fxt.writer import FxtWriter


def _providers_in_force(data: bytes, positions: np.ndarray) -> np.ndarray:
    """The provider id in force at each record word position (the last provider section or provider info
    record before it: metadata record type 0, kinds 2 and 1, the id in bits 20..51), walking the records (a
    record's size in words is bits 4..15 of its header, 4..35 for a large record)."""
    words = np.frombuffer(data, "<u8")
    at, switch_at, provider = 0, [0], [0]
    while at < len(words):
        h = int(words[at])
        size = (h >> 4) & (0xFFFFFFFF if h & 0xF == 15 else 0xFFF)  # (a large record's size: 32 bits)
        if size == 0:
            break
        if h & 0xF == 0 and (h >> 16) & 0xF in (1, 2):
            switch_at.append(at)
            provider.append((h >> 20) & 0xFFFFFFFF)
        at += size
    return np.asarray(provider)[np.searchsorted(switch_at, positions, side="right") - 1]


def test_segment_rows_hold_every_switch_to_another_provider() -> None:
    """Each event whose provider is not the one of the event before it begins a segment (where a one-shot trace
    goes back in time); every row given has a segment's start before it, after the event before."""
    for data in (generate_trace(5_000, seed=2, providers_in_turn=True), generate_trace(5_000, seed=2)):
        cols = read_fxt_bytes(data)
        got = cols.segment_rows()
        assert got.dtype == np.int64 and len(got) >= 3 and np.all(np.diff(got) > 0)
        ev_word = np.asarray(cols.ev_word, np.int64)
        provider = _providers_in_force(data, ev_word)
        switches = np.flatnonzero(provider[1:] != provider[:-1]) + 1
        assert len(switches) >= 2 and set(switches.tolist()) <= set(got.tolist())
        starts = np.asarray(cols.ev_data.seg_pos, np.int64)
        for r in got.tolist():
            assert np.any((starts > ev_word[r - 1]) & (starts <= ev_word[r]))


def test_segment_rows_of_traces_without_sections() -> None:
    w = FxtWriter()
    w.initialization(1_000_000_000)
    for i in range(5):
        w.event(EventKind.INSTANT, i, (1, 2), "c", "n")
    assert read_fxt_bytes(w.getvalue()).segment_rows().tolist() == []
    w.provider_section(3)  # (a section after the last event: no event begins it)
    assert read_fxt_bytes(w.getvalue()).segment_rows().tolist() == []
    assert read_fxt_bytes(FxtWriter().getvalue()).segment_rows().tolist() == []
