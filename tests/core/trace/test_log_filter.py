"""What the Logs tab shows and filters: escapes stripped, severity read from the text, filters by text and
severity, on the bundled demo's log records and on logger-style lines."""

from __future__ import annotations

import numpy as np

from fxscope.core.trace.log_filter import SEVERITIES, filter_rows, log_facts, severity_of, strip_ansi
from fxscope.core.trace.model import TraceModel
from fxscope.formats.fxt.reader import read_fxt
from fxscope.resources import DEMO_TRACE


def test_escapes_are_stripped_and_levels_read_as_loggers_write_them() -> None:
    assert strip_ansi("\x1b[31mERROR\x1b[0m: \x1b[1;4mdisk\x1b[0m full\x1b[K") == "ERROR: disk full"
    assert strip_ansi("plain") == "plain"
    level = {text: SEVERITIES[severity_of(text)] for text in (
        "\x1b[31mERROR\x1b[0m: boom", "[00012.345][1234][5678][netstack] WARNING: slow", "[warn] retry",
        "INFO: up", "an error happened in passing", "DEBUG x", "[FATAL] abort", "TRACE enter", "no level at all",
    )}  # fmt: skip
    assert level == {
        "\x1b[31mERROR\x1b[0m: boom": "ERROR", "[00012.345][1234][5678][netstack] WARNING: slow": "WARN",
        "[warn] retry": "WARN", "INFO: up": "INFO", "an error happened in passing": "INFO", "DEBUG x": "DEBUG",
        "[FATAL] abort": "FATAL", "TRACE enter": "TRACE", "no level at all": "INFO",
    }  # fmt: skip


def test_filters_keep_what_a_row_by_row_test_keeps_on_the_demo_logs() -> None:
    m = TraceModel(read_fxt(str(DEMO_TRACE)))
    logs = m.logs
    facts = log_facts(logs)
    texts = [strip_ansi(logs.text(r)) for r in range(len(logs))]
    assert facts.lines.tolist() == [t.rstrip("\n").count("\n") + 1 for t in texts]
    assert facts.severity.tolist() == [severity_of(t) for t in texts]
    for needle, level in (("", 0), ("CHUNK", 0), ("{{{bt", 0), ("", SEVERITIES.index("WARN")), ("zzz", 0)):
        rows = filter_rows(logs, facts, needle, level)
        expected = [r for r, t in enumerate(texts) if needle.casefold() in t.casefold() and severity_of(t) >= level]
        assert rows.tolist() == expected
    assert len(filter_rows(logs, facts, "chunk")) > 1 and np.all(np.diff(filter_rows(logs, facts)) > 0)
