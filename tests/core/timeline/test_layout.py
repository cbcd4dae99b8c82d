"""Where the timeline's lanes go, tested without Qt on the boot-stamped traces (315 thread tracks): stacking,
collapse, the track filter, pins, the sticky header, and which lane or header is under a y."""

from __future__ import annotations

import pytest

from fxscope.core.timeline.layout import (
    CPU_GROUP,
    LANE_GAP,
    PROCESS_HEADER_ROWS,
    ROW_HEIGHT,
    TrackLayout,
    lane_height,
)
from fxscope.core.timeline.track_order import build_groups


@pytest.fixture
def layout(boot_trace) -> TrackLayout:
    out = TrackLayout(build_groups(boot_trace))
    out.place()
    return out


def test_expanded_lanes_stack_without_gaps_or_overlaps(layout) -> None:
    y = 0.0
    for group in layout.groups:
        assert group.y0 == pytest.approx(y) and (y, group.pid) in layout.headers
        y += PROCESS_HEADER_ROWS
        for lane in group.lanes:
            assert lane.visible and not lane.on_top and lane.y0 == pytest.approx(y)
            y += lane.rows * ROW_HEIGHT + LANE_GAP
        assert group.y1 == pytest.approx(y)
    assert layout.total_rows == pytest.approx(y) == pytest.approx(layout.expanded_rows())
    for lane in layout.lanes():  # the middle of each lane finds it, its header row finds its group
        assert layout.lane_at(lane.y0 + lane.rows / 2, top=0.0) is lane
    for y_header, pid in layout.headers:
        assert layout.header_at(y_header + 0.5, top=0.0) == pid and layout.lane_at(y_header + 0.5, 0.0) is None


def test_collapsed_processes_leave_their_headers_and_the_cpus(layout) -> None:
    layout.collapse_processes()
    layout.place()
    shown = [lane for lane in layout.lanes() if lane.visible]
    assert shown and all(lane.pid == CPU_GROUP for lane in shown)
    cpu_rows = sum(lane_height(lane) for lane in shown)
    assert layout.total_rows == pytest.approx(len(layout.groups) * PROCESS_HEADER_ROWS + cpu_rows)
    assert all(g.summary_shown == (g.pid != CPU_GROUP) for g in layout.groups)
    layout.toggle_group(layout.groups[-1].pid)  # one expanded again: its lanes at the bottom
    layout.place()
    last = layout.groups[-1]
    assert all(lane.visible for lane in last.lanes) and last.y1 == pytest.approx(layout.total_rows)


def test_track_filter_shows_matching_lanes_in_expanded_groups(boot_trace, layout) -> None:
    layout.collapse_processes()
    target = next(lane for lane in layout.lanes() if lane.key[0] == "thread" and lane.pid > 0)
    name = boot_trace.thread_name(target.key[1])
    layout.set_track_filter(f"  {name.upper()} ")  # trimmed, case-insensitive
    layout.place()
    shown = [lane for lane in layout.lanes() if lane.visible]
    assert target in shown and all(name.casefold() in lane.match for lane in shown)
    assert len(shown) < len(layout.lanes())
    for group in layout.groups:
        if not any(lane.visible for lane in group.lanes):
            assert group.y0 == group.y1 == -1.0 and not group.summary_shown
    assert {pid for _y, pid in layout.headers} == {lane.pid for lane in shown}
    layout.set_track_filter("")
    layout.place()
    assert not any(lane.visible for lane in layout.lanes() if lane.pid != CPU_GROUP)  # collapsed again


def test_pinned_thread_brings_its_state_and_floats_at_the_top(layout) -> None:
    thread = next(lane for lane in layout.lanes() if lane.key[0] == "thread" and layout.lane(("state", lane.key[1])))
    layout.pin(thread.key)
    layout.pin(("thread", -12345))  # unknown keys are not pinned
    assert layout.pinned == [thread.key, ("state", thread.key[1])]
    layout.place()
    state = layout.lane(("state", thread.key[1]))
    assert [(lane, off) for lane, off in layout.pinned_offsets] == [
        (thread, PROCESS_HEADER_ROWS), (state, PROCESS_HEADER_ROWS + lane_height(thread))]
    assert layout.pinned_rows == pytest.approx(PROCESS_HEADER_ROWS + lane_height(thread) + lane_height(state))
    top = 40.0
    ticks = layout.float_pinned(top)
    assert thread.y0 == top + PROCESS_HEADER_ROWS and thread.on_top and ticks[0] == (top + 0.5, "Pinned")
    assert layout.header_at(top + 0.2, top) == "pinned"
    assert layout.lane_at(thread.y0 + 0.5, top) is thread
    assert layout.visible_lanes()[:2] == [thread, state]
    # the sticky header's name just below the block, and no content name under either
    assert layout.sticky is not None and ticks[3] == (top + layout.pinned_rows + 0.5, ticks[3][1])
    assert ticks[4:] and all(y >= top + layout.covered_rows() for y, _text in ticks[4:])
    layout.unpin(thread.key)
    layout.place()
    assert layout.pinned == [] and layout.pinned_offsets == [] and layout.pinned_rows == 0.0


def test_sticky_header_of_the_process_scrolled_under_the_top(layout) -> None:
    group = max(layout.groups, key=lambda g: g.y1 - g.y0)  # the tallest process
    top = group.y0 + 2.5
    layout.float_pinned(top)
    assert layout.sticky == (top, group.pid)
    assert layout.header_at(top + 0.5, top) == group.pid
    assert layout.lane_at(top + 0.5, top) is None  # covered by the header
    layout.float_pinned(0.0)
    assert layout.sticky is None


def test_reveal_top_puts_a_row_a_third_down_the_free_area(layout) -> None:
    lane = layout.lanes()[-1]
    height = 40.0
    top = layout.reveal_top(lane, 0.0, (0.0, height))
    assert top is not None
    covered = PROCESS_HEADER_ROWS
    assert top == pytest.approx(min(lane.y0 - covered - (height - covered) / 3, layout.total_rows - height))
    assert layout.reveal_top(lane, 0.0, (top, top + height)) is None  # in view now
    assert layout.scrolled_top(-5.0, height) == 0.0
    assert layout.scrolled_top(1e9, height) == pytest.approx(layout.total_rows - height)
