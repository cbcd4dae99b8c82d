"""Whole-trace queries of a large trace (a search, the analysis panel's rows, statistics and flame graph) run
with numpy's advice of huge pages, as the trace's read and build did.

Why: after a load the process allocates on small pages (:func:`fxscope.core.freed_memory.use_small_pages`:
what the window holds stays what it uses) and has given the build's free memory back, so the first queries of
a large trace first-touch their masks and gathers over every slice or event (tens of MB each) a 4 KB page at a
time; on huge pages a fault brings 2 MB (:func:`fxscope.core.freed_memory.huge_pages_for_query` has the
measurements). "Large" is the load's own criterion, the trace's bytes
(:data:`fxscope.core.trace.reading.HUGE_PAGES_FROM`), so a query runs on the pages its trace was read on.

Not the argument index's build that the window runs in the background (``TraceModel.build_search_index``):
its page faults are the mapped file's pages, and on huge pages it took the same time (three alternating pairs
at 100M events); the index it keeps stays on small pages. A search that builds it on its way runs whole on
the search's pages.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any, TypeVar

from fxscope.core.freed_memory import huge_pages_for_query
from fxscope.core.trace import reading

T = TypeVar("T")


def trace_bytes(model: Any) -> int:
    """The bytes of ``model``'s trace as read (the decompressed trace of a compressed one: the file its
    columns map); 0 for columns not read from a file."""
    cols = getattr(model, "cols", None)
    mapped = getattr(cols, "mapped_file", None)
    return mapped.opened.size if mapped is not None else 0


def large(model: Any) -> bool:
    """Whether ``model``'s trace was read on huge pages (:data:`~fxscope.core.trace.reading.HUGE_PAGES_FROM`)."""
    return trace_bytes(model) >= reading.HUGE_PAGES_FROM


def whole_trace_query(fn: Callable[..., T]) -> Callable[..., T]:
    """Decorate a query whose first argument is the model: it runs within
    :func:`~fxscope.core.freed_memory.huge_pages_for_query` of that model."""

    @functools.wraps(fn)
    def run(model: Any, *args: Any, **kwargs: Any) -> T:
        with huge_pages_for_query(large(model)):
            return fn(model, *args, **kwargs)

    return run


def later_query(model: Any, make: Callable[[], T]) -> Callable[[], T]:
    """``make`` (a part of a query made when first asked for, as the flame graph's node of each slice) as a
    function that runs it as :func:`whole_trace_query` runs a query of ``model``."""
    is_large = large(model)

    def run() -> T:
        with huge_pages_for_query(is_large):
            return make()

    return run
