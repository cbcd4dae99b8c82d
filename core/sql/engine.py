"""SQL over one trace: the Perfetto-shaped tables of :mod:`fxscope.core.sql.tables` in an in-process DuckDB.

DuckDB is columnar and scans registered Arrow tables in place, so the event columns are not copied into
it. Before each query the tables it names are built and registered; the
others are never made (``args`` decodes every argument block: only a query that names it pays for it).
``slice`` and ``sched`` are views: the union of thread slices and async spans, and the CPU slices with
the state each thread left in (a join DuckDB runs only when asked).
"""

from __future__ import annotations

import re
import threading

import duckdb
import pyarrow as pa

from fxscope.core.sql.perfetto_compat import COMPAT_VIEWS, MACROS, UnknownModule, strip_includes
from fxscope.core.sql.tables import SqlTables
from fxscope.core.trace.model import TraceModel

#: a private table with its row ids: ``range(n)`` aligned row by row with the Arrow table (DuckDB's positional
#: join), so the ids are counted as the rows are scanned instead of being a column held in memory
_WITH_IDS = "(SELECT r.range AS id, t.* FROM range({{n_{0}}}) r POSITIONAL JOIN _{0} t)"

#: view name -> (SQL, the tables it reads); ``{async_slice_base}`` is the first async span's slice id,
#: ``{n_X}`` the rows of the private table ``_X``
VIEWS: dict[str, tuple[str, tuple[str, ...]]] = {
    # Perfetto's slice has no utid/upid: a slice's thread is its track's (``JOIN thread_track ... JOIN thread
    # USING (utid)``, as Perfetto's docs write it, would be ambiguous with them); thread_slice has them
    "slice": (
        "SELECT id, ts, dur, track_id, category, name, depth, parent_id, arg_set_id FROM "
        + _WITH_IDS.format("thread_slice")
        + " UNION ALL SELECT id + {async_slice_base}, ts, \"end\" - ts, track_id, category, name, depth, NULL,"
        " arg_set_id FROM " + _WITH_IDS.format("async_slice"),
        ("_thread_slice", "_async_slice"),
    ),
    # as Perfetto's stdlib module slices.with_context has it
    "thread_slice": (
        "SELECT s.id, s.ts, s.dur, s.category, s.name, s.track_id, t.name AS thread_name, s.utid, t.tid,"
        " p.name AS process_name, t.upid, p.pid, s.depth, s.parent_id, s.arg_set_id"
        f" FROM {_WITH_IDS.format('thread_slice')} s LEFT JOIN thread t USING (utid)"
        " LEFT JOIN process p ON p.upid = t.upid",
        ("_thread_slice", "thread", "process"),
    ),
    "thread_state": (
        "SELECT id, ts, \"end\" - ts AS dur, cpu, utid, state, state_name, waker_utid FROM "
        + _WITH_IDS.format("thread_state"),
        ("_thread_state",),
    ),
    "sched": (
        "SELECT c.id, c.ts, c.\"end\" - c.ts AS dur, c.cpu, c.utid, st.state AS end_state,"
        f" NULL::INTEGER AS priority FROM {_WITH_IDS.format('cpu_slice')} c LEFT JOIN _thread_state st"
        " ON st.utid = c.utid AND st.ts = c.\"end\"",
        ("_cpu_slice", "_thread_state"),
    ),
    "sched_slice": ("SELECT * FROM sched", ("sched",)),
    "track": (
        "SELECT id, name, 'thread_track' AS type FROM thread_track UNION ALL"
        " SELECT id, name, 'process_track' FROM process_track UNION ALL"
        " SELECT id, name, 'counter_track' FROM counter_track",
        ("thread_track", "process_track", "counter_track"),
    ),
    **COMPAT_VIEWS,
}

#: every table name a query may use
PUBLIC_TABLES = (
    "slice", "thread", "process", "thread_track", "process_track", "counter_track", "counter", "sched",
    "thread_state", "instant", "flow", "args", "log", "blob", "kernel_object", "userspace_object", "provider",
    "warning", "track", "thread_slice", "process_counter_track", "slice_self_dur",
)  # fmt: skip


class _ViewNumbers(dict):
    """The numbers a view's SQL names, computed when it names them (a row count of the scheduling tables
    builds them: only a view over them asks)."""

    def __init__(self, tables: SqlTables) -> None:
        super().__init__(async_slice_base=tables.async_slice_base)
        self.tables = tables

    def __missing__(self, key: str) -> int:
        return self.tables.table("_" + key.removeprefix("n_")).num_rows


class QueryError(Exception):
    """A query DuckDB rejected (syntax, unknown table or column, a failure while running, cancelled)."""


class TraceSQL:
    """An in-process DuckDB connection over one trace model's tables."""

    def __init__(self, model: TraceModel, threads: int | None = None) -> None:
        self.tables = SqlTables(model)
        # DuckDB's allocator keeps up to 128 MB of freed memory per connection by default: next to a model of
        # a few hundred MB that is the largest part of what SQL adds; return it after each query instead. Its
        # background threads give the pages of a finished query's working memory back to the system within
        # seconds (without them a percentile query's ~110 MB on a 10M-event trace stayed resident for good)
        self.con = duckdb.connect(":memory:", config={"allocator_flush_threshold": "8MB",
                                                      "allocator_background_threads": True})  # fmt: skip
        if threads:
            self.con.execute(f"SET threads = {int(threads)}")
        self._registered: set[str] = set()
        self._lock = threading.Lock()

    def _ensure(self, name: str) -> None:
        if name in self._registered:
            return
        if name in VIEWS:
            sql, deps = VIEWS[name]
            for dep in deps:
                self._ensure(dep)
            self.con.execute(f"CREATE VIEW {name} AS {sql.format_map(_ViewNumbers(self.tables))}")
        elif name in self.tables.builders:
            self.con.register(name, self.tables.table(name))
        else:
            return
        self._registered.add(name)

    def prepare(self, sql: str) -> None:
        """Register the tables ``sql`` names: every word of it that is a table name (``duckdb.get_table_names``
        binds the query, so it fails on a join whose tables are not registered yet; a word that only looks
        like a table name costs at most a table built early)."""
        for word in sorted({w.lower() for w in re.findall(r"[A-Za-z_][A-Za-z0-9_]*", sql)}):
            if word in VIEWS or word in self.tables.builders:
                self._ensure(word)
            elif word in MACROS and word not in self._registered:
                macro, deps = MACROS[word]
                for dep in deps:
                    self._ensure(dep)
                self.con.execute(macro)
                self._registered.add(word)

    def query(self, sql: str) -> pa.Table:
        """The result of ``sql`` as an Arrow table; :class:`QueryError` with DuckDB's message on failure."""
        with self._lock:
            try:
                sql = strip_includes(sql)
                self.prepare(sql)
                rel = self.con.sql(sql)
                return rel.to_arrow_table() if rel is not None else pa.table({})
            except UnknownModule as exc:
                raise QueryError(str(exc)) from exc
            except duckdb.Error as exc:
                raise QueryError(str(exc).splitlines()[0] if str(exc) else type(exc).__name__) from exc

    def copy_to_parquet(self, sql: str, path: str) -> int:
        """Write the result of ``sql`` to a Parquet file at ``path`` with DuckDB's own writer (streamed and
        parallel: no Arrow copy of the result; the caller makes it atomic). Returns the rows written."""
        with self._lock:
            self.prepare(sql)
            literal = path.replace("'", "''")
            try:
                return int(self.con.execute(f"COPY ({sql}) TO '{literal}' (FORMAT parquet, COMPRESSION zstd)")
                           .fetchone()[0])  # fmt: skip
            except duckdb.IOException as exc:
                raise OSError(str(exc).splitlines()[0]) from exc
            except duckdb.Error as exc:
                raise QueryError(str(exc).splitlines()[0] if str(exc) else type(exc).__name__) from exc

    def register_all(self) -> None:
        """Register every table (for export and for interactive use)."""
        for name in self.tables.builders:
            self._ensure(name)
        for name in VIEWS:
            self._ensure(name)

    def interrupt(self) -> None:
        """Cancel the running query (from another thread); it ends with :class:`QueryError`."""
        self.con.interrupt()

    def close(self) -> None:
        self.con.close()
