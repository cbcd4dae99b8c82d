"""Partial and corrupt traces in the window: the background loader opens them (a tab, warnings in the Info
tab), and the offscreen screenshot draws them; no exception other than the reader's FormatError."""

from __future__ import annotations

import random
from pathlib import Path

from PySide6.QtGui import QImage

from fxscope.app.main_window import MainWindow, TraceTab
from fxscope.core.trace.model import TraceModel
from fxscope.core.trace.prepare import prepare_model
from fxscope.formats.errors import FormatError
from fxscope.formats.fxt.reader import read_fxt_bytes
from fxscope.resources import DEMO_TRACE


def test_the_80_byte_partial_trace_opens_in_the_window(qtbot, tmp_path: Path, partial_80: bytes) -> None:
    path = tmp_path / "partial.fxt"
    path.write_bytes(partial_80)
    win = MainWindow()
    qtbot.addWidget(win)
    failures: list[str] = []
    loader = win.load_in_background(str(path))
    loader.failed.connect(failures.append)
    qtbot.waitUntil(lambda: win.tabs.count() == 1 or bool(failures), timeout=20000)
    assert not failures
    tab = win.tabs.widget(0)
    assert isinstance(tab, TraceTab) and tab.info.warning_count > 0


def test_the_80_byte_partial_trace_screenshots(qapp, tmp_path: Path, partial_80: bytes) -> None:
    from fxscope.app.cli import main

    path = tmp_path / "partial.fxt"
    path.write_bytes(partial_80)
    out = tmp_path / "partial.png"
    assert main(["screenshot", str(path), "-o", str(out), "--size", "800x500"]) == 0
    assert QImage(str(out)).width() == 800


def test_mutated_traces_draw_offscreen(qtbot, trace_tab, mutate_fxt) -> None:
    """Truncated and mutated copies of the demo, drawn whole and zoomed (the screenshot's path: a tab, grabbed)."""
    rng = random.Random(5)
    data = DEMO_TRACE.read_bytes()
    cases = [data[: rng.randrange(8, len(data))] for _ in range(3)] + [mutate_fxt(data, rng) for _ in range(5)]
    drawn = 0
    for case in cases:
        try:
            cols = read_fxt_bytes(case)
        except FormatError:
            continue
        model = TraceModel(cols)
        prepare_model(model)
        tab = trace_tab(model, 900, 600)
        assert not tab.grab().toImage().isNull()
        span = max(model.end_ns - model.start_ns, 1)
        tab.timeline.set_range_ns(model.start_ns + span // 3, model.start_ns + span // 3 + max(span // 1000, 1))
        assert not tab.grab().toImage().isNull()
        tab.close()
        drawn += 1
    assert drawn >= 6
