"""``fxscope stats TRACE [--thread TID|--process PID] [--range START_NS:END_NS] [--json]``: per slice name,
count, total, self, min, p50, p90, p99 and max (:mod:`fxscope.core.analysis.stats`, the window's statistics)."""

from __future__ import annotations

import argparse
import json

from fxscope.app.commands.selection_args import add_selection_options, load_model, selected_area


def run(args: argparse.Namespace) -> int:
    from fxscope.core.analysis.stats import KEYS, name_stats

    model = load_model(args.trace)
    stats = name_stats(model, selected_area(model, args))
    records = stats.records()
    if args.json:
        print(json.dumps(records, indent=1))
        return 0
    head = ["name", "count", "total_ns", "self_ns", "min_ns", "p50_ns", "p90_ns", "p99_ns", "max_ns"]
    assert tuple(head) == KEYS
    width = max([len(r["name"]) for r in records] + [4])
    print(f"{'name':<{width}} " + " ".join(f"{h:>12}" for h in head[1:]))
    for r in records:
        print(f"{r['name']:<{width}} " + " ".join(f"{r[h]:>12}" for h in head[1:]))
    return 0


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser(
        "stats", help="per-name slice statistics (count, total, self, min, p50, p90, p99, max)",
        description="Per slice name: count, total and self time (inside the range), min, p50, p90, p99 and max "
        "duration (exact, nearest-rank percentiles), largest total first.",
    )  # fmt: skip
    p.add_argument("trace", help="FXT trace file")
    add_selection_options(p)
    p.add_argument("--json", action="store_true",
                   help="print a list of objects with keys name, count, total_ns, self_ns, min_ns, p50_ns, p90_ns, "
                   "p99_ns, max_ns")  # fmt: skip
    p.set_defaults(func=run)
