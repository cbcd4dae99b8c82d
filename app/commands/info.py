"""``fxscope info TRACE [--json]``: what is in an FXT trace (record and event counts, providers, time span).

The counting is :func:`fxscope.core.trace.stats.summarize` (the GUI's Info tab shows the same numbers); this
module prints them."""

from __future__ import annotations

import argparse
import json


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
    from fxscope.core.trace.reading import read_trace
    from fxscope.core.trace.stats import summarize

    info = summarize(read_trace(args.trace))
    print(json.dumps(info, indent=2) if args.json else _human(info))
    return 0


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser("info", help="summarize an FXT trace", description="Summarize an FXT trace.")
    p.add_argument("trace", help="FXT trace file")
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.set_defaults(func=run)
