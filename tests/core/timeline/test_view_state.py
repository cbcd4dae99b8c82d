"""The timeline's selection, measure, search and zoom rules, tested without Qt on the boot-stamped traces
(times hours, or nearly 2**63 ns, after boot: integer arithmetic must stay exact)."""

from __future__ import annotations

import pytest

from fxscope.core.timeline.layout import TrackLayout
from fxscope.core.timeline.track_order import build_groups
from fxscope.core.timeline.view_state import (
    SearchState,
    ViewState,
    centred,
    fit_range,
    lane_key_of,
    nearest_edge,
    selection_span,
    zoomed,
)
from fxscope.core.trace.details import counter_row, describe


def test_selection_span_and_the_lane_that_draws_each_kind(boot_trace) -> None:
    m = boot_trace
    layout = TrackLayout(build_groups(m))
    s = m.slices
    row = len(s) // 2
    assert selection_span(m, "slice", row) == (int(s.ts[row]), int(s.ts[row]) + int(s.dur[row]))
    assert selection_span(m, "slice", -1) is None
    key, depth = lane_key_of(m, "slice", row)
    assert layout.lane(key).source.thread == int(s.thread[row]) and depth == int(s.depth[row])
    cs = m.sched.cpu_slices
    crow = len(cs) - 1
    assert selection_span(m, "cpu", crow) == (int(cs.start[crow]), int(cs.end[crow]))
    assert lane_key_of(m, "cpu", crow) == (None, 0.0)  # found by row range: the CPU lane holding it
    lane = next(lane for lane in layout.lanes() if lane.key[0] == "cpu" and lane.row_range[0] <= crow < lane.row_range[1])
    assert lane.source == int(cs.cpu[crow])
    log = len(m.logs) - 1
    assert selection_span(m, "log", log) == (int(m.logs.ts[log]),) * 2
    assert layout.lane(lane_key_of(m, "log", log)[0]) is not None
    series = m.counters.series[0]
    sample = counter_row(0, 1)
    start, end = selection_span(m, "counter", sample)
    assert start == int(series.ts[1]) and end == (int(series.ts[2]) if len(series.ts) > 2 else m.end_ns)
    assert layout.lane(lane_key_of(m, "counter", sample)[0]).label == series.label


def test_view_state_selection(boot_trace) -> None:
    state = ViewState(boot_trace)
    state.select("slice", 3)
    assert state.selection == ("slice", 3) and state.selected_slice == 3
    state.select("cpu", 5)
    assert state.selected_slice == -1 and state.span() == selection_span(boot_trace, "cpu", 5)
    state.select("cpu", -1)
    assert state.selection == ("", -1) and state.span() is None


def test_fit_zoom_and_centre_rules(boot_trace) -> None:
    t = boot_trace.start_ns + 123_456_789
    assert fit_range((t, t)) == (t - 5_000 - 1_000, t - 5_000 + 10_000 + 1_000)  # a point: 10 us around it
    assert fit_range((t, t + 1_000_000)) == (t - 100_000, t + 1_100_000)
    a, b = zoomed(1.0, 3.0, 0.5, 1.5)
    assert (a, b) == (1.25, 2.25) and (1.5 - a) / (b - a) == pytest.approx((1.5 - 1.0) / 2.0)
    assert zoomed(1.0, 3.0, 0.5, None) == zoomed(1.0, 3.0, 0.5, 99.0) == (1.5, 2.5)  # outside: the centre
    assert centred(1.0, 3.0, 10.0) == (9.0, 11.0)


def test_measure_snaps_to_the_nearest_slice_edge_exactly(boot_trace) -> None:
    m = boot_trace
    s = m.slices
    track = next(t for p in m.processes for t in p.tracks if t.hi - t.lo > 10)
    row = int(track.by_depth[0][len(track.by_depth[0]) // 2])
    start, end = int(s.ts[row]), int(s.ts[row]) + int(s.dur[row])
    assert nearest_edge(m, track, start + 3, 10e-9) == start  # ns exact, 2**62 ns after boot too
    assert nearest_edge(m, track, end - 2, 10e-9) == end
    assert nearest_edge(m, track, start + 3, 1e-9) is None  # nothing within a nanosecond


def test_search_steps_from_the_middle_of_the_view_and_wraps(boot_trace) -> None:
    m = boot_trace
    name = m.name_of(0)
    search = SearchState(m)
    assert len(search.hits) == 0 and search.step(1, m.start_ns) is None and search.status() == ""
    search.set_text(name)
    n = len(search.hits)
    assert n > 2 and search.status() == f"{n} matches"
    mid = int(search.hits.ts[n // 2])
    kind, row = search.step(1, mid)
    i, ts = search.index, search.hits.ts
    assert int(ts[i]) == mid and (i == 0 or int(ts[i - 1]) < mid)  # the first hit at or after mid
    assert kind == "slice" and name in m.name_of(row) and search.status() == f"{search.index + 1} of {n}"
    search.index = n - 1
    search.step(1, mid)
    assert search.index == 0  # wraps
    search.step(-1, mid)
    assert search.index == n - 1


def test_hover_text_names_the_box_and_its_duration(boot_trace) -> None:
    m = boot_trace
    row = 0
    text = describe(m, "slice", row)
    assert text.startswith(m.name_of(row)) and text.endswith(m.thread_name(int(m.slices.thread[row])))
    cs = m.sched.cpu_slices
    assert describe(m, "cpu", 0).startswith(m.objects.koid_label(int(cs.tid[0])))
    assert describe(m, "crash", 1) == "crash report 2: click to open it"
    assert describe(m, "counter", counter_row(0, 0)).startswith(f"{m.counters.series[0].label} = ")
    long_log = max(range(len(m.logs)), key=lambda r: len(m.logs.text(r)))
    assert len(describe(m, "log", long_log)) <= 120
    assert describe(m, "nothing", 0) == ""
