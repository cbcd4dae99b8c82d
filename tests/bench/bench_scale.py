"""Scale benchmark (issue 18): how reading and modelling a trace grow with its size, in time and memory.

Run: ``.venv/bin/python tests/bench/bench_scale.py [--sizes 10m,30m] [--frame] [--window-only] [--during]``
(``--sizes 100m`` for the largest; 100M events is a ~3 GB file and needs ~3 GB free to generate). Not a unit
test: it takes minutes.

Generates (once, cached under tests/bench/.cache/) traces with scheduling records
(``python -m fxscope generate --events N --scheduling``), then measures each size in a fresh subprocess:

- ``read_s`` / ``read_mb_s``: :func:`fxscope.core.trace.reading.read_trace` (what the window's loader calls),
- ``model_s``: the :class:`~fxscope.core.trace.model.TraceModel` constructor (the extent, the object labels:
  the slices and tracks are the step ``slices``, built beside the other steps; an older checkout's
  constructor built them), and
  ``prep.<step>_s`` for each step of :data:`fxscope.core.trace.prepare.PREPARE_STEPS` (its own time, in the
  thread that built it); ``build_s`` is the constructor's time plus the steps' *wall* time (they run two at
  once, :mod:`fxscope.core.concurrent_steps`: ``build.steps_sum_s`` is the sum of their times), the model's
  build to compare with ``read_s``; ``--build-threads 1`` builds one step after the other (then the two are
  equal, as with an older checkout's interpreter); ``first_frame_build_s`` is the constructor and the time until
  every step but the :data:`~fxscope.core.trace.prepare.LATER_STEPS` (that a large trace's window builds
  after its first frame) has ended in that build of every step (an upper bound: the window builds those
  steps first, without the later ones beside them; its own ``first_frame_s`` is measured with ``--frame``);
  ``read.*`` / ``build.*``: their CPU and system time, minor page faults and system time per fault (most of
  it is first touches of fresh pages, whose cost is the machine's: compare it between sizes before reading
  a growth past 3.5x as the code's),
- memory, from ``/proc/self/status``: ``peak_hwm`` is the kernel's exact high-water mark of the resident
  set (VmHWM: anonymous memory *plus* mapped file pages); ``peak_anon`` / ``peak_file`` are the largest
  RssAnon / RssFile seen by a thread sampling every 2 ms (the anonymous memory is what the process owns;
  the file pages are clean pages of the memory-mapped trace, which the kernel drops under pressure and the
  reader releases as it goes); ``peak_anon_phase`` says during which steps (``a+b``: two at once) the
  anonymous peak came;
  ``resident_anon`` / ``resident_file`` after the whole build. Ratios ``x_file`` are to the file's size,
  ``B/ev`` per event.

Run it with another checkout's interpreter (``/path/to/other/.venv/bin/python tests/bench/bench_scale.py``) to
measure that checkout's code on the same traces (the children import ``fxscope`` as that interpreter installs it).

``--frame`` also opens each trace in the window offscreen (MainWindow, background load as the app does)
and prints ``first_frame_s`` (open to the first paint of the timeline), ``frame.loader_read_s`` /
``frame.loader_build_s`` (the window's loader: its read, then its build until the first frame's tables are in,
timed around ``read_trace`` and ``prepare_model`` in that process), ``frame.all_tracks_s`` (until the
track kinds a large trace's window builds after its first frame are all drawn), ``frame.background_done_s``
(until its background build is done: the window's peak memory is measured over all of it), the UI thread's longest stall and
the peak RSS of that process; with the search, ``frame.first_search_*``: a search typed in that window once its
background build is done (``--search-early``: right after its first frame, while that build runs), the time
until a count shows (``_count_s``: without the argument index, whose build
runs in the background, the count says "N+ matches, indexing arguments…"), until every match is counted
(``_s``), and the UI thread's longest stall meanwhile. Then, once the search index's background build is done
too (``frame.index_done_s``; ``frame.index_paused_s``: how long that build paused, for the UI and while the
search ran), the window's frames as ``bench_timeline.py`` draws them (its code, imported:
the full view cold and repainted, the jump to a 1 ms window and it cold, 60 pan/zoom steps):
``frame.p50_ms`` / ``frame.p95_ms`` over the full, 1 ms and pan/zoom frames (issue 18's goal at 100M: 16 /
33 ms) and the longest frame (``frame.max_ms``, the jump's too: a stall the p95 hides), the same per level,
and the UI thread's CPU time per frame (``cpu_``: less inflated than the wall clock on a loaded machine).
The memory sampler is stopped before these frames (``--sample-frames`` keeps it running): a Python thread
that wakes 500 times a second takes the interpreter lock each time, and the UI thread, which releases it
around every Qt call of a paint and takes it back for the track painters' Python, then waits for the sampler
to run and drop it, and for the OS to schedule it again (a time slice on 2 busy cores). Measured in one
process, alternating with the sampler running and not, on a frame-like loop of small numpy calls (14 ms):
wall p50 +6% with the sampler that parsed ``/proc/self/status`` (+9% on a busier machine), +2% with the one
reading ``/proc/self/statm``, the UI thread's CPU +1-3% (the wait is wall time). The frames' memory still
shows in ``frame.peak_hwm`` (the kernel's high-water mark) and in ``peak_anon`` through a reading after them.
``--tick-rate 24000000`` measures copies of the traces whose providers tick at that rate (as real traces'
do; the generator's tick at 1 and 2 GHz: see :func:`with_tick_rate`). ``--during`` also draws pan/zoom frames while the background build runs (``frame.during_build.*``; they
lengthen ``frame.background_done_s``); ``--window-only`` runs the window's child alone (no load child).
``--rounds N`` measures every size N times, in turn, and prints each figure's median and, as its growth, the
median of the rounds' own ratios (a size's peer is the other size of the same round: one sample per size
moved the 100M/30M ratios by +-0.3 between runs, and the machine's speed drifts ~20% within an hour).

The load child also times the search without the argument index (``search.names_only_s``), the index's build
(``search.index_build_s``) and a search with it (``search.indexed_s``), and the analysis panel of the whole
trace (``analysis.whole_trace_s``: its rows, per-name statistics and flame graph; then
``analysis.frame_nodes_s``, each slice's node of the flame graph, which the panel makes after the flame graph
shows and a click on a frame waits for), with their CPU times (less
noisy on a shared machine) and the 1-minute load average; then runs each of these queries twice more and
gives the fastest of the three (``*_best_s``: the first run maps fresh memory, whose page faults cost what
the machine makes them cost). ``machine.reclaimed_mb`` is the memory the kernel reclaimed (machine-wide)
while the load child ran: on the development VM a 100M-event load whose memory must come from the page
cache (17 GB of it cached there after a day of benchmarks) grew its steps and first queries 4-5x from 30M;
the table is followed by a note when a size saw any. The table ends with each figure's growth between
consecutive sizes next to the growth of the event count (linear growth: the two are equal).
Last, issue 18's goals (:func:`goal_report`): each goal met or missed with its figure at each of the
issue's sizes (10M, 30M, 100M) measured, and the costs (times, owned memory) that grew more than 3.5x from 30M
to 100M.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))  # (run as a script: its sibling benchmarks)
import itertools

from bench_timeline import FRAME_STEPS, WINDOW_WITH_GAP_TIMER, percentile

ROOT = Path(__file__).resolve().parents[2]
CACHE = Path(__file__).resolve().parent / ".cache"

#: sizes by name: events
SIZES = {"1m": 1_000_000, "3m": 3_000_000, "10m": 10_000_000, "30m": 30_000_000, "100m": 100_000_000}

#: the sampler shared by both children: RssAnon/RssFile maxima per phase, from a thread every 2 ms. A sample
#: reads /proc/self/statm (~1 us: resident and shared pages; RssAnon = resident - shared, RssFile = shared -
#: RssShmem, the shared memory taken from the last /proc/self/status read), not /proc/self/status (~90 us of
#: parsing with the GIL held, 500 times a second: a tax of ~5-10% on what the benchmark times)
_SAMPLER = r"""
import os, threading, time

def _status():
    out = {}
    with open("/proc/self/status") as f:
        for line in f:
            key, _, value = line.partition(":")
            if key in ("VmHWM", "VmRSS", "RssAnon", "RssFile", "RssShmem"):
                out[key] = int(value.split()[0]) * 1024
    return out

_STATM = os.open("/proc/self/statm", os.O_RDONLY)
_PAGE = os.sysconf("SC_PAGE_SIZE")

def _anon_file(shmem):
    # (RssAnon, RssFile) from /proc/self/statm: its resident and shared page counts
    f = os.pread(_STATM, 256, 0).split()
    resident, shared = int(f[1]) * _PAGE, int(f[2]) * _PAGE
    return resident - shared, shared - shmem

class Sampler(threading.Thread):
    def __init__(self):
        super().__init__(daemon=True)
        self.phase = "start"
        self.phase_of = None  # (when set: the phase, asked at each sample)
        self.peak_anon, self.peak_file, self.peak_anon_phase = 0, 0, ""
        self.phase_anon = {}
        self.running = True
        self.shmem = _status().get("RssShmem", 0)

    def run(self):
        while self.running:
            anon, file = _anon_file(self.shmem)
            phase_of = self.phase_of
            phase = self.phase if phase_of is None else phase_of()
            if anon > self.peak_anon:
                self.peak_anon, self.peak_anon_phase = anon, phase
            self.peak_file = max(self.peak_file, file)
            self.phase_anon[phase] = max(self.phase_anon.get(phase, 0), anon)
            time.sleep(0.002)

    def mark(self, phase):
        s = _status()  # the phase's own last reading (a short phase may see no sample)
        self.shmem = s.get("RssShmem", 0)
        self.phase_anon[self.phase] = max(self.phase_anon.get(self.phase, 0), s["RssAnon"])
        if s["RssAnon"] > self.peak_anon:
            self.peak_anon, self.peak_anon_phase = s["RssAnon"], self.phase
        self.phase = phase

    def stop(self):
        self.running = False
        self.join()
        return _status()

def _reclaimed_pages():
    # pages the kernel took back from the page cache (and others) so far, machine-wide (/proc/vmstat: its
    # background reclaim and that of allocations that had to wait for it); 0 where there is no such file
    try:
        with open("/proc/vmstat") as f:
            return sum(int(v) for k, v in (line.split() for line in f) if k.startswith("pgsteal_"))
    except OSError:
        return 0

reclaimed_at_start = _reclaimed_pages()
"""

_CHILD_LOAD = _SAMPLER + r"""
import json, os, sys
sampler = Sampler()
sampler.start()
from fxscope.core.trace.reading import read_trace
from fxscope.core.trace.model import TraceModel
try:
    from fxscope.core.trace.prepare import PREPARE_STEPS
    try:
        from fxscope.core.trace.prepare import LATER_STEPS
    except ImportError:  # a checkout that builds every table before the first frame
        LATER_STEPS = []
except ImportError:  # an older checkout (run with its interpreter to compare): its prepare as one step
    from fxscope.core.trace.prepare import prepare_model
    PREPARE_STEPS = [("prepare", prepare_model)]
    LATER_STEPS = []
try:
    from fxscope.core.freed_memory import return_freed_memory
except ImportError:
    return_freed_memory = lambda: None
try:  # each step as prepare_model runs it (with the freed memory given back after it)
    from fxscope.core.trace.prepare import build_step
except ImportError:  # an older checkout: the step alone
    build_step = lambda model, build: build(model)
import resource


def _usage():
    # (user s, system s, minor page faults) of the process so far: the sampler's share is small
    r = resource.getrusage(resource.RUSAGE_SELF)
    return [r.ru_utime, r.ru_stime, r.ru_minflt]


base = _status()
sampler.mark("read")
u0 = _usage()
t0 = time.perf_counter()
cols = read_trace(sys.argv[1])
t1 = time.perf_counter()
u1 = _usage()
after_read = _status()
sampler.mark("model")
# as the window's loader does: the file pages mapped by the constructor's reads kept for the steps after it
# (an older checkout without the hold: each step maps them again)
hold = cols.holding_pages() if hasattr(cols, "holding_pages") else None
if hold is not None:
    hold.__enter__()
model = TraceModel(cols)
t2 = time.perf_counter()
try:  # the steps on two threads (each step's own time, and the build's wall time)
    from fxscope.core.concurrent_steps import StepClock
    from fxscope.core.trace.prepare import prepare_model
except ImportError:  # an older checkout: one step after the other
    StepClock = None
if StepClock is not None:
    clock = StepClock()
    sampler.mark("build")
    sampler.phase_of = lambda: "+".join(sorted(clock.running)) or "build"  # (the steps running at a sample)
    t = time.perf_counter()
    prepare_model(model, clock=clock)
    if hold is not None:
        hold.__exit__(None, None, None)  # (the pages dropped: part of the build's time, as in the loader)
    build_wall = time.perf_counter() - t
    sampler.phase_of = None
    steps = dict(clock.seconds)
    ended = dict(getattr(clock, "ended_s", {}))  # (an older checkout: none)
else:
    ended = {}
    return_freed_memory()  # as prepare_model starts
    steps = {}
    for name, build in PREPARE_STEPS:
        sampler.mark(name)
        t = time.perf_counter()
        build_step(model, build)
        steps[name] = time.perf_counter() - t
    if hold is not None:
        hold.__exit__(None, None, None)
    build_wall = sum(steps.values())
sampler.mark("trim")
return_freed_memory()  # as prepare_model ends
sampler.mark("done")
u2 = _usage()
end = _status()
load_peak = (sampler.peak_anon, sampler.peak_file, sampler.peak_anon_phase)  # (the search's comes after)
from fxscope.core.trace.search_hits import search_all
names_search = names_search_cpu = float("nan")
if sys.argv[2] == "search":  # what the window shows first: no argument index (an older checkout: none)
    sampler.mark("names_search")
    t, c = time.perf_counter(), time.process_time()
    try:
        search_all(model, "frame", arguments=False)
        names_search, names_search_cpu = time.perf_counter() - t, time.process_time() - c
    except TypeError:
        pass
t = time.perf_counter()  # the first search: builds the search index (not part of the load)
sampler.mark("first_search")
hits = search_all(model, "frame") if sys.argv[2] == "search" else []
first_search = time.perf_counter() - t if sys.argv[2] == "search" else float("nan")
t, c = time.perf_counter(), time.process_time()
hits = search_all(model, "frame") if sys.argv[2] == "search" else []  # the index built
indexed_search, indexed_search_cpu = time.perf_counter() - t, time.process_time() - c
# the analysis panel of the whole trace: its rows, per-name statistics and flame graph (app/analysis/worker.py)
sampler.mark("analysis")
from fxscope.core.analysis.call_tree import top_down
from fxscope.core.analysis.selection import Area, area_rows
from fxscope.core.analysis.stats import name_stats
t, c = time.perf_counter(), time.process_time()
ar = area_rows(model, Area())
try:
    from fxscope.core.analysis.selection import area_names
    shared = {"names": area_names(model, ar)}
except ImportError:  # an older checkout: each makes its own
    shared = {}
name_stats(model, ar=ar, **shared)
tree = top_down(model, ar=ar, **shared)
analysis, analysis_cpu = time.perf_counter() - t, time.process_time() - c
t = time.perf_counter()  # each row's node: made after the flame graph shows (the panel's job), or on a click
_ = tree.node_of
frame_nodes = time.perf_counter() - t
del ar, shared, tree, _
sampler.mark("end")
after_search = sampler.stop()


def _best(first, run, times=2):
    # the fastest of the first run and ``times`` more (the first maps fresh memory: see _load_figures)
    best = first
    for _ in range(times):
        t = time.perf_counter()
        run()
        best = min(best, time.perf_counter() - t)
    return best


def _analysis():
    ar = area_rows(model, Area())
    names = {"names": area_names(model, ar)} if shared_names else {}
    name_stats(model, ar=ar, **names)
    top_down(model, ar=ar, **names)


shared_names = "area_names" in globals()
names_best = indexed_best = float("nan")
if sys.argv[2] == "search":
    if names_search == names_search:  # (not nan: the checkout searches without the index)
        names_best = _best(names_search, lambda: search_all(model, "frame", arguments=False))
    indexed_best = _best(indexed_search, lambda: search_all(model, "frame"))
analysis_best = _best(analysis, _analysis)
reclaimed = _reclaimed_pages() - reclaimed_at_start
print(json.dumps({
    "events": len(cols.ev_ts), "sched": len(cols.sched_ts), "slices": len(model.slices),
    "read_s": t1 - t0, "model_s": t2 - t1, "steps": steps, "ended": ended, "build_wall_s": build_wall, "later": [name for name, _ in LATER_STEPS],
    "base_anon": base["RssAnon"], "after_read_anon": after_read["RssAnon"],
    "peak_hwm": end["VmHWM"], "peak_anon": load_peak[0], "peak_file": load_peak[1],
    "peak_anon_phase": load_peak[2], "phase_anon": sampler.phase_anon,
    "resident_anon": end["RssAnon"], "resident_file": end["RssFile"],
    "first_search_s": first_search, "first_search_hits": len(hits), "after_search_hwm": after_search["VmHWM"],
    "names_search_s": names_search, "names_search_cpu_s": names_search_cpu, "indexed_search_s": indexed_search,
    "indexed_search_cpu_s": indexed_search_cpu, "analysis_s": analysis, "analysis_cpu_s": analysis_cpu,
    "load_avg": os.getloadavg()[0], "names_search_best_s": names_best, "indexed_search_best_s": indexed_best,
    "analysis_best_s": analysis_best, "reclaimed_pages": reclaimed, "frame_nodes_s": frame_nodes,
    "read_usage": [b - a for a, b in zip(u0, u1)], "build_usage": [b - a for a, b in zip(u1, u2)],
}))
"""

_CHILD_FRAME = _SAMPLER + r"""
import json, os, sys
os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
from fxscope.app.gui import application
app = application()
from PySide6.QtCore import QEvent, QObject, QTimer
from fxscope.app.main_window import MainWindow

sampler = Sampler()
sampler.start()
""" + WINDOW_WITH_GAP_TIMER + r"""

class Painted(QObject):
    at = None

    cpu = None

    def eventFilter(self, obj, event):  # noqa: N802 - Qt API
        if event.type() == QEvent.Type.Paint and Painted.at is None:
            Painted.at, Painted.cpu = time.perf_counter(), time.process_time()
        return False

painted = Painted()
# the loader's read and its build before the first frame (the constructor and prepare_model of the first
# frame's steps: a large trace's other tables follow in the background), timed around the functions it calls
import fxscope.core.trace.prepare as _prepare_module  # noqa: E402
import fxscope.core.trace.reading as _reading_module  # noqa: E402

loader_at = {}


def _stamped(module, name, key):
    inner = getattr(module, name)

    def stamped(*args, **kwargs):
        loader_at.setdefault(key + "_start", time.perf_counter())
        try:
            return inner(*args, **kwargs)
        finally:
            loader_at[key + "_end"] = time.perf_counter()

    setattr(module, name, stamped)


_stamped(_reading_module, "read_trace", "read")
_stamped(_prepare_module, "prepare_model", "prepare")
base_anon = _status()["RssAnon"]  # the window's own (Qt, the app's modules) before the trace
sampler.mark("load")
t0, cpu0 = time.perf_counter(), time.process_time()
window.open_path(sys.argv[1], background=True)
tab_at = None
while time.perf_counter() - t0 < 900:
    app.processEvents()
    if tab_at is None and window.tabs.count():
        tab_at = time.perf_counter()
        sampler.mark("first frame")
        window.tabs.widget(0).timeline.plot.viewport().installEventFilter(painted)
    if Painted.at is not None:
        break
    time.sleep(0.001)
sampler.mark("after")
for _ in range(50):  # what the window does right after (deferred work of the tab)
    app.processEvents()
    time.sleep(0.01)
try:  # the track kinds whose tables the background build makes after the first frame: when all are in
    from fxscope.core.trace.prepare import pending_tables
except ImportError:  # (a checkout from before: every track is in at the first frame)
    pending_tables = lambda model: ()  # noqa: E731
if window.tabs.count():
    model = window.tabs.widget(0).model
    while pending_tables(model) and time.perf_counter() - t0 < 900:
        app.processEvents()
        time.sleep(0.005)
tracks_s = time.perf_counter() - t0
deferred = getattr(window.tabs.widget(0), "deferred", None) if window.tabs.count() else None
widget = window.tabs.widget(0).timeline
""" + FRAME_STEPS + r"""
search = {}


def first_search():
    # the first search typed in the window: the UI's longest stall until its count shows, when the count and
    # when every match showed
    sampler.mark("first search")
    timeline = window.tabs.widget(0).timeline
    gaps.clear()
    last[0] = t1 = time.perf_counter()
    timeline.search_box.setText("frame")
    said = timeline.search_status.text()
    first_count = first_count_status = None  # a count shown: all matches, or those found without the arguments
    while not timeline.search_status.text().endswith("matches") and time.perf_counter() - t1 < 600:
        app.processEvents()
        if first_count is None and "matches" in timeline.search_status.text():
            first_count, first_count_status = time.perf_counter() - t1, timeline.search_status.text()
        time.sleep(0.001)
    done = time.perf_counter() - t1
    return {"search_s": done, "search_max_gap_ms": max(gaps + [(time.perf_counter() - last[0]) * 1000]),
            "search_first_status": said, "search_status": timeline.search_status.text(),
            "search_first_count_s": done if first_count is None else first_count,
            "search_first_count_status": first_count_status or timeline.search_status.text()}


if sys.argv[2] == "search" and sys.argv[5] == "search-early":  # typed right after the first frame
    search = first_search()
during = sys.argv[3] == "during"  # pan/zoom frames while the build runs (else the build runs alone)
i, during_ms = 0, []
while deferred is not None and deferred.pending() and time.perf_counter() - t0 < 900:
    if during:  # (a navigation step, one frame, as bench_timeline's during_build)
        step(i)
        during_ms.append(frame(redraw=False, level="during_build"))
        i += 1
    else:
        app.processEvents()  # the rest of the background build (flows, statistics): the peak memory includes it
        time.sleep(0.005)
later_s = time.perf_counter() - t0
frame_gap = max(gaps) if gaps else 0.0
if sys.argv[2] == "search" and sys.argv[5] != "search-early":  # typed once the background build is done
    search = first_search()
# the frames of the loaded trace, as bench_timeline's: once the search index's background build (started
# when the later tables are in, or by the search above) is done too
sampler.mark("frames")
indexing = widget.search_indexing
while not indexing.ready() and not (indexing.worker is not None and indexing.worker.isFinished()) \
        and time.perf_counter() - t0 < 1800:  # (its start is queued after the later tables' end)
    app.processEvents()
    time.sleep(0.005)
index_s = time.perf_counter() - t0
app.processEvents()
# the frames are drawn without the sampling thread (unless asked: --sample-frames), see the module docstring;
# their memory is in VmHWM, and in peak_anon through the reading after them
if sys.argv[4] != "sample-frames":
    sampler.stop()
levels = {"during_build": during_ms, **navigation_levels()} if during_ms else navigation_levels()
sampler.mark("end")
end = sampler.stop()
print(json.dumps({"levels": levels, "cpu": cpu, "paints_per_frame": [min(paints), max(paints)] if paints else [],
                  "index_done_s": index_s, "load_avg": os.getloadavg()[0],
                  "index_paused_s": getattr(indexing.worker, "paused_s", float("nan")),
                  "loader_read_s": loader_at.get("read_end", float("nan")) - loader_at.get("read_start", float("nan")),
                  "loader_build_s": loader_at.get("prepare_end", float("nan")) - loader_at.get("read_end", float("nan")),
                  "tab_s": (tab_at or float("nan")) - t0, "first_frame_s": (Painted.at or float("nan")) - t0,
                  "first_frame_cpu_s": (Painted.cpu or float("nan")) - cpu0, "all_tracks_s": tracks_s, "later_s": later_s, **search,
                  "max_gap_ms": frame_gap, "peak_hwm": end["VmHWM"],
                  "peak_anon": sampler.peak_anon, "peak_anon_phase": sampler.peak_anon_phase, "base_anon": base_anon,
                  "phase_anon": sampler.phase_anon,
                  "resident_anon": end["RssAnon"], "resident_file": end["RssFile"]}))
"""


def trace_path(events: int, providers_in_turn: bool = False) -> Path:
    """The cached generated trace of ``events`` events with scheduling (generated on first use); with
    ``providers_in_turn``, its providers' records one provider after the other (``fxscope generate
    --providers-in-turn``: as a one-shot Fuchsia trace is saved, out of time order between providers)."""
    CACHE.mkdir(parents=True, exist_ok=True)
    path = CACHE / f"scale_{events}_sched{'_in_turn' * providers_in_turn}.fxt"
    if not path.exists():
        print(f"generating {path.name} ...", file=sys.stderr, flush=True)
        subprocess.run([sys.executable, "-m", "fxscope", "generate", "-o", str(path), "--events", str(events),
                        "--scheduling", *["--providers-in-turn"] * providers_in_turn], check=True, cwd=ROOT)  # fmt: skip
    return path


def with_tick_rate(path: Path, rate: int) -> Path:
    """A copy of the generated trace ``path`` (cached next to it) whose providers tick ``rate`` times a second:
    its initialization records' tick rates rewritten (those before the first event record), each scaled by
    ``rate`` / 1 GHz (the generator's 2 GHz provider then ticks at twice ``rate``: its events' times stay in
    step with the others', every time scaled alike). The generator's providers tick at 1 and 2 GHz; real
    Fuchsia traces' at 24 MHz and the like, whose conversion to nanoseconds costs the reader and the build
    more."""
    import numpy as np

    out = path.with_name(f"{path.stem}_{rate}hz.fxt")
    if out.exists():
        return out
    part = out.with_name(out.name + ".part")
    shutil.copyfile(path, part)
    words = np.memmap(part, np.uint64, "r+")
    at = 0
    while at < len(words):
        header = int(words[at])
        kind, size = header & 0xF, (header >> 4) & 0xFFF
        if kind == 4 or size == 0:  # (the first event record: the initialization records come before it)
            break
        if kind == 1 and size >= 2:
            words[at + 1] = int(words[at + 1]) * rate // 1_000_000_000
        at += size
    words.flush()
    del words
    os.replace(part, out)
    return out


def warm(path: Path) -> float:
    """Read the whole trace once (16 MB at a time) and return how long that took: the children then read it
    from the page cache, as a trace just saved or opened before is. The development VM pages out what is left
    unaccessed for a minute (DAMON's proactive reclaim, :func:`damon_pageout`), so a trace generated or read
    minutes earlier came partly from the disk: the 100M read at 308-335 MB/s against 379-402 MB/s cached."""
    t = time.perf_counter()
    with open(path, "rb", buffering=0) as f:
        while f.read(16 << 20):
            pass
    return time.perf_counter() - t


def damon_pageout() -> str:
    """What the kernel's DAMON does to unaccessed pages, when a kdamond runs a pageout scheme (the
    development VM's proactive reclaim), e.g. "pages unaccessed for 60 s paged out, at most 128 MB/s"; ""
    otherwise (or where /sys says nothing)."""
    root = Path("/sys/kernel/mm/damon/admin/kdamonds")
    try:
        for kd in root.iterdir():
            if not kd.is_dir() or (kd / "state").read_text().strip() != "on":
                continue
            for ctx in (kd / "contexts").iterdir():
                if not ctx.is_dir():
                    continue
                aggr_us = int((ctx / "monitoring_attrs/intervals/aggr_us").read_text())
                for scheme in (ctx / "schemes").iterdir():
                    if not scheme.is_dir() or (scheme / "action").read_text().strip() != "pageout":
                        continue
                    age = int((scheme / "access_pattern/age/min").read_text()) * aggr_us / 1e6
                    quota = int((scheme / "quotas/bytes").read_text()) >> 20
                    ms = int((scheme / "quotas/reset_interval_ms").read_text())
                    return f"pages unaccessed for {age:.0f} s paged out, at most {quota} MB per {ms} ms"
    except (OSError, ValueError):
        return ""
    return ""


def _child(code: str, path: Path, *args: str) -> dict:
    # (numpy's OpenBLAS on one thread, as `fxscope` sets it (app/cli.py): its threads spin a while at import)
    env = {"OPENBLAS_NUM_THREADS": "1", **os.environ, "PYTHONPATH": str(ROOT)}
    out = subprocess.run([sys.executable, "-c", code, str(path), *args], capture_output=True, text=True, env=env,
                         cwd=ROOT)  # fmt: skip
    if out.returncode != 0:
        raise SystemExit(f"child failed:\n{out.stderr}")
    return json.loads(out.stdout.strip().splitlines()[-1])


def _load_figures(path: Path, search: bool) -> dict:
    """The load child's figures of one trace (read, model build, memory, search, analysis)."""
    r = _child(_CHILD_LOAD, path, "search" if search else "no-search")
    size = path.stat().st_size
    fig: dict[str, float] = {"events": r["events"], "file_mb": size / 1e6, "read_s": r["read_s"],
                             "read_mb_s": size / 1e6 / r["read_s"], "model_s": r["model_s"]}  # fmt: skip
    for name, seconds in r["steps"].items():
        fig[f"prep.{name}_s"] = seconds
    # the model's build: its constructor, then its steps' wall time (two at once: less than their sum)
    fig["build_s"] = r["model_s"] + r["build_wall_s"]
    fig["build.steps_sum_s"] = sum(r["steps"].values())
    fig["build/read"] = fig["build_s"] / r["read_s"]
    # their CPU time and page faults: the system time is mostly first touches of fresh pages, whose cost per
    # page is the machine's (on the development VM it rose ~3x once a process had a few GB in use: a 100M
    # figure can grow past 3.5x on page faults alone)
    for phase in ("read", "build"):
        user, system, faults = r[f"{phase}_usage"]
        fig[f"{phase}.cpu_s"] = user + system
        fig[f"{phase}.sys_s"] = system
        fig[f"{phase}.page_faults_k"] = faults / 1e3
        fig[f"{phase}.sys_us_per_fault"] = system / faults * 1e6 if faults else float("nan")
    # what the window waits for before its first frame (the later steps are built after it): a sum of steps
    # (when the last of them ended in the build of every step: an older checkout, the sum of their times)
    first = [k for k in r["steps"] if k not in r["later"]]
    ended = r.get("ended") or {}
    fig["first_frame_build_s"] = r["model_s"] + (max((ended[k] for k in first), default=0.0) if ended
                                                 else sum(r["steps"][k] for k in first))  # fmt: skip
    fig["first_frame_build/read"] = fig["first_frame_build_s"] / r["read_s"]
    for key in ("peak_hwm", "peak_anon", "peak_file", "resident_anon", "resident_file"):
        fig[f"{key}_mb"] = r[key] / 1e6
        fig[f"{key}_x_file"] = r[key] / size
        fig[f"{key}_B/ev"] = r[key] / r["events"]
    # the first step whose RssAnon came within 1% of the peak (later steps reuse the memory the allocator
    # kept, so their RssAnon stays there without their own temporaries reaching it)
    phases = list(r["phase_anon"].items())
    fig["peak_anon_phase"] = next((p for p, a in phases if a >= 0.99 * r["peak_anon"]), r["peak_anon_phase"])  # type: ignore[assignment]
    if search:
        fig["first_search_s"] = r["first_search_s"]  # (with the argument index's build)
        fig["after_search_hwm_mb"] = r["after_search_hwm"] / 1e6
        fig["search.names_only_s"] = r["names_search_s"]  # (no argument index: what the window shows first)
        fig["search.names_only_cpu_s"] = r["names_search_cpu_s"]
        fig["search.index_build_s"] = r["first_search_s"] - r["indexed_search_s"]
        fig["search.indexed_s"] = r["indexed_search_s"]
        fig["search.indexed_cpu_s"] = r["indexed_search_cpu_s"]
    fig["analysis.whole_trace_s"] = r["analysis_s"]  # the analysis panel's statistics and flame graph
    fig["analysis.whole_trace_cpu_s"] = r["analysis_cpu_s"]
    # then each slice's node of the flame graph (for a click on a frame: the panel makes it right after)
    fig["analysis.frame_nodes_s"] = r.get("frame_nodes_s", float("nan"))
    # the fastest of three runs of each query: the first maps fresh memory, whose page faults cost what the
    # machine makes them cost (on the development VM several times more at 100M events than at 30M when its
    # page cache must be reclaimed: machine.reclaimed_mb); the fastest is the query's own cost
    for key, name in (("names_search", "search.names_only"), ("indexed_search", "search.indexed"),
                      ("analysis", "analysis.whole_trace")):  # fmt: skip
        if r.get(f"{key}_best_s") is not None and (search or key == "analysis"):
            fig[f"{name}_best_s"] = r[f"{key}_best_s"]
    if "reclaimed_pages" in r:  # (machine-wide, during the load child: other processes' too)
        fig["machine.reclaimed_mb"] = r["reclaimed_pages"] * 4096 / 1e6
    fig["load_avg_1min"] = r["load_avg"]  # (the machine's, at the end of the load child: figures are noisy)
    for phase, anon in r["phase_anon"].items():
        fig[f"anon_in.{phase}_mb"] = anon / 1e6
    return fig


def measure(events: int, frame: bool, search: bool, during: bool = False, window_only: bool = False,
            sample_frames: bool = False, tick_rate: int | None = None, providers_in_turn: bool = False,
            search_early: bool = False) -> dict:  # fmt: skip
    """The figures of one size (see the module docstring), each from a fresh process. ``window_only``: the
    window's child alone (``--frame`` without the load child's figures); ``during``: its navigation frames
    also while the background build runs; ``sample_frames``: the memory sampler runs during the navigation
    frames too; ``tick_rate``: the trace's providers ticking that many times a second (:func:`with_tick_rate`);
    ``providers_in_turn``: the trace written one provider after the other (:func:`trace_path`);
    ``search_early``: the window's search typed right after its first frame, while its background build runs
    (else once that build is done)."""
    path = trace_path(events, providers_in_turn)
    if tick_rate is not None:
        path = with_tick_rate(path, tick_rate)
    size = path.stat().st_size
    warm_s = warm(path)
    fig = {"file_mb": size / 1e6} if window_only else _load_figures(path, search)
    fig["machine.warm_read_mb_s"] = size / 1e6 / warm_s  # (the trace read once first: GB/s when it was cached)
    if frame or window_only:
        warm(path)
        f = _child(_CHILD_FRAME, path, "search" if search else "no-search", "during" if during else "after",
                   "sample-frames" if sample_frames else "quiet-frames",
                   "search-early" if search_early else "search-built")  # fmt: skip
        fig["first_frame_s"] = f["first_frame_s"]
        fig["first_frame_cpu_s"] = f["first_frame_cpu_s"]  # all threads' CPU time until then (less noisy under load)
        fig["frame.tab_s"] = f["tab_s"]
        # the window's loader: its read, and its build before the first frame (the constructor and the first
        # frame's steps; a large trace's other tables are built in the background after it)
        fig["frame.loader_read_s"] = f.get("loader_read_s", float("nan"))
        fig["frame.loader_build_s"] = f.get("loader_build_s", float("nan"))
        fig["frame.loader_build/read"] = fig["frame.loader_build_s"] / fig["frame.loader_read_s"]
        fig["frame.all_tracks_s"] = f["all_tracks_s"]  # every track kind's table in (built after the first frame)
        fig["frame.background_done_s"] = f["later_s"]  # and the flows and statistics (the peak memory spans it)
        fig["frame.max_ui_gap_ms"] = f["max_gap_ms"]
        fig["frame.window_base_anon_mb"] = f["base_anon"] / 1e6
        fig["frame.peak_hwm_mb"] = f["peak_hwm"] / 1e6
        fig["frame.peak_anon_mb"] = f["peak_anon"] / 1e6
        fig["frame.peak_anon_x_file"] = f["peak_anon"] / size
        fig["frame.resident_anon_mb"] = f["resident_anon"] / 1e6
        fig["frame.peak_anon_phase"] = f["peak_anon_phase"]  # (the window's phase when its peak was sampled)
        for phase, anon in f.get("phase_anon", {}).items():
            fig[f"frame.anon_in.{phase}_mb"] = anon / 1e6
        if search:  # typed 0.5 s after the first frame: the UI's longest stall until the count shows
            fig["frame.first_search_s"] = f["search_s"]  # until every match is counted
            fig["frame.first_search_count_s"] = f["search_first_count_s"]  # until a count shows
            fig["frame.first_search_count_status"] = repr(f["search_first_count_status"])
            fig["frame.first_search_max_ui_gap_ms"] = f["search_max_gap_ms"]
            fig["frame.first_search_status"] = f"{f['search_first_status']!r} then {f['search_status']!r}"
        fig.update(_frame_times(f))
    return fig


def _frame_times(f: dict) -> dict:
    """The window child's navigation frames (bench_timeline's levels, drawn once the background build and the
    search index are done): wall p50/p95 of every frame (full, 1ms, pan_zoom; as bench_timeline's overall
    figure) and per level, with the UI thread's CPU per frame (less inflated on a loaded machine)."""
    fig: dict = {"frame.index_done_s": f["index_done_s"]}
    # how long the argument index's build paused: for the UI's frames and input, and held while a search ran
    # (app/worker_threads.py: ModelBuild.paused_s)
    fig["frame.index_paused_s"] = f.get("index_paused_s", float("nan"))
    apart = ("full_repaint", "during_build", "1ms_jump")  # (as bench_timeline's overall figures)
    every = [ms for level, frames in f["levels"].items() if level not in apart for ms in frames]
    every_cpu = [ms for level, c in f["cpu"].items() if level not in apart for ms in c]
    fig["frame.p50_ms"], fig["frame.p95_ms"] = percentile(every, 0.5), percentile(every, 0.95)
    fig["frame.cpu_p50_ms"], fig["frame.cpu_p95_ms"] = percentile(every_cpu, 0.5), percentile(every_cpu, 0.95)
    # the longest frame after the build, the jump to the 1 ms window included: a stall the p95 hides
    fig["frame.max_ms"] = max(ms for level, v in f["levels"].items() if level != "during_build" for ms in v)
    fig["frame.cpu_max_ms"] = max(ms for level, c in f["cpu"].items() if level != "during_build" for ms in c)
    for level, frames in f["levels"].items():
        c = f["cpu"][level]
        fig[f"frame.{level}.p50_ms"], fig[f"frame.{level}.p95_ms"] = percentile(frames, 0.5), percentile(frames, 0.95)
        fig[f"frame.{level}.cpu_p50_ms"], fig[f"frame.{level}.cpu_p95_ms"] = percentile(c, 0.5), percentile(c, 0.95)
    fig["frame.paints_per_frame"] = "..".join(map(str, f["paints_per_frame"]))  # (of the timeline view: 1)
    fig["frame.load_avg_1min"] = f["load_avg"]  # (the machine's, after the frames)
    return fig


def _fmt(v) -> str:
    if isinstance(v, str):
        return v
    if isinstance(v, int) or (float(v).is_integer() and abs(v) >= 1000):
        return f"{int(v):,}"
    return f"{v:.3g}" if abs(v) < 100 else f"{v:.0f}"


def _ratio(a, b) -> float | None:
    """``b / a`` of two numeric figures, None for text or a zero."""
    return b / a if not isinstance(a, str) and not isinstance(b, str) and a else None


def print_table(names: list[str], figs: list[dict], growth: dict[str, list[float | None]] | None = None) -> None:
    """One row per figure, one column per size, then the growth between consecutive sizes (``growth``: given
    per figure, one a pair of sizes; else each pair's ratio)."""
    keys = list(dict.fromkeys(k for f in figs for k in f))
    pairs = [f"{b}/{a}" for a, b in itertools.pairwise(names)]
    print(f"{'figure':32s}" + "".join(f"{n:>14s}" for n in names) + "".join(f"{g:>14s}" for g in pairs))
    for k in keys:
        vals = [f.get(k, "") for f in figs]
        row = f"{k:32s}" + "".join(f"{_fmt(v) if v != '' else '-':>14s}" for v in vals)
        ratios = growth[k] if growth is not None else [_ratio(a, b) for a, b in itertools.pairwise(vals)]
        row += "".join(f"{r:>14.2f}" if r is not None else f"{'':>14s}" for r in ratios)
        print(row)


#: the sizes issue 18's goals are set for (smaller traces' fixed costs are not its subject)
GOAL_SIZES = ("10m", "30m", "100m")
#: issue 18's goals on one size's figures: (figure, the goal's words, the test of its value, the sizes it holds
#: for: None all of GOAL_SIZES)
SIZE_GOALS = [
    ("read_mb_s", "read >= 300 MB/s", lambda v: v >= 300, None),
    ("build/read", "model build <= the read", lambda v: v <= 1.0, None),
    ("peak_anon_x_file", "peak owned while loading <= 1.5x the file", lambda v: v <= 1.5, None),
    ("resident_anon_x_file", "resident after the load <= 1.2x the file", lambda v: v <= 1.2, None),
    ("frame.peak_anon_x_file", "window's peak owned <= 1.5x the file", lambda v: v <= 1.5, None),
    ("first_frame_s", "first frame <= 45 s at 100M", lambda v: v <= 45, ("100m",)),
    ("frame.p50_ms", "frames p50 <= 16 ms at 100M", lambda v: v <= 16, ("100m",)),
    ("frame.p95_ms", "frames p95 <= 33 ms at 100M", lambda v: v <= 33, ("100m",)),
    ("frame.first_search_s", "window's search, every match <= 2 s", lambda v: v <= 2, None),
    ("analysis.whole_trace_s", "whole-trace statistics + flame graph <= 2 s", lambda v: v <= 2, None),
]
#: the growth goal: the 100M figures at most this many times the 30M ones (100/30 = 3.33: linear)
GROWTH_GOAL = 3.5
#: a time under this at 100M is left out of the growth goal: a step of constant work (the overview's 1,000
#: density bins, the object labels) takes ~0.1 ms at every size, and its ratio is the timer's noise (1.3-6.7x)
GROWTH_FLOOR_S = 0.01


def _cost(key: str) -> bool:
    """Whether figure ``key`` is a cost that the growth goal bounds: a time or owned memory of the trace's
    load or queries (not the machine's figures, throughputs, frame times, or the mapped file's clean pages)."""
    if key.startswith(("machine.", "load_avg", "frame.load_avg", "frame.window_base")) or key.endswith("_mb_s"):
        return False
    if "file" in key or "hwm" in key:
        return False
    return key.endswith(("_s", "_mb"))


def goal_report(names: list[str], figs: list[dict], growth: dict[str, list[float | None]] | None = None) -> list[str]:
    """Issue 18's goals against these figures, a line each: "met" or "MISSED", the goal, the figure at each
    size it holds for (and the sizes that missed it); then the growth goal from 30M to 100M (each cost figure's
    ratio: ``growth``'s when given, as :func:`median_rounds` makes it, else the two sizes' own), with the
    figures over it. Goals whose figures were not measured (no ``--frame``, no such size) are left out."""
    lines = []
    for key, words, ok, sizes in SIZE_GOALS:
        at = [(n, f[key]) for n, f in zip(names, figs, strict=True)
              if key in f and not isinstance(f[key], str) and n in (sizes or GOAL_SIZES)]  # fmt: skip
        if not at:
            continue
        missed = [n for n, v in at if not ok(v)]
        values = " / ".join(_fmt(v) for _, v in at)
        lines.append(f"{'MISSED' if missed else 'met':8s}{words}: {values}"
                     + (f" (missed at {', '.join(missed)})" if missed else ""))  # fmt: skip
    if "30m" in names and "100m" in names:
        i, j = names.index("30m"), names.index("100m")
        over = []
        for key in dict.fromkeys(k for f in (figs[i], figs[j]) for k in f):
            if not _cost(key):
                continue
            if growth is not None and j == i + 1 and key in growth:
                ratio = growth[key][i]
            else:
                ratio = _ratio(figs[i].get(key, ""), figs[j].get(key, ""))
            big = figs[j].get(key, 0)
            if key.endswith("_s") and not isinstance(big, str) and big < GROWTH_FLOOR_S:
                continue
            if ratio is not None and ratio > GROWTH_GOAL:
                over.append(f"{key} {ratio:.2f}x")
        lines.append(f"{'MISSED' if over else 'met':8s}100m/30m growth <= {GROWTH_GOAL}x for every cost"
                     + (f": over it {', '.join(over)}" if over else ""))  # fmt: skip
    return lines


def median_rounds(names: list[str], rounds: list[list[dict]]) -> tuple[list[dict], dict[str, list[float | None]]]:
    """The figures of several rounds (each a figure dict per size): each numeric figure's median over the
    rounds (text: the first round's), and each figure's growth between consecutive sizes as the median of the
    rounds' own ratios (each size's peer is the other size measured in the same round, minutes apart: this
    machine's speed drifts by ~20% within an hour, which the ratio of two medians would not cancel)."""
    figs = []
    for i in range(len(names)):
        merged: dict = {}
        for k in dict.fromkeys(k for r in rounds for k in r[i]):
            vals = [r[i][k] for r in rounds if k in r[i]]
            nums = [v for v in vals if not isinstance(v, str)]
            merged[k] = statistics.median(nums) if len(nums) == len(vals) else vals[0]
        figs.append(merged)
    growth: dict[str, list[float | None]] = {}
    for k in dict.fromkeys(k for f in figs for k in f):
        per_pair = []
        for i in range(len(names) - 1):
            ratios = [x for r in rounds if (x := _ratio(r[i].get(k, ""), r[i + 1].get(k, ""))) is not None]
            per_pair.append(statistics.median(ratios) if ratios else None)
        growth[k] = per_pair
    return figs, growth


def machine_speed(fault_mb: int = 256, sort_n: int = 4_000_000) -> dict[str, float]:
    """Two figures of the machine itself, measured before the sizes (the fastest of three runs), so that runs
    on different machines can be compared: ``fault_us_per_page`` is the time to first touch a page of fresh
    anonymous memory (``fault_mb`` MB mapped, one byte written a page: the page fault, the kernel zeroing the
    page, and on a virtual machine the hypervisor's share), which every table and temporary of a load pays
    once a page; ``sort_s`` is numpy's sort of ``sort_n`` random int64 (the CPU and its caches). The
    development VMs differed by ~3x in the first (1.4 against 3.7-7 us) between sessions, and the load's
    figures with them."""
    import mmap

    import numpy as np

    pages = (fault_mb << 20) // mmap.PAGESIZE
    fault, sort = float("inf"), float("inf")
    values = np.random.default_rng(0).integers(0, 1 << 62, sort_n)
    for _ in range(3):
        m = mmap.mmap(-1, pages * mmap.PAGESIZE)
        a = np.frombuffer(m, np.uint8)
        t = time.perf_counter()
        a[:: mmap.PAGESIZE] = 1
        fault = min(fault, (time.perf_counter() - t) / pages * 1e6)
        del a
        m.close()
        b = values.copy()
        t = time.perf_counter()
        b.sort()
        sort = min(sort, time.perf_counter() - t)
    return {"fault_us_per_page": fault, "sort_s": sort}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", default="10m,30m", help="comma-separated: " + ", ".join(SIZES))
    parser.add_argument("--frame", action="store_true", help="also time the window's first frame (offscreen)")
    parser.add_argument("--json", action="store_true", help="print the figures as JSON too")
    parser.add_argument("--search", choices=("auto", "yes", "no"), default="auto",
                        help="time the first search after the load (builds the search index; auto: below 100M "
                        "events, as it needs ~25 more bytes an event)")  # fmt: skip
    parser.add_argument("--window-only", action="store_true",
                        help="only the window's child (--frame's figures, without the load child's)")
    parser.add_argument("--build-threads", type=int, default=None,
                        help="the threads the model's steps are built on (FXSCOPE_BUILD_THREADS; 1: one "
                        "after the other)")  # fmt: skip
    parser.add_argument("--during", action="store_true",
                        help="with --frame: pan/zoom frames also while the window's background build runs "
                        "(frame.during_build.*; it lengthens frame.background_done_s)")  # fmt: skip
    parser.add_argument("--sample-frames", action="store_true",
                        help="keep the 2 ms memory sampler running during the navigation frames (as before: "
                        "it lengthens them, see the docstring)")  # fmt: skip
    parser.add_argument("--tick-rate", type=int, default=None,
                        help="measure copies of the traces whose providers tick this many times a second (e.g. "
                        "24000000, as real Fuchsia traces; the generator's tick at 1 and 2 GHz)")  # fmt: skip
    parser.add_argument("--providers-in-turn", action="store_true",
                        help="measure traces written one provider after the other, as a one-shot Fuchsia trace is "
                        "saved (out of time order between providers; the default is a streamed trace's order)")  # fmt: skip
    parser.add_argument("--rounds", type=int, default=1,
                        help="measure every size this many times, in turn, and print each figure's median and the "
                        "median of each round's growth (the machine's speed drifts between rounds)")  # fmt: skip
    parser.add_argument("--search-early", action="store_true",
                        help="with --frame: type the window's search right after its first frame, while its "
                        "background build runs (else once the build is done)")  # fmt: skip
    args = parser.parse_args()
    names = [s.strip().lower() for s in args.sizes.split(",") if s.strip()]
    if args.build_threads is not None:  # (read by the children's fxscope.core.concurrent_steps)
        os.environ["FXSCOPE_BUILD_THREADS"] = str(args.build_threads)
    for n in names:
        if n not in SIZES:
            raise SystemExit(f"unknown size {n!r}: one of {', '.join(SIZES)}")
    load = os.getloadavg()
    speed = machine_speed()
    print(f"machine: {os.cpu_count()} cores, load average {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}; a fresh page "
          f"{speed['fault_us_per_page']:.2f} us to fault in, numpy's sort of 4M int64 {speed['sort_s'] * 1e3:.0f} ms "
          "(machine_speed: compare runs on other machines by these)")  # fmt: skip
    pageout = damon_pageout()
    if pageout:
        print(f"machine: the kernel's DAMON pages out what goes unused ({pageout}): each trace is read once "
              "right before its children run (machine.warm_read_mb_s)")  # fmt: skip
    rounds = []
    for r in range(max(1, args.rounds)):
        figs = []
        for n in names:
            search = args.search == "yes" or (args.search == "auto" and SIZES[n] < 100_000_000)
            figs.append(measure(SIZES[n], args.frame, search, args.during, args.window_only, args.sample_frames,
                                args.tick_rate, args.providers_in_turn, args.search_early))  # fmt: skip
            print(f"{n}: done" + (f" (round {r + 1} of {args.rounds})" if args.rounds > 1 else ""), file=sys.stderr,
                  flush=True)  # fmt: skip
        rounds.append(figs)
    growth = None
    if len(rounds) == 1:
        print_table(names, figs)
    else:
        figs, growth = median_rounds(names, rounds)
        print(f"medians of {len(rounds)} rounds (each round every size, in turn); growth: the median of the rounds' "
              "own ratios")  # fmt: skip
        print_table(names, figs, growth)
    report = goal_report(names, figs, growth)
    if report:
        print("issue 18's goals:")
        print("\n".join("  " + line for line in report))
    reclaimed = {n: f.get("machine.reclaimed_mb", 0) for n, f in zip(names, figs, strict=True)}
    if any(reclaimed.values()):
        print("note: the kernel reclaimed memory (its page cache, as a rule) while the load child ran: "
              + ", ".join(f"{n} {mb:,.0f} MB" for n, mb in reclaimed.items())
              + "; those sizes' times include its reclaim, which the 2 cores share (free memory first: the"
              " README's large-traces section says how)")
    if args.json:
        print(json.dumps({"machine": speed, **(dict(zip(names, figs, strict=True)) if len(rounds) == 1 else
                         {"rounds": [dict(zip(names, f, strict=True)) for f in rounds]})}))  # fmt: skip


if __name__ == "__main__":
    main()
