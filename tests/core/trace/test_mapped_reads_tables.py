"""The model's tables built over the compiled reads of the mapped columns (record_scan.event_times,
event_data, arg_blocks: the event times, data words and argument blocks read from the file) are the
tables the numpy reads build: counters, flows, async spans, instants, scheduling, statistics and the
density strip of a generated trace with several tick rates, compared whole."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from fxscope.core.synthetic_trace import generate_trace
from fxscope.core.trace.model import TraceModel
from fxscope.formats.fxt import compiled
from fxscope.formats.fxt.column_view import ColumnView
from fxscope.formats.fxt.reader import read_fxt


def _plain(value):
    """Values comparable with ==: arrays (and columns read on demand) as lists, dataclasses field by field."""
    if isinstance(value, (np.ndarray, ColumnView)) or hasattr(value, "__array__"):
        return np.asarray(value).tolist()
    if dataclasses.is_dataclass(value):
        return {f.name: _plain(getattr(value, f.name)) for f in dataclasses.fields(value)}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    return value


def _tables(path, scan) -> dict:
    saved = compiled.record_scan
    compiled.record_scan = scan
    try:
        model = TraceModel(read_fxt(path))
        assert len(set(model.cols.ticks_per_second)) > 1  # (times and complete ends to convert)
        return {
            "ts": np.asarray(model.cols.ev_ts).tolist(),
            "data": np.asarray(model.cols.ev_data).tolist(),
            "counters": _plain(model.counters.series),
            "flows": _plain(model.flows),
            "async": _plain(model.async_spans),
            "instants": _plain(model.instants),
            "density": model.density(500).tolist(),
        }
    finally:
        compiled.record_scan = saved


@pytest.mark.parametrize("seed", [3, 11])
def test_tables_over_compiled_reads_equal_the_numpy_ones(tmp_path, seed):
    scan = compiled.record_scan
    assert scan is not None, "fxscope.formats.fxt.record_scan was not built"
    path = tmp_path / "t.fxt"
    path.write_bytes(generate_trace(40_000, seed=seed, scheduling=True))
    fast, slow = _tables(path, scan), _tables(path, None)
    assert len(fast["counters"]) and len(fast["flows"]["src_event"]) and len(fast["async"]["event"])
    for key in fast:
        assert fast[key] == slow[key], key
