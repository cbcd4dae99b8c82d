"""Loading reports progress from its first block and Cancel acts at once: the reader reports (and can be
cancelled) during every phase, the model's builders check the cancel flag between batches, and the window
detaches a cancelled load immediately. (Latencies are figures of tests/bench/bench_timeline.py, not
assertions here.)"""

from __future__ import annotations

import pytest

from fxscope.app.loading import Cancelled, TraceLoader
from fxscope.app.main_window import MainWindow
from fxscope.core.synthetic_trace import generate_trace
from fxscope.core.trace.model import TraceModel
from fxscope.formats.fxt.reader import read_fxt, read_fxt_bytes


@pytest.fixture(scope="module")
def trace_file(tmp_path_factory):
    path = tmp_path_factory.mktemp("load") / "t.fxt"
    path.write_bytes(generate_trace(120_000, seed=3))
    return path


def test_the_reader_reports_progress_before_it_decodes_events(trace_file, monkeypatch) -> None:
    import fxscope.formats.fxt.framing as framing
    from fxscope.formats.fxt.reader import _Decoder

    monkeypatch.setattr(framing, "TICK_STEPS", 4)  # (the numpy framing's ticks)
    monkeypatch.setattr(framing, "SUPER_WORDS", 2048)  # (the compiled framing ticks once a super-chunk)
    monkeypatch.setattr(_Decoder, "BLOCK_RECORDS", 4096)
    seen: list[float] = []
    read_fxt(trace_file, progress=seen.append)
    assert seen[0] == 0.0  # at once
    early = [f for f in seen if f < 0.1]  # framing, record types, control records
    assert len(early) >= 8 and early == sorted(early)
    assert seen == sorted(seen)


def test_a_cancel_during_framing_unwinds_the_read(trace_file, monkeypatch) -> None:
    import fxscope.formats.fxt.framing as framing

    monkeypatch.setattr(framing, "TICK_STEPS", 4)
    monkeypatch.setattr(framing, "SUPER_WORDS", 2048)
    calls = []

    def progress(fraction: float) -> None:
        calls.append(fraction)
        if len(calls) == 3:
            raise Cancelled

    with pytest.raises(Cancelled):
        read_fxt(trace_file, progress=progress)
    assert calls[-1] < 0.05  # stopped inside the framing phase, not after it


def test_the_model_checks_between_slice_batches(trace_file, monkeypatch) -> None:
    import fxscope.core.trace.slices as slices

    monkeypatch.setattr(slices, "BATCH_EVENTS", 2_000)
    cols = read_fxt(trace_file)
    checks = []

    def check() -> None:
        checks.append(1)
        if len(checks) == 4:
            raise Cancelled

    model = TraceModel(cols, check=check)  # (the extent and labels: the slices are the step after it)
    with pytest.raises(Cancelled):
        model.build_slice_tables()  # (the loader's step "slices")
    assert len(checks) == 4 and not model.slices_ready  # cancelled: left unbuilt
    assert len(model.slices) > 0 and model.slices_ready  # (a later reader builds them)
    full = []
    TraceModel(read_fxt_bytes(trace_file.read_bytes()), check=lambda: full.append(1)).build_slice_tables()
    assert len(full) > 4  # between steps and batches


def test_cancel_detaches_the_load_at_once(qtbot, trace_file) -> None:
    win = MainWindow()
    qtbot.addWidget(win)
    loader = win.load_in_background(str(trace_file))
    assert win.progress.isVisibleTo(win)
    win.cancel_loads()
    # at once: no progress bar, no Cancel button, no load listed; the thread unwinds by itself
    assert not win.loaders and not win.progress.isVisibleTo(win) and not win.cancel_button.isVisibleTo(win)
    assert "cancelled" in win.statusBar().currentMessage()
    qtbot.waitUntil(lambda: loader.isFinished(), timeout=30000)
    qtbot.wait(20)
    assert win.tabs.count() == 0 and not win._stopping


def _progress_of_a_load(qtbot, trace_file, interval_s: float) -> list[float]:
    """The progress a loader of ``trace_file`` sends with updates at least ``interval_s`` apart."""
    loader = TraceLoader(str(trace_file))
    loader.PROGRESS_INTERVAL_S = interval_s
    seen: list[float] = []
    loader.progressed.connect(seen.append)
    with qtbot.waitSignal(loader.loaded, timeout=30000):
        loader.start()
    loader.wait()
    qtbot.wait(10)
    return seen


def test_loader_emits_its_first_progress_from_the_reader(qtbot, trace_file) -> None:
    seen = _progress_of_a_load(qtbot, trace_file, 0.0)  # (every block's)
    assert seen and seen[0] == 0.0 and len([f for f in seen if f < 0.08]) >= 2
    assert seen == sorted(seen) and seen[-1] == 1.0


def test_loader_sends_progress_at_most_so_often(qtbot, trace_file) -> None:
    """The reader calls back after every block; the window hears of it at most every PROGRESS_INTERVAL_S
    (each update repaints its progress bar on the UI thread), the start and the end always."""
    every = _progress_of_a_load(qtbot, trace_file, 0.0)
    assert len(every) > 10
    assert _progress_of_a_load(qtbot, trace_file, 3600.0) == [0.0, 1.0]


#: the start of the scripts below: an offscreen application with a main window loading argv[1]
_WINDOW_LOADING = (
    "import os, sys\n"
    "os.environ['QT_QPA_PLATFORM'] = 'offscreen'\n"
    "import shiboken6\n"
    "from fxscope.app.gui import application\n"
    "from fxscope.app.main_window import MainWindow\n"
    "app = application()\n"
    "win = MainWindow()\n"
    "win.show()\n"
    "loader = win.load_in_background(sys.argv[1])\n"
    "app.processEvents()\n"
)


def _run_window_script(lines: str, trace_file) -> str:
    """Run the window-loading script followed by ``lines`` in a fresh interpreter (a QThread destroyed while
    it runs aborts the process, which must not take the test run with it); returns its output, after
    checking it exited cleanly."""
    import subprocess
    import sys

    result = subprocess.run([sys.executable, "-c", _WINDOW_LOADING + lines, str(trace_file)], capture_output=True,
                            text=True, timeout=120)  # fmt: skip
    assert result.returncode == 0, result.stderr[-2000:]
    assert "Destroyed while thread" not in result.stderr
    assert "Traceback" not in result.stderr, result.stderr[-2000:]
    return result.stdout


def test_closing_the_window_during_a_load_ends_it_cleanly(trace_file) -> None:
    """A QThread destroyed while running aborts the process: closing the window cancels and waits."""
    assert "closed" in _run_window_script("win.close()\ndel win\nprint('closed')\n", trace_file)


def test_deleting_the_window_during_a_load_cancels_it_without_aborting(trace_file) -> None:
    """A window deleted without closing (its owner dropped it) must not take a running loader thread down
    with it (a QThread destroyed while running aborts the process): the load is cancelled, and its thread
    ends before the application does."""
    out = _run_window_script(
        "shiboken6.delete(win)\n"
        "print('deleted', loader.cancel_requested(), flush=True)\n"
        "loader.wait(60000)\n"
        "app.processEvents()\n"
        "print('ended', loader.isFinished(), flush=True)\n",
        trace_file,
    )
    assert "deleted True" in out and "ended True" in out, out


def test_prepare_checks_inside_its_big_steps(trace_file) -> None:
    """The pyramids check between levels (the compiled loops, which build every level in one pass: before
    each pass's chunk of lanes), flows between stages, the search index between its passes."""
    from fxscope.core.trace import compiled
    from fxscope.core.trace.lod import SlicePyramid
    from fxscope.core.trace.query import search_index

    cols = read_fxt(trace_file)
    calls: list[str] = []
    model = TraceModel(cols, check=lambda: calls.append("check"))
    n = len(calls)
    per_level = compiled.slice_kernels is None
    assert model.pyramid.levels and len(calls) >= n + (len(model.pyramid.levels) if per_level else 2)
    n = len(calls)
    assert len(model.flows) > 0
    assert len(calls) >= n + 4
    n = len(calls)
    search_index(model)
    assert len(calls) >= n + 3
    n = len(calls)
    assert len(model.counters) > 0 and len(model.async_spans) > 0
    assert len(calls) >= n + 6  # argument passes and stages of counters and async spans
    model.done_checking()
    n = len(calls)
    assert model.async_pyramid[0].levels
    assert len(calls) == n  # a finished load no longer checks
    assert isinstance(model.pyramid, SlicePyramid)
