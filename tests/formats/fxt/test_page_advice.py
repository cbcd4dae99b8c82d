"""The reader maps and drops file pages with madvise where the system has it; where an advice is refused
(an older kernel without MADV_POPULATE_READ) it reads the same columns without it."""

from __future__ import annotations

import numpy as np

from fxscope.core.synthetic_trace import generate_trace
from fxscope.formats.fxt import assemble
from fxscope.formats.fxt.reader import read_fxt


def _columns(path):
    cols = read_fxt(path)
    return [np.asarray(x).copy() for x in (cols.ev_ts, cols.ev_kind, cols.ev_name, cols.ev_data, cols.sched_ts)]


def test_a_refused_advice_reads_the_same(tmp_path, monkeypatch):
    path = tmp_path / "t.fxt"
    path.write_bytes(generate_trace(60_000, seed=2, scheduling=True))
    want = _columns(path)
    refused = []
    original = assemble.Decoder._populate

    def spy(self, first_word, end_word):
        original(self, first_word, end_word)
        refused.append(not self._can_populate)

    monkeypatch.setattr(assemble, "_MADV_POPULATE_READ", 0x7FFF)  # no such advice: EINVAL
    monkeypatch.setattr(assemble.Decoder, "_populate", spy)
    got = _columns(path)
    assert refused and refused[-1]  # the advice was tried, refused, and not tried again
    assert all(np.array_equal(a, b) for a, b in zip(want, got, strict=True))
