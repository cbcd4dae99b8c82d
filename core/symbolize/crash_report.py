"""A crash log as structured data for the crash view: symbolized text, backtrace, modules, registers, dumps.

The text comes from :class:`MarkupFilter` (the same output as ``fxscope symbolize``); the filter also
records every backtrace frame it symbolized. Registers come from ``{{{hexdict:...}}}`` elements (which the
reference filter passes through untouched), parsed here and annotated with the function a value points
into when it falls inside a module's mapping.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from fxscope.core.symbolize.explain import explain_frame, explain_missing_module
from fxscope.core.symbolize.markup_filter import MarkupFilter, MMap, Module
from fxscope.core.symbolize.resolver import Frame, ResolveError, Resolver
from fxscope.formats.markup.parser import MarkupParser

_PAIR = re.compile(r"([A-Za-z_][\w.]*)\s*:\s*(0x[0-9a-fA-F]+|[0-9]+)\b")


@dataclass
class BacktraceEntry:
    number: int
    address: int  # adjusted (return address - 1 for :ra)
    module: str
    relative: int
    frames: list[Frame]  # innermost first; empty when nothing is known


@dataclass
class Register:
    name: str
    value: int
    annotation: str = ""  # "function (module+0x...)" when the value points into code


@dataclass
class Dump:
    kind: str
    name: str
    line: int


@dataclass
class CrashReport:
    text: str
    diagnostics: str
    backtrace: list[BacktraceEntry] = field(default_factory=list)
    modules: list[Module] = field(default_factory=list)
    mmaps: list[MMap] = field(default_factory=list)
    registers: list[Register] = field(default_factory=list)
    dumps: list[Dump] = field(default_factory=list)
    #: per module build ID: are there symbols for it (asked while building, off the UI thread)
    symbols_found: dict[bytes, bool] = field(default_factory=dict)
    #: per module build ID without symbols: why (where we looked, what debuginfod said)
    missing: dict[bytes, str] = field(default_factory=dict)

    def explain(self, entry: BacktraceEntry, frame: Frame | None) -> str:
        """Why ``frame`` of ``entry`` is not (fully) symbolized; "" when it is."""
        module = next((m for m in self.modules if m.name == entry.module), None)
        if module is None:
            return explain_frame("", entry.relative, False, "")
        return explain_frame(module.name, entry.relative, self.symbols_found.get(module.build_id, False),
                             self.missing.get(module.build_id, ""), frame.function if frame else "",
                             bool(frame and frame.file))  # fmt: skip


class _RecordingFilter(MarkupFilter):
    """The reference filter plus a record of what the crash view needs."""

    caching = False  # every backtrace element must reach _resolve_code to be recorded

    def __init__(self, resolver: Resolver, out, err, color: bool = False) -> None:
        super().__init__(resolver, out, err, color=color)
        self.entries: list[BacktraceEntry] = []
        self.all_modules: list[Module] = []
        self.all_mmaps: list[MMap] = []

    def _resolve_code(self, node, mmap, address):
        frames = super()._resolve_code(node, mmap, address)
        if node.tag == "bt":
            self.entries.append(BacktraceEntry(int(node.fields[0]) if node.fields[0].isdigit() else -1, address,
                                               mmap.module.name, mmap.relative(address), list(frames or [])))
        return frames

    def _module(self, node, deferred):
        before = set(self.modules)
        super()._module(node, deferred)
        self.all_modules.extend(m for k, m in self.modules.items() if k not in before)

    def _mmap(self, node, deferred):
        before = set(self.mmaps)
        super()._mmap(node, deferred)
        self.all_mmaps.extend(m for k, m in self.mmaps.items() if k not in before)


def build_report(text: str, resolver: Resolver, color: bool = False) -> CrashReport:
    """``color``: the symbolized text keeps the log's SGR colours and adds llvm-symbolizer's highlights."""
    out: list[str] = []
    err: list[str] = []
    filt = _RecordingFilter(resolver, out.append, err.append, color)
    for line in text.splitlines(keepends=True):
        filt.filter_line(line)
    mmaps_at_end = list(filt.mmaps.values())
    filt.finish()
    report = CrashReport("".join(out), "".join(err), filt.entries, filt.all_modules, filt.all_mmaps)
    parser = MarkupParser(multiline=True)
    for number, line in enumerate(text.splitlines(keepends=True), 1):
        nodes = parser.feed(line)
        for node in nodes or []:
            if node.tag == "hexdict":
                for name, value in _PAIR.findall(":".join(node.fields)):
                    report.registers.append(Register(name, int(value, 0)))
            elif node.tag == "dumpfile" and len(node.fields) >= 2:
                report.dumps.append(Dump(node.fields[0], node.fields[1], number))
    _annotate(report.registers, mmaps_at_end or report.mmaps, resolver)
    symbolized = {e.module for e in report.backtrace if e.frames}
    for m in report.modules:
        known = getattr(resolver, "known", None)
        report.symbols_found[m.build_id] = m.name in symbolized or bool(known and known(m.build_id))
        if not report.symbols_found[m.build_id]:
            report.missing[m.build_id] = explain_missing_module(resolver, m.name, m.build_id)
    return report


def _annotate(registers: list[Register], mmaps: list[MMap], resolver: Resolver) -> None:
    for reg in registers:
        for m in mmaps:
            if m.contains(reg.value):
                rel = m.relative(reg.value)
                where = f"{m.module.name}+0x{rel:x}"
                name = None
                try:
                    if "x" in m.mode:
                        frames = resolver.code(m.module.build_id, rel)
                        name = frames[-1].function if frames else None
                    else:
                        name = resolver.data(m.module.build_id, rel)
                except ResolveError:
                    name = None
                reg.annotation = f"{name} ({where})" if name else where
                break

