"""computed_ahead: results in order, the next computed on a worker thread meanwhile (never more than one ahead),
a raise of the work or of ``check`` reaching the caller, and the caller's profile hook on the worker."""

from __future__ import annotations

import sys
import threading

import pytest

from fxscope.core.computed_ahead import computed_ahead


def test_results_in_order_one_ahead_on_another_thread() -> None:
    started: list[int] = []
    threads: set[int] = set()
    caller = threading.get_ident()

    def work(x: int) -> int:
        started.append(x)
        threads.add(threading.get_ident())
        return x * x

    got = []
    for y in computed_ahead(work, range(6), "test-ahead"):
        got.append(y)
        # while the caller holds result k, at most k + 1 has been started (one ahead, never more)
        assert len(started) <= len(got) + 1
    assert got == [x * x for x in range(6)]
    assert caller not in threads
    assert list(computed_ahead(work, [], "test-ahead")) == []


def test_a_raise_of_the_work_or_of_check_reaches_the_caller() -> None:
    def work(x: int) -> int:
        if x == 3:
            raise ValueError("bad block")
        return x

    got = []
    with pytest.raises(ValueError, match="bad block"):
        for y in computed_ahead(work, range(6), "test-ahead"):
            got.append(y)
    assert got == [0, 1, 2]

    class Cancelled(Exception):
        pass

    calls = [0]

    def check() -> None:
        calls[0] += 1
        if calls[0] == 3:
            raise Cancelled

    got = []
    with pytest.raises(Cancelled):
        for y in computed_ahead(lambda x: x, range(10), "test-ahead", check):
            got.append(y)
    assert got == [0, 1]


def test_the_worker_takes_the_callers_profile_hook() -> None:
    """(A window build that pauses while the UI draws, through its thread's profile hook, pauses on the worker
    too.)"""
    seen: set[int] = set()

    def hook(frame, event, arg) -> None:
        seen.add(threading.get_ident())

    def work(x: int) -> int:
        return abs(x)  # (a call the hook sees)

    workers: set[int] = set()

    def tracked(x: int) -> int:
        workers.add(threading.get_ident())
        return work(x)

    sys.setprofile(hook)
    try:
        assert list(computed_ahead(tracked, range(3), "test-ahead")) == [0, 1, 2]
    finally:
        sys.setprofile(None)
    assert workers and workers <= seen


def test_under_cprofile_the_work_runs() -> None:
    """cProfile's profiler is what ``sys.getprofile()`` returns under it, not a function ``sys.setprofile``
    takes: the worker then runs without a hook (it raised TypeError in the worker)."""
    import cProfile

    profiler = cProfile.Profile()
    profiler.enable()
    try:
        got = list(computed_ahead(abs, [-1, -2, 3], "test-ahead"))
    finally:
        profiler.disable()
    assert got == [1, 2, 3]


def test_two_workers_run_two_blocks_at_once_and_keep_the_order() -> None:
    """``workers=2``: two blocks computed at the same time (each waits at a barrier for the other: one worker
    alone would time out), the results still in order, at most two ahead of the caller; a raise still reaches
    the caller where its result would have come."""
    together = threading.Barrier(2, timeout=10)
    started: list[int] = []
    lock = threading.Lock()

    def work(x: int) -> int:
        with lock:
            started.append(x)
        if x < 2:
            together.wait()  # (blocks 0 and 1 at once: a BrokenBarrierError with one worker)
        return -x

    got = []
    for y in computed_ahead(work, range(9), "test-ahead", workers=2):
        got.append(y)
        assert len(started) <= len(got) + 2
    assert got == [-x for x in range(9)]

    def bad(x: int) -> int:
        if x == 4:
            raise ValueError("bad block")
        return x

    got = []
    with pytest.raises(ValueError, match="bad block"):
        for y in computed_ahead(bad, range(9), "test-ahead", workers=2):
            got.append(y)
    assert got == [0, 1, 2, 3]
