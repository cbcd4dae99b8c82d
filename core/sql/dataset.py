"""SQL over a directory written by :func:`fxscope.core.sql.export_parquet.export_parquet`, as over a trace.

The tables are DuckDB views over the Parquet files (``read_parquet``), so nothing is read until a query
needs it, and then only the columns it names. The Perfetto compatibility views and macros
(:mod:`.perfetto_compat`) and ``thread_slice`` (the thread slices with their thread and process, through
their tracks) are defined over them as on a loaded trace.
"""

from __future__ import annotations

import os

import duckdb
import pyarrow as pa

from fxscope.core.sql.engine import QueryError
from fxscope.core.sql.perfetto_compat import COMPAT_VIEWS, MACROS, UnknownModule, strip_includes
from fxscope.formats.errors import FormatError


def is_parquet_export(path: str | os.PathLike[str]) -> bool:
    """Whether ``path`` is a directory holding an exported trace (its ``slice.parquet`` at least)."""
    return os.path.isfile(os.path.join(os.fspath(path), "slice.parquet"))


#: an export has no private tables: thread slices are the slices on thread tracks
_THREAD_SLICE = (
    "CREATE VIEW thread_slice AS SELECT s.id, s.ts, s.dur, s.category, s.name, s.track_id, t.name AS thread_name,"
    " t.utid, t.tid, p.name AS process_name, t.upid, p.pid, s.depth, s.parent_id, s.arg_set_id"
    " FROM slice s JOIN thread_track tt ON tt.id = s.track_id JOIN thread t ON t.utid = tt.utid"
    " LEFT JOIN process p ON p.upid = t.upid"
)


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
        self.con.execute(_THREAD_SLICE)
        for name, (view, _deps) in COMPAT_VIEWS.items():
            self.con.execute(f"CREATE VIEW {name} AS {view}")
        for macro, _deps in MACROS.values():
            self.con.execute(macro)  # (DuckDB binds a macro's tables when it is used)

    def query(self, sql: str) -> pa.Table:
        try:
            rel = self.con.sql(strip_includes(sql))
            return rel.to_arrow_table() if rel is not None else pa.table({})
        except UnknownModule as exc:
            raise QueryError(str(exc)) from exc
        except duckdb.Error as exc:
            raise QueryError(str(exc).splitlines()[0] if str(exc) else type(exc).__name__) from exc

    def close(self) -> None:
        self.con.close()
