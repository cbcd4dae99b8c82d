"""Where crash reports begin and end in a log: a file's lines, or one process's log records in a trace.

A report is its context (``{{{reset}}}``, ``{{{module}}}``, ``{{{mmap}}}``) plus the lines that use it, up
to its last markup element. The boundaries are decided on *units* (a line of a file, or a log record of a
trace, which may hold several lines) from a few flags per unit, so the same rules split both:

- a report starts at a ``{{{reset}}}``, or at a context unit after the current report has used its context
  (a backtrace, pc, data, ... element), or at a markup unit when no report is open (a log that starts
  mid-report: the report has no context and says so);
- it takes the **banner** before its context: the contiguous lines right before it that read like a crash
  announcement ("fatal signal 11 (SEGV) ... fault address", "*** ... ***", "panic", "Assertion failed");
  a crashing process prints those before it prints the module context;
- it ends at its last markup unit, plus a closing line right after it ("*** end of crash report ***"), so
  ordinary log lines between two reports (or after the last one) belong to neither.

Only units with ``{{{`` are looked at one by one (a Python loop over markup units, not over every log
line); banners and trailers are tested on the few units next to a boundary.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

_ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")
_RESET = re.compile(r"\{\{\{reset[:}]")
_CONTEXT = re.compile(r"\{\{\{(?:reset|module|mmap)[:}]")
_ELEMENT = re.compile(r"\{\{\{([A-Za-z_]\w*)?")
#: a line announcing a crash (checked without colour codes)
_BANNER = re.compile(
    r"(?i)(\bsignal\s+\d|\bsig(segv|bus|abrt|ill|fpe|trap|sys|kill)\b|\bfault(ing)?\s+addr|segmentation fault"
    r"|\bcrash(ed|ing)?\b|\bpanic(ked)?\b|\babort(ed|ing)?\b|\bexception\b|\bassert(ion)?\b.*\bfail|\bfatal\b"
    r"|^\s*\*\*\*|\bbacktrace\b|\bstack ?trace\b|\bregisters?:)"
)
#: a line closing a report
_TRAILER = re.compile(r"(?i)(\bend of\b.*\b(crash|report|backtrace|stack|trace|dump)|^\W*end\W*$)")
BANNER_MAX = 8  # lines of banner taken at most
TRAILER_WINDOW = 3  # units after the last markup unit searched for a closing line


@dataclass(frozen=True)
class ReportSpan:
    """Units ``start`` .. ``end`` (exclusive) of one report; ``context`` is its first context (or markup) unit."""

    start: int
    context: int
    end: int
    has_context: bool
    has_backtrace: bool
    warnings: tuple[str, ...] = ()


@dataclass(frozen=True)
class UnitFlags:
    """Per unit: holds a reset; holds module/mmap/reset; holds another markup element; holds a ``bt``."""

    reset: np.ndarray
    context: np.ndarray
    markup: np.ndarray
    backtrace: np.ndarray


def text_flags(text: str) -> tuple[bool, bool, bool, bool]:
    """(holds a reset, holds context, holds another element, holds a ``bt``) for one unit's text."""
    tags = _ELEMENT.findall(text)
    context = any(t in ("reset", "module", "mmap") for t in tags)
    other = any(t and t not in ("reset", "module", "mmap") for t in tags)
    return bool(_RESET.search(text)), context, other, "bt" in tags


def _plain(text: str) -> str:
    return _ANSI.sub("", text)


#: words one of which every banner line holds (a substring test per word is far cheaper than the regex)
_BANNER_WORDS = ("sig", "fault", "crash", "panic", "abort", "exception", "assert", "fatal", "***", "backtrace",
                 "stack", "register")  # fmt: skip


def is_banner(text: str) -> bool:
    """Does this line read like a crash announcement (signal, fault address, panic, ...)?"""
    low = text.lower()
    if "{{{" in low or not any(word in low for word in _BANNER_WORDS):
        return False
    plain = _plain(text)
    return bool(_BANNER.search(plain)) and not _TRAILER.search(plain)


def is_trailer(text: str) -> bool:
    """Does this line close a report ("*** end of crash report ***")?"""
    low = text.lower()
    if "{{{" in low or "end" not in low:
        return False
    return bool(_TRAILER.search(_plain(text)))


def split_units(flags: UnitFlags, text_of: Callable[[int], str], cut_at_end: bool = False) -> list[ReportSpan]:
    """The reports among ``len(flags.reset)`` units. ``text_of(i)`` gives a unit's text (asked only for
    units next to a boundary); ``cut_at_end``: the log ends inside a markup element (the last report is
    marked as cut)."""
    idx = np.flatnonzero(flags.context | flags.markup)
    if not len(idx):
        return []
    reset, context, markup, bt = (a[idx] for a in (flags.reset, flags.context, flags.markup, flags.backtrace))
    # a report starts at the first markup unit, at a reset, and at a context unit right after a unit that
    # used the context (with no context unit in between, "used since the last start" is "the previous unit")
    begin = reset.copy()
    begin[0] = True
    begin[1:] |= context[1:] & markup[:-1]
    starts = np.flatnonzero(begin)
    ends = np.append(starts[1:], len(idx))
    has_context = np.add.reduceat(context.astype(np.int64), starts) > 0
    has_bt = np.add.reduceat(bt.astype(np.int64), starts) > 0
    spans: list[ReportSpan] = []
    prev_end = 0
    n_units = len(flags.reset)
    cores = list(zip(idx[starts].tolist(), idx[ends - 1].tolist(), has_context.tolist(), has_bt.tolist(),
                     strict=True))  # fmt: skip
    banners: list[int] = []
    for j, (first, _last, _c, _b) in enumerate(cores):
        floor = cores[j - 1][1] + 1 if j else 0
        b = first
        while b > floor and first - b < BANNER_MAX and is_banner(text_of(b - 1)):
            b -= 1
        banners.append(b)
    for j, (first, last, has_context, has_bt) in enumerate(cores):
        ceiling = banners[j + 1] if j + 1 < len(cores) else n_units
        end = last + 1
        for u in range(last + 1, min(last + 1 + TRAILER_WINDOW, ceiling)):
            if is_trailer(text_of(u)):
                end = u + 1
                break
        warnings = []
        if not has_context:
            warnings.append("no {{{reset}}}/{{{module}}} context before this report's markup: "
                            "the log starts in the middle of a report")
        if j == len(cores) - 1:
            if cut_at_end:
                warnings.append("the log ends inside a markup element: the report is cut")
            elif has_context and not has_bt:
                warnings.append("the log ends before this report's backtrace ({{{bt}}}): it may be cut")
        spans.append(ReportSpan(max(banners[j], prev_end), first, end, has_context, has_bt, tuple(warnings)))
        prev_end = end
    return spans


def _matches(padded: np.ndarray, at: np.ndarray, pattern: bytes) -> np.ndarray:
    """Which of the positions ``at`` start ``pattern`` in ``padded`` (bytes with a zero tail)."""
    ok = np.ones(len(at), bool)
    for k, byte in enumerate(pattern):
        ok &= padded[at + k] == byte
    return ok


def text_lines(data: bytes) -> np.ndarray:
    """Byte offsets where each line starts, and the end: ``starts[i]:starts[i + 1]`` is line ``i`` with its
    newline (lines end at ``\\n`` only, as the filter reads them)."""
    buf = np.frombuffer(data, np.uint8)
    starts = np.concatenate([[0], np.flatnonzero(buf == 10) + 1]).astype(np.int64)
    if starts[-1] != len(data):
        starts = np.append(starts, len(data))
    return starts


def byte_flags(data: bytes, starts: np.ndarray) -> tuple[UnitFlags, bool]:
    """Flags per line of a log's bytes, vectorized: element openings ``{{{`` and closings ``}}}`` are
    found with numpy, their tags read from the bytes after them, and lines inside a multi-line element
    (``{{{hexdict:`` ... ``}}}``) marked by carrying an open element forward. Also: does the text end
    inside an element."""
    n = len(starts) - 1
    flags = UnitFlags(np.zeros(n, bool), np.zeros(n, bool), np.zeros(n, bool), np.zeros(n, bool))
    if n <= 0 or len(data) < 3:
        return flags, False
    buf = np.frombuffer(data, np.uint8)
    padded = np.concatenate([buf, np.zeros(16, np.uint8)])
    three = (buf[:-2] == buf[1:-1]) & (buf[1:-1] == buf[2:])
    opens = np.flatnonzero(three & (buf[:-2] == 123))
    closes = np.flatnonzero(three & (buf[:-2] == 125))
    line_of_open = np.searchsorted(starts, opens, side="right") - 1
    line_of_close = np.searchsorted(starts, closes, side="right") - 1
    after = padded[opens + 3]
    named = ((after >= 65) & (after <= 90)) | ((after >= 97) & (after <= 122)) | (after == 95)

    def tag(name: bytes) -> np.ndarray:
        end = padded[opens + 3 + len(name)]
        return _matches(padded, opens + 3, name) & ((end == 58) | (end == 125))  # ":" or "}"

    reset = tag(b"reset")
    context = reset | tag(b"module") | tag(b"mmap")
    flags.reset[line_of_open[reset]] = True
    flags.context[line_of_open[context]] = True
    flags.markup[line_of_open[named & ~context]] = True
    flags.backtrace[line_of_open[tag(b"bt")]] = True
    # multi-line elements: the last opening of a line after its last closing leaves an element open
    last_open = np.full(n, -1, np.int64)
    last_close = np.full(n, -1, np.int64)
    last_open[line_of_open] = opens  # sorted positions: the last assignment per line wins
    last_close[line_of_close] = closes
    opened = last_open > last_close
    event = np.zeros(n, np.int8)
    event[last_close >= 0] = -1
    event[opened] = 1
    latest = np.maximum.accumulate(np.where(event != 0, np.arange(n), -1))
    inside_after = (latest >= 0) & (event[np.maximum(latest, 0)] == 1)
    flags.markup[1:] |= inside_after[:-1]  # a line that starts inside an element is part of it
    return flags, bool(inside_after[-1])


def split_bytes(data: bytes, starts: np.ndarray | None = None) -> list[ReportSpan]:
    """The reports of a log given as bytes (UTF-8); spans index its lines (see :func:`text_lines`)."""
    if starts is None:
        starts = text_lines(data)
    flags, cut = byte_flags(data, starts)
    return split_units(flags, lambda i: data[starts[i] : starts[i + 1]].decode("utf-8", "replace"), cut_at_end=cut)
