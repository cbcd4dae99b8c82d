"""The one table of FXT header bit fields (formats/fxt/fields.py) against real third-party traces."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from fxscope.formats.fxt import fields as F
from fxscope.formats.fxt.fields import column, field, record_size
from fxscope.formats.fxt.framing import record_starts
from fxscope.formats.fxt.reader import read_fxt
from fxscope.formats.fxt.records_events import EventRecords

FILES = ["richiesams_fxt-python_trace.fxt", "ocaml-trace_t2_first.fxt", "ocaml-trace_t2_second.fxt"]

#: the fields of each header layout: within one layout no two may share a bit
LAYOUTS = {
    "event": [F.RECORD_TYPE, F.RECORD_SIZE, F.EVENT_TYPE, F.EVENT_NARGS, F.EVENT_THREAD_REF,
              F.EVENT_CATEGORY_REF, F.EVENT_NAME_REF],
    "metadata": [F.RECORD_TYPE, F.RECORD_SIZE, F.METADATA_TYPE, F.PROVIDER_ID, F.PROVIDER_NAME_LENGTH],
    "string": [F.RECORD_TYPE, F.RECORD_SIZE, F.STRING_INDEX, F.STRING_LENGTH],
    "blob": [F.RECORD_TYPE, F.RECORD_SIZE, F.BLOB_NAME_REF, F.BLOB_LENGTH, F.BLOB_TYPE],
    "kernel object": [F.RECORD_TYPE, F.RECORD_SIZE, F.KERNEL_OBJECT_TYPE, F.OBJECT_NAME_REF, F.OBJECT_NARGS],
    "legacy switch": [F.RECORD_TYPE, F.RECORD_SIZE, F.LEGACY_CPU, F.LEGACY_OUT_STATE, F.LEGACY_OUT_THREAD_REF,
                      F.LEGACY_IN_THREAD_REF, F.LEGACY_OUT_PRIO, F.LEGACY_IN_PRIO, F.SCHED_TYPE],
    "context switch": [F.RECORD_TYPE, F.RECORD_SIZE, F.SCHED_NARGS, F.SCHED_CPU, F.SWITCH_OUT_STATE, F.SCHED_TYPE],
    "log": [F.RECORD_TYPE, F.RECORD_SIZE, F.LOG_MESSAGE_LENGTH, F.LOG_THREAD_REF],
    "large": [F.RECORD_TYPE, F.LARGE_RECORD_SIZE, F.LARGE_TYPE, F.LARGE_FORMAT],
    "large blob format": [F.LARGE_CATEGORY_REF, F.LARGE_NAME_REF, F.LARGE_NARGS, F.LARGE_THREAD_REF],
    "argument": [F.ARG_TYPE, F.ARG_SIZE, F.ARG_NAME_REF],
}  # fmt: skip


@pytest.mark.parametrize("layout", sorted(LAYOUTS))
def test_fields_of_one_layout_do_not_overlap(layout):
    for a, b in itertools.combinations(LAYOUTS[layout], 2):
        assert a.shift + a.width <= 64 and b.shift + b.width <= 64
        bits_a = ((1 << a.width) - 1) << a.shift
        bits_b = ((1 << b.width) - 1) << b.shift
        assert bits_a & bits_b == 0, (a, b)


@pytest.mark.parametrize("name", FILES)
def test_record_sizes_chain_the_record_starts(testdata, name):
    words = np.fromfile(testdata / "fxt" / name, "<u8")
    starts = record_starts(words).astype(np.int64)
    sizes = [record_size(int(words[s])) for s in starts[:-1].tolist()]
    assert sizes == np.diff(starts).tolist()
    assert column(words[starts], F.RECORD_TYPE).tolist() == [field(int(words[s]), F.RECORD_TYPE) for s in starts]


@pytest.mark.parametrize("name", FILES)
def test_event_header_views_match_the_field_table(testdata, name, monkeypatch):
    """The little-endian strided views of the event decoder read the same fields as the table's shifts."""
    cols = read_fxt(testdata / "fxt" / name)
    words = np.fromfile(testdata / "fxt" / name, "<u8")
    headers = words[cols.ev_word.astype(np.int64)]
    assert len(headers)
    fast = EventRecords._header_fields(None, headers)
    monkeypatch.setattr(np, "little_endian", False)
    by_table = EventRecords._header_fields(None, headers)
    for got, want in zip(fast, by_table, strict=True):
        assert got.dtype == want.dtype
        assert got.tolist() == want.tolist()
    kind = fast[1] & np.uint8(F.EVENT_TYPE.mask)
    assert kind.tolist() == cols.ev_kind.tolist()
