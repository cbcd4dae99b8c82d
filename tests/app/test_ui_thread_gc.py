"""Cyclic garbage is collected on the UI thread's timer, never by the interpreter on a worker thread (Qt objects
deleted from another thread than their own crash the event loop); a worker that pauses the collection leaves
it as it found it."""

from __future__ import annotations

import gc
import threading

import pytest

from fxscope.app import ui_thread_gc


class _Cyclic:
    """An object in a reference cycle that records the thread that finalized it."""

    def __init__(self, seen: list) -> None:
        self.me = self
        self.seen = seen

    def __del__(self) -> None:
        self.seen.append(threading.get_ident())


@pytest.fixture
def fresh_collector(monkeypatch):
    """:func:`collect_on_ui_thread` as in a new process; the interpreter's collection restored after."""
    was_enabled = gc.isenabled()
    monkeypatch.setattr(ui_thread_gc, "_collector", None)
    gc.enable()
    yield
    if ui_thread_gc._collector is not None:
        ui_thread_gc._collector.timer.stop()
    if was_enabled:
        gc.enable()
    else:
        gc.disable()


def test_cycles_are_collected_on_the_ui_thread(qtbot, fresh_collector):
    ui_thread_gc.collect_on_ui_thread()
    assert not gc.isenabled()
    collector = ui_thread_gc._collector
    ui_thread_gc.collect_on_ui_thread()  # (once a process)
    assert ui_thread_gc._collector is collector
    seen: list[int] = []
    _Cyclic(seen)

    def churn() -> None:  # a worker allocating far past every generation's threshold
        junk = [[] for _ in range(200_000)]
        del junk

    worker = threading.Thread(target=churn)
    worker.start()
    worker.join()
    assert seen == []  # not collected by the worker, whatever it allocated
    keep = [[] for _ in range(2 * gc.get_threshold()[0])]  # (new objects past the first generation's threshold)
    qtbot.waitUntil(lambda: bool(seen), timeout=5000)  # (the timer's next second collects them)
    assert seen == [threading.get_ident()]
    del keep


def test_a_paused_collection_is_left_as_it_was(fresh_collector):
    with ui_thread_gc.collection_paused():
        assert not gc.isenabled()
    assert gc.isenabled()
    gc.disable()  # (as the UI thread's collector leaves it)
    with ui_thread_gc.collection_paused():
        assert not gc.isenabled()
    assert not gc.isenabled()
