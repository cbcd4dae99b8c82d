"""Whole-trace queries of a large trace run with numpy's advice of huge pages (core/trace/query_pages.py,
freed_memory.huge_pages_for_query): on while a query runs, counted across nested and concurrent queries and
a load's own choice, off when the last one ends; the queries ask for it by their trace's size."""

from __future__ import annotations

import contextlib
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from fxscope.core import freed_memory
from fxscope.core.trace import query_pages, reading

pytestmark = pytest.mark.skipif(freed_memory.NUMPY_MULTIARRAY is None or not sys.platform.startswith("linux"),
                                reason="numpy advises huge pages on Linux only")  # fmt: skip

DEMO = Path(freed_memory.__file__).resolve().parents[1] / "resources" / "demo" / "demo.fxt"


def _advice() -> bool:
    return bool(freed_memory.NUMPY_MULTIARRAY._get_madvise_hugepage())


@pytest.fixture
def small_pages(monkeypatch):
    """The process after a load (small pages), its advice and the module's counts restored afterwards."""
    monkeypatch.delenv(freed_memory.HUGE_PAGES_ENV, raising=False)
    was = _advice()
    freed_memory.use_small_pages()
    assert not _advice()
    yield
    assert freed_memory._query_holders == 0
    freed_memory._numpy_advice(was)
    freed_memory._load_huge = False


def test_on_during_a_large_query_off_after(small_pages):
    with freed_memory.huge_pages_for_query(True):
        assert _advice()
        with freed_memory.huge_pages_for_query(True):  # (a query inside another: area_rows in top_down)
            assert _advice()
        assert _advice()  # (the outer one still runs)
    assert not _advice()
    with freed_memory.huge_pages_for_query(False):  # a small trace's query: small pages
        assert not _advice()


def test_off_after_a_query_that_raised(small_pages):
    with contextlib.suppress(KeyError), freed_memory.huge_pages_for_query(True):
        raise KeyError("cancelled")
    assert not _advice() and freed_memory._query_holders == 0


def test_concurrent_queries_keep_it_on_until_the_last_ends(small_pages):
    inside, leave = threading.Barrier(2), threading.Event()
    seen: list[bool] = []

    def query() -> None:
        with freed_memory.huge_pages_for_query(True):
            inside.wait(10)
            leave.wait(10)
        seen.append(_advice())

    t = threading.Thread(target=query)
    t.start()
    with freed_memory.huge_pages_for_query(True):
        inside.wait(10)
    assert _advice()  # (the other thread's query runs on)
    leave.set()
    t.join(10)
    assert seen == [False] and not _advice()


def test_a_load_during_a_query_keeps_its_huge_pages(small_pages):
    """A load started in another tab while a query runs: the query's end leaves the load's advice on, and
    the load's end turns it off."""
    with freed_memory.huge_pages_for_query(True):
        assert freed_memory.use_huge_pages()
    assert _advice()
    freed_memory.use_small_pages()
    assert not _advice()


def test_a_load_ending_during_a_query_leaves_it_on_until_the_query_ends(small_pages):
    freed_memory.use_huge_pages()
    with freed_memory.huge_pages_for_query(True):
        freed_memory.use_small_pages()
        assert _advice()
    assert not _advice()


@pytest.mark.parametrize("value", ["0", "1"])
def test_the_environment_decides(small_pages, monkeypatch, value):
    monkeypatch.setenv(freed_memory.HUGE_PAGES_ENV, value)
    with freed_memory.huge_pages_for_query(True):
        assert not _advice()  # (unchanged: "0" small pages throughout; "1" leaves numpy's setting alone)
    assert freed_memory._query_holders == 0


#: after a large trace's load (small pages from then on), a 64 MB array written inside a query of it and one
#: written after: their huge pages (kB of AnonHugePages gained), where the kernel gives advised memory huge pages
_REAL_PAGES = r"""
import sys
import numpy as np
from fxscope.core import freed_memory
from fxscope.core.trace import reading
from fxscope.core.trace.model import TraceModel
from fxscope.core.trace.prepare import prepare_model
from fxscope.core.trace.reading import read_trace
from fxscope.core.trace.query_pages import whole_trace_query

def huge_kb():
    with open("/proc/self/smaps_rollup") as f:
        return next(int(line.split()[1]) for line in f if line.startswith("AnonHugePages"))

@whole_trace_query
def query(model):
    base = huge_kb()
    array = np.empty(64 << 20, np.uint8)
    array[:] = 1
    return huge_kb() - base

def after():
    base = huge_kb()
    array = np.empty(64 << 20, np.uint8)
    array[:] = 1
    return huge_kb() - base

reading.HUGE_PAGES_FROM = int(sys.argv[2])
model = TraceModel(read_trace(sys.argv[1]))
prepare_model(model)
print(query(model), after())
"""


def _thp_madvise() -> bool:
    try:
        return "[madvise]" in Path("/sys/kernel/mm/transparent_hugepage/enabled").read_text()
    except OSError:
        return False


@pytest.mark.skipif(not _thp_madvise(), reason="THP not in 'madvise' mode")
@pytest.mark.parametrize("large", [True, False])
def test_a_large_traces_query_gets_huge_pages(large):
    import os

    env = {k: v for k, v in os.environ.items() if k != freed_memory.HUGE_PAGES_ENV}
    huge_from = 0 if large else DEMO.stat().st_size + 1
    out = subprocess.run([sys.executable, "-c", _REAL_PAGES, str(DEMO), str(huge_from)], capture_output=True,
                         text=True, timeout=120, env=env)  # fmt: skip
    assert out.returncode == 0, out.stderr
    in_query, after = (int(v) for v in out.stdout.split())
    assert after == 0
    assert (in_query > 0) == large, (in_query, after)


def _demo_model():
    from fxscope.core.trace.model import TraceModel
    from fxscope.core.trace.prepare import prepare_model
    from fxscope.core.trace.reading import read_trace

    model = TraceModel(read_trace(DEMO))
    prepare_model(model)
    return model


def test_large_is_the_loads_criterion(monkeypatch):
    model, size = _demo_model(), DEMO.stat().st_size
    assert query_pages.trace_bytes(model) == size
    monkeypatch.setattr(reading, "HUGE_PAGES_FROM", size)
    assert query_pages.large(model)
    monkeypatch.setattr(reading, "HUGE_PAGES_FROM", size + 1)
    assert not query_pages.large(model)
    assert query_pages.trace_bytes(object()) == 0


@pytest.mark.parametrize("at_size", [True, False])
def test_each_whole_trace_query_asks_by_its_traces_size(monkeypatch, small_pages, at_size):
    """The search, the analysis panel's steps and the flame graph's per-slice nodes made later: each runs with
    the advice on for a trace at the size, and not below it; the argument index's background build does not
    (measured no faster on huge pages: the index it keeps stays on small pages)."""
    from fxscope.core.analysis.call_tree import top_down
    from fxscope.core.analysis.selection import Area, area_names, area_rows
    from fxscope.core.analysis.stats import name_stats
    from fxscope.core.trace.search_hits import search_all

    seen: list[bool] = []
    real = freed_memory.huge_pages_for_query

    @contextlib.contextmanager
    def spy(large: bool):
        with real(large):
            seen.append(_advice())
            yield

    monkeypatch.setattr(query_pages, "huge_pages_for_query", spy)
    monkeypatch.setattr(reading, "HUGE_PAGES_FROM", 0 if at_size else DEMO.stat().st_size + 1)
    model = _demo_model()
    calls = {
        "search": lambda: search_all(model, "a", arguments=False),
        "rows": lambda: area_rows(model, Area()),
        "names": lambda: area_names(model, area_rows(model, Area())),
        "stats": lambda: name_stats(model),
        "tree": lambda: top_down(model),
    }
    for name, call in calls.items():
        seen.clear()
        call()
        assert seen and all(v == at_size for v in seen), (name, seen)
        assert not _advice()  # (small pages again once it ended)
    seen.clear()
    model.build_search_index(lambda: None)
    assert seen == [] and not _advice()
    seen.clear()
    search_all(model, "a")  # (the index built: the search with it)
    assert seen == [at_size]
    tree = top_down(model)
    assert callable(tree.node_of_made)  # (the compiled tree: each slice's node made when first asked for)
    seen.clear()
    assert len(tree.node_of) == len(tree.rows)
    assert seen == [at_size]
    assert not _advice()
