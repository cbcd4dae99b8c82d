"""Build times of the trace model's tables on a large generated trace.

Run: ``.venv/bin/python tests/bench/bench_trace_tables.py [--events N] [--export]``. Generates (once, cached
under tests/bench/.cache/) a synthetic trace of N events (default 10 million) with ``core.synthetic_trace``,
reads it, then times each builder in turn and prints ``name: value`` lines (seconds, and row counts).
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
CACHE = Path(__file__).resolve().parent / ".cache"


def _trace(events: int) -> Path:
    CACHE.mkdir(parents=True, exist_ok=True)
    path = CACHE / f"synthetic_{events}_seed1.fxt"
    if not path.exists():
        from fxscope.core.synthetic_trace import write_trace

        write_trace(path, events, seed=1)
    return path


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--events", type=int, default=10_000_000)
    parser.add_argument("--export", action="store_true", help="also time the Chrome JSON export")
    args = parser.parse_args()
    sys.path.insert(0, str(ROOT))
    from fxscope.core.trace.async_spans import build_async
    from fxscope.core.trace.counters import build_counters
    from fxscope.core.trace.flows import build_flows
    from fxscope.core.trace.instants import build_instants
    from fxscope.core.trace.model import TraceModel
    from fxscope.core.trace.objects import ObjectLabels
    from fxscope.core.trace.query import aggregate, search
    from fxscope.core.trace.sched import build_sched
    from fxscope.formats.fxt.reader import read_fxt

    path = _trace(args.events)

    def timed(name: str, fn):
        t0 = time.perf_counter()
        out = fn()
        print(f"{name}_s: {time.perf_counter() - t0:.3f}")
        return out

    cols = timed("read", lambda: read_fxt(path))
    print(f"events: {len(cols.ev_ts)}")
    model = timed("model_slices", lambda: TraceModel(cols))
    print(f"slices: {len(model.slices)}")
    spans = timed("async", lambda: build_async(cols, model.start_ns, model.end_ns))
    print(f"async_spans: {len(spans)}")
    flows = timed("flows", lambda: build_flows(cols, model.slices))
    print(f"flow_links: {len(flows)}")
    counters = timed("counters", lambda: build_counters(cols))
    print(f"counter_samples: {sum(len(s) for s in counters.series)}")
    instants = timed("instants", lambda: build_instants(cols))
    print(f"instants: {len(instants)}")
    labels = timed("objects", lambda: ObjectLabels(cols))
    sched = timed("sched", lambda: build_sched(cols, model.end_ns, labels))
    print(f"cpu_slices: {len(sched.cpu_slices)}")
    rows = timed("aggregate_all", lambda: aggregate(model, model.start_ns, model.end_ns))
    print(f"aggregate_names: {len(rows)}")
    hits = timed("search", lambda: search(model, "draw"))
    print(f"search_hits: {len(hits)}")
    if args.export:
        from fxscope.core.trace.export_chrome import export_chrome_json

        out = CACHE / "bench_export.json"
        timed("export_chrome_json", lambda: export_chrome_json(model, out))
        print(f"export_bytes: {out.stat().st_size}")
        out.unlink()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
