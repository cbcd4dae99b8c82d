"""Search over slice names and their arguments' names and string values (what Perfetto's omnibox matches)."""

from __future__ import annotations

from pathlib import Path

import pytest

from fxscope.core.trace.model import TraceModel
from fxscope.core.trace.query import search
from fxscope.formats.fxt.args import ArgType as A
from fxscope.formats.fxt.columns import EventKind as K
from fxscope.formats.fxt.reader import read_fxt, read_fxt_bytes
from fxscope.formats.fxt.writer import FxtWriter

T1 = (1, 10)
T2 = (1, 11)


def _model() -> TraceModel:
    w = FxtWriter()
    w.initialization(1_000_000_000)
    w.string(1, "url")  # an indexed argument name
    w.string(2, "https://Example.org/index.html")  # an indexed string value
    events = [
        (K.DURATION_BEGIN, 10, T1, "load", [(1, A.STRING, 2)]),
        (K.DURATION_COMPLETE, 20, T1, "parse", [("file", A.STRING, "Straße.CSS"), ("size", A.UINT32, 12)], 30),
        (K.DURATION_END, 40, T1, "load", [("status", A.STRING, "end-only")]),
        (K.DURATION_COMPLETE, 5, T2, "paint", [("layer", A.POINTER, 0xABC), ("example", A.INT32, 3)], 8),
        (K.DURATION_COMPLETE, 50, T2, "example", [("note", A.STRING, "EXAMPLE again")], 60),
        (K.DURATION_COMPLETE, 70, T2, "idle", [], 80),
        (K.INSTANT, 90, T2, "instant with example", [("why", A.STRING, "example")]),
    ]  # fmt: skip
    for kind, ts, thread, name, args, *end in events:
        w.event(kind, ts, thread, "cat", name, args, data=end[0] if end else None)
    return TraceModel(read_fxt_bytes(w.getvalue()))


def _hits(model: TraceModel, text: str) -> list[tuple[str, int]]:
    return [(model.name_of(int(r)), int(model.slices.ts[r])) for r in search(model, text)]


def test_argument_values_and_names_are_searched_case_insensitively() -> None:
    model = _model()
    # an indexed string value, matched whatever the case
    assert _hits(model, "EXAMPLE.ORG") == [("load", 10)]
    # an inline string value, with full case folding (ß matches ss)
    assert _hits(model, "strasse.css") == [("parse", 20)]
    # argument names, indexed or inline, whatever the value's type
    assert _hits(model, "URL") == [("load", 10)]
    assert _hits(model, "siz") == [("parse", 20)]
    assert _hits(model, "layer") == [("paint", 5)]


def test_matches_are_unique_slices_sorted_by_start() -> None:
    model = _model()
    # "example" names an int argument of paint (5), is in load's url value (10), is the name of a slice (50)
    # whose note says it again: each slice once, by start time; instants are not slices
    assert _hits(model, "example") == [("paint", 5), ("load", 10), ("example", 50)]
    # numbers and pointers are not text: paint's pointer 0xabc is not found by its hex digits
    assert _hits(model, "abc") == [] and _hits(model, "12") == []
    assert _hits(model, "") == [] and _hits(model, "no such text") == []


def test_only_the_arguments_the_details_panel_shows() -> None:
    model = _model()
    # a slice's arguments are those of its begin (or complete) record, as in the details panel; the
    # end record's are not
    assert _hits(model, "end-only") == []
    row = int(search(model, "example.org")[0])
    assert dict(model.slice_details(row)["args"]) == {"url": "https://Example.org/index.html"}


def test_the_argument_index_is_built_once() -> None:
    model = _model()
    assert "search_index" not in vars(model)  # not built before the first search
    search(model, "x")
    index = model.search_index
    assert _hits(model, "css") == [("parse", 20)]
    assert model.search_index is index


def _reference(model: TraceModel, needle: str) -> list[int]:
    """Slow and plain: every slice's name and decoded arguments tested in Python."""
    needle = needle.casefold()
    out = []
    for row in range(len(model.slices)):
        texts = [model.name_of(row)]
        for a in model.cols.event_args(int(model.slices.event[row])):
            texts.append(a.name)
            if a.type == A.STRING:
                texts.append(a.value)
        if any(needle in t.casefold() for t in texts):
            out.append(row)
    return sorted(out, key=lambda r: (int(model.slices.ts[r]), r))


@pytest.mark.parametrize("needle", ["TRUE", "inferred", "symbol", "pt_event", "_start", "zzz-none"])
def test_real_trace_matches_a_plain_scan(testdata: Path, needle: str) -> None:
    # Jane Street magic-trace output: every slice has a pointer "address" and a string "symbol"; 18 of
    # them also carry inferred_start_time = "true" (MANIFEST: 17,314 string arguments on 17,296 slices)
    model = TraceModel(read_fxt(testdata / "fxt" / "richiesams_fxt-python_trace.fxt"))
    got = search(model, needle).tolist()
    assert got == _reference(model, needle)
    if needle in ("TRUE", "inferred"):
        assert len(got) == 18
        assert all(dict(model.slice_details(r)["args"])["inferred_start_time"] == "true" for r in got)
    if needle == "symbol":
        assert len(got) == len(model.slices)


def test_index_built_in_batches_is_the_same(testdata: Path, monkeypatch) -> None:
    """The index reads the slices' arguments a batch at a time: batches of 1,000 slices give the pairs of
    one batch (each batch's in its slices' event order) and the same searches."""
    from fxscope.core.trace import arg_string_index

    path = testdata / "fxt" / "richiesams_fxt-python_trace.fxt"
    whole_model = TraceModel(read_fxt(path))
    whole = whole_model.search_index
    monkeypatch.setattr(arg_string_index, "INDEX_BATCH", 1000)
    batched_model = TraceModel(read_fxt(path))
    batched = batched_model.search_index
    assert len(whole.row_start) == 1 and len(batched.row_start) == -(-len(batched_model.slices) // 1000)

    def pairs(index) -> list[tuple[int, int]]:
        return sorted((int(a) + r, sid) for a, rows, sids in zip(index.row_start, index.row, index.sid, strict=True)
                      for r, sid in zip(rows.tolist(), sids.tolist(), strict=True))  # fmt: skip

    assert batched.arg_ids.tolist() == whole.arg_ids.tolist()
    assert pairs(batched) == pairs(whole) and whole.pairs >= 17296
    for needle in ("TRUE", "symbol", "_start"):
        assert search(batched_model, needle).tolist() == search(whole_model, needle).tolist()
