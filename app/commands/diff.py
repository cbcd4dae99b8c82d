"""``fxscope diff A.fxt B.fxt [--json] [--threshold PCT]``: per name, count, total, p50 and p99 in A and B with
deltas and ratios, largest regression first (:mod:`fxscope.core.analysis.diff`). Exit 1 when some name's total time
grew by more than the threshold, 0 otherwise, 2 for errors, so that a CI job can gate on it."""

from __future__ import annotations

import argparse
import json
import math
import os

from fxscope.app.cli_error import CliError
from fxscope.app.commands.selection_args import load_model

DEFAULT_THRESHOLD = 10.0


def _pct(value: float) -> str:
    return "new" if math.isinf(value) else f"{value:+.1f}%"


def _stats_of(path: str):
    """("ok", NameStats) of the trace at ``path``, or ("error", message): an exception's message crosses a
    process boundary intact where the exception object might not unpickle."""
    from fxscope.core.analysis.stats import name_stats
    from fxscope.formats.errors import FormatError

    try:
        return "ok", name_stats(load_model(path))
    except (FormatError, OSError) as exc:
        return "error", str(exc)


def _both_stats(a: str, b: str) -> list:
    """The statistics of both traces, read in two processes at once where fork is available (reading is
    most of the time, and the results are small); one after the other otherwise."""
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor

    if "fork" in multiprocessing.get_all_start_methods() and (os.cpu_count() or 1) > 1:
        try:
            with ProcessPoolExecutor(2, mp_context=multiprocessing.get_context("fork")) as pool:
                return list(pool.map(_stats_of, (a, b)))
        except (OSError, RuntimeError):  # no processes to be had (limits, sandbox): read them in turn
            pass
    return [_stats_of(a), _stats_of(b)]


def run(args: argparse.Namespace) -> int:
    from fxscope.core.analysis.diff import compare, regressions

    if not (args.threshold >= 0 and math.isfinite(args.threshold)):
        raise CliError(f"--threshold must be a percentage >= 0, not {args.threshold}")
    results = _both_stats(args.a, args.b)
    for status, value in results:
        if status == "error":
            raise CliError(value)
    a, b = (value for _status, value in results)
    rows = compare(a, b)
    bad = regressions(rows, args.threshold)
    if args.json:
        print(json.dumps({"a": args.a, "b": args.b, "threshold_pct": args.threshold,
                          "regressed": [r.name for r in bad], "names": [r.record() for r in rows]}, indent=1))  # fmt: skip
    else:
        width = max([len(r.name) for r in rows] + [4])
        cols = ("count A", "count B", "total A", "total B", "delta", "change", "p50 A", "p50 B", "p99 A", "p99 B")
        print(f"{'name':<{width}} " + " ".join(f"{c:>12}" for c in cols))
        for r in rows:
            cells = [r.a["count"], r.b["count"], r.a["total_ns"], r.b["total_ns"], r.delta_ns, _pct(r.change_pct),
                     r.a["p50_ns"], r.b["p50_ns"], r.a["p99_ns"], r.b["p99_ns"]]  # fmt: skip
            print(f"{r.name:<{width}} " + " ".join(f"{c:>12}" for c in cells))
        if bad:
            print(f"regressed past {args.threshold:g}%: " + ", ".join(r.name for r in bad))
    return 1 if bad else 0


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser(
        "diff", help="compare the slice statistics of two traces (exit 1 on a regression)",
        description="Compare trace B against trace A per slice name: count, total, p50 and p99 in both, deltas "
        "and ratios, sorted by the largest increase of total time. Exit status 1 when some name's total time grew "
        "by more than --threshold percent, 0 otherwise, 2 for errors.",
    )  # fmt: skip
    p.add_argument("a", metavar="A", help="baseline FXT trace")
    p.add_argument("b", metavar="B", help="FXT trace compared with A")
    p.add_argument("--json", action="store_true", help="print one JSON object (names: a list of per-name objects)")
    p.add_argument("--threshold", type=float, default=DEFAULT_THRESHOLD, metavar="PCT",
                   help=f"regression threshold in percent of A's total time (default {DEFAULT_THRESHOLD:g})")
    p.set_defaults(func=run)
