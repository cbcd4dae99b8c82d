"""Results of a function over a sequence of inputs, in order, the next one computed on a worker thread while
the caller uses this one: a two-stage pipeline for builds whose per-block work splits into a part that only
reads (the worker's: compiled loops and numpy calls that release the interpreter's lock) and a part that must
stay on one thread (the caller's). At most one result is computed ahead (``workers`` of them, for a build
whose work is nearly all the readers'), so the temporaries held are two blocks' worth (``workers`` + 1),
never a multiple of the whole.
"""

from __future__ import annotations

import itertools
import sys
from collections import deque
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from typing import TypeVar

_In = TypeVar("_In")
_Out = TypeVar("_Out")


def computed_ahead(work: Callable[[_In], _Out], inputs: Iterable[_In], name: str,
                   check: Callable[[], None] | None = None, workers: int = 1) -> Iterator[_Out]:  # fmt: skip
    """``work(x)`` for each of ``inputs``, in order, the next ``workers`` computed on as many worker threads
    (named ``name``) while the caller uses this one. ``check()``, when given, is called before each result is
    handed over (a Cancel raises from it: the results computed ahead are dropped). The workers take the
    calling thread's profile hook (a window build that pauses while the UI draws pauses there too); an
    exception of ``work`` is raised to the caller where its result would have come. With ``workers`` > 1 the
    work is the whole of each block (the caller's part a little): the temporaries held are ``workers`` + 1
    blocks' worth."""
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
    workers = max(1, workers)
    with ThreadPoolExecutor(workers, thread_name_prefix=name) as pool:
        ahead: deque[Future] = deque(pool.submit(run, x) for x in itertools.islice(it, workers))
        try:
            while ahead:
                if check is not None:
                    check()
                result = ahead.popleft().result()
                for x in itertools.islice(it, 1):
                    ahead.append(pool.submit(run, x))
                yield result
                del result
        finally:
            for future in ahead:
                future.cancel()
