"""Every SQL table of a trace as a Parquet file in a directory (``fxscope export --format parquet``).

Parquet is what DuckDB, Spark, Trino and pandas all read, and an exported directory is also a trace for
``fxscope query --traces`` (see :mod:`fxscope.core.sql.dataset`): a fleet exported once is queried without
parsing FXT again. Each file is written atomically (a temporary beside it, renamed at the end).

How a table is written decides most of the time an export takes (10M events: ~4M arguments, ~3M slices):

- a table that is an Arrow table already (``args``, ``counter``, ``instant``, ...) is written by pyarrow:
  its dictionary columns (names, keys, messages) go to the file as Parquet dictionary pages as they are,
  where DuckDB would expand every string and hash it again (``args``: half the time); the other columns
  are written plain (no dictionary attempted);
- ``slice`` (millions of rows, their names and categories dictionaries) is written by pyarrow from the two
  tables behind the view (:meth:`~fxscope.core.sql.tables.SqlTables.slice_parts`);
- the other views (``sched``, ``thread_state``) are computed and written by DuckDB's own ``COPY``
  (parallel, streamed: no Arrow copy of the result), which also counts the rows (no second query).

(Building the next table while the previous one was written, on a second thread, was tried: on two shared
cores it was no faster and far more variable.)
"""

from __future__ import annotations

import os
from collections.abc import Callable

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from fxscope.core.atomic_file import atomic_output
from fxscope.core.sql.engine import TraceSQL

#: the tables written (views are computed from these; ``sched`` is written joined, as queries read it)
EXPORTED = (
    "slice", "thread", "process", "thread_track", "process_track", "counter_track", "counter", "sched",
    "thread_state", "instant", "flow", "args", "log", "blob", "kernel_object", "userspace_object", "provider",
    "warning",
)  # fmt: skip


def write_table(table: pa.Table, path: str) -> None:
    """``table`` as a Parquet file at ``path``, written atomically."""
    with atomic_output(path) as tmp:
        _write_arrow(table, tmp)


def _write_arrow(table: pa.Table, path: str) -> int:
    """``table`` to ``path`` (not atomic: the caller's temporary); run-end encoded columns (a Parquet file
    has no such type) are decoded first. Returns the rows written."""
    for i, field in enumerate(table.schema):
        if pa.types.is_run_end_encoded(field.type):
            table = table.set_column(i, field.name, pc.run_end_decode(table.column(i)))
    # dictionary pages only for the dictionary columns: tried on every column (pyarrow's default), a column of
    # millions of distinct timestamps or ids is hashed until its dictionary overflows, for nothing (args,
    # counter, instant and flow of a 10M-event trace: 1.6 CPU s -> 1.1, and the files smaller)
    dictionary = [f.name for f in table.schema if pa.types.is_dictionary(f.type)]
    pq.write_table(table, path, compression="zstd", use_dictionary=dictionary)
    return table.num_rows


def _write_parts(parts: list[pa.Table], path: str) -> int:
    """Tables of one schema (and the same dictionaries) one after the other in one Parquet file."""
    dictionary = [f.name for f in parts[0].schema if pa.types.is_dictionary(f.type)]
    with pq.ParquetWriter(path, parts[0].schema, compression="zstd", use_dictionary=dictionary) as writer:
        for part in parts:
            writer.write_table(part)
    return sum(p.num_rows for p in parts)


def export_parquet(
    sql: TraceSQL, directory: str | os.PathLike[str], progress: Callable[[float], None] | None = None
) -> dict[str, int]:
    """Write ``DIR/TABLE.parquet`` for every table in :data:`EXPORTED`; returns rows per table."""
    directory = os.fspath(directory)
    os.makedirs(directory, exist_ok=True)
    rows: dict[str, int] = {}
    for i, name in enumerate(EXPORTED):
        with atomic_output(os.path.join(directory, f"{name}.parquet")) as tmp:
            if name == "slice":
                schema = sql.query("SELECT * FROM slice LIMIT 0").schema
                rows[name] = _write_parts(sql.tables.slice_parts(schema), tmp)
            elif name in sql.tables.builders:
                rows[name] = _write_arrow(sql.tables.table(name), tmp)
            else:
                rows[name] = sql.copy_to_parquet(f"SELECT * FROM {name}", tmp)
        if progress is not None:
            progress((i + 1) / len(EXPORTED))
    return rows
