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
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

_ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")
_RESET = re.compile(r"\{\{\{reset[:}]")
_CONTEXT = re.compile(r"\{\{\{(?:reset|module|mmap)[:}]")
_ELEMENT = re.compile(r"\{\{\{([A-Za-z_][\w]*)?")
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

    @classmethod
    def of_texts(cls, texts: Sequence[str]) -> UnitFlags:
        n = len(texts)
        reset, context, markup, bt = (np.zeros(n, bool) for _ in range(4))
        for i, text in enumerate(texts):
            if "{{{" not in text:
                continue
            reset[i], context[i], markup[i], bt[i] = _flags(text)
        return cls(reset, context, markup, bt)


def _flags(text: str) -> tuple[bool, bool, bool, bool]:
    tags = _ELEMENT.findall(text)
    context = any(t in ("reset", "module", "mmap") for t in tags)
    other = any(t not in ("reset", "module", "mmap") for t in tags)
    return bool(_RESET.search(text)), context, other, "bt" in tags


def _plain(text: str) -> str:
    return _ANSI.sub("", text)


def is_banner(text: str) -> bool:
    """Does this line read like a crash announcement (signal, fault address, panic, ...)?"""
    plain = _plain(text)
    return "{{{" not in plain and bool(_BANNER.search(plain)) and not _TRAILER.search(plain)


def is_trailer(text: str) -> bool:
    """Does this line close a report ("*** end of crash report ***")?"""
    plain = _plain(text)
    return "{{{" not in plain and bool(_TRAILER.search(plain))


def split_units(flags: UnitFlags, text_of: Callable[[int], str], cut_at_end: bool = False) -> list[ReportSpan]:
    """The reports among ``len(flags.reset)`` units. ``text_of(i)`` gives a unit's text (asked only for
    units next to a boundary); ``cut_at_end``: the log ends inside a markup element (the last report is
    marked as cut)."""
    idx = np.flatnonzero(flags.context | flags.markup)
    if not len(idx):
        return []
    reset, context, markup, bt = (a[idx].tolist() for a in (flags.reset, flags.context, flags.markup,
                                                            flags.backtrace))  # fmt: skip
    starts: list[int] = []  # positions in idx
    used = False  # the open report has used its context
    for k in range(len(idx)):
        if not starts or reset[k] or (context[k] and used):
            starts.append(k)
            used = markup[k]
        else:
            used = used or markup[k]
    bounds = [*starts, len(idx)]
    idx_list = idx.tolist()
    spans: list[ReportSpan] = []
    prev_end = 0
    n_units = len(flags.reset)
    # pass 1: core ranges and banners
    cores = []
    for s, e in zip(bounds[:-1], bounds[1:], strict=True):
        first, last = idx_list[s], idx_list[e - 1]
        cores.append((first, last, s, e))
    banners: list[int] = []
    for j, (first, _last, _s, _e) in enumerate(cores):
        floor = cores[j - 1][1] + 1 if j else 0
        b = first
        while b > floor and first - b < BANNER_MAX and is_banner(text_of(b - 1)):
            b -= 1
        banners.append(b)
    for j, (first, last, s, e) in enumerate(cores):
        ceiling = banners[j + 1] if j + 1 < len(cores) else n_units
        end = last + 1
        for u in range(last + 1, min(last + 1 + TRAILER_WINDOW, ceiling)):
            if is_trailer(text_of(u)):
                end = u + 1
                break
        has_context = any(context[s:e])
        has_bt = any(bt[s:e])
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


def line_flags(lines: Sequence[str]) -> tuple[UnitFlags, bool]:
    """Flags per line of a file; lines inside a multi-line element (``{{{hexdict:`` ... ``}}}``) count as
    markup. Also: does the text end inside an element."""
    flags = UnitFlags.of_texts(lines)
    inside = False
    open_at = [i for i, line in enumerate(lines) if "{{{" in line or "}}}" in line]
    prev = -1
    for i in open_at:
        if inside and i > prev + 1:
            flags.markup[prev + 1 : i] = True
        line = lines[i]
        if inside:
            flags.markup[i] = True
            close = line.find("}}}")
            inside = close < 0 or line.rfind("{{{") > close and "}}}" not in line[line.rfind("{{{"):]
        else:
            opened = line.rfind("{{{")
            inside = opened >= 0 and "}}}" not in line[opened:]
        prev = i
    if inside and prev + 1 < len(lines):
        flags.markup[prev + 1 :] = True
    return flags, inside


def split_lines(lines: Sequence[str]) -> list[ReportSpan]:
    """The reports of a log file given as its lines."""
    flags, cut = line_flags(lines)
    return split_units(flags, lines.__getitem__, cut_at_end=cut)
