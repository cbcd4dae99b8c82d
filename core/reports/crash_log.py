"""A log file as a list of crash reports: its lines, where each report is, and each report's text.

The crash view opens one report at a time; a log with many crashes is many reports, never one tree.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from core.reports.split import ReportSpan, split_lines
from core.reports.summary import ReportSummary, summarize
from core.symbolize.resolver import Resolver

_TIME = re.compile(r"^\s*\[\s*(\d+(?:\.\d+)?)\s*\]")
#: a log bigger than this is refused with a message rather than read into memory whole
MAX_LOG_BYTES = 256 << 20


class LogTooLargeError(ValueError):
    """The log file is larger than :data:`MAX_LOG_BYTES`."""


@dataclass(frozen=True)
class CrashLog:
    """``lines`` keep their line endings; ``reports[i]`` indexes them."""

    lines: list[str]
    reports: list[ReportSpan]

    @classmethod
    def from_text(cls, text: str) -> CrashLog:
        lines = text.splitlines(keepends=True)
        return cls(lines, split_lines(lines))

    @classmethod
    def from_path(cls, path: str | Path) -> CrashLog:
        size = Path(path).stat().st_size
        if size > MAX_LOG_BYTES:
            raise LogTooLargeError(f"{path}: {size:,} bytes is more than the {MAX_LOG_BYTES:,} a log may have")
        return cls.from_text(Path(path).read_text(encoding="utf-8", errors="replace"))

    def report_lines(self, index: int) -> list[str]:
        span = self.reports[index]
        return self.lines[span.start : span.end]

    def report_text(self, index: int) -> str:
        return "".join(self.report_lines(index))

    def summary(self, index: int, resolver: Resolver | None = None) -> ReportSummary:
        return summarize(self.report_lines(index), resolver)

    def report_time(self, index: int) -> str:
        """The report's time as the log prints it (``[  0.000422]``, from the nearest stamped line at or
        before the report), or its line number."""
        span = self.reports[index]
        for i in range(span.context, max(span.start - 20, -1), -1):
            m = _TIME.match(self.lines[i])
            if m:
                return f"{m.group(1)} s"
        return f"line {span.start + 1}"
