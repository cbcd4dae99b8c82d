"""Build every table, index and pyramid the views of a trace read, before its window opens.

The loader runs this off the UI thread, so that opening a tab, the first search keystroke and the Info
tab do not wait for numpy work on the UI thread. It lives outside the model: it names the tables of the
views (search index, statistics) that the model itself has no reason to know the order of.
"""

from __future__ import annotations

from collections.abc import Callable

from fxscope.core.trace.model import TraceModel


def prepare_model(model: TraceModel, progress: Callable[[float], None] | None = None) -> None:
    """Build ``model``'s tables; ``progress(fraction)`` after each (it may raise to cancel the load)."""
    steps = [
        lambda: model.density(1000), lambda: model.pyramid, lambda: model.async_pyramid, lambda: model.counters,
        lambda: model.sched, lambda: model.sched_pyramid("cpu"), lambda: model.sched_pyramid("state"),
        lambda: model.instants, lambda: model.flows, lambda: model.objects, lambda: model.logs,
        lambda: model.search_index, lambda: model.stats,
    ]  # fmt: skip
    for i, step in enumerate(steps):
        step()
        if progress is not None:
            progress((i + 1) / len(steps))
