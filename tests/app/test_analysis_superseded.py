"""The analysis worker (pytest-qt): a newer request stops the running one at its next step, and only the
newer result is delivered. The steps are slowed (a sleep in the names' step) so that the first job is still
running when the second is asked for; no timing is asserted."""

from __future__ import annotations

import time

import fxscope.app.analysis.worker as worker_module
from fxscope.app.analysis.worker import AnalysisRunner
from fxscope.core.analysis.selection import Area
from fxscope.core.analysis.stats import name_stats
from fxscope.core.trace.model import TraceModel
from fxscope.formats.fxt.reader import read_fxt_bytes
from tests.core.analysis.nested_trace import nested_trace


def test_a_newer_request_stops_the_running_analysis(qtbot, monkeypatch) -> None:
    model = TraceModel(read_fxt_bytes(nested_trace(11)))
    real = worker_module.area_names

    def slow(model, ar):
        time.sleep(0.5)
        return real(model, ar)

    monkeypatch.setattr(worker_module, "area_names", slow)
    runner = AnalysisRunner(model)
    results = []
    runner.finished.connect(results.append)
    runner.request(Area())
    first = runner.last_job
    qtbot.waitUntil(lambda: first.steps == ["rows"], timeout=10_000)  # (now in the slowed names' step)
    half = Area(model.start_ns, (model.start_ns + model.end_ns) // 2)
    runner.request(half)
    second = runner.last_job
    qtbot.waitUntil(lambda: len(results) == 1, timeout=30_000)
    # the result goes out with its tree; the rows' nodes (for a click on a frame) are made after it
    qtbot.waitUntil(lambda: second.steps[-1:] == ["nodes"], timeout=30_000)
    assert second.steps == ["rows", "names", "stats", "tree", "nodes"]
    assert not callable(results[0].tree.node_of_made)
    assert first.steps == ["rows", "names"]  # stopped after the step it was in: no statistics, no tree
    assert results[0].area == half
    assert results[0].stats.records() == name_stats(model, half).records()
    qtbot.wait(100)
    assert len(results) == 1
