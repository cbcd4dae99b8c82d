"""The model's search index is built once even when threads ask for it together (the timeline's background
build and a search), gives what a synchronous build gives, and a cancelled build leaves it unbuilt."""

from __future__ import annotations

import threading
import time

import numpy as np
import pytest

import fxscope.core.trace.model as model_module
from fxscope.core.synthetic_trace import generate_trace
from fxscope.core.trace.model import TraceModel
from fxscope.core.trace.query import search
from fxscope.formats.fxt.reader import read_fxt_bytes


@pytest.fixture(scope="module")
def trace_bytes() -> bytes:
    return generate_trace(20_000, seed=11)


def _same_index(a, b) -> bool:
    same = all(np.array_equal(getattr(a, k), getattr(b, k)) for k in ("row_start", "arg_ids"))
    return same and all(len(getattr(a, k)) == len(getattr(b, k)) and all(
        np.array_equal(x, y) for x, y in zip(getattr(a, k), getattr(b, k), strict=True)) for k in ("sid", "row"))


def test_concurrent_callers_share_one_build(trace_bytes, monkeypatch) -> None:
    real = model_module.build_arg_string_index
    builds: list[int] = []

    def counted(*args, **kwargs):
        builds.append(threading.get_ident())
        time.sleep(0.2)  # the other callers arrive while this build runs
        return real(*args, **kwargs)

    monkeypatch.setattr(model_module, "build_arg_string_index", counted)
    model = TraceModel(read_fxt_bytes(trace_bytes))
    got: list[object] = []
    start = threading.Barrier(4)

    def ask(how: str) -> None:
        start.wait()
        got.append(model.build_search_index(lambda: None) if how == "build" else model.search_index)

    threads = [threading.Thread(target=ask, args=(how,)) for how in ("build", "build", "property", "property")]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    assert len(builds) == 1 and len(got) == 4
    assert all(index is got[0] for index in got)  # one object, not equal copies
    assert model.search_index_ready and model.search_index is got[0]
    monkeypatch.setattr(model_module, "build_arg_string_index", real)
    sync = TraceModel(read_fxt_bytes(trace_bytes))
    assert _same_index(got[0], sync.search_index)
    for text in ("a", "frame", "x"):
        assert np.array_equal(search(model, text), search(sync, text))


def test_a_cancelled_build_leaves_the_index_unbuilt_and_a_later_one_builds_it(trace_bytes) -> None:
    model = TraceModel(read_fxt_bytes(trace_bytes))

    class Stop(Exception):
        pass

    def cancel() -> None:
        raise Stop

    with pytest.raises(Stop):
        model.build_search_index(cancel)
    assert not model.search_index_ready and "search_index" not in vars(model)
    index = model.build_search_index(lambda: None)
    assert model.search_index_ready and model.search_index is index
    assert _same_index(index, TraceModel(read_fxt_bytes(trace_bytes)).search_index)
