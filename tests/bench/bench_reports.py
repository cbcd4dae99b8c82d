"""Crash reports benchmark: a 100,000-line log with 1,800 reports opened in the crash view.

The log is the shared crash demo's report repeated 1,800 times (each with its banner, context, registers and
backtrace, the crashing pc varied) with a few ordinary lines between reports. The view opens it as the window
does (``open_log(background=True)``: read, split and summarized in a thread, the first report symbolized in
another) while a 10 ms timer on the UI thread measures the longest gap between its ticks. Printed:
``listed_s`` (the reports list is there), ``summaries_s`` (every row has its signal and top frame),
``first_report_s``, ``ui_max_stall_ms``; targets: listed <= 2 s, stall <= 100 ms. The peer is what the view
did before reports were objects: symbolizing the whole log as one report on the UI thread (``--no-peer``
skips it; it takes tens of seconds at full size).
Run: ``.venv/bin/python tests/bench/bench_reports.py [--reports N] [--no-peer]``.
"""

from __future__ import annotations

import argparse
import os
import random
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
DEMO = ROOT / "tests" / "data" / "markup" / "crash-demo"
GSYM = ROOT / "tests" / "data" / "gsym"


def make_log(reports: int, seed: int = 1) -> str:
    """``reports`` copies of the demo report, each crashing at another crashdemo address."""
    base = (DEMO / "input.log").read_text()
    pcs = [0x55BC37E48000 + a for a in (int(w, 16) for w in (GSYM / "crashdemo" / "addresses.txt").read_text().split())
           if 0x1000 <= a < 0x2000]  # fmt: skip
    rng = random.Random(seed)
    out = []
    for i in range(reports):
        out.append(f"[{i:10.6f}] INFO bench: request {i} done\n")
        out.append(base.replace("0x55bc37e493ff", f"{rng.choice(pcs):#x}"))
    return "".join(out)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--reports", type=int, default=1800)
    ap.add_argument("--no-peer", action="store_true")
    ap.add_argument("--yield-every", type=int, default=None,
                    help="summaries between hand-overs of the GIL to the UI thread (0: never; default: the app's)")
    args = ap.parse_args()
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    os.environ.setdefault("FXSCOPE_CACHE_DIR", tempfile.mkdtemp(prefix="fxscope-bench-cache-"))
    from PySide6.QtCore import QElapsedTimer, QTimer

    from fxscope.app.crash import workers
    from fxscope.app.crash.view import CrashView, default_resolver
    from fxscope.app.gui import application
    from fxscope.core.symbolize.crash_report import build_report

    if args.yield_every is not None:
        workers.YIELD_EVERY = args.yield_every
    print(f"yield_every: {workers.YIELD_EVERY}  (summaries between hand-overs of the GIL; 0: never)")
    app = application()
    text = make_log(args.reports)
    tmp = Path(tempfile.mkdtemp(prefix="fxscope-bench-reports-"))
    path = tmp / "many.log"
    path.write_text(text)
    print(f"log_lines: {text.count(chr(10)):,}  reports: {args.reports:,}")
    # warm the symbol cache (DWARF -> GSYM once), as a user's second open finds it
    build_report((DEMO / "input.log").read_text(), default_resolver(path, [str(DEMO)]))

    view = CrashView(debug_dirs=[str(DEMO)])
    view.resize(1400, 800)
    view.show()
    marks: dict[str, float] = {}
    clock = QElapsedTimer()
    gaps = [0.0]
    at = [0.0]
    last = [0.0]

    def tick() -> None:
        now = clock.nsecsElapsed() / 1e6
        gaps.append(now - last[0])
        at.append(now)
        last[0] = now

    timer = QTimer()
    timer.setInterval(10)
    timer.timeout.connect(tick)
    view.reportsListed.connect(lambda _n: marks.setdefault("listed", clock.nsecsElapsed() / 1e9))
    view.reportShown.connect(lambda _i: marks.setdefault("first_report", clock.nsecsElapsed() / 1e9))
    model = view.reports_list.reports_model
    clock.start()
    timer.start()
    view.open_log(path, background=True)
    print(f"open_log_call_ms: {clock.nsecsElapsed() / 1e6:.0f}  (on the UI thread: starts the worker)")
    while not ("first_report" in marks and model.summaries and None not in model.summaries):
        app.processEvents()
        time.sleep(0.001)
        if clock.nsecsElapsed() > 300e9:
            raise SystemExit("timed out")
    marks["summaries"] = clock.nsecsElapsed() / 1e9
    timer.stop()
    view.wait_for_workers()
    print(f"listed_s: {marks['listed']:.2f}  (target <= 2 s)")
    print(f"summaries_s: {marks['summaries']:.2f}")
    print(f"first_report_s: {marks['first_report']:.2f}")
    worst = max(range(len(gaps)), key=gaps.__getitem__)
    print(f"ui_max_stall_ms: {gaps[worst]:.0f}  (10 ms timer on the UI thread, ending at {at[worst] / 1e3:.2f} s; target <= 100 ms)")
    print(f"ui_stalls_over_50ms: {sum(g > 50 for g in gaps)}")
    ordered = sorted(gaps[1:])
    print(f"ui_p95_gap_ms: {ordered[int(0.95 * (len(ordered) - 1))]:.0f}  (the timer's 95th percentile gap: 10 ms when never late)")
    if args.no_peer:
        return
    t = time.perf_counter()
    build_report(text, default_resolver(path, [str(DEMO)]), color=True)
    peer = time.perf_counter() - t
    print(f"peer_whole_log_on_ui_thread_s: {peer:.2f}  (the view before reports were objects)")
    print(f"ratio: {peer / marks['listed']:.1f}  (peer time / time to list; >1: listing is faster)")


if __name__ == "__main__":
    main()
