"""The notes sidecar (``TRACE.fxscope.json``) and ``TRACE#range=...&select=...`` links."""

from __future__ import annotations

import json
import os

import pytest

from fxscope.core.analysis.notes import (
    Bookmark,
    Notes,
    load_notes,
    make_link,
    parse_link,
    save_notes,
    sidecar_path,
)


@pytest.fixture
def trace(tmp_path, testdata):
    path = tmp_path / "t.fxt"
    path.write_bytes((testdata / "fxt" / "richiesams_fxt-python_trace.fxt").read_bytes())
    return path


def _notes() -> Notes:
    return Notes(pins=[["thread", 3], ["process", 1]], marks=[(10, 20)],
                 bookmarks=[Bookmark(15, "spike", "the GC pause\nsecond line")], track_filter="main",
                 view=(100, 2000))  # fmt: skip


def test_round_trip_and_trace_untouched(trace):
    before = trace.read_bytes()
    assert load_notes(trace) == (None, None)  # no sidecar: nothing, no message
    side = save_notes(trace, _notes())
    assert side == sidecar_path(trace) and os.path.exists(side)
    assert load_notes(trace) == (_notes(), None)
    assert trace.read_bytes() == before
    assert sorted(p.name for p in trace.parent.iterdir()) == ["t.fxt", "t.fxt.fxscope.json"]  # no temporary left


@pytest.mark.parametrize("content", [
    b"{not json", b"\xff\xfe", b"[]", b'{"format": "something-else"}',
    b'{"format": "fxscope-notes", "version": 99}',
])  # fmt: skip
def test_corrupt_or_foreign_sidecar_is_a_message(trace, content):
    with open(sidecar_path(trace), "wb") as fh:
        fh.write(content)
    notes, message = load_notes(trace)
    assert notes is None and message.startswith("Notes in ") and "ignored: " in message


def test_sidecar_of_another_file_is_not_applied(trace):
    save_notes(trace, _notes())
    data = bytearray(trace.read_bytes())
    data[-3] ^= 1  # same size, last bytes changed: a regenerated trace
    trace.write_bytes(bytes(data))
    notes, message = load_notes(trace)
    assert notes is None and "different file" in message


@pytest.mark.parametrize("field,value", [
    ("pins", "x"), ("marks", [[1]]), ("marks", [["a", 2]]), ("bookmarks", [{"ts_ns": "1", "name": "a"}]),
    ("bookmarks", 3), ("track_filter", 4), ("view", [1, 2, 3]),
])  # fmt: skip
def test_wrong_field_types_are_a_message(trace, field, value):
    save_notes(trace, _notes())
    side = sidecar_path(trace)
    with open(side, encoding="utf-8") as fh:
        doc = json.load(fh)
    doc["notes"][field] = value
    with open(side, "w", encoding="utf-8") as fh:
        json.dump(doc, fh)
    notes, message = load_notes(trace)
    assert notes is None and "ignored" in message


def test_links():
    link = make_link("/tmp/a b#c.fxt", (5, 900), (42, 77, 3))
    parsed = parse_link(link, exists=lambda p: False)
    assert (parsed.path, parsed.range, parsed.select) == ("/tmp/a b#c.fxt", (5, 900), (42, 77, 3))
    assert parse_link("/x.fxt#select=slice:4:5", exists=lambda p: False).select == (4, 5, -1)
    assert parse_link("/x/y.fxt#range=1:2", exists=lambda p: False).range == (1, 2)
    assert parse_link("/x/y#1.fxt", exists=lambda p: True).path == "/x/y#1.fxt"  # an existing path stays a path
    for bad in ("/x.fxt#range=5:1", "/x.fxt#range=a:b", "/x.fxt#select=async:1:2", "/x.fxt#zoom=3"):
        with pytest.raises(ValueError, match="cannot use"):
            parse_link(bad, exists=lambda p: False)
