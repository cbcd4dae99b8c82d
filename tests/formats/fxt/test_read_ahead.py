"""The reader's work on the second core changes nothing it reads: pages faulted in ahead on a worker thread
(formats/fxt/page_ahead.py), the next event block's compiled scan on another, and every other framing
super-chunk framed ahead from a guessed record start (framing._Speculation). Large files take these paths;
here the thresholds and block sizes are shrunk so that small traces (the corpus, generated ones, and
truncated or mutated variants) go through them many times, and each read is compared with the plain one.
A Cancel (the progress callback raising) ends the worker threads too."""

from __future__ import annotations

import dataclasses
import random
import threading
from concurrent.futures import Future
from pathlib import Path

import numpy as np
import pytest

from fxscope.core.synthetic_trace import generate_trace
from fxscope.formats.errors import FormatError
from fxscope.formats.fxt import assemble, compiled, framing, page_ahead
from fxscope.formats.fxt.column_view import ColumnView
from fxscope.formats.fxt.reader import read_fxt, read_fxt_bytes

DEMO = Path(__file__).resolve().parents[3] / "resources" / "demo" / "demo.fxt"
_LAZY = {"arg_decoder", "ev_data", "path", "page_hold", "mapped_file"}


def _snapshot(cols) -> dict:
    """Every field of a read, the lazy data words read out (so that two reads can be compared)."""
    if isinstance(cols, str):
        return {"error": cols}
    out = {}
    for f in dataclasses.fields(cols):
        if f.name not in _LAZY:
            v = getattr(cols, f.name)
            if isinstance(v, ColumnView):  # (the times read from the file, one-byte codes: by value)
                v = np.asarray(v)
            out[f.name] = (v.dtype.str, v.tobytes()) if isinstance(v, np.ndarray) else repr(v)
    out["ev_data"] = np.asarray(cols.ev_data).tobytes()
    return out


def _read(data: bytes, tmp_path: Path, ahead: bool):
    path = tmp_path / "t.fxt"
    path.write_bytes(data)
    try:
        return _snapshot(read_fxt(path) if ahead else read_fxt_bytes(data, str(path)))
    except FormatError as e:
        return _snapshot(f"FormatError: {e}")


@pytest.fixture
def small_ahead(monkeypatch):
    """Every file takes the read-ahead paths, in blocks and super-chunks of a few records."""
    monkeypatch.setattr(assemble.Decoder, "PAGE_AHEAD_WORDS", 0)
    monkeypatch.setattr(assemble.Decoder, "BLOCK_RECORDS", 64)
    monkeypatch.setattr(assemble.Decoder, "SPAN_WORDS", 256)
    monkeypatch.setattr(assemble.Decoder, "AHEAD_BLOCKS", 2)
    monkeypatch.setattr(framing, "SUPER_WORDS", 96)


def _traces(testdata: Path) -> list[bytes]:
    files = sorted((testdata / "fxt").glob("*.fxt"))
    assert files
    return [p.read_bytes() for p in files] + [
        DEMO.read_bytes(),
        generate_trace(3000, seed=7),
        generate_trace(3000, seed=8, scheduling=True),
    ]


def _plain(data: bytes, tmp_path: Path, monkeypatch) -> dict:
    """The read without any of it: bytes in memory (no map), one thread (the same block sizes)."""
    with monkeypatch.context() as m:
        m.setattr(assemble.Decoder, "PAGE_AHEAD_WORDS", 1 << 62)
        return _read(data, tmp_path, ahead=False)


def test_reads_ahead_alike(testdata, tmp_path, monkeypatch, small_ahead, fxt_loops):
    for data in _traces(testdata):
        assert _read(data, tmp_path, ahead=True) == _plain(data, tmp_path, monkeypatch)


def test_truncated_and_mutated_traces_read_ahead_alike(testdata, tmp_path, monkeypatch, small_ahead, cut_and_flip):
    rng = random.Random(19)
    cases = 0
    for data in _traces(testdata):
        for _ in range(40):
            d = cut_and_flip(data, rng, 6)
            assert _read(d, tmp_path, ahead=True) == _plain(d, tmp_path, monkeypatch)
            cases += 1
    assert cases >= 200


def test_heavily_mutated_traces_warn_alike_and_in_order(tmp_path, monkeypatch, small_ahead):
    """Many overwritten bytes: blocks with several warnings each (unknown types, short records, arguments
    of size 0 or past the record), given in the same order whether the block was prepared ahead or not."""
    rng = random.Random(21)
    several = 0
    for seed in range(12):
        d = bytearray(generate_trace(1500, seed=seed, scheduling=seed % 2 == 1))
        for _ in range(60):
            d[rng.randrange(64, len(d))] = rng.randrange(256)
        want = _plain(bytes(d), tmp_path, monkeypatch)
        assert _read(bytes(d), tmp_path, ahead=True) == want
        several += want.get("warnings", "").count("offset") >= 10
    assert several >= 4


def _words(data: bytes) -> np.ndarray:
    return np.frombuffer(data[: len(data) // 8 * 8], "<u8")


def test_speculative_framing_frames_alike(testdata, monkeypatch):
    """split_records with every other super-chunk framed from a guess, against the plain walk, on real,
    generated and hostile traces (records of size 0, garbage sizes, large records spanning super-chunks)."""
    assert compiled.record_scan is not None
    rng = random.Random(20)
    met = []
    original = framing._Framed.tail_from

    def spy(self, p):
        got = original(self, p)
        met.append(got is not None)
        return got

    monkeypatch.setattr(framing._Framed, "tail_from", spy)
    for sup in (8, 40, 300):
        monkeypatch.setattr(framing, "SUPER_WORDS", sup)
        for data in _traces(testdata):
            for cut in range(12):
                d = bytearray(data if cut == 0 else data[: rng.randrange(len(data) + 1)])
                for _ in range(rng.randrange(4) if cut else 0):
                    d[rng.randrange(len(d))] = rng.randrange(256)
                w = _words(bytes(d))
                want = framing.split_records(w)
                got = framing.split_records(w, parallel=True)
                assert got.bad_at == want.bad_at
                for a, b in zip(got[:3], want[:3], strict=True):
                    assert a.dtype == b.dtype and np.array_equal(a, b)
    assert sum(met) > 100  # the guessed chains were taken (not only framed again)


def test_guessed_start_prefers_a_true_record_start():
    data = generate_trace(2000, seed=4, scheduling=True)
    w = _words(data)
    starts = framing.split_records(w)
    true = np.sort(np.concatenate([starts.events, starts.other]).astype(np.int64))
    # (where a record starts among the first words: not inside the trace's large blob records)
    tried = [s0 for s0 in range(100, len(w) - 200, 7) if true[np.searchsorted(true, s0)] < s0 + 16]
    hits = sum(framing._guessed_start(w, s0, len(w)) in set(true.tolist()) for s0 in tried)
    assert len(tried) > 1000
    # far more often than a word at random would be (correctness never depends on it: how far the caller
    # walks to meet the guessed chain does)
    assert hits / len(tried) > 3 * len(true) / len(w)


def test_cancel_ends_the_worker_threads(tmp_path, monkeypatch, small_ahead):
    path = tmp_path / "t.fxt"
    path.write_bytes(generate_trace(20_000, seed=9, scheduling=True))
    for at in (0.01, 0.2, 0.6):

        class Cancel(Exception):
            pass

        def progress(f, at=at):
            if f >= at:
                raise Cancel

        with pytest.raises(Cancel):
            read_fxt(path, progress=progress)
        assert not [t for t in threading.enumerate() if t.name.startswith("fxscope-")]
    read_fxt(path)
    assert not [t for t in threading.enumerate() if t.name.startswith("fxscope-")]


@pytest.mark.skipif(page_ahead._madvise is None, reason="no madvise (not Linux)")
def test_page_ahead_keeps_contents_and_stops_when_refused(monkeypatch):
    a = np.arange(1 << 20, dtype=np.int64)
    with page_ahead.PageAhead(None) as pages:
        pages.fill(a[1000:])
        pages.fill(a)
    assert np.array_equal(a, np.arange(1 << 20))
    assert pages.enabled
    monkeypatch.setattr(page_ahead, "MADV_POPULATE_WRITE", 0x7FFF)  # no such advice: EINVAL
    with page_ahead.PageAhead(None) as pages:
        pages.fill(a)
        for _ in range(200):
            if not pages.enabled:
                break
            threading.Event().wait(0.01)
    assert not pages.enabled  # refused once: no further tries
    assert np.array_equal(a, np.arange(1 << 20))


class _StalledPool:
    """A worker pool whose worker never gets a core: every job stays queued (as when another process holds the
    second core for the whole read)."""

    submitted = 0

    def __init__(self, *_args, **_kwargs) -> None:
        pass

    def submit(self, *_args, **_kwargs) -> Future:
        _StalledPool.submitted += 1
        return Future()

    def shutdown(self, *_args, **_kwargs) -> None:
        pass


def test_a_stalled_worker_is_not_waited_for(testdata, tmp_path, monkeypatch, small_ahead):
    """When the worker has not started the next block or super-chunk by the time the reader needs it, the
    reader does that work itself (the same read, nothing waits for a worker that has no core)."""
    import concurrent.futures

    monkeypatch.setattr(assemble, "ThreadPoolExecutor", _StalledPool)
    monkeypatch.setattr(concurrent.futures, "ThreadPoolExecutor", _StalledPool)  # (framing's, imported when used)
    for data in _traces(testdata)[-2:]:
        assert _read(data, tmp_path, ahead=True) == _plain(data, tmp_path, monkeypatch)
    assert _StalledPool.submitted > 20
