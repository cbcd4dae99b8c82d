"""Every SQL table of a trace as a Parquet file in a directory (``fxscope export --format parquet``).

Parquet is what DuckDB, Spark, Trino and pandas all read, and an exported directory is also a trace for
``fxscope query --traces`` (see :mod:`fxscope.core.sql.dataset`): a fleet exported once is queried without
parsing FXT again. Each file is written atomically (a temporary beside it, renamed at the end).
"""

from __future__ import annotations

import os
from collections.abc import Callable

import pyarrow as pa
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
        pq.write_table(table, tmp, compression="zstd")


def export_parquet(
    sql: TraceSQL, directory: str | os.PathLike[str], progress: Callable[[float], None] | None = None
) -> dict[str, int]:
    """Write ``DIR/TABLE.parquet`` for every table in :data:`EXPORTED`; returns rows per table."""
    directory = os.fspath(directory)
    os.makedirs(directory, exist_ok=True)
    rows: dict[str, int] = {}
    for i, name in enumerate(EXPORTED):
        with atomic_output(os.path.join(directory, f"{name}.parquet")) as tmp:
            sql.copy_to_parquet(f"SELECT * FROM {name}", tmp)
        rows[name] = int(sql.query(f"SELECT count(*) FROM {name}").column(0)[0].as_py())
        if progress is not None:
            progress((i + 1) / len(EXPORTED))
    return rows
