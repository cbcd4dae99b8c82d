"""Jobs in the thread pool outlive the panels that asked for them without harm: a job finishing after its
panel was destroyed delivers nothing and raises nothing in its thread."""

from __future__ import annotations

import sys
import threading

from PySide6.QtCore import QCoreApplication, QEvent, QThreadPool
from PySide6.QtWidgets import QWidget

from fxscope.app.analysis.worker import run_in_pool


def test_a_job_whose_panel_is_destroyed_delivers_nothing(qtbot, monkeypatch) -> None:
    errors: list = []
    monkeypatch.setattr(sys, "excepthook", lambda *exc: errors.append(exc[1]))
    panel = QWidget()
    release = threading.Event()
    delivered: list = []

    def job() -> int:
        release.wait(30)
        return 42

    run_in_pool(job, delivered.append, delivered.append, panel)
    panel.deleteLater()  # the tab closed while the job runs
    QCoreApplication.sendPostedEvents(None, QEvent.Type.DeferredDelete)
    del panel
    release.set()
    assert QThreadPool.globalInstance().waitForDone(30_000)
    qtbot.wait(50)  # anything queued is delivered now
    # before: the job's signals were a child of the panel, deleted under the emitting thread
    # ("Signal source has been deleted" in the pool thread, or a crash when the two met)
    assert delivered == [] and errors == []


def test_a_job_delivers_to_a_living_panel(qtbot) -> None:
    panel = QWidget()
    qtbot.addWidget(panel)
    delivered: list = []
    run_in_pool(lambda: 42, delivered.append, delivered.append, panel)
    qtbot.waitUntil(lambda: delivered == [42], timeout=30_000)
    run_in_pool(lambda: 1 / 0, delivered.append, delivered.append, panel)
    qtbot.waitUntil(lambda: len(delivered) == 2, timeout=30_000)
    assert "ZeroDivisionError" in delivered[1]
