"""One query over many traces: Perfetto's batch trace processor, on processes or on a Dask cluster.

Each task loads one trace where it runs (an FXT file, or a directory exported to Parquet) and returns its
result as an Arrow table; the caller concatenates them with a ``trace`` column. A trace that cannot be read,
or on which the query fails, is a row of the ``failures`` table (trace, error), never a failed run. The
scheduling is somebody else's: :mod:`concurrent.futures` processes on one machine, ``dask.distributed``
(``--cluster tcp://HOST:PORT``) across many.
"""

from __future__ import annotations

import glob
import os
from collections.abc import Callable, Iterable
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from multiprocessing import get_context

import pyarrow as pa


@dataclass
class BatchResult:
    rows: pa.Table  # the union of every trace's result, with a leading ``trace`` column
    failures: pa.Table  # trace, error


def expand_traces(pattern: str) -> list[str]:
    """The traces a ``--traces`` pattern names: a glob (``DIR/*.fxt``, ``exports/*``), sorted; a directory
    that is not itself an export stands for the FXT files and exports inside it."""
    from fxscope.core.sql.dataset import is_parquet_export

    if os.path.isdir(pattern) and not is_parquet_export(pattern):
        pattern = os.path.join(pattern, "*")
    return sorted(glob.glob(os.path.expanduser(pattern)))


def query_one(path: str, sql: str, threads: int | None = 1) -> tuple[str, pa.Table | None, str | None]:
    """Load ``path`` here and run ``sql`` on it: (path, result, None) or (path, None, error message).

    Runs in worker processes (local or Dask): everything it needs is imported here, and every failure is
    returned as text (a worker never dies of a bad trace).
    """
    try:
        from fxscope.core.sql.dataset import ParquetSQL, is_parquet_export

        if is_parquet_export(path):
            engine = ParquetSQL(path, threads=threads)
        else:
            from fxscope.core.sql.engine import TraceSQL
            from fxscope.core.trace.model import TraceModel
            from fxscope.core.trace.reading import read_trace

            engine = TraceSQL(TraceModel(read_trace(path)), threads=threads)
        try:
            return path, engine.query(sql), None
        finally:
            engine.close()
    except MemoryError:
        return path, None, "out of memory"
    except Exception as exc:  # noqa: BLE001 - any failure of one trace is that trace's row in failures
        return path, None, str(exc).splitlines()[0] if str(exc) else type(exc).__name__


def _combine(outcomes: Iterable[tuple[str, pa.Table | None, str | None]]) -> BatchResult:
    tables: list[pa.Table] = []
    failed: list[tuple[str, str]] = []
    for path, table, error in outcomes:
        if table is None:
            failed.append((path, error or "failed"))
            continue
        table = _plain(table)
        tables.append(table.add_column(0, "trace", pa.array([path] * table.num_rows, pa.string())))
    if tables:
        try:
            rows = pa.concat_tables(tables, promote_options="permissive")
        except (pa.ArrowInvalid, pa.ArrowTypeError) as exc:  # results of different shapes: keep the first
            first = tables[0].schema
            keep = [t for t in tables if t.schema.equals(first)]
            failed += [(t.column("trace")[0].as_py(), f"result columns differ: {exc}") for t in tables
                       if not t.schema.equals(first) and t.num_rows]  # fmt: skip
            rows = pa.concat_tables(keep)
    else:
        rows = pa.table({"trace": pa.array([], pa.string())})
    failures = pa.table({
        "trace": pa.array([f[0] for f in failed], pa.string()), "error": pa.array([f[1] for f in failed], pa.string()),
    })  # fmt: skip
    return BatchResult(rows, failures)


def _plain(table: pa.Table) -> pa.Table:
    """Dictionary columns decoded (traces have different string tables: their dictionaries do not unify)."""
    for i, field in enumerate(table.schema):
        if pa.types.is_dictionary(field.type):
            table = table.set_column(i, field.name, table.column(i).cast(field.type.value_type))
    return table


def run_local(paths: list[str], sql: str, workers: int | None = None,
              progress: Callable[[int, int], None] | None = None) -> BatchResult:  # fmt: skip
    """``sql`` over ``paths`` in ``workers`` processes (default: one per CPU; 1 runs here, serially)."""
    workers = workers or os.cpu_count() or 1
    if workers <= 1 or len(paths) <= 1:
        outcomes = []
        for i, p in enumerate(paths):
            outcomes.append(query_one(p, sql, threads=None))
            if progress:
                progress(i + 1, len(paths))
        return _combine(outcomes)
    ctx = get_context("forkserver")
    # workers fork from a server that imported the reader, model and engine once (not per worker)
    ctx.set_forkserver_preload(["fxscope.core.sql.batch", "fxscope.core.sql.engine", "fxscope.core.sql.dataset",
                                "fxscope.core.trace.model", "fxscope.formats.fxt.reader"])  # fmt: skip
    with ProcessPoolExecutor(max_workers=min(workers, len(paths)), mp_context=ctx) as pool:
        outcomes = []
        for i, outcome in enumerate(pool.map(query_one, paths, [sql] * len(paths), chunksize=1)):
            outcomes.append(outcome)
            if progress:
                progress(i + 1, len(paths))
    return _combine(outcomes)


def run_dask(paths: list[str], sql: str, address: str) -> BatchResult:
    """``sql`` over ``paths`` on the dask.distributed scheduler at ``address`` (``tcp://HOST:PORT``): one
    task per trace, loaded on the worker that runs it; the paths must be readable there."""
    from distributed import Client

    with Client(address, timeout="20s") as client:
        futures = client.map(query_one, paths, sql=sql, pure=False)
        outcomes = client.gather(futures)
    return _combine(outcomes)
