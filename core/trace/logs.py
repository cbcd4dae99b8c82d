"""The log records of a trace in time order, and the crash reports (symbolizer markup) inside them.

Log messages are string ids into the reader's string table, so "does this record carry markup" is decided
once per distinct string and spread to the rows with one ``isin``. Crash reports are cut per process by
:mod:`fxscope.core.reports.split` (context, banner before it, last markup element, closing line), with a record
as the unit; other processes' records never enter a report, nor do a process's ordinary records between
two reports. Symbolizing a record runs the filter over its report (once per report, cached), so a record
shows what ``fxscope symbolize`` prints for that line with the module context of the lines before it.
"""

from __future__ import annotations

import numpy as np

from fxscope.core.reports.split import ReportSpan, UnitFlags, split_units, text_flags
from fxscope.core.symbolize.markup_filter import MarkupFilter
from fxscope.core.symbolize.resolver import Resolver
from fxscope.formats.fxt.columns import FxtColumns


class LogTable:
    def __init__(self, cols: FxtColumns) -> None:
        order = np.argsort(cols.log_ts, kind="stable")
        self.ts = cols.log_ts[order]
        self.thread = cols.log_thread[order]
        self.message = cols.log_message[order]
        self.strings = cols.strings
        self.offset = cols.log_offset[order]
        self.pid = np.where(
            self.thread >= 0, cols.threads_pid[np.maximum(self.thread, 0)] if len(cols.threads_pid) else 0, 0
        ).astype(np.uint64)
        ids = np.unique(self.message).tolist()
        text = self.strings
        markup = [i for i in ids if 0 <= i < len(text) and "{{{" in text[i]]
        resets = [i for i in ids if 0 <= i < len(text) and "{{{reset}}}" in text[i]]
        self.markup = np.isin(self.message, markup)
        self.reset = np.isin(self.message, resets)
        self._symbolized: dict[tuple[int, int], list[str]] = {}
        self._reports: list[TraceReport] | None = None
        self._report_of_row: np.ndarray | None = None
        self._marks: tuple[np.ndarray, np.ndarray] | None = None

    @property
    def reports(self) -> list[TraceReport]:
        """The crash reports in the log records, in time order of their first record (split on first use)."""
        if self._reports is None:
            self._split()
        assert self._reports is not None
        return self._reports

    def report_of_row(self, row: int) -> int:
        """Index into :attr:`reports` of the report holding record ``row``, or -1."""
        if self._report_of_row is None:
            self._split()
        assert self._report_of_row is not None
        return int(self._report_of_row[row]) if 0 <= row < len(self._report_of_row) else -1

    def _split(self) -> None:
        """Flags per distinct markup message (one pass each, spread to the rows with a search), then the
        splitter over each process's records."""
        ids = np.unique(self.message[self.markup])
        table = np.array([text_flags(self.strings[i]) for i in ids.tolist()], bool).reshape(-1, 4)
        n_rows = len(self.ts)
        per_row = np.zeros((n_rows, 4), bool)
        marked = np.flatnonzero(self.markup)
        if len(marked):
            per_row[marked] = table[np.searchsorted(ids, self.message[marked])]
        reports: list[TraceReport] = []
        order = np.argsort(self.pid, kind="stable")  # rows by process, time order kept
        cuts = np.flatnonzero(np.diff(self.pid[order])) + 1
        for rows in np.split(order, cuts):
            if not self.markup[rows].any():
                continue
            f = per_row[rows]
            flags = UnitFlags(f[:, 0].copy(), f[:, 1].copy(), f[:, 2].copy(), f[:, 3].copy())
            for span in split_units(flags, lambda k, rows=rows: self.text(int(rows[k]))):
                reports.append(TraceReport(rows[span.start : span.end], span))
        reports.sort(key=lambda r: int(r.rows[0]))
        of_row = np.full(n_rows, -1, np.int32)
        for i, report in enumerate(reports):
            of_row[report.rows] = i
        self._reports, self._report_of_row = reports, of_row

    def __len__(self) -> int:
        return len(self.ts)

    def text(self, row: int) -> str:
        i = int(self.message[row])
        return self.strings[i] if 0 <= i < len(self.strings) else "<unresolved>"

    def report_marks(self) -> tuple[np.ndarray, np.ndarray]:
        """Where each report is on the timeline: the time and thread of its first record (its banner, or
        its context), as arrays indexed like :attr:`reports`."""
        if self._marks is None:
            first = np.array([int(r.rows[0]) for r in self.reports], np.int64)
            self._marks = self.ts[first], self.thread[first]
        return self._marks

    def report_text_at(self, index: int) -> str:
        """Report ``index`` of :attr:`reports` as a log text."""
        return "".join(self._lines(r) for r in self.reports[index].rows.tolist())

    def report_rows(self, row: int) -> np.ndarray:
        """Rows of the crash report that ``row`` belongs to (its process's records from the report's banner
        to its last markup record or closing line); just ``row`` when it is in no report."""
        index = self.report_of_row(row)
        return self.reports[index].rows if index >= 0 else np.array([row], np.int64)

    def report_text(self, row: int) -> str:
        """The crash report around ``row`` as a log text (one line per message line)."""
        return "".join(self._lines(r) for r in self.report_rows(row).tolist())

    def _lines(self, row: int) -> str:
        text = self.text(row)
        return text if text.endswith("\n") else text + "\n"

    def symbolized(self, row: int, resolver: Resolver) -> str:
        """What the symbolizing filter prints for ``row``'s message, in the context of its report."""
        if not self.markup[row]:
            return self.text(row)
        rows = self.report_rows(row)
        key = (int(rows[0]), int(rows[-1]))
        outputs = self._symbolized.get(key)
        if outputs is None:
            current: list[str] = []
            filt = MarkupFilter(resolver, current.append, lambda _msg: None)
            outputs = []
            for r in rows.tolist():
                for line in self._lines(r).splitlines(keepends=True):
                    filt.filter_line(line)
                outputs.append("".join(current))
                current.clear()
            filt.finish()
            if current and outputs:
                outputs[-1] += "".join(current)
            self._symbolized[key] = outputs
        return outputs[int(np.searchsorted(rows, row))].rstrip("\n")


class TraceReport:
    """One crash report in a trace: its records (rows of the :class:`LogTable`, one process, time order)."""

    def __init__(self, rows: np.ndarray, span: ReportSpan) -> None:
        self.rows = rows
        self.span = span
