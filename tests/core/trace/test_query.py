"""Area summary and name search on a hand-built trace, numbers worked out by hand."""

from __future__ import annotations

from fxscope.core.trace.model import TraceModel
from fxscope.core.trace.query import aggregate, search
from fxscope.formats.fxt.columns import EventKind as K

T1 = (1, 10)
T2 = (1, 11)


def _model(fxt) -> TraceModel:
    return TraceModel(
        fxt([
            (K.DURATION_BEGIN, 0, T1, "A"),
            (K.DURATION_BEGIN, 20, T1, "B"),
            (K.DURATION_COMPLETE, 30, T1, "C", 40),
            (K.DURATION_END, 60, T1, "B"),
            (K.DURATION_END, 100, T1, "A"),
            (K.DURATION_COMPLETE, 110, T1, "B", 130),
            (K.DURATION_BEGIN, 50, T2, "A"),
            (K.DURATION_COMPLETE, 70, T2, "Z", 70),
            (K.DURATION_END, 150, T2, "A"),
            (K.DURATION_COMPLETE, 200, T2, "xBaR", 210),
        ])
    )  # fmt: skip


def test_aggregate_window_all_threads(fxt) -> None:
    model = _model(fxt)
    rows = aggregate(model, 40, 120, None)
    # A: T1 [0,100] -> 60 in the window, T2 [50,150] -> 70; self: 100 - B's 40, and 100 (Z is 0 long)
    # B: [20,60] -> 20, [110,130] -> 10; self: 40 - C's 10, and 20. C [30,40] ends at 40: outside.
    strip = [
        {k: r[k] for k in ("name", "count", "total", "wall_total", "self_total", "avg", "min", "max")}
        for r in rows
    ]
    assert strip == [
        {"name": "A", "count": 2, "total": 130, "wall_total": 200, "self_total": 160, "avg": 100.0, "min": 100, "max": 100},
        {"name": "B", "count": 2, "total": 30, "wall_total": 60, "self_total": 50, "avg": 30.0, "min": 20, "max": 40},
        {"name": "Z", "count": 1, "total": 0, "wall_total": 0, "self_total": 0, "avg": 0.0, "min": 0, "max": 0},
    ]  # fmt: skip


def test_aggregate_selected_threads_and_split_windows_add_up(fxt) -> None:
    model = _model(fxt)
    t2 = int(model.slices.thread[model.slices.ts == 50][0])
    rows = aggregate(model, 40, 120, [t2])
    assert [(r["name"], r["count"], r["total"]) for r in rows] == [("A", 1, 70), ("Z", 1, 0)]
    whole = {r["name"]: r["total"] for r in aggregate(model, 0, 300)}
    left = {r["name"]: r["total"] for r in aggregate(model, 0, 77)}
    right = {r["name"]: r["total"] for r in aggregate(model, 77, 300)}
    assert all(whole[n] == left.get(n, 0) + right.get(n, 0) for n in whole)
    assert aggregate(model, 400, 500) == [] and aggregate(model, 0, 300, []) == []


def test_search_is_case_insensitive_substring_sorted_by_time(fxt) -> None:
    model = _model(fxt)
    s = model.slices
    hits = search(model, "a")
    assert [(model.name_of(r), int(s.ts[r])) for r in hits] == [("A", 0), ("A", 50), ("xBaR", 200)]
    assert [model.name_of(r) for r in search(model, "BAR")] == ["xBaR"]
    assert len(search(model, "")) == 0 and len(search(model, "nothing")) == 0
