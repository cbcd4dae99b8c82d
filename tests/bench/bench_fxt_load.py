"""FXT load benchmark: fxscope's reader vs the pure-Python ``fxt`` package (PyPI, a peer reader).

Run: ``.venv/bin/python tests/bench/bench_fxt_load.py [--events N]``. Generates (once, cached under
tests/bench/.cache/) a synthetic trace of at least 5 million events with ``core.synthetic_trace`` and prints
``name: value`` figures. Each load runs in a fresh subprocess so that its peak RSS (ru_maxrss, which counts
the memory-mapped file pages it touched) is its own. The peer reads a prefix of the same file (it is
~100x slower) and its throughput is compared per byte and per event.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
CACHE = Path(__file__).resolve().parent / ".cache"

_CHILD_OURS = """
import json, resource, sys, time
t0 = time.perf_counter()
from fxscope.formats.fxt.reader import read_fxt
t1 = time.perf_counter()
cols = read_fxt(sys.argv[1])
t2 = time.perf_counter()
import numpy as np
col_bytes = sum(getattr(v, "nbytes", 0) for v in vars(cols).values() if hasattr(v, "__getitem__") and not isinstance(v, (list, dict, str)))
print(json.dumps({"seconds": t2 - t1, "import_seconds": t1 - t0, "events": len(cols.ev_ts), "col_bytes": col_bytes,
                  "maxrss_kb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss,
                  "warnings": len(cols.warnings)}))
"""

_CHILD_PEER = """
import io, json, resource, sys, time
import fxt.reader
data = open(sys.argv[1], "rb").read(int(sys.argv[2]))
t1 = time.perf_counter()
result = fxt.reader.parse_records(io.BytesIO(data))
t2 = time.perf_counter()
records = [r for state in result.records_by_provider.values() for r in state.records]
events = sum(type(r).__name__.endswith("EventRecord") for r in records)
print(json.dumps({"seconds": t2 - t1, "bytes": len(data), "records": len(records), "events": events,
                  "maxrss_kb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss}))
"""


def _child(code: str, *args: str) -> dict:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    out = subprocess.run(
        [sys.executable, "-c", code, *args], capture_output=True, text=True, env=env, cwd=ROOT
    )
    if out.returncode != 0:
        raise SystemExit(f"child failed:\n{out.stderr}")
    return json.loads(out.stdout.strip().splitlines()[-1])


def _trace(events: int) -> Path:
    CACHE.mkdir(parents=True, exist_ok=True)
    path = CACHE / f"synthetic_{events}_seed1_peer.fxt"
    if not path.exists():
        sys.path.insert(0, str(ROOT))
        from fxscope.core.synthetic_trace import write_trace

        write_trace(path, events, seed=1, peer_compatible=True)
    return path


def _peer_prefix(path: Path, nbytes: int) -> int:
    """A prefix of ``path`` of about ``nbytes`` that ends on a record boundary (so the peer reads it all)."""
    sys.path.insert(0, str(ROOT))
    from fxscope.formats.fxt.reader import read_fxt

    cols = read_fxt(path)
    offsets = cols.ev_offset
    i = int((offsets < nbytes).sum())
    return int(offsets[i]) if i < len(offsets) else path.stat().st_size


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--events", type=int, default=5_000_000)
    ap.add_argument("--peer-bytes", type=int, default=8_000_000)
    ap.add_argument("--runs", type=int, default=3)
    args = ap.parse_args()
    path = _trace(args.events)
    size = path.stat().st_size
    runs = [_child(_CHILD_OURS, str(path)) for _ in range(args.runs)]
    best = min(runs, key=lambda r: r["seconds"])
    ours_mbps = size / best["seconds"] / 1e6
    ours_eps = best["events"] / best["seconds"]
    print(f"trace: {path.name}")
    print(f"file_bytes: {size}")
    print(f"events: {best['events']}")
    print(f"load_seconds: {best['seconds']:.3f}")
    print(f"load_MBps: {ours_mbps:.1f}")
    print(f"events_per_s: {ours_eps:.0f}")
    print(f"peak_rss_over_file_size: {max(r['maxrss_kb'] for r in runs) * 1024 / size:.2f}")
    # The FxtColumns event columns hold 25 bytes per event (derived ones, and the data word, are read from the
    # mapped file on access; ev_data's nbytes are its few stored exceptions).
    print(f"columns_over_file_size: {best['col_bytes'] / size:.2f}")
    print(f"file_bytes_per_event: {size / best['events']:.1f}")

    prefix = _peer_prefix(path, args.peer_bytes)
    peer = _child(_CHILD_PEER, str(path), str(prefix))
    peer_mbps = peer["bytes"] / peer["seconds"] / 1e6
    peer_eps = peer["events"] / peer["seconds"]
    print(f"peer: fxt 0.3.0 (pure Python) on a {peer['bytes']}-byte prefix")
    print(f"peer_records: {peer['records']}")
    print(f"peer_events: {peer['events']}")
    print(f"peer_load_MBps: {peer_mbps:.2f}")
    print(f"peer_events_per_s: {peer_eps:.0f}")
    print(f"peer_peak_rss_over_prefix_size: {peer['maxrss_kb'] * 1024 / peer['bytes']:.2f}")
    print(f"ratio_MBps: {ours_mbps / peer_mbps:.1f}")
    print(f"ratio_events_per_s: {ours_eps / peer_eps:.1f}")


if __name__ == "__main__":
    main()
