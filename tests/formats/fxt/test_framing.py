"""Record framing equals a plain sequential walk: the vectorized numpy walk (:func:`frame_records`, also where
its chunk chains resynchronise late) and the reader's :func:`split_records` in both implementations
(``fxt_loops``: the compiled walk and the numpy one)."""

from __future__ import annotations

import itertools

import numpy as np
from hypothesis import HealthCheck, given, settings
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


def _assert_frames_alike(words: np.ndarray) -> None:
    """The numpy walk and the reader's split framing (compiled or numpy, per ``fxt_loops``) both give the
    sequential walk's starts; the split keeps the event records apart."""
    expected = sequential_starts(words)
    assert np.array_equal(framing.record_starts(words), expected)
    split = framing.split_records(words)
    assert split.bad_at == -1
    merged = np.sort(np.concatenate([split.events.astype(np.int64), split.other.astype(np.int64)]))
    assert np.array_equal(merged, expected)
    assert ((words[split.events.astype(np.int64)] & np.uint64(0xF)) == 4).all()
    assert np.array_equal(split.other_types, (words[split.other.astype(np.int64)] & np.uint64(0xF)).astype(np.uint8))


def test_generated_trace(monkeypatch):
    monkeypatch.setattr(framing, "CHUNK_WORDS", 64)  # many chunks, many chunk boundaries inside records
    words = np.frombuffer(generate_trace(3000, seed=9), "<u8")
    assert np.array_equal(framing.record_starts(words), sequential_starts(words))


def test_super_chunks(monkeypatch):
    """A file framed in many super-chunks (each cut into chunks) gives the same starts, and the low 16
    bits of each start's header."""
    monkeypatch.setattr(framing, "CHUNK_WORDS", 64)
    monkeypatch.setattr(framing, "SUPER_WORDS", 256)
    words = np.frombuffer(generate_trace(3000, seed=9), "<u8")
    starts, low = framing.frame_records(words)
    assert np.array_equal(starts, sequential_starts(words))
    assert np.array_equal(low, (words[starts.astype(np.int64)] & 0xFFFF).astype(np.uint16))


def test_a_large_record_spanning_super_chunks(monkeypatch):
    """A large blob longer than several super-chunks: the super-chunks inside it are skipped, the chain
    resumes after it."""
    monkeypatch.setattr(framing, "CHUNK_WORDS", 16)
    monkeypatch.setattr(framing, "SUPER_WORDS", 64)
    w = FxtWriter()
    w.event(0, 1, (1, 2), "", "e")
    w.large_blob("c", "n", bytes(range(256)) * 20)
    w.event(0, 1, (1, 2), "", "e")
    words = np.frombuffer(w.getvalue(), "<u8")
    seen = []
    starts, _ = framing.frame_records(words, done=lambda a, b: seen.append((a, b)))
    assert np.array_equal(starts, sequential_starts(words))
    assert seen[0][0] == 0 and seen[-1][1] == len(words)  # every super-chunk reported done, in order
    assert all(b == c for (_, b), (c, _) in itertools.pairwise(seen))


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    payloads=st.lists(st.tuples(st.integers(0, 2), st.binary(max_size=3000)), min_size=1, max_size=40),
    chunk=st.sampled_from([16, 64, 256, 2048]),
    super_chunks=st.sampled_from([1, 3, 1 << 20]),
)
def test_random_payloads_match_sequential_walk(fxt_loops, payloads, chunk, super_chunks):
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
    old = framing.CHUNK_WORDS, framing.SUPER_WORDS
    framing.CHUNK_WORDS, framing.SUPER_WORDS = chunk, chunk * super_chunks
    try:
        _assert_frames_alike(words)
    finally:
        framing.CHUNK_WORDS, framing.SUPER_WORDS = old


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    records=st.lists(st.tuples(st.integers(0, 9), st.binary(max_size=300)), min_size=1, max_size=60),
    sizes=st.sampled_from([(8, 8), (16, 48), (64, 128)]),
)
def test_small_large_records_inside_chunks(fxt_loops, records, sizes):
    """Large records (type 15, a 32-bit size) ending inside a chunk, or in the last chunk of a super-chunk:
    a chain stops at each, and the stitching walks on from its end."""
    w = FxtWriter()
    for kind, payload in records:
        if kind < 3:
            w.large_blob("c", "n", payload)
        elif kind < 4:
            w.blob("b", 1, payload[:200])
        else:
            w.event(0, 1, (1, 2), "", "e")
    words = np.frombuffer(w.getvalue(), "<u8")
    old = framing.CHUNK_WORDS, framing.SUPER_WORDS
    framing.CHUNK_WORDS, framing.SUPER_WORDS = sizes
    try:
        _assert_frames_alike(words)
    finally:
        framing.CHUNK_WORDS, framing.SUPER_WORDS = old
