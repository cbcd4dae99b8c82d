"""Pausing Python's cyclic garbage collector around bulk builds of acyclic objects.

A large DWARF model or a batch of lookups allocates millions of tuples, lists and small objects; each
700 allocations start a collection and the older generations get rescanned again and again as they grow,
which costs as much as the work itself. None of these objects form cycles, so reference counting frees
them all; the collector is switched back on (if it was on) when the build ends.
"""

from __future__ import annotations

import contextlib
import gc
from collections.abc import Iterator


@contextlib.contextmanager
def paused_gc() -> Iterator[None]:
    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was:
            gc.enable()
