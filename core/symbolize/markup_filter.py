"""The symbolizing markup filter, output-compatible with ``llvm-symbolizer --filter-markup`` (LLVM 19).

It is a single pass over lines that accumulates context (modules and mmaps) and rewrites presentation
elements (``symbol``, ``pc``, ``data``, ``bt``) into symbolized text, following LLVM's ``MarkupFilter``
step by step (``../shared/specs/symbolizer-markup.md`` Parts 3 and 4): contextual lines are elided into
module summary lines, invalid elements produce diagnostics with an echo of the line and a caret, and with
colour enabled the SGR state of the input is tracked and re-emitted in LLVM's form.

Output and diagnostics go to two callables so the command line, tests and the crash view can all use it.

One module (over 600 lines) on purpose: it is one state machine, LLVM's ``MarkupFilter`` method for method,
whose steps all read and write the same state (the SGR colour, the module and mmap context, the pending
module summary, the line's diagnostics). Split by topic, each part would reach into that state; kept whole,
it reads side by side with LLVM's ``MarkupFilter.cpp``, which is how its behaviour is checked.
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Callable
from dataclasses import dataclass, field

from fxscope.core.symbolize.resolver import Frame, ResolveError, Resolver
from fxscope.core.symbols.demangle import demangle, demangle_any
from fxscope.formats.markup.fields import (
    U64_MAX,
    parse_address,
    parse_build_id,
    parse_decimal,
    parse_integer,
    parse_mode,
    parse_pc_type,
)
from fxscope.formats.markup.parser import Node, parse_line

CONTEXTUAL_TAGS = ("module", "mmap", "reset")
#: diagnostics printed for one input line. LLVM echoes the whole line with a caret under each one, so a long
#: line of bad elements writes output quadratic in its length (a 90 KB line of 6,000 elements: 810 MB);
#: fxscope prints the first ones as LLVM does, then one note with the number suppressed (a documented
#: difference from LLVM that keeps the output linear in the input)
MAX_LINE_DIAGNOSTICS = 5
_COLOURS = {f"\x1b[3{i}m": i for i in range(8)}
BLUE, CYAN, GREEN = 4, 6, 2


@dataclass
class Module:
    id: int
    name: str
    build_id: bytes


@dataclass
class MMap:
    addr: int
    size: int
    module: Module
    mode: str
    module_relative: int

    def contains(self, address: int) -> bool:
        return self.addr <= address < self.addr + self.size

    def relative(self, address: int) -> int:
        return address - self.addr + self.module_relative


@dataclass
class _InfoLine:
    module: Module
    mmaps: list[MMap] = field(default_factory=list)


#: a line that is plain text around one ``{{{bt:N:ADDR[:ra|:pc]}}}`` (see MarkupFilter._bare_bt)
_BARE_BT = re.compile(r"([^{}\x1b\n]*)\{\{\{bt:([0-9]{1,20}):(0x[0-9a-fA-F]{1,16}|0+)(?::(ra|pc))?\}\}\}([^{}\x1b\n]*\r?\n)")


class MarkupFilter:
    #: reuse line outputs and backtrace renderings (a subclass that watches every resolution turns it off)
    caching = True

    def __init__(
        self,
        resolver: Resolver,
        write: Callable[[str], None],
        diagnose: Callable[[str], None],
        color: bool = False,
    ) -> None:
        self.resolver = resolver
        self.out = write
        self.err = diagnose
        self.colors = color
        self.modules: dict[int, Module] = {}
        self.mmap_starts: list[int] = []
        self.mmaps: dict[int, MMap] = {}
        self.info: _InfoLine | None = None
        self.colour: int | None = None
        self.bold = False
        self.line = ""
        # (build ID, module-relative address) -> frames: backtraces repeat the same addresses
        self._code_cache: dict[tuple[bytes, int], list[Frame]] = {}
        # line -> (output, colour, bold) for lines that printed no diagnostic and changed no context: a
        # line's output depends only on the line and the context, so it is reused until the context changes
        self._line_cache: dict[str, tuple[str, int | None, bool]] = {}
        self._bt_cache: dict[tuple, tuple] = {}
        self._failed = False
        self._context_seen = False  # a module, mmap or reset element was seen on the current line
        self._line_diagnostics = 0  # diagnostics reported for the current line (see MAX_LINE_DIAGNOSTICS)

    # ------------------------------------------------------------------ driver
    def filter_line(self, line: str) -> None:
        """One input line, including its line break (a missing final break is added, as LLVM's driver does)."""
        if not line.endswith("\n"):
            line += "\n"
        self.line = line
        if self.colour is not None or self.bold:
            self._reset_colour()
        if "{{{" not in line and "\x1b" not in line:  # most of a log: no markup, no SGR -> as it is
            if self.info is not None:
                self._end_info_line()
            self.out(line)
            return
        if self.info is None and self.caching:
            cached = self._line_cache.get(line)
            if cached is not None:
                self.out(cached[0])
                self.colour, self.bold = cached[1], cached[2]
                return
            fast = self._bare_bt(line)
            if fast is not None:
                self.out(fast)
                self._line_cache[line] = (fast, None, False)
                return
        out = self.out
        pieces: list[str] = []
        # a pending module summary line is finished by this line's output: that part is not the line's own
        had_info = self.info is not None
        self.out, self._failed, self._context_seen = pieces.append, False, False
        self._line_diagnostics = 0
        try:
            self._filter_markup_line(line)
        finally:
            self.out = out
        if self._line_diagnostics > MAX_LINE_DIAGNOSTICS:
            more = self._line_diagnostics - MAX_LINE_DIAGNOSTICS
            self.err(f"note: {more} more diagnostic{'s' if more > 1 else ''} for this line suppressed "
                     f"(fxscope prints the first {MAX_LINE_DIAGNOSTICS} of a line)\n")
        text = "".join(pieces)
        out(text)
        if self._failed or self._context_seen or self.info is not None:
            self._line_cache.clear()  # a context element may have changed what earlier lines meant
            self._bt_cache.clear()
        elif self.caching and not had_info and len(self._line_cache) < 65536:
            self._line_cache[line] = (text, self.colour, self.bold)

    def _bare_bt(self, line: str) -> str | None:
        """The output of a line holding one well-formed ``bt`` element and plain text, when its address
        was rendered before (the common line of a backtrace seen again with a new frame number); else None
        and the line takes the general path. Same checks and output as the general path for that form."""
        m = _BARE_BT.fullmatch(line)
        if m is None or self.colour is not None or self.bold:
            return None
        lead, digits, address, kind, trail = m.groups()
        number = int(digits)
        addr = 0 if address.strip("0") == "" else int(address[2:], 16)
        if number > U64_MAX or addr > U64_MAX:
            return None
        if kind != "pc":
            addr -= 1
        cached = self._bt_cache.get((addr, None, False, self._line_ending()))
        if cached is None:
            return None
        hl, val, bodies = cached
        header = f"#{number}".rjust(6)
        cut = header.index("#") + 1
        head = header[:cut] + val(header[cut:])
        return lead + hl + "".join(head + body for body in bodies) + ("\x1b[0m" if self.colors else "") + trail

    def filter_lines(self, text: str) -> None:
        """Many whole lines at once (``text`` ends with a line break, or is the end of the input): runs of
        lines without markup or SGR are copied in one piece; the others go through :meth:`filter_line`."""
        parts = text.split("\n")
        last = parts.pop()  # after the final line break ("" when the text ends with one)
        start = 0
        cache = self._line_cache
        for i, part in enumerate(parts):
            if "{{{" in part or "\x1b" in part:
                if i > start:
                    self._plain("\n".join(parts[start:i]) + "\n")
                line = part + "\n"
                hit = cache.get(line) if self.colour is None and not self.bold and self.info is None else None
                hit = hit if self.caching else None
                if hit is None:
                    self.filter_line(line)
                else:  # what filter_line would do on a cache hit, without the call
                    self.line = line
                    self.out(hit[0])
                    self.colour, self.bold = hit[1], hit[2]
                start = i + 1
        if start < len(parts):
            self._plain("\n".join(parts[start:]) + "\n")
        if last:
            self.filter_line(last)  # a final line without its break (filter_line adds it)

    def _plain(self, run: str) -> None:
        """Lines without markup or SGR: what filter_line does for the first, and nothing for the rest."""
        if self.colour is not None or self.bold:
            self._reset_colour()
        if self.info is not None:
            self._end_info_line()
        self.line = run[run.rfind("\n", 0, len(run) - 1) + 1 :]
        self.out(run if run.endswith("\n") else run + "\n")

    def _filter_markup_line(self, line: str) -> None:
        deferred: list[Node] = []
        for node in parse_line(line):
            if self._try_contextual(node, deferred):
                return
            deferred.append(node)
        self._end_info_line()
        for node in deferred:
            self._filter_node(node)

    def finish(self) -> None:
        self._end_info_line()
        self._reset_colour()
        self.modules.clear()
        self.mmaps.clear()
        self.mmap_starts.clear()

    def _line_ending(self) -> str:
        return "\r\n" if self.line.endswith("\r\n") else "\n"

    # ------------------------------------------------------------------ diagnostics
    def _report(self, severity: str, message: str, column: int | None) -> None:
        self._failed = True
        self._line_diagnostics += 1
        if self._line_diagnostics > MAX_LINE_DIAGNOSTICS:
            return
        text = f"{severity}: {message}\n"
        if column is not None:
            if not self.line.isascii():  # LLVM's caret column counts bytes, not characters
                column = len(self.line[:column].encode("utf-8", "surrogateescape"))
            text += self.line + " " * column + "^\n"
        self.err(text)

    def _type_error(self, node: Node, index: int, kind: str) -> None:
        self._report("error", f"expected {kind}; found '{node.fields[index]}'", node.field_columns[index])

    def _check_fields(self, node: Node, n: int) -> bool:
        if len(node.fields) == n:
            return True
        warn = len(node.fields) > n
        self._report("warning" if warn else "error", f"expected {n} field(s); found {len(node.fields)}", node.tag_end)
        return warn

    def _check_at_least(self, node: Node, n: int) -> bool:
        if len(node.fields) >= n:
            return True
        self._report("error", f"expected at least {n} field(s); found {len(node.fields)}", node.tag_end)
        return False

    def _warn_at_most(self, node: Node, n: int) -> None:
        if len(node.fields) > n:
            self._report("warning", f"expected at most {n} field(s); found {len(node.fields)}", node.tag_end)

    # ------------------------------------------------------------------ colour
    def _sgr(self, colour: int | None, bold: bool) -> str:
        if colour is None:
            return "\x1b[1m" if bold else ""
        return f"\x1b[0;{'1;' if bold else ''}3{colour}m"

    def _highlight(self) -> None:
        if self.colors:
            self.out(self._sgr(CYAN if self.colour == BLUE else BLUE, self.bold))

    def _value(self, text: str) -> None:
        if self.colors:
            self.out(self._sgr(GREEN, self.bold))
        self.out(text)
        self._highlight()

    def _restore_colour(self) -> None:
        if not self.colors:
            return
        if self.colour is not None:
            self.out(self._sgr(self.colour, self.bold))
        else:
            self.out("\x1b[0m")
            if self.bold:
                self.out("\x1b[1m")

    def _reset_colour(self) -> None:
        if self.colour is None and not self.bold:
            return
        self.colour = None
        self.bold = False
        if self.colors:
            self.out("\x1b[0m")

    def _try_sgr(self, node: Node) -> bool:
        if not node.is_sgr:
            return False
        if node.text == "\x1b[0m":
            self._reset_colour()
        elif node.text == "\x1b[1m":
            self.bold = True
            if self.colors:
                self.out("\x1b[1m")
        else:
            self.colour = _COLOURS[node.text]
            if self.colors:
                self.out(self._sgr(self.colour, False))
        return True

    # ------------------------------------------------------------------ contextual elements
    def _try_contextual(self, node: Node, deferred: list[Node]) -> bool:
        if node.tag in ("module", "mmap", "reset"):
            self._context_seen = True
        if node.tag == "module":
            self._module(node, deferred)
        elif node.tag == "mmap":
            self._mmap(node, deferred)
        elif node.tag == "reset":
            self._reset(node, deferred)
        else:
            return False
        return True

    def _flush_deferred(self, deferred: list[Node]) -> None:
        for node in deferred:
            self._filter_node(node)

    def _begin_info_line(self, module: Module) -> None:
        self._highlight()
        self.out("[[[ELF module")
        self._value(f" #0x{module.id:x} ")
        self.out('"')
        self._value(module.name)
        self.out('"')
        self.info = _InfoLine(module)

    def _end_info_line(self) -> None:
        if self.info is None:
            return
        # no highlight here: the summary line's last value already restored it
        for i, m in enumerate(sorted(self.info.mmaps, key=lambda m: m.addr)):
            self.out(" [" if i == 0 else ",[")
            self._value(f"0x{m.addr:x}")
            self.out("-")
            self._value(f"0x{m.addr + m.size - 1:x}")
            self.out("](")
            self._value(m.mode)
            self.out(")")
        self.out("]]]" + self._line_ending())
        self._restore_colour()
        self.info = None

    def _module(self, node: Node, deferred: list[Node]) -> None:
        if not self._check_at_least(node, 3):
            return
        mod_id = parse_integer(node.fields[0])
        if mod_id is None:
            return self._type_error(node, 0, "module ID")
        if node.fields[2] != "elf":
            return self._report("error", "unknown module type", node.field_columns[2])
        if not self._check_fields(node, 4):
            return
        build_id = parse_build_id(node.fields[3])
        if build_id is None:
            return self._type_error(node, 3, "build ID")
        if mod_id in self.modules:
            return self._report("error", "duplicate module ID", node.field_columns[0])
        module = self.modules[mod_id] = Module(mod_id, node.fields[1], build_id)
        self._end_info_line()
        self._flush_deferred(deferred)
        self._begin_info_line(module)
        self.out("; BuildID=")
        self._value(build_id.hex())

    def _mmap(self, node: Node, deferred: list[Node]) -> None:
        if not self._check_at_least(node, 3):
            return
        addr = parse_address(node.fields[0])
        if addr is None:
            return self._type_error(node, 0, "address")
        size = parse_integer(node.fields[1])
        if size is None:
            return self._type_error(node, 1, "size")
        if node.fields[2] != "load":
            return self._report("error", "unknown mmap type", node.field_columns[2])
        if not self._check_fields(node, 6):
            return
        mod_id = parse_integer(node.fields[3])
        if mod_id is None:
            return self._type_error(node, 3, "module ID")
        mode = parse_mode(node.fields[4])
        if mode is None:
            return self._type_error(node, 4, "mode")
        module = self.modules.get(mod_id)
        if module is None:
            return self._report("error", "unknown module ID", node.field_columns[3])
        relative = parse_address(node.fields[5])
        if relative is None:
            return self._type_error(node, 5, "address")
        new = MMap(addr, size, module, mode, relative)
        other = self._overlapping(new)
        if other is not None:
            return self._report(
                "error",
                f"overlapping mmap: #0x{other.module.id:x} [0x{other.addr:x}-0x{other.addr + other.size - 1:x}]",
                node.field_columns[0],
            )
        bisect.insort(self.mmap_starts, addr)
        self.mmaps[addr] = new
        if self.info is None or self.info.module is not module:
            self._end_info_line()
            self._flush_deferred(deferred)
            self._begin_info_line(module)
            self.out("; adds")
        assert self.info is not None
        self.info.mmaps.append(new)

    def _reset(self, node: Node, deferred: list[Node]) -> None:
        if not self._check_fields(node, 0):
            return
        if self.modules or self.mmaps:
            self._end_info_line()
            self._flush_deferred(deferred)
            self._raw(node)
            self.out(self._line_ending())
            self.modules.clear()
            self.mmaps.clear()
            self.mmap_starts.clear()

    def _overlapping(self, new: MMap) -> MMap | None:
        i = bisect.bisect_right(self.mmap_starts, new.addr)
        if i < len(self.mmap_starts) and new.contains(self.mmap_starts[i]):
            return self.mmaps[self.mmap_starts[i]]
        if i > 0:
            prev = self.mmaps[self.mmap_starts[i - 1]]
            if prev.contains(new.addr):
                return prev
        return None

    def containing_mmap(self, address: int) -> MMap | None:
        i = bisect.bisect_right(self.mmap_starts, address)
        if i == 0:
            return None
        m = self.mmaps[self.mmap_starts[i - 1]]
        return m if m.contains(address) else None

    # ------------------------------------------------------------------ presentation elements
    def _filter_node(self, node: Node) -> None:
        if (node.tag and not node.tag.isascii()) or (node.tag and not all("a" <= c <= "z" for c in node.tag)):
            self._report("error", "tags must be all lowercase characters", node.column + 3)
            return
        if node.tag == "symbol":
            self._symbol(node)
        elif node.tag == "pc":
            self._pc(node)
        elif node.tag == "bt":
            self._bt(node)
        elif node.tag == "data":
            self._data(node)
        elif not self._try_sgr(node):
            self.out(node.text)

    def _raw(self, node: Node) -> None:
        self._highlight()
        self.out("[[[")
        self._value(node.tag)
        for f in node.fields:
            self.out(":")
            self._value(f)
        self.out("]]]")
        self._restore_colour()

    def _symbol(self, node: Node) -> None:
        if not self._check_fields(node, 1):
            return
        self._highlight()
        self.out(demangle_any(node.fields[0]))
        self._restore_colour()

    def _locate(self, node: Node, address: int) -> MMap | None:
        mmap = self.containing_mmap(address)
        if mmap is None:
            self._report("error", "no mmap covers address", node.field_columns[0])
            self._raw(node)
        return mmap

    def _resolve_code(self, node: Node, mmap: MMap, address: int) -> list[Frame] | None:
        key = (mmap.module.build_id, mmap.relative(address))
        cached = self._code_cache.get(key)
        if cached is not None:
            return cached
        try:
            frames = self._code_cache[key] = self.resolver.code(*key)
            return frames
        except ResolveError as exc:
            self._report("error", str(exc), None)
            self._raw(node)
            return None

    def _frames_at(self, node: Node, address: int) -> tuple[MMap, list[Frame]] | None:
        """The mmap covering ``address`` and its frames; ``None`` after a diagnostic (raw markup printed)."""
        mmap = self._locate(node, address)
        if mmap is None:
            return None
        frames = self._resolve_code(node, mmap, address)
        return None if frames is None else (mmap, frames)

    def _code_address(self, node: Node, index: int, default_kind: str) -> int | None:
        """The address field at ``index`` adjusted by its optional ``ra``/``pc`` suffix (the field after it,
        consulted only when it is the last one): a return address points after the call, so ``ra`` means
        address - 1. ``None`` after a diagnostic."""
        addr = parse_address(node.fields[index])
        if addr is None:
            self._type_error(node, index, "address")
            return None
        kind = default_kind
        if len(node.fields) == index + 2:
            parsed = parse_pc_type(node.fields[index + 1])
            if parsed is None:
                self._type_error(node, index + 1, "PC type")
                return None
            kind = parsed
        return addr - 1 if kind == "ra" else addr

    def _pc(self, node: Node) -> None:
        if not self._check_at_least(node, 1):
            return
        self._warn_at_most(node, 2)
        addr = self._code_address(node, 0, "pc")
        if addr is None:
            return
        found = self._frames_at(node, addr)
        if found is None:
            return
        frames = found[1]
        if not frames:
            return self._raw(node)
        outer, inner = frames[-1], frames[0]
        self._highlight()
        self._value(demangle(outer.function))
        self.out("[")
        self._value(inner.file or "<invalid>")
        self.out(":")
        self._value(str(inner.line))
        self.out("]")
        self._restore_colour()

    def _bt(self, node: Node) -> None:
        if not self._check_at_least(node, 2):
            return
        self._warn_at_most(node, 3)
        number = parse_decimal(node.fields[0])
        if number is None:
            return self._type_error(node, 0, "frame number")
        addr = self._code_address(node, 1, "ra")
        if addr is None:
            return
        # everything after the frame number depends only on the address and the colour state: cached
        # (until the context changes) so that repeated backtraces cost a dictionary lookup each frame
        key = (addr, self.colour, self.bold, self._line_ending())
        cached = self._bt_cache.get(key) if self.caching else None
        if cached is None:
            found = self._frames_at(node, addr)
            if found is None:
                return
            cached = self._bt_cache[key] = self._bt_bodies(addr, *found)
        hl, val, bodies = cached
        header = f"#{number}".rjust(6)
        cut = header.index("#") + 1
        head = header[:cut] + val(header[cut:])
        self.out(hl + "".join(head + body for body in bodies))
        self._restore_colour()

    def _bt_bodies(self, addr: int, mmap: MMap, frames: list[Frame]):
        """(highlight, value renderer, one string per inline entry after its ``#N``): a backtrace element
        as the pieces _highlight/_value would write one by one, in the same order and colours."""
        relative = mmap.relative(addr)
        entries: list[Frame | None] = list(frames) or [None]
        if self.colors:
            hl = self._sgr(CYAN if self.colour == BLUE else BLUE, self.bold)
            green = self._sgr(GREEN, self.bold)

            def val(text: str) -> str:
                return green + text + hl
        else:
            hl = ""

            def val(text: str) -> str:
                return text

        where = val(f" 0x{addr:016x} ")
        tail = f"({val(mmap.module.name)}+{val(f'0x{relative:x}')})"
        last = len(entries) - 1
        bodies = []
        for i, frame in enumerate(entries):
            body = "   " if i == last else "." + val(str(i + 1).ljust(2))
            body += where
            if frame is not None:
                body += (f"{val(demangle(frame.function))} {val(frame.file or '<invalid>')}:"
                         f"{val(str(frame.line))}:{val(str(frame.column))} ")
            body += tail
            if i != last:
                body += self._line_ending()
            bodies.append(body)
        return hl, val, bodies

    def _data(self, node: Node) -> None:
        if not self._check_fields(node, 1):
            return
        addr = parse_address(node.fields[0])
        if addr is None:
            return self._type_error(node, 0, "address")
        mmap = self._locate(node, addr)
        if mmap is None:
            return
        try:
            name = self.resolver.data(mmap.module.build_id, mmap.relative(addr))
        except ResolveError as exc:
            self._report("error", str(exc), None)
            self._raw(node)
            return
        self._highlight()
        self.out(demangle(name) if name is not None else "<invalid>")
        self._restore_colour()


def filter_text(text: str, resolver: Resolver, color: bool = False) -> tuple[str, str]:
    """Filter a whole log; returns (output, diagnostics)."""
    out: list[str] = []
    err: list[str] = []
    f = MarkupFilter(resolver, out.append, err.append, color=color)
    for line in text.splitlines(keepends=True):
        f.filter_line(line)
    f.finish()
    return "".join(out), "".join(err)
