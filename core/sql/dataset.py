"""SQL over a directory written by :func:`fxscope.core.sql.export_parquet.export_parquet`, as over a trace.

The tables are DuckDB views over the Parquet files (``read_parquet``), so nothing is read until a query
needs it, and then only the columns it names.
"""

from __future__ import annotations

import os

import duckdb
import pyarrow as pa

from fxscope.core.sql.engine import QueryError
from fxscope.formats.errors import FormatError


def is_parquet_export(path: str | os.PathLike[str]) -> bool:
    """Whether ``path`` is a directory holding an exported trace (its ``slice.parquet`` at least)."""
    return os.path.isfile(os.path.join(os.fspath(path), "slice.parquet"))


class ParquetSQL:
    """A DuckDB connection whose tables are the Parquet files of one exported trace."""

    def __init__(self, directory: str | os.PathLike[str], threads: int | None = None) -> None:
        directory = os.fspath(directory)
        if not is_parquet_export(directory):
            raise FormatError("not an fxscope Parquet export (no slice.parquet)", path=directory)
        self.con = duckdb.connect(":memory:")
        if threads:
            self.con.execute(f"SET threads = {int(threads)}")
        for name in sorted(os.listdir(directory)):
            if name.endswith(".parquet") and not name.startswith("."):
                table = name[: -len(".parquet")]
                literal = os.path.join(directory, name).replace("'", "''")
                self.con.execute(f'CREATE VIEW "{table}" AS SELECT * FROM read_parquet(\'{literal}\')')

    def query(self, sql: str) -> pa.Table:
        try:
            rel = self.con.sql(sql)
            return rel.to_arrow_table() if rel is not None else pa.table({})
        except duckdb.Error as exc:
            raise QueryError(str(exc).splitlines()[0] if str(exc) else type(exc).__name__) from exc

    def close(self) -> None:
        self.con.close()
