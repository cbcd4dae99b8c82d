"""The model's tables are built once even when two threads ask at the same time (the window's background
track build and a search thread): the second waits for the first build and gets the same table."""

from __future__ import annotations

import threading
import time

import pytest

from fxscope.core.synthetic_trace import generate_trace
from fxscope.core.trace import counters as counters_module
from fxscope.core.trace.model import TraceModel
from fxscope.formats.fxt.reader import read_fxt_bytes


@pytest.fixture
def model() -> TraceModel:
    return TraceModel(read_fxt_bytes(generate_trace(5_000, seed=2)))


def test_two_threads_asking_for_the_counters_build_them_once(model, monkeypatch):
    real = counters_module.build_counters
    calls = []

    def slow_build(*args, **kwargs):
        calls.append(threading.get_ident())
        time.sleep(0.2)  # the other thread asks meanwhile
        return real(*args, **kwargs)

    monkeypatch.setattr(counters_module, "build_counters", slow_build)
    got = []
    threads = [threading.Thread(target=lambda: got.append(model.counters)) for _ in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(calls) == 1
    assert got[0] is got[1] is model.counters


def test_two_threads_asking_for_a_parametrised_table_build_it_once(model, monkeypatch):
    calls = []
    real = model._density

    def slow_density(bins):
        calls.append(bins)
        time.sleep(0.2)
        return real(bins)

    monkeypatch.setattr(model, "_density", slow_density)
    got = []
    threads = [threading.Thread(target=lambda: got.append(model.density(500))) for _ in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert calls == [500]
    assert got[0] is got[1]


def test_a_failed_build_leaves_the_table_unbuilt(model, monkeypatch):
    real = counters_module.build_counters

    def failing(*args, **kwargs):
        raise RuntimeError("cancelled")

    monkeypatch.setattr(counters_module, "build_counters", failing)
    with pytest.raises(RuntimeError):
        _ = model.counters
    monkeypatch.setattr(counters_module, "build_counters", real)
    assert len(model.counters.series) > 0
