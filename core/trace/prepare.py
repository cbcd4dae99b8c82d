"""Build every table and pyramid the window's views read when its tab opens, before it opens.

The loader runs this off the UI thread, so that opening a tab and the Info tab do not wait for numpy work
on the UI thread. It lives outside the model: it names the tables of the views (statistics) that the
model itself has no reason to know the order of. The search index is not among them: it is built on the
first search (:func:`fxscope.core.trace.query.search`), so that a load's peak memory does not hold its
temporaries (~25 bytes an event at 10M events) on top of the model, for a search the user may never make.
"""

from __future__ import annotations

from collections.abc import Callable

from fxscope.core.freed_memory import return_freed_memory
from fxscope.core.trace.instants import SCOPE_GLOBAL, SCOPE_PROCESS
from fxscope.core.trace.model import TraceModel

#: (name, build) of each table the views read, in the order the loader builds them (the names are what
#: tests/bench/bench_scale.py prints each step's time and memory under). The load's peak memory is what the
#: tables built so far hold plus the temporaries of the step building: the steps with the largest
#: temporaries (flows, async spans, counters: tens of bytes an event of their kind) come first, while the
#: model holds least.
PREPARE_STEPS: list[tuple[str, Callable[[TraceModel], object]]] = [
    ("flows", lambda m: m.flows),
    ("async_pyramid", lambda m: m.async_pyramid),
    ("counters", lambda m: m.counters),
    ("pyramid", lambda m: m.pyramid),
    ("sched", lambda m: m.sched),
    ("sched_pyramid_cpu", lambda m: m.sched_pyramid("cpu")),
    ("sched_pyramid_state", lambda m: m.sched_pyramid("state")),
    ("instants", lambda m: [m.instants.scoped(scope) for scope in (SCOPE_PROCESS, SCOPE_GLOBAL)]),
    ("density", lambda m: m.density(1000)),
    ("objects", lambda m: m.objects),
    ("logs", lambda m: m.logs),
    ("stats", lambda m: m.stats),
]


def prepare_model(model: TraceModel, progress: Callable[[float], None] | None = None) -> None:
    """Build ``model``'s tables; ``progress(fraction)`` after each (it may raise to cancel the load). The
    building's freed temporaries are then given back to the system (:mod:`fxscope.core.freed_memory`)."""
    for i, (_name, build) in enumerate(PREPARE_STEPS):
        build(model)
        if progress is not None:
            progress((i + 1) / len(PREPARE_STEPS))
    return_freed_memory()
