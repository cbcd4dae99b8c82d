"""The tables a large trace's tab builds after its first frame (:class:`fxscope.app.deferred_tables.DeferredTables`):
the memory the UI thread freed showing them is given back to the system on the UI thread once they stop
coming, not left in the process (freed memory stays there while a build runs) on top of the next step's
temporaries."""

from __future__ import annotations

import threading

import pytest

from fxscope.app import deferred_tables
from fxscope.app.deferred_tables import TRIM_AFTER_MS, DeferredTables
from fxscope.app.timeline.widget import TimelineWidget
from fxscope.core.synthetic_trace import generate_trace
from fxscope.core.timeline.track_order import prebuild_groups
from fxscope.core.trace.model import TraceModel
from fxscope.core.trace.prepare import TRACK_STEPS, pending_tables, prepare_model
from fxscope.formats.fxt.reader import read_fxt_bytes


@pytest.fixture(scope="module")
def trace() -> bytes:
    return generate_trace(20_000, seed=4, scheduling=True)


def test_the_ui_gives_freed_memory_back_after_the_tables_came_in(qtbot, trace, monkeypatch) -> None:
    model = TraceModel(read_fxt_bytes(trace))
    prepare_model(model, first_frame_only=True)
    prebuild_groups(model)
    widget = TimelineWidget(model)
    qtbot.addWidget(widget)
    widget.resize(800, 600)
    widget.show()
    qtbot.waitExposed(widget)
    returned: list[tuple[bool, frozenset[str], int]] = []  # (on the UI thread?, tables pending, tables seen)
    steps: list[str] = []
    monkeypatch.setattr(
        deferred_tables,
        "return_freed_memory",
        lambda: returned.append(
            (threading.current_thread() is threading.main_thread(), pending_tables(model), len(steps))
        ),
    )
    deferred = DeferredTables(model, widget)
    deferred.tablesBuilt.connect(lambda name, _groups: steps.append(name))
    deferred.tablesBuilt.connect(widget.tables_built)
    with qtbot.waitSignal(deferred.done, timeout=60_000):
        deferred.start()
    assert sorted(steps) == sorted(name for name, _ in TRACK_STEPS)
    qtbot.waitUntil(lambda: bool(returned) and returned[-1][2] == len(steps), timeout=10 * TRIM_AFTER_MS)
    assert all(on_ui for on_ui, _pending, _seen in returned)
    assert not returned[-1][1]  # after the last table came in
    n = len(returned)
    qtbot.wait(3 * TRIM_AFTER_MS)
    assert len(returned) == n  # (once the tables stop coming: not on a timer)
