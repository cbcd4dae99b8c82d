"""Shared builders for the trace-model tests: hand-written event lists to reader columns."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path

import pytest

from fxscope.formats.fxt.columns import FxtColumns
from fxscope.formats.fxt.reader import read_fxt_bytes
from fxscope.formats.fxt.writer import FxtWriter
from tests.compiled_loops import choose_loops


def build_columns(events: Sequence[tuple], setup: Callable[[FxtWriter], None] | None = None) -> FxtColumns:
    """Columns of a trace holding ``events``: ``(kind, ts, thread, name, data=None, args=(), category="cat")``.

    ``thread`` is an inline ``(pid, tid)``; ``setup`` may write records (objects, strings) first.
    """
    w = FxtWriter()
    w.initialization(1_000_000_000)
    if setup is not None:
        setup(w)
    for ev in events:
        kind, ts, thread, name, *rest = ev
        data = rest[0] if len(rest) > 0 else None
        args = rest[1] if len(rest) > 1 else ()
        category = rest[2] if len(rest) > 2 else "cat"
        w.event(kind, ts, thread, category, name, args, data=data)
    return read_fxt_bytes(w.getvalue())


@pytest.fixture
def fxt() -> Callable[..., FxtColumns]:
    return build_columns


@pytest.fixture(scope="session")
def fxt_testdata(testdata: Path) -> Path:
    """``tests/data/fxt`` (third-party traces and their MANIFEST)."""
    return testdata / "fxt"


@pytest.fixture(params=["compiled", "numpy"])
def slice_loops(request, monkeypatch) -> str:
    """Run the test once with the model build's compiled loops (core/trace/slice_kernels.c) and once with
    the numpy paths an install without a C compiler takes."""
    from fxscope.core.trace import compiled

    return choose_loops(request.param, monkeypatch, compiled, "slice_kernels")


@pytest.fixture(params=["compiled", "numpy"])
def span_paths(request, monkeypatch) -> str:
    """Run the test once with the span kernels (core/trace/span_kernels.c: flows, async spans) and once
    with the numpy paths an install without a C compiler takes."""
    from fxscope.core.trace import compiled

    return choose_loops(request.param, monkeypatch, compiled, "span_kernels")
