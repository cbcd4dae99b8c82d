"""The build-step scheduler (:mod:`fxscope.core.concurrent_steps`): steps run two at once, after what they
depend on, never beside a step they are kept apart from; callbacks on the calling thread; failures and
cancels wait for the steps running, then raise; the workers take the caller's profile hook and a lower
priority when asked."""

from __future__ import annotations

import os
import sys
import threading
import time

import pytest

from fxscope.core.concurrent_steps import Step, StepClock, lower_thread_priority, run_steps

#: seconds a test waits for another thread at most (it fails rather than hangs)
WAIT_S = 10.0


def test_independent_steps_run_at_the_same_time() -> None:
    """Each of two steps waits until the other has started: they finish only when run side by side."""
    a_started, b_started = threading.Event(), threading.Event()

    def step(mine: threading.Event, other: threading.Event) -> None:
        mine.set()
        assert other.wait(WAIT_S), "the other step did not run at the same time"

    clock = StepClock()
    run_steps([Step("a", lambda: step(a_started, b_started)), Step("b", lambda: step(b_started, a_started))],
              clock=clock)  # fmt: skip
    assert set(clock.seconds) == {"a", "b"} and clock.wall_s >= max(clock.seconds.values())
    assert clock.running == frozenset()


@pytest.mark.parametrize("workers", [1, 2])
def test_the_clock_says_when_each_step_ended(workers: int) -> None:
    """A step run after another ends after it, at least its own time later; each ends within the run."""
    clock = StepClock()
    run_steps([Step("a", lambda: time.sleep(0.02)), Step("b", lambda: time.sleep(0.03), frozenset({"a"}))],
              workers=workers, clock=clock)  # fmt: skip
    ended = clock.ended_s
    assert set(ended) == {"a", "b"}
    assert ended["a"] >= clock.seconds["a"] and ended["b"] >= ended["a"] + clock.seconds["b"]
    assert ended["b"] <= clock.wall_s


def _recording_steps(spec: dict[str, tuple[frozenset[str], frozenset[str]]], log: list, lock: threading.Lock,
                     seconds: float = 0.01) -> list[Step]:  # fmt: skip
    """Steps named as ``spec``'s keys (``after``, ``apart``) that log ("start"/"end", name) and sleep."""

    def body(name: str) -> None:
        with lock:
            log.append(("start", name))
        time.sleep(seconds)
        with lock:
            log.append(("end", name))

    return [Step(name, lambda name=name: body(name), after, apart) for name, (after, apart) in spec.items()]


def _running_sets(log: list) -> list[set[str]]:
    running: set[str] = set()
    seen = []
    for what, name in log:
        (running.add if what == "start" else running.discard)(name)
        seen.append(set(running))
    return seen


@pytest.mark.parametrize("workers", [1, 2])
def test_dependencies_and_apart_steps_are_respected(workers: int) -> None:
    none = frozenset()
    spec = {
        "big1": (none, frozenset({"big2", "big3"})),
        "big2": (none, frozenset({"big3"})),
        "big3": (none, none),
        "small1": (none, none),
        "after_small1": (frozenset({"small1"}), none),
        "last": (frozenset({"big1", "big2", "big3", "small1", "after_small1"}), none),
    }
    for _ in range(5):
        log: list = []
        done: list[str] = []
        run_steps(_recording_steps(spec, log, threading.Lock()), done=done.append, workers=workers)
        assert sorted(done) == sorted(spec)
        ends = {name: i for i, (what, name) in enumerate(log) if what == "end"}
        starts = {name: i for i, (what, name) in enumerate(log) if what == "start"}
        for name, (after, _apart) in spec.items():
            assert all(ends[dep] < starts[name] for dep in after), (name, log)
        for running in _running_sets(log):
            assert len(running) <= workers
            assert not ({"big1", "big2"} <= running or {"big1", "big3"} <= running or {"big2", "big3"} <= running)
        if workers == 1:
            assert done == ["big1", "big2", "big3", "small1", "after_small1", "last"]  # the list's order


def test_callbacks_run_on_the_calling_thread() -> None:
    caller = threading.get_ident()
    threads: set[int] = set()
    seen: list[tuple[str, int]] = []
    steps = [Step(name, lambda: threads.add(threading.get_ident())) for name in "abcd"]
    run_steps(steps, check=lambda: seen.append(("check", threading.get_ident())),
              done=lambda name: seen.append((name, threading.get_ident())))  # fmt: skip
    assert caller not in threads and threads  # the steps on the workers
    assert {ident for _, ident in seen} == {caller}
    assert sorted(name for name, _ in seen if name != "check") == list("abcd")
    assert sum(1 for name, _ in seen if name == "check") == 4  # one before each start


class Stop(Exception):
    pass


def test_a_failing_step_waits_for_the_running_one_and_starts_no_more() -> None:
    slow_started, slow_may_end = threading.Event(), threading.Event()
    log: list[str] = []

    def slow() -> None:
        slow_started.set()
        slow_may_end.wait(WAIT_S)
        log.append("slow ended")

    def failing() -> None:
        slow_started.wait(WAIT_S)
        threading.Timer(0.05, slow_may_end.set).start()  # (ends after the failure reached the caller)
        raise Stop("step failed")

    steps = [Step("slow", slow), Step("failing", failing), Step("later", lambda: log.append("later ran"))]
    with pytest.raises(Stop, match="step failed"):
        run_steps(steps)
    assert log == ["slow ended"]  # waited for, and nothing started after the failure


def test_a_cancel_from_check_or_done_stops_the_build() -> None:
    ran: list[str] = []
    calls = [0]

    def check() -> None:
        calls[0] += 1
        if calls[0] > 2:
            raise Stop("cancelled")

    with pytest.raises(Stop, match="cancelled"):
        run_steps([Step(name, lambda name=name: ran.append(name)) for name in "abcdef"], check=check)
    assert sorted(ran) == ["a", "b"]

    def done(name: str) -> None:
        raise Stop(f"cancelled after {name}")

    ran.clear()
    with pytest.raises(Stop, match="cancelled after"):
        run_steps([Step(name, lambda name=name: ran.append(name), after=frozenset({"a"}) if name != "a" else
                        frozenset()) for name in "abc"], done=done)  # fmt: skip
    assert ran == ["a"]


def test_dependency_cycle_is_an_error_not_a_hang() -> None:
    steps = [Step("a", lambda: None, frozenset({"b"})), Step("b", lambda: None, frozenset({"a"}))]
    for workers in (1, 2):
        with pytest.raises(ValueError, match="wait for each other"):
            run_steps(steps, workers=workers)
    with pytest.raises(ValueError, match="share a name"):
        run_steps([Step("a", lambda: None), Step("a", lambda: None)])


def test_a_dependency_outside_the_run_counts_as_met() -> None:
    done: list[str] = []
    run_steps([Step("pyramid", lambda: None, frozenset({"sched"}))], done=done.append)
    assert done == ["pyramid"]


def test_workers_take_the_callers_profile_hook() -> None:
    """The window's background build pauses its steps while the UI draws through its thread's profile hook
    (app/worker_threads.py): the worker threads must run it too."""
    hooked: set[int] = set()
    ran: set[int] = set()

    def hook(_frame, _event, _arg) -> None:
        hooked.add(threading.get_ident())

    def step() -> None:
        ran.add(threading.get_ident())
        sorted([3, 1, 2], key=lambda v: v)  # (a Python call: the hook sees it)

    sys.setprofile(hook)
    try:
        run_steps([Step("a", step), Step("b", step)])
    finally:
        sys.setprofile(None)
    assert ran and ran <= hooked


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="per-thread nice values are Linux's")
def test_workers_run_at_a_lower_priority_and_the_caller_keeps_its_own() -> None:
    base = os.getpriority(os.PRIO_PROCESS, threading.get_native_id())
    seen: list[int] = []

    def step() -> None:
        seen.append(os.getpriority(os.PRIO_PROCESS, threading.get_native_id()))

    run_steps([Step("a", step), Step("b", step)], nice=5)
    assert seen == [min(base + 5, 19)] * 2
    assert os.getpriority(os.PRIO_PROCESS, threading.get_native_id()) == base  # the calling (UI) thread's
    assert os.getpriority(os.PRIO_PROCESS, 0) == base  # and the process's

    result: list[bool] = []
    thread = threading.Thread(target=lambda: result.append(lower_thread_priority(3)))
    thread.start()
    thread.join()
    assert result == [True] and os.getpriority(os.PRIO_PROCESS, threading.get_native_id()) == base
