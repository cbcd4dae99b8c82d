"""Truncated and corrupted input: prefixes at every 8-byte boundary, random mutations (hypothesis)."""

from __future__ import annotations

import contextlib
import random

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from fxscope.core.synthetic_trace import generate_trace
from fxscope.formats.errors import FormatError
from fxscope.formats.fxt.reader import read_fxt_bytes


def _check_prefix(full, data: bytes, cut: int) -> None:
    cols = read_fxt_bytes(data[:cut])
    kept = full.ev_offset < cut
    n = len(cols.ev_ts)
    # every event record that ends inside the prefix is read, with the same values
    assert n in (int(kept.sum()), int(kept.sum()) - 1)
    assert np.array_equal(cols.ev_ts, full.ev_ts[:n])
    assert np.array_equal(cols.ev_kind, full.ev_kind[:n])
    if n < int(kept.sum()):
        assert any("truncated final record" in w for w in cols.warnings)


@pytest.mark.parametrize("name", ["ocaml-trace_t2_first.fxt", "ocaml-trace_t2_second.fxt"])
def test_small_samples_every_boundary(testdata, name):
    data = (testdata / "fxt" / name).read_bytes()
    full = read_fxt_bytes(data)
    for cut in range(8, len(data) + 1, 8):
        _check_prefix(full, data, cut)


@pytest.mark.slow
def test_large_sample_every_boundary_of_its_head_and_tail(testdata):
    """Every 8-byte boundary of the first 16 KiB and the last 512 bytes, plus 60 sampled elsewhere.

    (All 124,048 prefixes of the 1 MB file would take minutes; the structure at the middle is the same
    mix of records as at the head.)
    """
    data = (testdata / "fxt" / "richiesams_fxt-python_trace.fxt").read_bytes()
    full = read_fxt_bytes(data)
    cuts = list(range(8, 16 * 1024, 8)) + list(range(len(data) - 512, len(data) + 1, 8))
    rng = random.Random(2)
    cuts += [rng.randrange(1, len(data) // 8) * 8 for _ in range(60)]
    for cut in cuts:
        _check_prefix(full, data, cut)


@pytest.mark.slow
def test_generated_trace_every_boundary_of_its_head():
    data = generate_trace(300, seed=4)
    full = read_fxt_bytes(data)
    assert not [w for w in full.warnings if "buffer" not in w]
    for cut in range(8, min(len(data), 12_000), 8):
        _check_prefix(full, data, cut)


SEED_TRACES = [generate_trace(120, seed=s, big_endian=s == 2) for s in (1, 2)]


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    which=st.integers(0, len(SEED_TRACES) - 1),
    edits=st.lists(st.tuples(st.integers(0, 10**9), st.integers(0, 255)), min_size=1, max_size=12),
    cut=st.integers(0, 10**9),
)
def test_fuzz_mutated_traces_never_crash(which, edits, cut):
    data = bytearray(SEED_TRACES[which])
    for pos, value in edits:
        data[8 + pos % (len(data) - 8)] = value
    data = bytes(data[: 8 + cut % len(data)])
    cols = read_fxt_bytes(data)
    n = len(cols.ev_ts)
    for col in (cols.ev_kind, cols.ev_thread, cols.ev_name, cols.ev_offset, cols.ev_args_word):
        assert len(col) == n
    assert ((cols.ev_thread >= -1) & (cols.ev_thread < len(cols.threads_pid))).all()
    assert ((cols.ev_name >= -1) & (cols.ev_name < len(cols.strings))).all()
    for i in range(min(n, 50)):
        cols.event_args(i)
    for i in range(len(cols.sched_ts)):
        cols.sched_args(i)
    assert all(w.startswith("offset 0x") for w in cols.warnings)


@settings(max_examples=200, deadline=None)
@given(body=st.binary(max_size=400), big=st.booleans())
def test_fuzz_random_bytes_after_magic(body, big):
    magic = bytes.fromhex("0016547846040010" if big else "1000044678541600")
    cols = read_fxt_bytes(magic + body)
    assert all(w.startswith("offset 0x") for w in cols.warnings)
    for i in range(len(cols.ev_ts)):
        cols.event_args(i)


@given(st.binary(min_size=0, max_size=64))
def test_fuzz_non_traces_raise_only_format_error(data):
    with contextlib.suppress(FormatError):
        read_fxt_bytes(data)
