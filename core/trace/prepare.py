"""Build every table and pyramid the window's views read, off the UI thread: for a small trace all of them
before the tab opens; for a large one only what its first frame needs (the thread slices' pyramid, the object
labels, the logs) before it, the other track kinds' tables (:data:`TRACK_STEPS`, their tracks drawing
"building…" meanwhile: :func:`pending_tables`) and then the flows and statistics after it, in a background
build (:func:`prepare_later`).

The loader runs this off the UI thread, so that opening a tab and the Info tab do not wait for numpy work
on the UI thread. The steps run two at once (:mod:`fxscope.core.concurrent_steps`): most of their work is in
C kernels and numpy calls that release the interpreter's lock, and most read only the model's columns and
write a table of their own; :data:`STEP_AFTER` says which read another's, :data:`STEP_APART` which must not
run together (the load's peak memory). The window's background build runs its two threads at a lower OS
priority than the UI thread (:data:`BACKGROUND_NICE`). It lives outside the model: it names the tables of the views (statistics) that the
model itself has no reason to know the order of. The search index is not among them: it is built on the
first search (:func:`fxscope.core.trace.query.search`), so that a load's peak memory does not hold its
temporaries (~25 bytes an event at 10M events) on top of the model, for a search the user may never make.
"""

from __future__ import annotations

import importlib
import threading
import weakref
from collections.abc import Callable

import numpy.ma  # noqa: F401 - see STEP_MODULES

from fxscope.core.concurrent_steps import WORKERS, Step, StepClock, run_steps
from fxscope.core.freed_memory import return_freed_memory, use_small_pages
from fxscope.core.trace.instants import SCOPE_GLOBAL, SCOPE_PROCESS
from fxscope.core.trace.model import TraceModel

#: the modules the steps build their tables with, imported with this one: a step's first build in a process
#: imported them itself (the model imports them on first use), ~40-65 ms in all (the logs' crash-report
#: reader and the symbolizer it starts most; numpy.ma, which np.unique imports at its first call), inside
#: worker threads that held the interpreter and the import lock meanwhile (at 10M events ~5% of the build's
#: wall time); the loader imports this module before it reads (measured at 10M events, twelve alternating
#: pairs: the build 0.91 -> 0.87 s, its CPU time 1.63 -> 1.56 s)
STEP_MODULES = (
    "fxscope.core.trace.async_spans", "fxscope.core.trace.counters", "fxscope.core.trace.flows",
    "fxscope.core.trace.instants", "fxscope.core.trace.lod", "fxscope.core.trace.logs", "fxscope.core.trace.sched",
    "fxscope.core.trace.stats",
)  # fmt: skip
for _name in STEP_MODULES:
    importlib.import_module(_name)

#: (name, build) of each table the first frame of the window reads, in the order the loader builds them (the
#: names are what tests/bench/bench_scale.py prints each step's time and memory under). The load's peak memory
#: is what the tables built so far hold plus the temporaries of the step building: the steps with the largest
#: temporaries (async spans, counters: tens of bytes an event of their kind) come first, while the model holds
#: least.
FIRST_FRAME_STEPS: list[tuple[str, Callable[[TraceModel], object]]] = [
    # the thread slices and tracks (TraceModel.build_slice_tables): the constructor leaves them to this step,
    # which runs beside the steps that read only the columns (not alone before every step)
    ("slices", lambda m: m.build_slice_tables()),
    ("async_pyramid", lambda m: m.async_pyramid),
    ("counters", lambda m: m.counters),
    ("pyramid", lambda m: m.pyramid),
    ("sched", lambda m: m.sched.wakeups.by_tid()),  # (the tables, and the wakeups the state strips mark)
    ("sched_pyramid_cpu", lambda m: m.sched_pyramid("cpu")),
    ("sched_pyramid_state", lambda m: m.sched_pyramid("state")),
    ("instants", lambda m: [m.instants.scoped(scope) for scope in (SCOPE_PROCESS, SCOPE_GLOBAL)]),
    ("density", lambda m: m.density(1000)),
    ("objects", lambda m: m.objects),
    ("logs", lambda m: m.logs),
]
#: the steps a large trace's window draws its first frame with: the thread slices and their pyramid, the
#: object labels and the log records (tens of ms at 10M events; the slice tracks mark crash reports from them). The other
#: track kinds' tables (:data:`TRACK_STEPS`: ~15 s of the first frame's ~45 s at 100M events before) follow
#: in the background build after the first frame, each track showing "building…" until its table is in
LARGE_FIRST_FRAME_STEPS = [step for step in FIRST_FRAME_STEPS if step[0] in ("slices", "pyramid", "objects", "logs")]
#: the first frame's steps that a large trace's window builds after its first frame, in their order there
#: (the largest temporaries first, while the model holds least: with the cheap ones first, the window's
#: peak resident size was ~30 MB higher at 10M events)
TRACK_STEPS = [step for step in FIRST_FRAME_STEPS if step not in LARGE_FIRST_FRAME_STEPS]
#: the tables no first frame draws: the flow links (shown for a selected slice, ~1 s at 10M events) and
#: the Info tab's statistics (which count the flows). A large trace's window builds them in a background
#: thread after its first frame (:func:`prepare_later`); a small one's loader builds them with the rest.
LATER_STEPS: list[tuple[str, Callable[[TraceModel], object]]] = [
    ("flows", lambda m: m.flows),
    ("stats", lambda m: m.stats),
]
_ALL_STEPS = dict(FIRST_FRAME_STEPS + LATER_STEPS)
#: every step: what a load that does not defer builds, and what the benchmark times. The steps with the
#: largest temporaries first, while the model holds least (built last they would add to every table's): the
#: slices beside the counters, then the async pyramid and the flows (after the slices) together, as they
#: were before the slices became a step (the load's peak at 10M events, bench_scale: 1.24-1.30x the file,
#: as before; with the async pyramid beside the slices, the flows met the counters: 1.31-1.38x); the
#: statistics last (they read every table)
PREPARE_STEPS = [(name, _ALL_STEPS[name]) for name in (
    "slices", "counters", "async_pyramid", "flows", "pyramid", "sched", "sched_pyramid_cpu", "sched_pyramid_state",
    "instants", "density", "objects", "logs", "stats")]  # fmt: skip
#: what each step reads of the others' tables (the rest read only the model's columns and its constructor's
#: tables, and write their own: any two of them can be built at once, :mod:`fxscope.core.concurrent_steps`).
#: The statistics count every table, so they come after every other step of their build.
STEP_AFTER: dict[str, frozenset[str]] = {
    # the slices' readers (the density is counted by the slices' build, as it reads every event's time)
    "pyramid": frozenset({"slices"}),
    "flows": frozenset({"slices"}),
    "density": frozenset({"slices"}),
    "lane_ends": frozenset({"slices"}),
    "sched_pyramid_cpu": frozenset({"sched"}),
    "sched_pyramid_state": frozenset({"sched"}),
}
#: the steps that do not run at the same time as the others named (either way), to bound the load's peak
#: memory (what the tables built so far hold plus the temporaries of the steps running). None now: the steps'
#: temporaries have shrunk (the async pairing and the flows a block at a time) and the load's peak is well
#: within the goal of 1.5x the file with any two steps at once. Measured at 10M / 30M events (302 / 906 MB),
#: two alternating pairs (bench_scale): with the async pyramid, flows, counters and scheduling tables kept
#: apart (as before) the build took 1.13-1.17 / 3.18-3.87 s at a peak of 361 / 975 MB (1.20 / 1.08x the
#: file); with none apart 0.87-0.91 / 2.40-2.66 s at 376-381 / 1,027-1,030 MB (1.26 / 1.14x): the four
#: largest steps one after the other were the build's critical path.
STEP_APART: dict[str, frozenset[str]] = {}
#: the window's background build (:func:`prepare_later`) runs its steps of the largest temporaries (flows,
#: async spans, counters, scheduling: 47-95 MB each at 10M events, against their 13-35 MB kept) one at a
#: time; beside each runs a step of small ones (instants, the density, the lane ends, the scheduling
#: pyramids). Built after the first frame they come on top of every table of it, and two of them at once
#: were the window's peak (bench_scale --frame at 10M events: 1.56-1.66x the file in flows + async spans or
#: counters + scheduling; apart, with the UI's trims after each table (app/deferred_tables.py), 1.47-1.48x,
#: the peak then the window's resident size after its search; at 30M 1.28-1.36 -> 1.22-1.23x, at 100M
#: 1.17-1.18 -> 1.11-1.12x, where two tables' temporaries were ~0.5 GB). Its wall time, alone on a quiet machine at 10M events, 0.42-0.47 -> 0.57-0.66 s;
#: at 30M on a loaded one (load 2.6) no slower (2.15-2.78 -> 1.81-2.49 s: the UI and the other processes
#: have the second core anyway); no frame and no search waits for it.
_LARGE_LATER = frozenset({"flows", "async_pyramid", "counters", "sched"})
LATER_APART: dict[str, frozenset[str]] = {name: _LARGE_LATER - {name} for name in _LARGE_LATER}
#: how much lower than the UI thread's the OS priority of the window's background build is (a nice value):
#: its two worker threads and the UI thread are three on a two-core machine, and a frame drawn meanwhile
#: must not wait for a core. Measured at 10M events (bench_scale --frame --during, a loaded machine): pan/zoom
#: frames during the build p50 65-114 ms sequential, 72 ms on two threads at the UI's priority, 17-26 ms
#: niced (the build then waits while the UI draws: it ends later only while the user navigates)
BACKGROUND_NICE = 10

#: traces with at least this many events leave :data:`LATER_STEPS` until after the window's first frame
#: (below it they take tens of milliseconds: the Info tab is complete when the tab opens)
DEFER_EVENTS = 1_000_000


#: the models whose :data:`TRACK_STEPS` are still to be built (by the background build after the first
#: frame): the names of those steps not built yet. A model absent from it has nothing pending (a small
#: trace's, or one no loader prepared: its views build what they read on first use, as before)
_PENDING: weakref.WeakKeyDictionary[TraceModel, set[str]] = weakref.WeakKeyDictionary()
_PENDING_LOCK = threading.Lock()


def pending_tables(model: TraceModel) -> frozenset[str]:
    """The names of ``model``'s :data:`TRACK_STEPS` that a background build is still to make: the views
    draw those tracks as "building…" and must not read their tables (that would build them on the UI
    thread)."""
    with _PENDING_LOCK:
        return frozenset(_PENDING.get(model, ()))


def table_pending(model: TraceModel, *names: str) -> bool:
    """Whether any of the steps ``names`` of ``model`` is still to be built (see :func:`pending_tables`)."""
    pending = pending_tables(model)
    return any(name in pending for name in names)


def hold_track_steps(model: TraceModel) -> None:
    """Mark ``model``'s :data:`TRACK_STEPS` as left to the background build (its tracks draw "building…")."""
    with _PENDING_LOCK:
        _PENDING[model] = {name for name, _build in TRACK_STEPS if not _step_built(model, name)}


def _step_built(model: TraceModel, name: str) -> bool:
    """Whether step ``name``'s table is already built (a cached property or memoized table in the model)."""
    memo = getattr(model, "_memo", {})
    return {
        "slices": model.slices_ready,
        "async_pyramid": "async_pyramid" in vars(model),
        "counters": "counters" in vars(model),
        "sched": "sched" in vars(model),
        "instants": "instants" in vars(model),
        "sched_pyramid_cpu": "sched_pyramid_cpu" in memo,
        "sched_pyramid_state": "sched_pyramid_state" in memo,
        "density": "density1000" in memo,
    }.get(name, False)


def _step_done(model: TraceModel, name: str) -> None:
    with _PENDING_LOCK:
        pending = _PENDING.get(model)
        if pending is not None:
            pending.discard(name)
            if not pending:
                del _PENDING[model]


def defers_later_steps(model: TraceModel) -> bool:
    """Whether the window builds ``model``'s :data:`LATER_STEPS` after its first frame."""
    return model.cols.n_events >= DEFER_EVENTS


def prepare_model(
    model: TraceModel,
    progress: Callable[[float], None] | None = None,
    first_frame_only: bool = False,
    workers: int = WORKERS,
    clock: StepClock | None = None,
) -> None:
    """Build ``model``'s tables (with ``first_frame_only``, those of :data:`FIRST_FRAME_STEPS`) on ``workers``
    threads (:func:`build_steps`); ``progress(fraction)`` after each (it may raise to cancel the load: the steps
    running are waited for). The building's freed temporaries are then given back to the system
    (:mod:`fxscope.core.freed_memory`). ``clock`` receives each step's time and the build's wall time. A
    build of every step ends the load's huge pages (:func:`~fxscope.core.freed_memory.use_small_pages`; a
    large trace's window ends them after :func:`prepare_later`)."""
    steps = LARGE_FIRST_FRAME_STEPS if first_frame_only else PREPARE_STEPS
    if first_frame_only:
        hold_track_steps(model)
    return_freed_memory()  # what the reader and the model's constructor freed
    finished: list[str] = []

    def done(name: str) -> None:
        finished.append(name)
        if progress is not None:
            progress(len(finished) / len(steps))

    try:
        build_steps(model, steps, done=done, workers=workers, clock=clock)
    finally:
        if not first_frame_only:  # (the load's tables are built: small pages for what comes after, see there)
            use_small_pages()


def build_steps(model: TraceModel, steps: list[tuple[str, Callable[[TraceModel], object]]],
                check: Callable[[], None] | None = None, done: Callable[[str], None] | None = None,
                workers: int = WORKERS, nice: int = 0, clock: StepClock | None = None,
                apart: dict[str, frozenset[str]] | None = None) -> None:  # fmt: skip
    """Build ``steps`` of ``model`` (each by :func:`build_step`) on ``workers`` threads, each once the steps it
    reads (:data:`STEP_AFTER`) are done, the statistics last (:func:`fxscope.core.concurrent_steps.run_steps`:
    ``check()`` before each start, ``done(name)`` after each, both on the calling thread).

    The file pages that the steps' reads of the mapped columns (event times, data words) map stay mapped
    until the last step ends, not each step's until it ends: most steps read the times of one event kind,
    spread over the whole file, so each mapped the whole file again (at 30M events, eight alternating pairs:
    the constructor and build 3.4-4.2 -> 3.0-3.6 s, system time 1.1-1.4 -> 0.9-1.0 s). They are the page
    cache's clean pages, which the kernel may take back: not memory the process owns."""
    names = frozenset(name for name, _build in steps)
    apart = STEP_APART if apart is None else apart
    run = [_step(model, name, build, names, apart) for name, build in steps]
    with model.cols.holding_pages():  # (the file pages the steps map stay until the last one ends)
        run_steps(run, check=check, done=done, workers=workers, nice=nice, clock=clock)


def _step(model: TraceModel, name: str, build: Callable[[TraceModel], object], names: frozenset[str],
          apart: dict[str, frozenset[str]]) -> Step:  # fmt: skip
    """Step ``name`` of a build of the steps ``names``: :func:`build_step`, with its dependencies and the
    steps it is kept apart from (``apart``)."""
    return Step(name, lambda: build_step(model, build), _after(name, names), apart.get(name, frozenset()))


def _after(name: str, names: frozenset[str]) -> frozenset[str]:
    """The steps among ``names`` that step ``name`` waits for: the statistics every other one."""
    return names - {name} if name == "stats" else STEP_AFTER.get(name, frozenset())


def build_step(model: TraceModel, build: Callable[[TraceModel], object]) -> None:
    """One step of :func:`prepare_model`, then its freed temporaries given back to the system: glibc keeps
    freed arrays below its mmap threshold in its heap, and the next step's tables are not always the size
    of those holes, so without it the load's peak carried every earlier step's leftovers too (~60 MB at
    10M events); a trim costs a few ms. The file pages the step's reads of the mapped columns (event times,
    data words) map stay until it ends (and any other step holding them ends), then go at once
    (:meth:`~fxscope.formats.fxt.columns.FxtColumns.holding_pages`)."""
    with model.cols.holding_pages():
        build(model)
    return_freed_memory()


def _track_steps_pending(model: TraceModel) -> list[tuple[str, Callable[[TraceModel], object]]]:
    return [(name, build) for name, build in TRACK_STEPS if table_pending(model, name)]


def _track_step_done(model: TraceModel, step_done: Callable[[str], None] | None) -> Callable[[str], None]:
    """The ``done`` of a background build: a track step's table is in (its tracks stop drawing "building…")."""
    track_names = {name for name, _build in TRACK_STEPS}

    def done(name: str) -> None:
        if name in track_names:
            _step_done(model, name)
            if step_done is not None:
                step_done(name)

    return done


def prepare_tracks(model: TraceModel, check: Callable[[], None],
                   step_done: Callable[[str], None] | None = None, workers: int = WORKERS,
                   nice: int = BACKGROUND_NICE) -> None:  # fmt: skip
    """Build ``model``'s pending :data:`TRACK_STEPS` (in a background thread, on ``workers`` threads of
    priority lowered by ``nice``), ``step_done(name)`` after each in the order they finish (the window
    repaints that kind of track); ``check()`` before each may raise to cancel."""
    build_steps(model, _track_steps_pending(model), check=check, done=_track_step_done(model, step_done),
                workers=workers, nice=nice)  # fmt: skip


def _flow_step(check: Callable[[], None]) -> tuple[str, Callable[[TraceModel], object]]:
    """The flows' step of the background build (their build calls ``check()`` between its stages; a cancelled
    table stays unbuilt)."""
    return ("flows", lambda m: m.build_flow_table(check))


def _later_steps(check: Callable[[], None]) -> list[tuple[str, Callable[[TraceModel], object]]]:
    """The background build's steps after the track steps: the running max of the slice lanes' ends (8 bytes
    a slice), which the first frame zoomed in past the pyramid's finest level reads (built there on first use,
    it stalled that frame 2.4 s at 100M events), then the statistics (after every other step: they count them).
    The flows come first (:func:`prepare_later`)."""
    return [
        ("lane_ends", lambda m: m.lanes.get().end_max_of),
        ("stats", lambda m: m.stats),
    ]


def prepare_later(model: TraceModel, check: Callable[[], None],
                  step_done: Callable[[str], None] | None = None, workers: int = WORKERS,
                  nice: int = BACKGROUND_NICE) -> None:  # fmt: skip
    """Build ``model``'s flows, its pending :data:`TRACK_STEPS` (``step_done(name)`` after each, as
    :func:`prepare_tracks`), then the rest of its :data:`LATER_STEPS` (in a background thread, all of them on
    ``workers`` threads of priority lowered by ``nice``: a step starts when a worker is free).
    ``check()`` before each step may raise to cancel the build (the steps running are waited for).

    The flows come first, while the model holds least: their build's temporaries are among the largest of
    these steps' (~50 bytes a flow event), and built last, on top of every other table, they were the
    window's peak (at 30M events 1,274-1,304 MB; first: 1,157 MB, its peak then the instants beside the lane
    ends; at 10M 532-534 -> 520-528 MB). The steps of large temporaries run one at a time
    (:data:`LATER_APART`), each beside the small ones."""
    steps = [_flow_step(check), *_track_steps_pending(model), *_later_steps(check)]
    try:
        build_steps(model, steps, check=check, done=_track_step_done(model, step_done), workers=workers,
                    nice=nice, apart=LATER_APART)  # fmt: skip
    finally:
        use_small_pages()  # (the load's last tables are built: small pages for the search index and the frames)
