"""What Perfetto's documented queries use beyond the plain tables: a few derived views, the standard-library
modules that name them, and helper functions as DuckDB macros.

A Perfetto user's queries are written against trace processor's SQLite dialect and its standard library;
running them unchanged is the point of Perfetto-shaped tables (docs/sql.md lists what cannot run and why).
Everything here is plain SQL over the public tables, so the in-memory connection (:mod:`.engine`) and a
Parquet export opened as a trace (:mod:`.dataset`) offer the same names.
"""

from __future__ import annotations

import re

#: view name -> (SQL over the public tables, the tables it reads)
COMPAT_VIEWS: dict[str, tuple[str, tuple[str, ...]]] = {
    # FXT counters belong to a process (a counter event carries its pid): every counter track is one
    "process_counter_track": (
        "SELECT id, name, upid, counter_name, arg_name, counter_id FROM counter_track",
        ("counter_track",),
    ),
    # Perfetto's stdlib module slices.self_dur: a slice's time not spent in its children
    "slice_self_dur": (
        "SELECT s.id, s.dur - COALESCE(c.children_dur, 0) AS self_dur FROM slice s LEFT JOIN"
        " (SELECT parent_id AS id, CAST(sum(dur) AS BIGINT) AS children_dur FROM slice WHERE parent_id IS NOT NULL"
        " GROUP BY parent_id) c USING (id)",
        ("slice",),
    ),
}

#: Perfetto standard-library modules whose tables fxscope has (``INCLUDE PERFETTO MODULE`` of them is a no-op)
MODULES = {
    "slices.self_dur": ("slice_self_dur",),
    "slices.with_context": ("thread_slice",),
}

#: macros: Perfetto's helper functions. EXTRACT_ARG gives the value as text (a DuckDB expression has one
#: type; Perfetto's gives the argument's own); PERCENTILE(x, p) is Perfetto's percentile aggregate (p in 0..100);
#: IIF is SQLite's (Perfetto's docs use it)
MACROS = {
    "extract_arg": (
        "CREATE OR REPLACE MACRO extract_arg(set_id, arg_key) AS (SELECT first(COALESCE(a.string_value,"
        " CAST(a.int_value AS VARCHAR), CAST(a.real_value AS VARCHAR))) FROM args a"
        " WHERE a.arg_set_id = set_id AND a.key = arg_key)",
        ("args",),
    ),
    "percentile": ("CREATE OR REPLACE MACRO percentile(x, p) AS quantile_cont(x, p / 100)", ()),
    "iif": ("CREATE OR REPLACE MACRO iif(cond, a, b) AS CASE WHEN cond THEN a ELSE b END", ()),
}

_INCLUDE = re.compile(r"^\s*INCLUDE\s+PERFETTO\s+MODULE\s+([A-Za-z0-9_.]+)\s*;", re.IGNORECASE | re.MULTILINE)


class UnknownModule(ValueError):
    """A query includes a Perfetto standard-library module fxscope does not provide."""


def strip_includes(sql: str) -> str:
    """``sql`` without its ``INCLUDE PERFETTO MODULE m;`` statements for the modules fxscope provides (their
    tables are always there); :class:`UnknownModule` for any other module."""

    def drop(match: re.Match[str]) -> str:
        module = match.group(1)
        if module not in MODULES:
            raise UnknownModule(f"Perfetto module {module} is not available (fxscope provides: "
                                f"{', '.join(sorted(MODULES))})")  # fmt: skip
        return ""

    return _INCLUDE.sub(drop, sql)
