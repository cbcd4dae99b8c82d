"""``fxscope info TRACE [--json]``: what is in an FXT trace (record and event counts, providers, time span)."""

from __future__ import annotations

import argparse
import json
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # imported where used: every fxscope command loads this module to register it
    from formats.fxt.columns import FxtColumns

EVENT_KEYS = [
    "instant",
    "counter",
    "duration_begin",
    "duration_end",
    "duration_complete",
    "async_begin",
    "async_instant",
    "async_end",
    "flow_begin",
    "flow_step",
    "flow_end",
]


def summarize(cols: FxtColumns) -> dict:
    import numpy as np

    from formats.fxt.columns import EventKind

    """The ``--json`` object: counts, providers, distinct processes/threads that events refer to, span."""
    kinds = np.bincount(cols.ev_kind, minlength=len(EventKind)) if len(cols.ev_kind) else np.zeros(11, int)
    threads = np.unique(cols.ev_thread[cols.ev_thread >= 0])
    pids = np.unique(cols.threads_pid[threads]) if len(threads) else np.zeros(0)
    ts = cols.ev_ts
    return {
        "path": cols.path,
        "big_endian": cols.big_endian,
        "records": dict(cols.record_counts),
        "events": {key: int(kinds[i]) for i, key in enumerate(EVENT_KEYS)},
        "providers": [{"id": p.id, "name": p.name} for p in cols.providers],
        "processes": int(len(pids)),
        "threads": int(len(threads)),
        "first_ts_ns": int(ts.min()) if len(ts) else None,
        "last_ts_ns": int(ts.max()) if len(ts) else None,
        "warnings": list(cols.warnings),
    }


def _human(info: dict) -> str:
    lines = [f"{info['path']}: FXT trace ({'big' if info['big_endian'] else 'little'}-endian)"]
    total = sum(info["records"].values())
    lines.append(f"records: {total}  " + ", ".join(f"{k} {v}" for k, v in info["records"].items() if v))
    events = sum(info["events"].values())
    lines.append(f"events: {events}  " + ", ".join(f"{k} {v}" for k, v in info["events"].items() if v))
    lines.append(
        "providers: " + ", ".join(f"{p['id']} {p['name'] or '(unnamed)'}" for p in info["providers"])
    )
    lines.append(f"processes: {info['processes']}  threads: {info['threads']}")
    if info["first_ts_ns"] is not None:
        span = (info["last_ts_ns"] - info["first_ts_ns"]) / 1e9
        lines.append(f"time: {info['first_ts_ns']} .. {info['last_ts_ns']} ns ({span:.6f} s)")
    lines.append(f"warnings: {len(info['warnings'])}")
    lines.extend(f"  {w}" for w in info["warnings"])
    return "\n".join(lines)


def run(args: argparse.Namespace) -> int:
    from formats.fxt.reader import read_fxt

    info = summarize(read_fxt(args.trace))
    print(json.dumps(info, indent=2) if args.json else _human(info))
    return 0


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser("info", help="summarize an FXT trace", description="Summarize an FXT trace.")
    p.add_argument("trace", help="FXT trace file")
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.set_defaults(func=run)
