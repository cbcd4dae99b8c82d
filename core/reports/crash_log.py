"""A log file as a list of crash reports: its bytes, where its lines start, where each report is.

The crash view opens one report at a time; a log with many crashes is many reports, never one tree. The
log is kept as its bytes and an array of line offsets (no string per line): a report's text is decoded
when it is opened or summarized.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from fxscope.core.reports.split import ReportSpan, split_bytes, text_lines
from fxscope.core.reports.summary import ReportSummary, summarize
from fxscope.core.symbolize.resolver import Resolver

_TIME = re.compile(r"^\s*\[\s*(\d+(?:\.\d+)?)\s*\]")
#: a log bigger than this is refused with a message rather than read into memory whole
MAX_LOG_BYTES = 256 << 20


class LogReadError(ValueError):
    """The log cannot be read as a log: compressed data that is corrupt, or a log too large."""


class LogTooLargeError(LogReadError):
    """The log file (or what it decompresses to) is larger than :data:`MAX_LOG_BYTES`."""


@dataclass(frozen=True)
class CrashLog:
    """``starts[i]:starts[i + 1]`` are the bytes of line ``i`` (with its newline); ``reports[k]`` index lines."""

    data: bytes
    starts: np.ndarray
    reports: list[ReportSpan] = field(default_factory=list)

    @classmethod
    def from_bytes(cls, data: bytes) -> CrashLog:
        starts = text_lines(data)
        return cls(data, starts, split_bytes(data, starts))

    @classmethod
    def from_text(cls, text: str) -> CrashLog:
        return cls.from_bytes(text.encode("utf-8", "surrogatepass"))  # any str, lone surrogates too

    @classmethod
    def from_path(cls, path: str | Path) -> CrashLog:
        """The log at ``path`` (:func:`log_bytes`)."""
        return cls.from_bytes(log_bytes(path))

    @property
    def line_count(self) -> int:
        return len(self.starts) - 1

    def line(self, i: int) -> str:
        return self.data[self.starts[i] : self.starts[i + 1]].decode("utf-8", "replace")

    @property
    def lines(self) -> list[str]:
        """Every line as a string (for small logs and tests; the reports do not need it)."""
        return [self.line(i) for i in range(self.line_count)]

    def text_of(self, first: int, end: int) -> str:
        """Lines ``first`` .. ``end`` (exclusive) as text."""
        if end <= first:
            return ""
        return self.data[self.starts[first] : self.starts[end]].decode("utf-8", "replace")

    def report_lines(self, index: int) -> list[str]:
        return self.report_text(index).splitlines(keepends=True)

    def report_text(self, index: int) -> str:
        span = self.reports[index]
        return self.text_of(span.start, span.end)

    def summary(self, index: int, resolver: Resolver | None = None) -> ReportSummary:
        return summarize(self.report_lines(index), resolver)

    def report_time(self, index: int) -> str:
        """The report's time as the log prints it (``[  0.000422]``, from the nearest stamped line at or
        before the report), or its line number."""
        span = self.reports[index]
        for i in range(span.context, max(span.start - 20, -1), -1):
            m = _TIME.match(self.line(i))
            if m:
                return f"{m.group(1)} s"
        return f"line {span.start + 1}"


def log_bytes(path: str | Path) -> bytes:
    """The bytes of the log at ``path``, plain or compressed with gzip, xz or zstd (``crash.log.gz``: what log
    collectors hand out), decompressed in memory up to :data:`MAX_LOG_BYTES`. Raises :class:`LogReadError`
    (:class:`LogTooLargeError` past the limit); OSError when the file cannot be read."""
    from fxscope.core.decompress import DecompressedTooLargeError, DecompressError, read_decompressed
    from fxscope.core.filetype import compression_of

    with open(path, "rb") as f:
        compression = compression_of(f.read(8))
    if compression is not None:
        try:
            return read_decompressed(str(path), compression, MAX_LOG_BYTES)
        except DecompressedTooLargeError as exc:
            raise LogTooLargeError(f"{path}: {exc}") from None
        except DecompressError as exc:
            raise LogReadError(f"{path}: {compression} data: {exc}") from None
    size = Path(path).stat().st_size
    if size > MAX_LOG_BYTES:
        raise LogTooLargeError(f"{path}: {size:,} bytes is more than the {MAX_LOG_BYTES:,} a log may have")
    return Path(path).read_bytes()
