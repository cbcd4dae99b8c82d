"""The vectorized record framing equals a plain sequential walk, also where chunk chains resynchronise late."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from fxscope.core.synthetic_trace import generate_trace
from fxscope.formats.fxt import framing
from fxscope.formats.fxt.writer import FxtWriter


def sequential_starts(words: np.ndarray) -> np.ndarray:
    out, p = [], 0
    while p < len(words):
        out.append(p)
        h = int(words[p])
        p += ((h >> 4) & (0xFFFFFFFF if h & 0xF == 15 else 0xFFF)) or 1
    return np.array(out, np.int64)


def test_generated_trace(monkeypatch):
    monkeypatch.setattr(framing, "CHUNK_WORDS", 64)  # many chunks, many chunk boundaries inside records
    words = np.frombuffer(generate_trace(3000, seed=9), "<u8")
    assert np.array_equal(framing.record_starts(words), sequential_starts(words))


def test_big_files_walk_longer_chunks(monkeypatch):
    """A big file is cut into chunks longer than CHUNK_WORDS (fewer chains, each walking further): the same
    starts."""
    monkeypatch.setattr(framing, "CHUNK_WORDS", 64)
    monkeypatch.setattr(framing, "MIN_CHAINS", 8)
    words = np.frombuffer(generate_trace(3000, seed=9), "<u8")
    assert framing.chunk_words(len(words)) > 64
    assert np.array_equal(framing.record_starts(words), sequential_starts(words))


@settings(max_examples=80, deadline=None)
@given(
    payloads=st.lists(st.tuples(st.integers(0, 2), st.binary(max_size=3000)), min_size=1, max_size=40),
    chunk=st.sampled_from([16, 64, 256, 2048]),
)
def test_random_payloads_match_sequential_walk(payloads, chunk):
    """Blob payloads of random bytes make chains from chunk starts read garbage headers."""
    w = FxtWriter()
    for kind, payload in payloads:
        if kind == 0:
            w.blob("b", 1, payload[:32000])
        elif kind == 1:
            w.large_blob("c", "n", payload * 20)
        else:
            w.event(0, 1, (1, 2), "", "e")
    words = np.frombuffer(w.getvalue(), "<u8")
    old = framing.CHUNK_WORDS
    framing.CHUNK_WORDS = chunk
    try:
        assert np.array_equal(framing.record_starts(words), sequential_starts(words))
    finally:
        framing.CHUNK_WORDS = old
