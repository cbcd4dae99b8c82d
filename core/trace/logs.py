"""The log records of a trace in time order, and the crash reports (symbolizer markup) inside them.

Log messages are string ids into the reader's string table, so "does this record carry markup" is decided
once per distinct string and spread to the rows with one ``isin``. A crash report in a trace is a run of
records of one process that carry markup; ``{{{reset}}}`` starts a new one, as the markup spec says for a
log. Symbolizing a record runs the filter over its report (once per report, cached), so a record shows
what ``fxscope symbolize`` prints for that line with the module context of the lines before it.
"""

from __future__ import annotations

import numpy as np

from core.symbolize.markup_filter import MarkupFilter
from core.symbolize.resolver import Resolver
from formats.fxt.columns import FxtColumns


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

    def __len__(self) -> int:
        return len(self.ts)

    def text(self, row: int) -> str:
        i = int(self.message[row])
        return self.strings[i] if 0 <= i < len(self.strings) else "<unresolved>"

    def report_rows(self, row: int) -> np.ndarray:
        """Rows of the crash report that ``row`` belongs to: same process, from the last reset at or before
        it (or the process's first markup) to the next reset after it."""
        same = np.flatnonzero(self.pid == self.pid[row])
        k = int(np.searchsorted(same, row))
        resets = same[self.reset[same]]
        before = resets[resets <= row]
        after = resets[resets > row]
        lo = int(before[-1]) if len(before) else int(same[np.argmax(self.markup[same])]) if self.markup[same].any() else row
        hi = int(after[0]) if len(after) else int(same[-1]) + 1
        rows = same[(same >= lo) & (same < hi)]
        return rows if len(rows) else same[k : k + 1]

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
