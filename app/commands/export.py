"""``fxscope export TRACE --format chrome-json -o OUT.json``: convert an FXT trace for other viewers;
``--format parquet -o DIR``: its SQL tables (:mod:`fxscope.core.sql`) as Parquet files.

Chrome trace event JSON opens in chrome://tracing, Perfetto's UI and speedscope; what is written and how
is in :mod:`fxscope.core.trace.export_chrome`.
"""

from __future__ import annotations

import argparse
import sys

FORMATS = ("chrome-json", "parquet")


def run(args: argparse.Namespace) -> int:
    from fxscope.app.cli_error import CliError
    from fxscope.core.trace.export_chrome import export_chrome_json
    from fxscope.core.trace.model import TraceModel
    from fxscope.core.trace.reading import read_trace
    from fxscope.formats.errors import FormatError

    try:
        cols = read_trace(args.trace)
    except FormatError as exc:
        raise CliError(str(exc)) from exc
    if args.format == "parquet":
        return _parquet(TraceModel(cols), args.output)
    try:
        counts = export_chrome_json(TraceModel(cols), args.output)
    except OSError as exc:
        raise CliError(f"cannot write {args.output}: {exc.strerror or exc}") from exc
    summary = ", ".join(f"{ph} {n}" for ph, n in counts.items() if n)
    print(f"{args.output}: {sum(counts.values())} trace events ({summary})", file=sys.stderr)
    return 0


def _parquet(model, directory: str) -> int:
    """Every SQL table of the trace as DIR/TABLE.parquet (core/sql/export_parquet.py)."""
    from fxscope.app.cli_error import CliError
    from fxscope.core.sql.engine import TraceSQL
    from fxscope.core.sql.export_parquet import export_parquet

    try:
        rows = export_parquet(TraceSQL(model), directory)
    except OSError as exc:
        raise CliError(f"cannot write {directory}: {exc.strerror or exc}") from exc
    print(f"{directory}: {len(rows)} Parquet tables, {sum(rows.values())} rows", file=sys.stderr)
    return 0


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser(
        "export", help="convert an FXT trace (Chrome trace JSON, or Parquet tables)", description="Convert an FXT trace."
    )
    p.add_argument("trace", help="FXT trace file")
    p.add_argument(
        "--format", choices=FORMATS, default="chrome-json", help="output format (default chrome-json)"
    )
    p.add_argument("-o", "--output", required=True, help="output file (written atomically); for parquet a directory of TABLE.parquet files")
    p.set_defaults(func=run)
