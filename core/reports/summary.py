"""One line about a crash report for the reports list: signal, fault address, thread, top frame, module.

Read from the report's own text with a few patterns (banners differ between runtimes, so each field is
optional) and from its markup: the first backtrace frames are placed in the report's ``{{{mmap}}}``
ranges and the first one with a symbol names the report. Only those few frames are resolved, so listing
thousands of reports costs a handful of lookups each, not a full symbolization.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from fxscope.core.symbolize.resolver import ResolveError, Resolver

_ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")
_SIGNAL = re.compile(r"(?i)\bsignal\s+(\d+)(?:\s*\(\s*(?:SIG)?([A-Z]+)\s*\))?|\b(SIG[A-Z]{3,6})\b")
_FAULT = re.compile(r"(?i)\bfault(?:ing)?\s+addr(?:ess)?\s*[:=]?\s*(0x[0-9a-f]+|\(nil\)|\d+)")
_THREAD = re.compile(r"(?i)\b(?:thread|tid)\s*[:=#]?\s*(\"[^\"]+\"|'[^']+'|[\w.-]+)")
_NUM = r"(0x[0-9a-fA-F]+|\d+)"
_MODULE = re.compile(r"\{\{\{module:" + _NUM + r":([^:}]*):elf:([0-9a-fA-F]+)")
_MMAP = re.compile(r"\{\{\{mmap:" + _NUM + ":" + _NUM + r":load:" + _NUM + r":([rwx]*):" + _NUM + r"\}\}\}")
_BT = re.compile(r"\{\{\{bt:(\d+):(0x[0-9a-fA-F]+|\d+)(?::(pc|ra))?\}\}\}")
TOP_FRAMES_TRIED = 8


@dataclass(frozen=True)
class ReportSummary:
    signal: str = ""  # "11 (SEGV)" or "SIGABRT"
    fault_address: str = ""
    thread: str = ""
    top_frame: str = ""  # the first frame with a symbol (innermost inline frame), or the first raw frame
    module: str = ""  # "libdemo.so+0x1130" of that frame
    frames: int = 0  # backtrace entries


def _int(text: str) -> int:
    return int(text, 0)


def summarize(lines: Sequence[str], resolver: Resolver | None = None) -> ReportSummary:
    """The summary of a report's lines; ``resolver`` None leaves the frames unsymbolized."""
    signal = fault = thread = ""
    modules: dict[int, tuple[str, bytes]] = {}
    mmaps: list[tuple[int, int, int, int]] = []  # start, size, module id, relative
    frames: list[tuple[int, int, str]] = []
    for line in lines:
        if "{{{" not in line:
            plain = _ANSI.sub("", line)
            if not signal and (m := _SIGNAL.search(plain)):
                signal = (f"{m.group(1)} ({m.group(2)})" if m.group(2) else m.group(1)) if m.group(1) else m.group(3)
            if not fault and (m := _FAULT.search(plain)):
                fault = m.group(1)
            if not thread and (m := _THREAD.search(plain)):
                thread = m.group(1).strip("\"'")
            continue
        for m in _MODULE.finditer(line):
            try:
                modules[_int(m.group(1))] = (m.group(2), bytes.fromhex(m.group(3)))
            except ValueError:
                continue
        for m in _MMAP.finditer(line):
            if "x" in m.group(4):
                mmaps.append((_int(m.group(1)), _int(m.group(2)), _int(m.group(3)), _int(m.group(5))))
        for m in _BT.finditer(line):
            frames.append((int(m.group(1)), _int(m.group(2)), m.group(3) or ""))
    top = where = ""
    for _number, address, kind in frames[:TOP_FRAMES_TRIED]:
        adjusted = address - 1 if kind == "ra" else address
        place = next(((mid, adjusted - s + rel) for s, size, mid, rel in mmaps if s <= adjusted < s + size), None)
        if place is None or place[0] not in modules:
            if not where:
                top, where = f"0x{address:x}", "?"
            continue
        name, build_id = modules[place[0]]
        label = f"{name}+0x{place[1]:x}"
        function = ""
        if resolver is not None:
            try:
                stack = resolver.code(build_id, place[1])
            except ResolveError:
                stack = []
            function = stack[0].function if stack else ""
        if function:
            top, where = function, label
            break
        if not where or where == "?":
            top, where = f"0x{address:x}", label
    return ReportSummary(signal, fault, thread, top, where, len(frames))
