"""The statistics and the flame graph of an area share one :func:`area_names` (self times and dense name ids of
every row the area reads, hit or not): the statistics must still list only the names of the slices that
overlap the range, as when each made its own."""

from __future__ import annotations

from fxscope.core.analysis.call_tree import top_down
from fxscope.core.analysis.selection import Area, area_names, area_rows
from fxscope.core.analysis.stats import name_stats
from fxscope.core.trace.model import TraceModel
from fxscope.formats.fxt.columns import EventKind as K
from fxscope.formats.fxt.reader import read_fxt_bytes
from fxscope.formats.fxt.writer import FxtWriter


def _model() -> TraceModel:
    """Thread (1, 2): "before" [1000, 2000), then "outer" [2000, 5000) around "inner" [2500, 3000)."""
    w = FxtWriter()
    w.initialization(1_000_000_000)
    w.event(K.DURATION_COMPLETE, 1000, (1, 2), "c", "before", data=2000)
    w.event(K.DURATION_BEGIN, 2000, (1, 2), "c", "outer")
    w.event(K.DURATION_COMPLETE, 2500, (1, 2), "c", "inner", data=3000)
    w.event(K.DURATION_END, 5000, (1, 2), "c", "outer")
    return TraceModel(read_fxt_bytes(w.getvalue()))


def test_shared_names_leave_out_the_rows_read_but_outside_the_range() -> None:
    model = _model()
    area = Area(2000, 4000)  # "before" ends where it starts: read (a candidate), not in the range
    ar = area_rows(model, area)
    names = area_names(model, ar)
    assert "before" in [model.strings[i] for i in names.ids.tolist()]  # the shared ids include it
    shared = name_stats(model, ar=ar, names=names)
    alone = name_stats(model, area)
    assert shared.names == alone.names == ["outer", "inner"]
    assert shared.records() == alone.records()
    assert shared.records()[0]["total_ns"] == 2000 and shared.records()[0]["self_ns"] == 1500
    tree, tree_alone = top_down(model, ar=ar, names=names), top_down(model, area)
    assert tree.name.tolist() == tree_alone.name.tolist() and tree.total.tolist() == tree_alone.total.tolist()
    assert sorted(model.strings[i] for i in tree.name.tolist()) == ["inner", "outer"]
