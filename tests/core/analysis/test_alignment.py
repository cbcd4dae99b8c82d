"""Aligning two traces' time axes: the chosen moments of A and B map onto each other, ranges round-trip,
the first slice of a name is found by text in each trace's own string table."""

from __future__ import annotations

from fxscope.core.analysis.alignment import Alignment, first_slice_named, longest_slice_named, starts
from fxscope.core.trace.model import TraceModel
from fxscope.core.trace.reading import read_trace
from tests.core.analysis.nested_trace import nested_trace


def _model(tmp_path, name: str, data: bytes) -> TraceModel:
    path = tmp_path / name
    path.write_bytes(data)
    return TraceModel(read_trace(str(path)))


def test_ranges_map_both_ways():
    al = Alignment.at(5_000, 1_200)
    assert al.offset_ns == 3_800
    assert al.b_range((5_000, 9_000)) == (1_200, 5_200)
    assert al.a_range(al.b_range((123, 456_789))) == (123, 456_789)
    assert Alignment().b_range((1, 2)) == (1, 2)


def test_starts_and_first_slice_of_a_name(tmp_path):
    a = _model(tmp_path, "a.fxt", nested_trace(7))
    b = _model(tmp_path, "b.fxt", nested_trace(7, slow=dict.fromkeys(["main", "parse", "eval", "render"], 3)))
    assert starts(a, b).b_range((a.start_ns, a.end_ns))[0] == b.start_ns
    for m in (a, b):
        row = first_slice_named(m, "alloc")
        s = m.slices
        named = [r for r in range(len(s)) if m.strings[s.name[r]] == "alloc"]  # brute force
        assert named and row in named and s.ts[row] == min(s.ts[r] for r in named)
        longest = longest_slice_named(m, "alloc")
        assert longest in named and s.dur[longest] == max(s.dur[r] for r in named)
        assert s.ts[longest] == min(s.ts[r] for r in named if s.dur[r] == s.dur[longest])
    ta, tb = (int(m.slices.ts[first_slice_named(m, "alloc")]) for m in (a, b))
    assert ta != tb  # B's slower callers move its first alloc
    assert Alignment.at(ta, tb).b_range((ta, ta + 10)) == (tb, tb + 10)
    assert first_slice_named(a, "no such name") == longest_slice_named(a, "no such name") == -1
