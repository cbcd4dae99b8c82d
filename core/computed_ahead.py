"""Results of a function over a sequence of inputs, in order, the next one computed on a worker thread while
the caller uses this one: a two-stage pipeline for builds whose per-block work splits into a part that only
reads (the worker's: compiled loops and numpy calls that release the interpreter's lock) and a part that must
stay on one thread (the caller's). At most one result is computed ahead, so the temporaries held are two
blocks' worth, never a multiple of the whole.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from typing import TypeVar

_In = TypeVar("_In")
_Out = TypeVar("_Out")


def computed_ahead(work: Callable[[_In], _Out], inputs: Iterable[_In], name: str,
                   check: Callable[[], None] | None = None) -> Iterator[_Out]:  # fmt: skip
    """``work(x)`` for each of ``inputs``, in order, the next computed on a worker thread (named ``name``)
    while the caller uses this one. ``check()``, when given, is called before each result is handed over (a
    Cancel raises from it: the result computed ahead is dropped). The worker takes the calling thread's
    profile hook (a window build that pauses while the UI draws pauses there too); an exception of ``work``
    is raised to the caller where its result would have come."""
    hook = sys.getprofile()
    if not callable(hook):  # (a C profiler's, cProfile's: not a function sys.setprofile takes)
        hook = None

    def run(x: _In) -> _Out:
        if hook is None:
            return work(x)
        sys.setprofile(hook)  # (this worker thread's own)
        try:
            return work(x)
        finally:
            sys.setprofile(None)

    it = iter(inputs)
    with ThreadPoolExecutor(1, thread_name_prefix=name) as pool:
        ahead: Future | None = None
        try:
            for x in it:
                ahead = pool.submit(run, x)
                break
            while ahead is not None:
                if check is not None:
                    check()
                result = ahead.result()
                ahead = None
                for x in it:
                    ahead = pool.submit(run, x)
                    break
                yield result
                del result
        finally:
            if ahead is not None:
                ahead.cancel()
