"""Every SQL table of a trace as a Parquet file in a directory (``fxscope export --format parquet``).

Parquet is what DuckDB, Spark, Trino and pandas all read, and an exported directory is also a trace for
``fxscope query --traces`` (see :mod:`fxscope.core.sql.dataset`): a fleet exported once is queried without
parsing FXT again. Each file is written atomically (a temporary beside it, renamed at the end).

How a table is written decides most of the time an export takes (10M events: ~4M arguments, ~3M slices):

- a table that is an Arrow table already (``args``, ``counter``, ``instant``, ...) is written by pyarrow:
  its dictionary columns (names, keys, messages) go to the file as Parquet dictionary pages as they are,
  where DuckDB would expand every string and hash it again (``args``: half the time);
- a view (``slice``, ``sched``, ``thread_state``) is computed and written by DuckDB's own ``COPY``
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
    pq.write_table(table, path, compression="zstd")
    return table.num_rows


def export_parquet(
    sql: TraceSQL, directory: str | os.PathLike[str], progress: Callable[[float], None] | None = None
) -> dict[str, int]:
    """Write ``DIR/TABLE.parquet`` for every table in :data:`EXPORTED`; returns rows per table."""
    directory = os.fspath(directory)
    os.makedirs(directory, exist_ok=True)
    rows: dict[str, int] = {}
    for i, name in enumerate(EXPORTED):
        with atomic_output(os.path.join(directory, f"{name}.parquet")) as tmp:
            if name in sql.tables.builders:
                rows[name] = _write_arrow(sql.tables.table(name), tmp)
            else:
                rows[name] = sql.copy_to_parquet(f"SELECT * FROM {name}", tmp)
        if progress is not None:
            progress((i + 1) / len(EXPORTED))
    return rows
