"""The timeline builds its search index in a background thread: a search typed before it is built shows the
matches without the slices' arguments at once and all of them once it is built, the window keeps running
meanwhile, a new keystroke or Esc cancels a running search, and closing the tab stops the build. The build is slowed (each batch of slices sleeps) so that it is still running when
the test types; no timing is asserted."""

from __future__ import annotations

import time

import numpy as np
import pytest
import shiboken6
from PySide6.QtCore import QTimer

import fxscope.app.timeline.search_indexing as search_indexing
import fxscope.core.trace.arg_string_index as arg_string_index
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
    real = arg_string_index._batch_pairs

    def slow(*args, **kwargs):
        time.sleep(BATCH_SLEEP_S)
        return real(*args, **kwargs)

    monkeypatch.setattr(arg_string_index, "_batch_pairs", slow)
    monkeypatch.setattr(arg_string_index, "INDEX_BATCH", 64)
    monkeypatch.setattr(search_indexing, "SYNC_INDEX_SLICES", 0)


def _common_name(model: TraceModel) -> str:
    names, counts = np.unique(model.slices.name, return_counts=True)
    return model.strings[int(names[np.argmax(counts)])]


def test_a_search_typed_while_indexing_shows_the_name_matches_then_the_argument_matches(qtbot, trace_bytes,
                                                                                      slow_build) -> None:  # fmt: skip
    """The search does not wait for the argument index: the matches without arguments show at once, the
    count saying more are coming ("N+ matches, indexing arguments…"), then every match once it is built.
    "ou" matches argument names ("count") of slices whose names do not match: the two counts differ."""
    model = TraceModel(read_fxt_bytes(trace_bytes))
    timeline = TimelineWidget(model)
    qtbot.addWidget(timeline)
    timeline.show()
    ticks: list[float] = []
    timer = QTimer()
    timer.timeout.connect(lambda: ticks.append(time.monotonic()) if not model.search_index_ready else None)
    timer.start(5)
    timeline.search_box.setText("no such text")
    assert timeline.search_status.text() == "searching…"
    text = "ou"
    timeline.search_box.setText(text)  # the latest text is the one searched
    assert timeline.search_status.text() == "searching…" and not len(timeline.hits)
    assert not model.search_index_ready and timeline.search_indexing.worker is not None
    qtbot.waitUntil(lambda: "matches" in timeline.search_status.text(), timeout=60_000)
    assert not model.search_index_ready  # shown while the index is being built
    fresh = TraceModel(read_fxt_bytes(trace_bytes))
    partial = search_all(fresh, text, arguments=False)
    expected = search_all(fresh, text)  # with the index (a synchronous build's)
    assert 0 < len(partial) < len(expected) and not partial.complete and expected.complete
    assert timeline.search_status.text() == f"{len(partial)}+ matches, indexing arguments…"
    assert np.array_equal(timeline.hits.row, partial.row) and np.array_equal(timeline.hits.kind, partial.kind)
    assert timeline.search_step(1) >= 0  # the partial hits can be stepped through
    assert timeline.search_status.text() == f"{timeline.match_index + 1} of {len(partial)}+, indexing arguments…"
    qtbot.waitUntil(lambda: timeline.search_status.text() == f"{len(expected)} matches", timeout=120_000)
    timer.stop()
    assert len(ticks) >= 2  # the event loop ran while the index was built
    assert timeline.search.text == text and timeline.hits.complete
    assert np.array_equal(timeline.hits.row, expected.row) and np.array_equal(timeline.hits.kind, expected.kind)
    assert timeline.search_step(1) >= 0
    assert timeline.search_status.text() == f"{timeline.match_index + 1} of {len(expected)}"
    assert timeline.search_indexing.worker.wait(10_000)


def test_a_name_search_typed_while_indexing_keeps_its_hits_once_the_arguments_add_none(qtbot, trace_bytes,
                                                                                      slow_build) -> None:  # fmt: skip
    """A text no argument holds (a slice name): once the index is built the same hits are kept, complete (only
    the arguments searched: search_all's ``without_arguments``), equal to a full search's."""
    model = TraceModel(read_fxt_bytes(trace_bytes))
    timeline = TimelineWidget(model)
    qtbot.addWidget(timeline)
    text = _common_name(model)
    timeline.search_box.setText(text)
    qtbot.waitUntil(lambda: "matches" in timeline.search_status.text(), timeout=60_000)
    assert not model.search_index_ready and not timeline.hits.complete
    first = timeline.hits
    qtbot.waitUntil(lambda: timeline.search_status.text() == f"{len(first)} matches", timeout=120_000)
    assert timeline.hits.complete and timeline.hits.row is first.row  # (kept: not searched again)
    expected = search_all(TraceModel(read_fxt_bytes(trace_bytes)), text)
    assert len(expected) > 1 and np.array_equal(timeline.hits.row, expected.row)
    assert np.array_equal(timeline.hits.kind, expected.kind)


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

    def slow(model, text, check, arguments, without_arguments=None):
        searched.append(text)
        time.sleep(0.3)
        return real(model, text, check, arguments=arguments, without_arguments=without_arguments)

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
        "import fxscope.core.trace.arg_string_index as index\n"
        "import fxscope.app.timeline.search_indexing as search_indexing\n"
        "real = index._batch_pairs\n"
        "index._batch_pairs = lambda *a, **k: (time.sleep(0.05), real(*a, **k))[1]\n"
        "index.INDEX_BATCH = 64\n"
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
    assert other.search_indexing.worker is not None and other.search_status.text() == "searching…"
    assert other.search_indexing.worker.wait(120_000)
    # and the searches of "abc" end here (the first without the argument matches, then the one the index's
    # end starts), not in a later test, whose patched search they would call
    qtbot.waitUntil(lambda: other.search_indexing.searching is None and other.hits.complete
                    and other.search_status.text().endswith("matches"), timeout=120_000)  # fmt: skip


def _polling_search(monkeypatch, ran: list[tuple[str, str]]):
    """Searches that run until cancelled (calling ``check`` every 10 ms, up to 60 s), except the text
    "quick": ``ran`` gets (text, "cancelled" or "done") as each ends."""
    import fxscope.app.timeline.search_indexing as indexing_module

    real = indexing_module.search_all

    def polling(model, text, check, arguments, without_arguments=None):
        end = time.monotonic() + 60
        try:
            while text != "quick" and time.monotonic() < end:
                check()
                time.sleep(0.01)
        except BaseException:
            ran.append((text, "cancelled"))
            raise
        ran.append((text, "done"))
        return real(model, text, check, arguments=arguments, without_arguments=without_arguments)

    monkeypatch.setattr(search_indexing, "SYNC_INDEX_SLICES", 0)
    monkeypatch.setattr(indexing_module, "search_all", polling)


def _indexed_timeline_with_polling_search(qtbot, trace_bytes, monkeypatch):
    """(ran, model, timeline): a timeline of an indexed model whose searches poll (:func:`_polling_search`)."""
    ran: list[tuple[str, str]] = []
    _polling_search(monkeypatch, ran)
    model = TraceModel(read_fxt_bytes(trace_bytes))
    model.build_search_index(lambda: None)
    timeline = TimelineWidget(model)
    qtbot.addWidget(timeline)
    return ran, model, timeline


def test_a_new_keystroke_cancels_the_running_search(qtbot, trace_bytes, monkeypatch) -> None:
    ran, _model, timeline = _indexed_timeline_with_polling_search(qtbot, trace_bytes, monkeypatch)
    timeline.search_box.setText("slow")
    first = timeline.search_indexing.searching
    assert first is not None and timeline.search_status.text() == "searching…"
    qtbot.wait(100)
    assert first.isRunning()
    started = time.monotonic()
    timeline.search_box.setText("quick")  # stops the running one: it would run for a minute
    qtbot.waitUntil(lambda: timeline.search_status.text().endswith("matches"), timeout=30_000)
    assert time.monotonic() - started < 30  # (not waiting out the first search's minute; no timing asserted)
    assert ran == [("slow", "cancelled"), ("quick", "done")]
    assert first.wait(10_000) and first.result is None
    expected = search_all(TraceModel(read_fxt_bytes(trace_bytes)), "quick")
    assert timeline.search.text == "quick" and timeline.search_status.text() == f"{len(expected)} matches"


def test_esc_stops_the_running_search_and_enter_searches_again(qtbot, trace_bytes, monkeypatch) -> None:
    from PySide6.QtCore import Qt

    ran, model, timeline = _indexed_timeline_with_polling_search(qtbot, trace_bytes, monkeypatch)
    timeline.show()
    text = _common_name(model)[:3]
    timeline.search_box.setText("quick")
    qtbot.waitUntil(lambda: timeline.search_status.text().endswith("matches"), timeout=30_000)
    shown = timeline.hits
    timeline.search_box.setText(text)  # (polled until cancelled)
    worker = timeline.search_indexing.searching
    assert worker is not None
    timeline.search_box.setFocus()
    qtbot.keyClick(timeline.search_box, Qt.Key.Key_Escape)
    assert worker.wait(10_000) and worker.result is None
    qtbot.wait(50)  # (its end, queued to the UI thread)
    assert ran[-1] == (text, "cancelled") and timeline.search_indexing.searching is None
    assert timeline.search_status.text() == "search stopped" and timeline.hits is shown  # nothing new shown
    assert timeline.search_box.text() == text  # the box keeps its text
    monkeypatch.setattr(search_indexing, "search_all", search_all)  # (the real search from now on)
    assert timeline.search_step(1) == -1  # Enter: the box's text searched again, not a step
    qtbot.waitUntil(lambda: timeline.search_status.text().endswith("matches"), timeout=30_000)
    expected = search_all(TraceModel(read_fxt_bytes(trace_bytes)), text)
    assert len(expected) > 1 and timeline.search.text == text
    assert np.array_equal(timeline.hits.row, expected.row) and np.array_equal(timeline.hits.kind, expected.kind)


def test_the_builds_that_yield_pause_while_a_search_runs(qtbot, trace_bytes, monkeypatch) -> None:
    """While a search runs, the UI thread keeps saying it is active, so that the builds yielding to it (the
    argument index, the tab's later tables) pause and the search gets the interpreter; not after it."""
    from fxscope.app import worker_threads

    _ran, _model, timeline = _indexed_timeline_with_polling_search(qtbot, trace_bytes, monkeypatch)
    qtbot.wait(200)
    assert not worker_threads.ui_recently_active()  # (nothing drawn: the widget is not shown)
    timeline.search_box.setText("slow")
    seen = []
    for _ in range(10):
        qtbot.wait(30)
        seen.append(worker_threads.ui_recently_active())
    assert all(seen) and timeline.search_indexing.searching is not None
    timeline.search_indexing.cancel_search()
    qtbot.waitUntil(lambda: timeline.search_indexing.searching is None, timeout=10_000)
    qtbot.wait(200)
    assert not worker_threads.ui_recently_active()


def test_the_argument_index_build_is_held_for_the_whole_search_and_resumes_after(qtbot, trace_bytes, slow_build,
                                                                                  monkeypatch) -> None:  # fmt: skip
    """A search that outlasts the UI's bounded pauses (none here: MAX_PAUSE_S 0) still has the index's build
    paused all along (the search never waits for it); once the search ends, the build goes on and ends."""
    from fxscope.app import worker_threads

    monkeypatch.setattr(worker_threads, "MAX_PAUSE_S", 0.0)
    batches = [0]
    slowed = arg_string_index._batch_pairs

    def counted(*args, **kwargs):
        batches[0] += 1
        return slowed(*args, **kwargs)

    monkeypatch.setattr(arg_string_index, "_batch_pairs", counted)
    ran: list[tuple[str, str]] = []
    _polling_search(monkeypatch, ran)
    model = TraceModel(read_fxt_bytes(trace_bytes))
    timeline = TimelineWidget(model)
    qtbot.addWidget(timeline)
    indexing = timeline.search_indexing
    timeline.search_box.setText("slow")  # starts the index's build and a search that polls until cancelled
    build = indexing.worker
    assert build is not None and indexing.searching is not None
    qtbot.wait(400)  # ~20 batches of 20 ms had it run
    before = batches[0]
    assert before == 0 and build.isRunning() and not model.search_index_ready
    indexing.cancel_search()
    qtbot.waitUntil(lambda: indexing.searching is None, timeout=10_000)
    qtbot.waitUntil(lambda: model.search_index_ready, timeout=120_000)  # released: it goes on and ends
    assert batches[0] > before and build.wait(10_000) and build.paused_s > 0.3
    assert ran == [("slow", "cancelled")]


def test_hits_without_the_arguments_say_the_index_is_awaited_until_it_is_built(qtbot, trace_bytes,
                                                                               slow_build) -> None:  # fmt: skip
    """``awaited``: True once a search's hits are shown without the argument matches while the index builds,
    False when it is built; Esc (the search stopped) says False too."""
    model = TraceModel(read_fxt_bytes(trace_bytes))
    timeline = TimelineWidget(model)
    qtbot.addWidget(timeline)
    said: list[tuple[bool, bool]] = []  # (awaited, the index built then)
    timeline.search_indexing.awaited.connect(lambda a: said.append((a, model.search_index_ready)))
    timeline.search_box.setText(_common_name(model))
    qtbot.waitUntil(lambda: "indexing arguments" in timeline.search_status.text(), timeout=60_000)
    assert said == [(True, False)] and not timeline.hits.complete
    qtbot.waitUntil(lambda: len(said) == 2, timeout=120_000)
    assert said[1] == (False, True)
    qtbot.waitUntil(lambda: timeline.hits.complete, timeout=60_000)
    assert len(said) == 2  # (the complete hits: nothing awaited)

    model = TraceModel(read_fxt_bytes(trace_bytes))  # Esc while the arguments are awaited
    timeline = TimelineWidget(model)
    qtbot.addWidget(timeline)
    said.clear()
    timeline.search_indexing.awaited.connect(said.append)
    timeline.search_box.setText(_common_name(model))
    qtbot.waitUntil(lambda: said == [True], timeout=60_000)
    timeline.search_indexing.cancel_search()
    assert said == [True, False] and not model.search_index_ready


def test_the_tab_holds_its_later_tables_while_a_search_awaits_the_arguments(qtbot, trace_bytes, tmp_path,
                                                                           monkeypatch) -> None:  # fmt: skip
    """A large trace's tab (its later tables built in the background) holds that build while a search awaits
    the argument index, and lets it go on once the index is in; the tables are then all built."""
    from fxscope.app.main_window import MainWindow
    from fxscope.core.trace import prepare

    monkeypatch.setattr(prepare, "DEFER_EVENTS", 0)
    path = tmp_path / "large.fxt"
    path.write_bytes(trace_bytes)
    win = MainWindow()
    qtbot.addWidget(win)
    win.open_path(str(path), background=True)
    qtbot.waitUntil(lambda: win.tabs.count() == 1, timeout=60_000)
    tab = win.tabs.currentWidget()
    assert tab.deferred is not None
    qtbot.waitUntil(lambda: tab.deferred.worker is not None, timeout=10_000)
    worker = tab.deferred.worker
    tab.timeline.search_indexing.awaited.emit(True)
    assert worker._held.is_set()
    tab.timeline.search_indexing.awaited.emit(False)
    assert not worker._held.is_set()
    qtbot.waitUntil(lambda: not tab.deferred.pending(), timeout=120_000)
