"""The timeline builds its search index in a background thread: a search typed before it is built shows
"indexing…", the window keeps running meanwhile, the latest text is searched once it is built, and closing
the tab stops the build. The build is slowed (each batch of slices sleeps) so that it is still running when
the test types; no timing is asserted."""

from __future__ import annotations

import time

import numpy as np
import pytest
import shiboken6
from PySide6.QtCore import QTimer

import fxscope.app.timeline.search_indexing as search_indexing
import fxscope.core.trace.query as query
from fxscope.app.timeline.widget import TimelineWidget
from fxscope.core.synthetic_trace import generate_trace
from fxscope.core.trace.model import TraceModel
from fxscope.core.trace.search_hits import search_all
from fxscope.formats.fxt.reader import read_fxt_bytes

#: seconds each batch of the slowed build sleeps (sleeping, the build thread lets the UI thread run: a
#: build on the UI thread would still block its event loop for the whole build)
BATCH_SLEEP_S = 0.02


@pytest.fixture(scope="module")
def trace_bytes() -> bytes:
    return generate_trace(20_000, seed=5)


@pytest.fixture
def slow_build(monkeypatch):
    """Every trace indexes in the background, in batches of 64 slices that each take ``BATCH_SLEEP_S`` more."""
    real = query.event_arg_columns

    def slow(*args, **kwargs):
        time.sleep(BATCH_SLEEP_S)
        return real(*args, **kwargs)

    monkeypatch.setattr(query, "event_arg_columns", slow)
    monkeypatch.setattr(query, "INDEX_BATCH", 64)
    monkeypatch.setattr(search_indexing, "SYNC_INDEX_SLICES", 0)


def _common_name(model: TraceModel) -> str:
    names, counts = np.unique(model.slices.name, return_counts=True)
    return model.strings[int(names[np.argmax(counts)])]


def test_a_search_typed_while_indexing_waits_for_the_index_and_the_ui_keeps_running(qtbot, trace_bytes,
                                                                                   slow_build) -> None:  # fmt: skip
    model = TraceModel(read_fxt_bytes(trace_bytes))
    timeline = TimelineWidget(model)
    qtbot.addWidget(timeline)
    timeline.show()
    ticks: list[float] = []
    timer = QTimer()
    timer.timeout.connect(lambda: ticks.append(time.monotonic()) if not model.search_index_ready else None)
    timer.start(5)
    text = _common_name(model)[:3]
    timeline.search_box.setText("no such text")
    assert timeline.search_status.text() == "indexing…"
    timeline.search_box.setText(text)  # the latest text is the one searched
    assert timeline.search_status.text() == "indexing…" and not len(timeline.hits)
    assert not model.search_index_ready and timeline.search_indexing.worker is not None
    qtbot.waitUntil(lambda: timeline.search_status.text() != "indexing…", timeout=120_000)
    # (then searched in the background too: SYNC_INDEX_SLICES is 0 here)
    qtbot.waitUntil(lambda: timeline.search_status.text().endswith("matches"), timeout=60_000)
    timer.stop()
    assert len(ticks) >= 2  # the event loop ran while the index was built
    expected = search_all(TraceModel(read_fxt_bytes(trace_bytes)), text)  # a synchronous build's
    assert len(expected) > 1 and timeline.search.text == text
    assert timeline.search_status.text() == f"{len(expected)} matches"
    assert np.array_equal(timeline.hits.row, expected.row) and np.array_equal(timeline.hits.kind, expected.kind)
    assert timeline.search_step(1) >= 0
    assert timeline.search_status.text() == f"{timeline.match_index + 1} of {len(expected)}"
    assert timeline.search_indexing.worker.wait(10_000)


def test_the_build_starts_with_the_tab_and_a_later_search_runs_at_once(qtbot, trace_bytes, slow_build) -> None:
    model = TraceModel(read_fxt_bytes(trace_bytes))
    timeline = TimelineWidget(model)
    qtbot.addWidget(timeline)
    qtbot.waitUntil(lambda: model.search_index_ready, timeout=120_000)  # nobody searched: the tab started it
    text = _common_name(model)[:3]
    timeline.search_box.setText(text)  # no indexing: (a large trace's) search runs in the background at once
    assert timeline.search_status.text() == "searching…"
    qtbot.waitUntil(lambda: timeline.search_status.text().endswith("matches"), timeout=60_000)
    assert timeline.search_status.text() == f"{len(timeline.hits)} matches" and len(timeline.hits) > 1


def test_a_large_traces_search_runs_off_the_ui_thread_and_the_latest_text_wins(qtbot, trace_bytes,
                                                                               monkeypatch) -> None:  # fmt: skip
    """Searches of a trace of SYNC_INDEX_SLICES slices or more run in a background thread (slowed here, so
    that the UI's event loop visibly runs meanwhile): texts typed while one runs supersede it, and only the
    latest text's hits are shown, the same as a synchronous search's."""
    import fxscope.app.timeline.search_indexing as indexing_module

    monkeypatch.setattr(search_indexing, "SYNC_INDEX_SLICES", 0)
    real = indexing_module.search_all
    searched: list[str] = []

    def slow(model, text):
        searched.append(text)
        time.sleep(0.3)
        return real(model, text)

    monkeypatch.setattr(indexing_module, "search_all", slow)
    model = TraceModel(read_fxt_bytes(trace_bytes))
    model.build_search_index(lambda: None)
    timeline = TimelineWidget(model)
    qtbot.addWidget(timeline)
    ticks: list[float] = []
    timer = QTimer()
    timer.timeout.connect(lambda: ticks.append(time.monotonic()))
    timer.start(5)
    text = _common_name(model)[:3]
    for typed in ("x", "xy", text[:2], text):  # typed while the first one's search runs
        timeline.search_box.setText(typed)
        assert timeline.search_status.text() == "searching…" and not len(timeline.hits)
    qtbot.waitUntil(lambda: timeline.search_status.text().endswith("matches"), timeout=60_000)
    timer.stop()
    assert len(ticks) >= 10  # the event loop ran while searching
    assert searched == ["x", text]  # the one running, then the latest: the texts between were never searched
    expected = real(TraceModel(read_fxt_bytes(trace_bytes)), text)
    assert timeline.search.text == text and timeline.search_status.text() == f"{len(expected)} matches"
    assert np.array_equal(timeline.hits.row, expected.row) and np.array_equal(timeline.hits.kind, expected.kind)
    timeline.search_box.setText("")  # cleared: no search, nothing shown
    assert timeline.search_status.text() == "" and not len(timeline.hits)


def test_closing_the_tab_while_indexing_stops_the_build(qtbot, trace_bytes, slow_build) -> None:
    model = TraceModel(read_fxt_bytes(trace_bytes))
    timeline = TimelineWidget(model)
    timeline.search_box.setText("abc")
    worker = timeline.search_indexing.worker
    assert worker is not None and not worker.isFinished()
    timeline.deleteLater()
    qtbot.waitUntil(lambda: not shiboken6.isValid(timeline), timeout=10_000)
    assert worker.wait(60_000)  # it ends (the flag is checked between batches)
    assert not model.search_index_ready  # stopped, not finished: the index is left unbuilt
    qtbot.wait(20)  # a queued signal of the thread, if any, reaches nothing


def test_quitting_while_indexing_ends_cleanly(tmp_path, trace_bytes) -> None:
    """A QThread destroyed while running aborts the process: the build is stopped and waited for at exit."""
    import subprocess
    import sys

    path = tmp_path / "t.fxt"
    path.write_bytes(trace_bytes)
    script = (
        "import os, sys, time\n"
        "os.environ['QT_QPA_PLATFORM'] = 'offscreen'\n"
        "import fxscope.core.trace.query as query\n"
        "import fxscope.app.timeline.search_indexing as search_indexing\n"
        "real = query.event_arg_columns\n"
        "query.event_arg_columns = lambda *a, **k: (time.sleep(0.05), real(*a, **k))[1]\n"
        "query.INDEX_BATCH = 64\n"
        "search_indexing.SYNC_INDEX_SLICES = 0\n"
        "from fxscope.app.gui import application\n"
        "from fxscope.app.timeline.widget import TimelineWidget\n"
        "from fxscope.core.trace.model import TraceModel\n"
        "from fxscope.core.trace.reading import read_trace\n"
        "app = application()\n"
        "timeline = TimelineWidget(TraceModel(read_trace(sys.argv[1])))\n"
        "timeline.show()\n"
        "timeline.search_box.setText('abc')\n"
        "app.processEvents()\n"
        "assert timeline.search_indexing.worker.isRunning()\n"
        "print('quitting')\n"
    )
    result = subprocess.run([sys.executable, "-c", script, str(path)], capture_output=True, text=True, timeout=120)
    assert result.returncode == 0 and "quitting" in result.stdout, result.stderr[-2000:]
    assert "Destroyed while thread" not in result.stderr


def test_a_held_build_waits_for_its_release_unless_a_search_asks(qtbot, trace_bytes, slow_build) -> None:
    """The tab holds the index's build while it builds its later tables (one build's temporaries at a time):
    the timeline's own start waits for the release; a typed search starts it at once."""
    model = TraceModel(read_fxt_bytes(trace_bytes))
    timeline = TimelineWidget(model)
    qtbot.addWidget(timeline)
    indexing = timeline.search_indexing
    indexing.hold()
    qtbot.wait(search_indexing.START_DELAY_MS + 200)  # the timeline's start came and was put off
    assert indexing.worker is None and indexing.start_on_release
    indexing.release()
    assert indexing.worker is not None
    qtbot.waitUntil(lambda: model.search_index_ready, timeout=120_000)
    other = TimelineWidget(TraceModel(read_fxt_bytes(trace_bytes)))
    qtbot.addWidget(other)
    other.search_indexing.hold()
    other.search_box.setText("abc")  # asked: no waiting for the release
    assert other.search_indexing.worker is not None and other.search_status.text() == "indexing…"
    assert other.search_indexing.worker.wait(120_000)
