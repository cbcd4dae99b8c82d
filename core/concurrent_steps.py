"""Run the steps of a build on two threads at once, each as soon as the steps it reads are done.

The model's build is a list of steps that each read the model's columns and write a table of their own
(:mod:`fxscope.core.trace.prepare`). Run one after the other they took ~2.4 s at 10M events, on one core of
two: most of their work is in C kernels and numpy calls that release the interpreter's lock, so two steps
run side by side nearly twice as fast. This runs them on worker threads in the list's order wherever their
declared dependencies allow, and keeps what the sequential loop gave its caller:

- the callbacks (``done(name)`` after each step, ``check()`` before each start, which may raise to cancel)
  run on the calling thread, in the order the steps finish; a raise stops new steps from starting, waits for
  those running and is raised again to the caller (as is a step's own exception);
- a step does not start while a step it is ``apart`` from runs (or one that is apart from it): those whose
  temporaries together are too large (the load's peak memory is what the tables hold plus the temporaries
  of the steps running);
- the workers take the calling thread's profile hook (the window's background build pauses while the UI
  draws: :class:`fxscope.app.worker_threads.ModelBuild`) and, with ``nice``, a lower OS priority than the
  rest of the process (Linux: a thread's own nice value), so that the UI thread gets a core when it wants one.

Qt-free: the loader's thread and the window's background build both call it.
"""

from __future__ import annotations

import os
import queue
import sys
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

#: worker threads a build runs on (the machine this is made for has two cores; more would only compete
#: with the UI thread and add their temporaries to the peak); FXSCOPE_BUILD_THREADS=1 builds one step after
#: the other on the calling thread (to compare, or to debug a step)
WORKERS = int(os.environ.get("FXSCOPE_BUILD_THREADS", "2") or 2)


@dataclass(frozen=True)
class Step:
    """One step of a build: ``run()`` builds its table; it starts once every step named in ``after`` (that is
    in the same run) is done, and never runs at the same time as a step named in ``apart``."""

    name: str
    run: Callable[[], object]
    after: frozenset[str] = frozenset()
    apart: frozenset[str] = frozenset()


@dataclass
class StepClock:
    """What a run did when: each step's own seconds (the wall time of its thread while it ran), when it ended
    (seconds from the run's start: a benchmark tells when a subset of the steps was all done), the run's wall
    time, and which steps run at this moment (a benchmark's memory sampler reads it from another thread)."""

    seconds: dict[str, float] = field(default_factory=dict)
    ended_s: dict[str, float] = field(default_factory=dict)
    started_at: float = 0.0
    wall_s: float = 0.0
    running: frozenset[str] = frozenset()


def run_steps(
    steps: Sequence[Step],
    check: Callable[[], None] | None = None,
    done: Callable[[str], None] | None = None,
    workers: int = WORKERS,
    nice: int = 0,
    clock: StepClock | None = None,
) -> None:
    """Run ``steps`` (see the module docstring): on ``workers`` threads (1: one after the other on the calling
    thread, in dependency order), started in list order among those ready. ``check()`` before each start and
    ``done(name)`` after each step run on the calling thread; either may raise to cancel the rest. A
    dependency on a name outside ``steps`` counts as met (a table built already). ValueError when the
    dependencies form a cycle."""
    names = {step.name for step in steps}
    if len(names) != len(steps):
        raise ValueError("two steps share a name")
    clock = clock if clock is not None else StepClock()
    clock.started_at = started_at = time.perf_counter()
    try:
        if workers <= 1:
            _run_inline(steps, names, check, done, clock)
        else:
            _Run(steps, names, check, done, workers, nice, clock).run()
    finally:
        clock.running = frozenset()
        clock.wall_s = time.perf_counter() - started_at


def _ready(step: Step, finished: set[str], names: set[str]) -> bool:
    return all(dep in finished or dep not in names for dep in step.after)


def _run_inline(steps, names, check, done, clock: StepClock) -> None:
    """The steps one after the other on the calling thread (``workers=1``)."""
    pending, finished = list(steps), set()
    while pending:
        step = next((s for s in pending if _ready(s, finished, names)), None)
        if step is None:
            raise ValueError(f"steps wait for each other: {[s.name for s in pending]}")
        pending.remove(step)
        if check is not None:
            check()
        clock.running = frozenset({step.name})
        t = time.perf_counter()
        step.run()
        clock.seconds[step.name] = (end := time.perf_counter()) - t
        clock.ended_s[step.name] = end - clock.started_at
        clock.running = frozenset()
        finished.add(step.name)
        if done is not None:
            done(step.name)


class _Run:
    """One run on worker threads: the calling thread starts steps, the workers run them and report back."""

    def __init__(self, steps, names, check, done, workers: int, nice: int, clock: StepClock) -> None:
        self.pending: list[Step] = list(steps)
        self.names = names
        self.check, self.done = check, done
        self.clock = clock
        self.nice = nice
        self.hook = sys.getprofile()  # (the caller's: the window's build yields to the UI with it)
        if not callable(self.hook):  # (a C profiler's, cProfile's: not a function sys.setprofile takes)
            self.hook = None
        self.jobs: queue.SimpleQueue[Step | None] = queue.SimpleQueue()
        self.results: queue.SimpleQueue[tuple[str, BaseException | None]] = queue.SimpleQueue()
        self.n_workers = min(workers, len(steps))
        self.running: set[str] = set()
        self.finished: set[str] = set()
        self.by_name = {step.name: step for step in steps}

    def run(self) -> None:
        threads = [threading.Thread(target=self._work, name=f"build-step-{i}", daemon=True)
                   for i in range(self.n_workers)]  # fmt: skip
        for thread in threads:
            thread.start()
        try:
            error = self._coordinate()
        finally:
            for _ in threads:
                self.jobs.put(None)
            for thread in threads:
                thread.join()
        if error is not None:
            raise error

    def _coordinate(self) -> BaseException | None:
        """Start what is ready, collect what finished, until every step is done or one failed (then wait for
        those running): the first failure (a step's exception, or a raise of ``check``/``done``)."""
        error: BaseException | None = None
        while self.pending or self.running:
            if error is None:
                try:
                    self._start_ready()
                except BaseException as exc:  # noqa: BLE001 - a cancel (check) or a cycle: raised after the wait
                    error = exc
            if not self.running:
                break
            name, exc = self.results.get()
            self.running.discard(name)
            self.clock.running = frozenset(self.running)
            if exc is not None:
                error = error or exc
                continue
            self.finished.add(name)
            if error is None and self.done is not None:
                try:
                    self.done(name)
                except BaseException as raised:  # noqa: BLE001 - a cancel from the progress callback
                    error = raised
        return error

    def _start_ready(self) -> None:
        while len(self.running) < self.n_workers:
            step = next((s for s in self.pending if _ready(s, self.finished, self.names)
                         and not self._kept_apart(s)), None)  # fmt: skip
            if step is None:
                if not self.running and self.pending:
                    raise ValueError(f"steps wait for each other: {[s.name for s in self.pending]}")
                return
            if self.check is not None:
                self.check()
            self.pending.remove(step)
            self.running.add(step.name)
            self.clock.running = frozenset(self.running)
            self.jobs.put(step)

    def _kept_apart(self, step: Step) -> bool:
        """Whether ``step`` may not start beside the steps running (either names the other ``apart``)."""
        return bool(step.apart & self.running) or any(
            step.name in self.by_name[name].apart for name in self.running
        )

    def _work(self) -> None:
        """A worker: the caller's profile hook, a lower priority with ``nice``, then steps until told to stop."""
        if self.hook is not None:
            sys.setprofile(self.hook)
        if self.nice > 0:
            lower_thread_priority(self.nice)
        while (step := self.jobs.get()) is not None:
            t = time.perf_counter()
            try:
                step.run()
            except BaseException as exc:  # noqa: BLE001 - handed to the calling thread, which raises it
                self.results.put((step.name, exc))
                continue
            self.clock.seconds[step.name] = (end := time.perf_counter()) - t
            self.clock.ended_s[step.name] = end - self.clock.started_at
            self.results.put((step.name, None))
        sys.setprofile(None)


def lower_thread_priority(nice: int) -> bool:
    """Raise the calling thread's nice value by ``nice`` (Linux: per thread; a thread cannot lower it again
    without privileges, so only threads that end after their work call this). True when the system took it."""
    if not sys.platform.startswith("linux"):  # (elsewhere the id of a thread is not one setpriority takes)
        return False
    try:
        tid = threading.get_native_id()
        current = os.getpriority(os.PRIO_PROCESS, tid)
        os.setpriority(os.PRIO_PROCESS, tid, min(current + nice, 19))
    except (AttributeError, OSError):  # (no per-thread priorities here: the build runs at the process's)
        return False
    return True
