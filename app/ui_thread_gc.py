"""Python's cyclic garbage collected on the UI thread only.

The interpreter runs a cyclic collection on whichever thread happens to allocate past its threshold: in this
application also the loader's and the model build's worker threads. A cycle holding a Qt object (a closed tab's
widgets, a finished worker's signals) then has its C++ object deleted from that thread while the UI thread
may be using it or have events queued for it: undefined behaviour in Qt, seen as a rare segmentation fault in
the UI thread's event processing. pyqtgraph's :class:`~pyqtgraph.util.garbage_collector.GarbageCollector`
turns the automatic collection off and collects on a timer of the UI thread instead (each generation when its
count passes the interpreter's own threshold, as the automatic collection would).
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager

#: the collector of the running application (one a process: it turns the interpreter's collection off)
_collector = None


def collect_on_ui_thread() -> None:
    """Collect cyclic garbage on the calling thread's (the UI thread's) timer from now on, every second."""
    global _collector
    if _collector is None:
        from fxscope.app.pyqtgraph_import import import_pyqtgraph

        import_pyqtgraph()  # (the package first, through the one way in)
        from pyqtgraph.util.garbage_collector import GarbageCollector

        _collector = GarbageCollector(interval=1.0)


@contextmanager
def collection_paused() -> Iterator[None]:
    """No automatic collection while the block runs (a worker making many objects without cycles), then the
    collection as it was: on again unless :func:`collect_on_ui_thread` had turned it off."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()
