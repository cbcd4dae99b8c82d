"""The crash view's background workers end with what they work for: a view destroyed (its tab or window
gone) cancels them, they touch nothing of the view from their threads, and quitting does not wait for a
debuginfod server that does not answer.

No timing assertions: the bounds below are liveness bounds (a worker that ignored its cancel flag would
run on for its whole log, or wait out a 30 s read timeout times its retries)."""

from __future__ import annotations

import shutil
import socket
from pathlib import Path

import pytest
from PySide6.QtCore import QCoreApplication, QEvent

from fxscope.app.crash import workers
from fxscope.app.crash.view import CrashView


@pytest.fixture
def crash_dir(testdata: Path, tmp_path: Path) -> Path:
    target = tmp_path / "crash"
    shutil.copytree(testdata / "markup" / "crash-demo", target)
    return target


def _delete(widget) -> None:
    """What a closed tab or a test's teardown does: the widget is deleted, without a close event."""
    widget.deleteLater()
    QCoreApplication.sendPostedEvents(None, QEvent.Type.DeferredDelete)


def test_a_destroyed_crash_view_stops_its_workers(qtbot, crash_dir: Path) -> None:
    many = crash_dir / "many.log"
    many.write_text((crash_dir / "input.log").read_text() * 1000)
    view = CrashView(debug_dirs=[str(crash_dir)])
    before = set(workers._LIVE)
    with qtbot.waitSignal(view.reportsListed, timeout=60_000):
        view.open_log(many, background=True)
    started = list(workers._LIVE - before)
    assert any(isinstance(w, workers.LogSplitter) for w in started)
    late: list[int] = []
    for worker in started:  # what the workers still send after the view is gone (plain functions: no view)
        if hasattr(worker, "summarized"):
            worker.summarized.connect(lambda first, _batch: late.append(first))
    _delete(view)
    del view
    # liveness bound only: without the cancel, the splitter waits 10 s for a first report that is never
    # shown, then summarizes 1,000 reports for nobody
    qtbot.waitUntil(lambda: all(w.isFinished() for w in started), timeout=10_000)
    qtbot.wait(50)  # anything still queued is delivered
    assert late == [] and all(w.cancelled() for w in started)


def test_a_destroyed_trace_tab_cancels_its_report_summaries(qtbot) -> None:
    from fxscope.app.trace_tab import TraceTab
    from fxscope.core.trace.model import TraceModel
    from fxscope.formats.fxt.reader import read_fxt
    from fxscope.resources import DEMO_TRACE

    tab = TraceTab(TraceModel(read_fxt(str(DEMO_TRACE))))
    assert not list(tab.reports._workers)  # the summaries start a moment after the tab (its first frame first)
    tab.reports._start_pending()
    started = list(tab.reports._workers)
    assert len(started) == 1
    _delete(tab)
    del tab
    assert started[0].cancelled()
    qtbot.waitUntil(started[0].isFinished, timeout=10_000)


def test_a_trace_tab_destroyed_before_its_summaries_start_starts_none(qtbot) -> None:
    from fxscope.app.crash import trace_reports
    from fxscope.app.trace_tab import TraceTab
    from fxscope.core.trace.model import TraceModel
    from fxscope.formats.fxt.reader import read_fxt
    from fxscope.resources import DEMO_TRACE

    before = set(workers._LIVE)
    tab = TraceTab(TraceModel(read_fxt(str(DEMO_TRACE))))
    _delete(tab)
    del tab
    qtbot.wait(trace_reports.TraceReportsPanel.START_DELAY_MS + 300)  # past the delayed start
    assert not [w for w in workers._LIVE - before if w.isRunning()]


def test_workers_refuse_a_resolver_factory_bound_to_a_widget(qtbot, crash_dir: Path) -> None:
    """A worker calling the view's method from its thread read the view while the UI thread destroyed it;
    the view hands workers a factory of plain data instead."""
    view = CrashView()
    qtbot.addWidget(view)
    with pytest.raises(TypeError, match="Qt object"):
        workers.LogSplitter(str(crash_dir / "input.log"), view._resolver)
    factory = view.resolver_factory()
    assert not hasattr(factory, "__self__") and factory().store is not None


def test_quitting_cancels_a_report_waiting_for_debuginfod(qtbot, crash_dir: Path) -> None:
    """The shown report asks a debuginfod server that accepts the connection and never answers (read
    timeout 30 s, retried): quitting cancels the download instead of waiting it out."""
    silent = socket.socket()
    silent.bind(("127.0.0.1", 0))
    silent.listen(16)
    silent.setblocking(False)
    url = f"http://127.0.0.1:{silent.getsockname()[1]}"
    view = CrashView(debug_dirs=[str(crash_dir)], debuginfod_urls=[url])
    qtbot.addWidget(view)
    before = set(workers._LIVE)
    view.open_log(crash_dir / "input.log", background=True)
    accepted = []

    def asked() -> bool:  # the report's symbols are being asked for, and no answer will come
        try:
            accepted.append(silent.accept()[0])
        except BlockingIOError:
            return False
        return True

    qtbot.waitUntil(asked, timeout=60_000)
    conn = accepted[0]
    started = list(workers._LIVE - before)
    try:
        assert any(isinstance(w, workers.ReportBuilder) and w.isRunning() for w in started)
        workers.stop_all()
        stopped = [w.isFinished() for w in started]
    finally:
        conn.close()
        silent.close()
    assert all(stopped)
    assert view.report is None  # cancelled: the half-symbolized report is not shown


def test_choosing_another_report_cancels_the_one_being_symbolized(qtbot, crash_dir: Path) -> None:
    silent = socket.socket()
    silent.bind(("127.0.0.1", 0))
    silent.listen(16)
    silent.setblocking(False)
    two = crash_dir / "two.log"
    two.write_text((crash_dir / "input.log").read_text() * 2)
    view = CrashView(debug_dirs=[str(crash_dir)], debuginfod_urls=[f"http://127.0.0.1:{silent.getsockname()[1]}"])
    qtbot.addWidget(view)
    before = set(workers._LIVE)
    accepted: list = []

    def asked() -> bool:
        try:
            accepted.append(silent.accept()[0])
        except BlockingIOError:
            return False
        return True

    try:
        view.open_log(two, background=True)
        qtbot.waitUntil(asked, timeout=60_000)  # report 1 waits for a server that does not answer
        first = [w for w in workers._LIVE - before if isinstance(w, workers.ReportBuilder)]
        assert len(first) == 1 and first[0].isRunning()
        view.reports_list.reportChosen.emit(1)
        assert first[0].cancelled()
        qtbot.waitUntil(first[0].isFinished, timeout=10_000)  # liveness: its download was cut
        workers.stop_all()
    finally:
        for conn in accepted:
            conn.close()
        silent.close()
    assert view.report is None and view.report_index == 1
