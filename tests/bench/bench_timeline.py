"""Timeline benchmark: model build and offscreen frame times for a 10-million-event trace, and the demo's
first frame.

Generates (once, cached under tests/bench/.cache/) a synthetic trace with ``core.synthetic_trace``, builds the
model in a fresh process, renders the timeline offscreen at 1920x1080 at full zoom-out, in a 1 ms window and
through 60 pan/zoom steps, and prints ``model_build_s`` (the tables the first frame needs, as the app's
loader builds them), ``model_bytes_per_event`` (the reader's columns plus every model table, index and
pyramid, measured after the frames so that what drawing built counts), ``frame_ms_p50``/``frame_ms_p95``
(per zoom level and over all frames), and with each level the UI thread's CPU time per frame (less inflated
than the wall clock on a loaded machine).
As the window does for a large trace, the later tables (flows, statistics) and then the search index are
built in a background thread once the view is up: ``background_build_s`` is how long that takes, and
``frame_ms_p50[during_build]`` the pan/zoom frames drawn while it runs (the build and the UI thread share
the interpreter's lock: those frames wait for it). They are reported apart; the overall figures are the
frames of a loaded trace, after the build.
``frame_ms_p50[1ms_jump]`` is the one frame of the jump from the full view to the 1 ms window (what the
views build on first use zoomed in is built in it; not in the overall figures).
The full and 1 ms levels are cold frames: every track draws from the model again (the pictures the
tracks keep between frames dropped); ``full_repaint`` is the full view painted again unchanged (what a
tooltip or the pointer over a counter costs; not in the overall figures); pan/zoom steps use the pictures
as the app does (a pan inside a track's picture moves it, a zoom builds a new one). And
``first_frame_s``: ``fxscope screenshot`` of the bundled demo as a whole process (start, load, first paint),
and ``ui_max_stall_ms``: the longest the UI thread went without running a 10 ms timer while the window loaded
the trace in the background and opened its tab; ``first_progress_s`` (opening to the first progress update),
``cancel_latency_s`` (Cancel pressed at 10..90% of a load until the window is idle again) and
``cancel_thread_stop_s`` (until the loader thread has unwound at its next block).
The peer figure is the same frame rendered with level-of-detail merging switched off (every slice drawn),
in the same process: the ratio is what the per-pixel summaries buy.
Run: ``.venv/bin/python tests/bench/bench_timeline.py [--events N]``.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
CACHE = Path(__file__).resolve().parent / ".cache"

#: the frame timing shared with bench_scale.py (``widget``: a shown TimelineWidget): ``frame()`` draws one
#: frame as the app does and returns its wall time in ms (the UI thread's CPU time per level in ``cpu``, the
#: paints of the view per frame in ``paints``), ``step(i)`` is the i-th of the pan/zoom navigation steps
FRAME_STEPS = r"""
from PySide6.QtCore import QEvent, QObject

class PaintCounter(QObject):
    # counts paint events of the timeline's view: a frame must be exactly one paint of it

    paints = 0

    def eventFilter(self, obj, event):  # noqa: N802 - Qt API
        if event.type() == QEvent.Type.Paint:
            PaintCounter.paints += 1
        return False

counter = PaintCounter()
widget.plot.viewport().installEventFilter(counter)
paints = []

cpu = {}

def frame(redraw=True, cold=False, level=None):
    # one frame as the app draws it: the event loop turns the pending view change into one paint of the
    # plot (and of the overview strip). A frame with no view change (``redraw``) asks for the repaint
    # itself; after a pan or zoom it must not, or the view would be painted twice (the explicit update
    # and the scene's own change notification reach the view in separate events)
    # ``cold``: every track draws from the model again (their kept pictures dropped), as after a change of
    # the view; without it a redraw is a repaint of the same view (the pointer over a counter, a tooltip)
    if cold:
        for lane in widget.lanes():
            getattr(lane.item, "invalidate", lane.item.update)()  # (update: code from before the pictures)
    if redraw:
        widget.plot.viewport().update()
    before = PaintCounter.paints
    t, c = time.perf_counter(), time.thread_time()
    app.processEvents()
    ms = (time.perf_counter() - t) * 1000
    cpu.setdefault(level, []).append((time.thread_time() - c) * 1000)  # the UI thread's CPU time: less
    # inflated than the wall clock when other processes load the machine
    paints.append(PaintCounter.paints - before)
    return ms

def step(i):
    # one of the navigation steps: zoom in, pan right, pan back a little (the cycle restarts from the full
    # view every 60 steps)
    if i % 60 == 0:
        widget.fit_all(); app.processEvents()  # settle (not measured)
    if i % 3 == 0:
        widget.zoom(0.6)
    elif i % 3 == 1:
        widget.pan(0.3)
    else:
        widget.pan(-0.1)

def navigation_levels():
    # the frames of a loaded trace, by level: the full view drawn cold (5) and repainted unchanged (5), the
    # jump to a 1 ms window in the middle (1) and that window drawn cold (5), then 60 pan/zoom steps from the
    # full view
    levels = {}
    widget.fit_all(); app.processEvents()  # settle (not measured)
    levels["full"] = [frame(cold=True, level="full") for _ in range(5)]
    levels["full_repaint"] = [frame(level="full_repaint") for _ in range(5)]
    mid = (widget.model.start_ns + widget.model.end_ns) // 2
    widget.set_range_ns(mid, mid + 1_000_000)
    # the first frame of that window (not in the overall figures): what the views build on first use past the
    # pyramid's finest level is built in it
    levels["1ms_jump"] = [frame(redraw=False, level="1ms_jump")]
    levels["1ms"] = [frame(cold=True, level="1ms") for _ in range(5)]
    steps = []
    for i in range(60):
        step(i)
        steps.append(frame(redraw=False, level="pan_zoom"))
    levels["pan_zoom"] = steps
    return levels

"""

_CHILD = r"""
import json, os, statistics, sys, time
os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
import numpy as np
from fxscope.app.gui import application
app = application()
from fxscope.core.trace.model import TraceModel
from fxscope.core.trace.prepare import defers_later_steps, prepare_model
from fxscope.app.deferred_tables import DeferredTables
from fxscope.formats.fxt.reader import read_fxt
from fxscope.app.timeline.widget import TimelineWidget

path, events = sys.argv[1], int(sys.argv[2])
t0 = time.perf_counter()
cols = read_fxt(path)
t1 = time.perf_counter()
model = TraceModel(cols)
# the tables the first frame needs, as the app's loader builds them; a large trace's later tables (flows,
# statistics) and the search index follow in the background once the window is up (below)
prepare_model(model, first_frame_only=defers_later_steps(model))
t2 = time.perf_counter()

def nbytes(obj, seen):
    if id(obj) in seen:
        return 0
    seen.add(id(obj))
    if isinstance(obj, np.ndarray):  # owned memory only: views, and arrays over the mapped file, are not
        return obj.nbytes if obj.flags.owndata else 0
    if isinstance(obj, (list, tuple)):
        return sum(nbytes(o, seen) for o in obj)
    if isinstance(obj, dict):
        return sum(nbytes(v, seen) for v in obj.values())
    if hasattr(obj, "__dict__"):
        return sum(nbytes(v, seen) for k, v in vars(obj).items() if k not in ("cols",))
    return 0


widget = TimelineWidget(model)
widget.resize(1920, 1080)
widget.show()
app.processEvents()

""" + FRAME_STEPS + r"""
# the window's background builds after its first frame, as a large trace's tab runs them (the later tables,
# then the search index): navigation frames while they run are measured apart, and how long they take
levels = {}
DURING_STEPS = 90
b0 = time.perf_counter()
indexing = widget.search_indexing
deferred = None
if DeferredTables.wanted(model):
    deferred = DeferredTables(model, widget)
    indexing.hold()
    deferred.done.connect(indexing.release)
    if hasattr(deferred, "tablesBuilt"):  # the track kinds built after the first frame fill in as the app's do
        deferred.tablesBuilt.connect(widget.tables_built)
    deferred.start()
indexing.start_soon()
during = []
for i in range(DURING_STEPS):  # navigation while the build runs (it pauses for frames, at most 0.5 s at once)
    if model.search_index_ready:
        break
    step(i)
    during.append(frame(redraw=False, level="during_build"))
during_s = time.perf_counter() - b0
while not (indexing.worker is not None and indexing.worker.isFinished()) and time.perf_counter() - b0 < 600:
    app.processEvents()  # the build's end, the window idle (the index is started when the later tables are in)
    time.sleep(0.001)
app.processEvents()
background_s = time.perf_counter() - b0
paused_s = sum(getattr(w, "paused_s", 0.0) for w in (deferred and deferred.worker, indexing.worker) if w is not None)
levels["during_build"] = during
levels.update(navigation_levels())
# the peer: the full view again with level-of-detail merging off (every slice becomes a box)
lod = model.visible
model.visible = lambda track, a, b, ns_per_px: lod(track, a, b, 1e-3)
widget.fit_all(); app.processEvents()  # settle (not measured)
peer = [frame(cold=True, level="peer") for _ in range(3)]
model.visible = lod
# the model as the views left it: every table, index and pyramid that drawing these frames built
seen = set()
model_bytes = nbytes(cols, seen) + nbytes(model, seen)
print(json.dumps({"read_s": t1 - t0, "model_s": t2 - t1, "events": len(cols.ev_ts),
                  "model_bytes": model_bytes, "levels": levels, "background_s": background_s, "during_s": during_s,
                  "paused_s": paused_s, "peer_full": peer,
                  "paints_per_frame": [min(paints), max(paints)], "cpu": cpu}))
"""


#: a shown 1920x1080 MainWindow (``window``) and a 10 ms timer noting the UI thread's gaps between its ticks
#: in ``gaps`` (ms): the window children's common start (bench_scale.py uses it too)
WINDOW_WITH_GAP_TIMER = r"""
window = MainWindow()
window.resize(1920, 1080)
window.show()
app.processEvents()
gaps, last = [], [time.perf_counter()]

def tick():
    now = time.perf_counter()
    gaps.append((now - last[0]) * 1000)
    last[0] = now

timer = QTimer()
timer.timeout.connect(tick)
timer.start(10)
"""

_CHILD_LOAD = r"""
import json, os, sys, time
os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
from fxscope.app.gui import application
app = application()
from PySide6.QtCore import QTimer
from fxscope.app.main_window import MainWindow

# the UI thread's longest stall while the window loads a big trace in the background and opens its tab
""" + WINDOW_WITH_GAP_TIMER + r"""
t0 = time.perf_counter()
window.open_path(sys.argv[1], background=True)
while window.tabs.count() == 0 and time.perf_counter() - t0 < 600:
    app.processEvents()
    time.sleep(0.001)
for _ in range(20):
    app.processEvents()
    time.sleep(0.01)
print(json.dumps({"load_to_tab_s": time.perf_counter() - t0, "max_gap_ms": max(gaps),
                  "gaps_over_100ms": sum(g > 100 for g in gaps)}))
"""


_CHILD_CANCEL = r"""
import json, os, sys, time
os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
from fxscope.app.gui import application
app = application()
from fxscope.app.main_window import MainWindow

# time from opening to the first progress update, and Cancel's latency at points through the load: until
# the window is idle again (progress bar gone), and until the loader thread has actually stopped
path, total_s = sys.argv[1], float(sys.argv[2])
window = MainWindow()
window.show()
app.processEvents()
first, ui, stop = [], [], []
shown = window._show_progress
for fraction in (0.0, 0.1, 0.3, 0.5, 0.7, 0.9):
    seen = []
    t0 = time.perf_counter()
    # the progress bar's updates as the window gets them (connecting to the loader here could miss the first)
    window._show_progress = lambda f, t0=t0: (seen.append(time.perf_counter() - t0), shown(f))
    loader = window.load_in_background(path)
    while time.perf_counter() - t0 < fraction * total_s or (fraction == 0.0 and not seen):
        app.processEvents()
        time.sleep(0.001)
        if time.perf_counter() - t0 > 120:
            break
    if fraction == 0.0:
        first.append(seen[0] if seen else float("nan"))
        loader.wait()  # (this load runs to its end: the next ones are cancelled)
        while window.loaders:
            app.processEvents()
        window.close_tab(0)
        app.processEvents()
        continue
    c = time.perf_counter()
    window.cancel_loads()
    app.processEvents()
    ui.append(time.perf_counter() - c if not window.progress.isVisible() else float("nan"))
    loader.wait()
    stop.append(time.perf_counter() - c)
    app.processEvents()
print(json.dumps({"first_progress_s": first[0], "cancel_ui_s": ui, "cancel_stop_s": stop}))
"""


def _trace(events: int) -> Path:
    CACHE.mkdir(parents=True, exist_ok=True)
    path = CACHE / f"synthetic_{events}_seed1.fxt"
    if not path.exists():
        sys.path.insert(0, str(ROOT))
        from fxscope.core.synthetic_trace import write_trace

        write_trace(path, events, seed=1)
    return path


def percentile(values: list[float], q: float) -> float:
    s = sorted(values)
    return s[min(len(s) - 1, round(q * (len(s) - 1)))]


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--events", type=int, default=10_000_000)
    args = ap.parse_args()
    path = _trace(args.events)
    env = {**os.environ, "PYTHONPATH": str(ROOT), "QT_QPA_PLATFORM": "offscreen", "FXSCOPE_NEW_INSTANCE": "1"}
    out = subprocess.run([sys.executable, "-c", _CHILD, str(path), str(args.events)], capture_output=True,
                         text=True, env=env, cwd=ROOT)  # fmt: skip
    if out.returncode != 0:
        raise SystemExit(f"child failed:\n{out.stderr[-3000:]}")
    r = json.loads(out.stdout.strip().splitlines()[-1])
    print(f"trace: {path.name} ({path.stat().st_size / 1e6:.0f} MB, {r['events']:,} events)")
    print(f"read_s: {r['read_s']:.2f}")
    print(f"model_build_s: {r['model_s']:.2f}  (the tables the first frame needs; a large trace's others: background_build_s)")
    print(f"model_bytes_per_event: {r['model_bytes'] / r['events']:.1f}  (reader columns + model tables and indexes after the frames, owned memory)")
    every = []
    for level, frames in r["levels"].items():
        every += frames if level not in ("full_repaint", "during_build", "1ms_jump") else []
        c = r["cpu"][level]
        print(f"frame_ms_p50[{level}]: {percentile(frames, 0.5):.1f}  p95: {percentile(frames, 0.95):.1f}"
              f"  (UI thread CPU p50 {percentile(c, 0.5):.1f} p95 {percentile(c, 0.95):.1f})"
              + (f"  ({len(frames)} pan/zoom frames while the background build ran)" if level == "during_build" else ""))
    print(f"background_build_s: {r['background_s']:.2f}  (the later tables and the search index, built in the"
          f" background after the first frame; it paused {r['paused_s']:.2f} s in all for the UI, whose"
          f" {len(r['levels']['during_build'])} frames of navigation took its first {r['during_s']:.2f} s)")
    print(f"frame_ms_p50: {percentile(every, 0.5):.1f}  (every frame after the background build: full, 1ms, pan_zoom)")
    print(f"frame_ms_p95: {percentile(every, 0.95):.1f}")
    full, peer = percentile(r["levels"]["full"], 0.5), percentile(r["peer_full"], 0.5)
    print(f"paints_per_frame: {r['paints_per_frame'][0]}..{r['paints_per_frame'][1]}  (of the timeline view; must be 1)")
    print(f"peer_frame_ms_full_without_lod: {peer:.1f}  (ratio {peer / max(full, 1e-9):.1f}x; both cold frames;"
          f" UI thread CPU ratio {percentile(r['cpu']['peer'], 0.5) / max(percentile(r['cpu']['full'], 0.5), 1e-9):.1f}x)")
    print(f"machine load: {os.getloadavg()[0]:.1f} (1 min average; {os.cpu_count()} CPUs)")
    load = subprocess.run([sys.executable, "-c", _CHILD_LOAD, str(path)], capture_output=True, text=True,
                          env=env, cwd=ROOT)  # fmt: skip
    if load.returncode != 0:
        raise SystemExit(f"load child failed:\n{load.stderr[-3000:]}")
    lr = json.loads(load.stdout.strip().splitlines()[-1])
    print(f"background_load_to_tab_s: {lr['load_to_tab_s']:.2f}")
    print(f"ui_max_stall_ms: {lr['max_gap_ms']:.0f}  (10 ms timer on the UI thread; {lr['gaps_over_100ms']} stalls over 100 ms)")
    cancel = subprocess.run([sys.executable, "-c", _CHILD_CANCEL, str(path), str(lr["load_to_tab_s"])],
                            capture_output=True, text=True, env=env, cwd=ROOT)  # fmt: skip
    if cancel.returncode != 0:
        raise SystemExit(f"cancel child failed:\n{cancel.stderr[-3000:]}")
    cr = json.loads(cancel.stdout.strip().splitlines()[-1])
    print(f"first_progress_s: {cr['first_progress_s']:.3f}  (from opening to the first progress update; goal <= 0.2)")
    print(f"cancel_latency_s: {max(cr['cancel_ui_s']):.3f}  (Cancel pressed at 10..90% of the load until the window is idle; goal <= 0.2)")
    print(f"cancel_thread_stop_s: max {max(cr['cancel_stop_s']):.2f}  "
          f"({', '.join(f'{s:.2f}' for s in cr['cancel_stop_s'])}: until the loader thread has unwound)")
    t = time.perf_counter()
    shot = subprocess.run([sys.executable, "-m", "fxscope", "screenshot", "-o", str(CACHE / "demo.png")],
                          capture_output=True, text=True, env=env, cwd=ROOT)  # fmt: skip
    if shot.returncode != 0:
        raise SystemExit(f"screenshot failed: {shot.stderr[-2000:]}")
    print(f"first_frame_s: {time.perf_counter() - t:.2f}  (fxscope screenshot of the demo, whole process)")


if __name__ == "__main__":
    main()
