"""``fxscope query``: SQL over one trace, or over many (``--traces``), printed or written to a file.

The engine and tables are :mod:`fxscope.core.sql`; this module reads the arguments, picks the trace(s) and writes
the result as an aligned table, CSV, JSON or Parquet.
"""

from __future__ import annotations

import argparse
import decimal
import json
import os
import sys

FORMATS = ("table", "csv", "json", "parquet")
MAX_TABLE_ROWS = 10_000  # the aligned table prints at most this many rows (csv/json/parquet: all)


def _sql_text(args: argparse.Namespace, positional: list[str]) -> tuple[str, list[str]]:
    from fxscope.app.cli_error import CliError

    if args.file:
        try:
            with open(args.file, encoding="utf-8") as fh:
                return fh.read(), positional
        except OSError as exc:
            raise CliError(f"cannot read {args.file}: {exc.strerror or exc}") from exc
    if not positional:
        raise CliError("no query: give SQL text or -f QUERY.sql")
    return positional[-1], positional[:-1]


def _plain(table):
    import pyarrow as pa

    for i, field in enumerate(table.schema):
        if pa.types.is_dictionary(field.type):
            table = table.set_column(i, field.name, table.column(i).cast(field.type.value_type))
    return table


def _json_value(v):
    if isinstance(v, decimal.Decimal):
        return int(v) if v == v.to_integral_value() else float(v)
    if isinstance(v, bytes):
        return v.hex()
    if isinstance(v, (list, dict, str, int, float, bool)) or v is None:
        return v
    return str(v)


def _format_table(table) -> str:
    names = table.column_names
    rows = table.slice(0, MAX_TABLE_ROWS).to_pylist()
    cells = [[("NULL" if r[n] is None else str(r[n])) for n in names] for r in rows]
    widths = [max([len(n)] + [len(c[i]) for c in cells]) for i, n in enumerate(names)]
    line = lambda vals: "  ".join(v.ljust(w) for v, w in zip(vals, widths, strict=True)).rstrip()  # noqa: E731
    out = [line(names), line(["-" * w for w in widths]), *(line(c) for c in cells)]
    more = table.num_rows - len(rows)
    out.append(f"({table.num_rows} rows{f', first {len(rows)} shown' if more > 0 else ''})")
    return "\n".join(out) + "\n"


def write_result(table, fmt: str, output: str | None) -> None:
    """``table`` in ``fmt`` to ``output`` (atomically) or stdout."""
    import io

    import pyarrow.csv as pacsv

    from fxscope.core.atomic_file import atomic_output

    table = _plain(table)
    if fmt == "parquet":
        from fxscope.app.cli_error import CliError
        from fxscope.core.sql.export_parquet import write_table

        if not output:
            raise CliError("--format parquet needs -o OUT.parquet")
        write_table(table, output)
        return
    if fmt == "csv":
        buf = io.BytesIO()
        pacsv.write_csv(table, buf)
        text = buf.getvalue().decode("utf-8")
    elif fmt == "json":
        text = json.dumps([{k: _json_value(v) for k, v in r.items()} for r in table.to_pylist()], indent=1) + "\n"
    else:
        text = _format_table(table)
    if output:
        with atomic_output(output) as tmp, open(tmp, "w", encoding="utf-8") as fh:
            fh.write(text)
    else:
        sys.stdout.write(text)


def _failures_path(output: str, fmt: str) -> str:
    stem, ext = os.path.splitext(output)
    return f"{stem}.failures{ext or '.' + fmt}"


def run(args: argparse.Namespace) -> int:
    from fxscope.app.cli_error import CliError
    from fxscope.core.sql.engine import QueryError

    sql, rest = _sql_text(args, list(args.args))
    if args.traces:
        if rest:
            raise CliError(f"--traces takes the traces: unexpected argument {rest[0]!r}")
        return _run_many(args, sql)
    if len(rest) != 1:
        raise CliError("give one TRACE and the SQL (or --traces 'GLOB')")
    if args.cluster:
        raise CliError("--cluster goes with --traces")
    from fxscope.core.sql.dataset import ParquetSQL, is_parquet_export
    from fxscope.formats.errors import FormatError

    trace = rest[0]
    try:
        if is_parquet_export(trace):
            engine = ParquetSQL(trace)
        else:
            from fxscope.core.sql.engine import TraceSQL
            from fxscope.core.trace.model import TraceModel
            from fxscope.core.trace.reading import read_trace

            engine = TraceSQL(TraceModel(read_trace(trace)))
        result = engine.query(sql)
    except (FormatError, QueryError) as exc:
        raise CliError(str(exc)) from exc
    except OSError as exc:
        raise CliError(f"cannot read {trace}: {exc.strerror or exc}") from exc
    write_result(result, args.format, args.output)
    return 0


def _run_many(args: argparse.Namespace, sql: str) -> int:
    from fxscope.app.cli_error import CliError
    from fxscope.core.sql.batch import expand_traces, run_dask, run_local

    paths = expand_traces(args.traces)
    if not paths:
        raise CliError(f"--traces {args.traces!r} matches nothing")
    if args.cluster:
        try:
            result = run_dask(paths, sql, args.cluster)
        except OSError as exc:  # (TimeoutError included: the scheduler is unreachable)
            raise CliError(f"cannot reach the Dask scheduler at {args.cluster}: {exc}") from exc
    else:
        result = run_local(paths, sql, workers=args.jobs)
    if result.failures.num_rows and result.failures.num_rows == len(paths):
        first = result.failures.to_pylist()[0]
        raise CliError(f"the query failed on all {len(paths)} traces; first: {first['trace']}: {first['error']}")
    write_result(result.rows, args.format, args.output)
    if result.failures.num_rows:
        if args.output:
            where = _failures_path(args.output, args.format)
            write_result(result.failures, args.format, where)
            print(f"fxscope: {result.failures.num_rows} of {len(paths)} traces failed: see {where}", file=sys.stderr)
        else:
            print(f"fxscope: {result.failures.num_rows} of {len(paths)} traces failed:", file=sys.stderr)
            for r in result.failures.to_pylist():
                print(f"  {r['trace']}: {r['error']}", file=sys.stderr)
    return 0


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser(
        "query", help="SQL over a trace's Perfetto-shaped tables (DuckDB), or over many traces",
        description="Run SQL over a trace (FXT, or a directory made by export --format parquet), with "
        "Perfetto's table names (slice, thread, process, counter, sched, thread_state, args, ...; see "
        "docs/sql.md). fxscope query TRACE \"SQL\"; fxscope query --traces 'DIR/*.fxt' \"SQL\".",
    )  # fmt: skip
    p.add_argument("args", nargs="*", metavar="TRACE SQL", help="the trace and the query text")
    p.add_argument("-f", "--file", metavar="QUERY.sql", help="read the query from a file")
    p.add_argument("--format", choices=FORMATS, default="table", help="output format (default table)")
    p.add_argument("-o", "--output", metavar="OUT", help="write to OUT (atomically) instead of stdout")
    p.add_argument("--traces", metavar="GLOB",
                   help="run over every trace the pattern matches (FXT files or Parquet exports); the result "
                   "has a leading 'trace' column, traces that fail are listed as failures")  # fmt: skip
    p.add_argument("--cluster", metavar="tcp://HOST:PORT", help="run --traces on this dask.distributed scheduler")
    p.add_argument("-j", "--jobs", type=int, default=None,
                   help="local worker processes for --traces (default: one per CPU; 1: serial)")  # fmt: skip
    p.set_defaults(func=run)
