"""What the Logs tab shows of a record and which records a filter keeps, decided per distinct message.

Log messages are string ids, so the ANSI escapes are stripped, the severity read and the line count
taken once per distinct message text, then spread to the records with one gather; a filter's text test
runs once per distinct message too (never a Python string per record).

Severity: FXT log records carry none, so it is read from the text as loggers write it: a level word
(``ERROR``, ``WARN``/``WARNING``, ``INFO``, ``DEBUG``, ``TRACE``, ``FATAL``) near the start, in capitals or
in brackets (``[error]``); a record without one counts as INFO.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np

from fxscope.core.trace.logs import LogTable

#: severities, lowest first (the severity filter shows a level and the ones above it)
SEVERITIES = ("TRACE", "DEBUG", "INFO", "WARN", "ERROR", "FATAL")
INFO = SEVERITIES.index("INFO")

#: CSI sequences (SGR colours and the rest: ``ESC [ params final``) and lone two-byte escapes
_ANSI = re.compile(r"\x1b\[[0-9;?]*[ -/]*[@-~]|\x1b[@-Z\\-_]")
_LEVEL = re.compile(r"\b(FATAL|ERROR|WARNING|WARN|INFO|DEBUG|TRACE)\b|\[(fatal|error|warning|warn|info|debug|trace)\]",
                    re.IGNORECASE)  # fmt: skip
_LEVEL_SPAN = 80  # a level word counts near the start of the message only


def strip_ansi(text: str) -> str:
    """``text`` without terminal escape sequences (SGR colours and other CSI sequences)."""
    return _ANSI.sub("", text) if "\x1b" in text else text


def severity_of(text: str) -> int:
    """The severity (index into :data:`SEVERITIES`) a logger wrote near the start of ``text``."""
    head = strip_ansi(text)[:_LEVEL_SPAN]
    for m in _LEVEL.finditer(head):
        word = m.group(1)
        if word is not None and word != word.upper():  # "error" inside a sentence is not a level
            continue
        level = (word or m.group(2)).upper()
        return SEVERITIES.index("WARN" if level == "WARNING" else level)
    return INFO


@dataclass
class LogFacts:
    """Per record: ``severity`` (uint8), ``lines`` (line count of its message, uint32); per distinct
    message id (``ids``, ascending): ``folded``, its text without escapes, case-folded."""

    severity: np.ndarray
    lines: np.ndarray
    ids: np.ndarray
    folded: list[str]


def log_facts(logs: LogTable) -> LogFacts:
    """Severity and line count of every record, computed once per distinct message."""
    ids, inverse = np.unique(np.asarray(logs.message, np.int64), return_inverse=True)
    strings = logs.strings
    texts = [strip_ansi(strings[i]) if 0 <= i < len(strings) else "<unresolved>" for i in ids.tolist()]
    sev = np.fromiter((severity_of(t) for t in texts), np.uint8, len(texts))
    lines = np.fromiter((t.rstrip("\n").count("\n") + 1 for t in texts), np.uint32, len(texts))
    inverse = inverse.reshape(-1)
    return LogFacts(sev[inverse], lines[inverse], ids, [t.casefold() for t in texts])


def filter_rows(logs: LogTable, facts: LogFacts, text: str = "", min_severity: int = 0) -> np.ndarray:
    """Rows (ascending) of the records at ``min_severity`` or above whose message (without escapes)
    contains ``text``, case-insensitive."""
    keep = facts.severity >= min_severity
    needle = text.strip().casefold()
    if needle:
        hit = np.fromiter((needle in t for t in facts.folded), bool, len(facts.folded))
        pos = np.searchsorted(facts.ids, np.asarray(logs.message, np.int64))
        keep &= hit[np.clip(pos, 0, max(len(hit) - 1, 0))] if len(hit) else False
    return np.flatnonzero(keep)
