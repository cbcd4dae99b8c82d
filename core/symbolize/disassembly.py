"""Disassembly around a frame's address, with the source lines interleaved (capstone).

x86 cannot be decoded backwards, so decoding starts at the containing function's start (from the symbol
table) and keeps a window around the address; without a function symbol it tries start points before the
address until one decodes straight onto it. The instruction that contains the address is marked: for the
crashing frame (a ``pc`` frame) it is the faulting instruction, for a return-address frame the call.
Code bytes are read from the module's load segments; a separate debug file that kept no code says so.
"""

from __future__ import annotations

import bisect
from collections.abc import Callable
from dataclasses import dataclass

from fxscope.formats.elf.reader import ElfInfo

#: bytes decoded at most from a function's start (larger functions start near the address instead)
MAX_FUNCTION_PREFIX = 16384
BACKTRACK = 64  # bytes tried before the address when there is no function start


class DisassemblyError(Exception):
    """No disassembly for this frame: a sentence saying why."""


@dataclass(frozen=True)
class Line:
    """A row of the listing: an instruction (``address`` >= 0) or a source line (``address`` -1)."""

    address: int
    text: str
    raw: str = ""  # the instruction's bytes in hex
    marked: bool = False  # contains the frame's address
    file: str = ""
    line: int = 0


def _capstone(info: ElfInfo):
    import capstone

    arch = {
        "EM_X86_64": (capstone.CS_ARCH_X86, capstone.CS_MODE_64),
        "EM_386": (capstone.CS_ARCH_X86, capstone.CS_MODE_32),
        "EM_AARCH64": (capstone.CS_ARCH_ARM64, capstone.CS_MODE_ARM),
        "EM_ARM": (capstone.CS_ARCH_ARM, capstone.CS_MODE_ARM),
        "EM_RISCV": (capstone.CS_ARCH_RISCV,
                     capstone.CS_MODE_RISCV64 if info.elfclass == 64 else capstone.CS_MODE_RISCV32),
    }.get(info.machine)  # fmt: skip
    if arch is None:
        raise DisassemblyError(f"no disassembler for {info.machine}")
    mode = arch[1] | (capstone.CS_MODE_LITTLE_ENDIAN if info.little_endian else capstone.CS_MODE_BIG_ENDIAN)
    return capstone.Cs(arch[0], mode)


def _code_segment(info: ElfInfo, address: int):
    """The executable, file-backed load segment holding ``address``."""
    for seg in info.load_segments:
        if seg.flags & 1 and seg.vaddr <= address < seg.vaddr + seg.filesz:
            return seg
    raise DisassemblyError(f"{info.path} holds no code at 0x{address:x} (not in an executable segment, or a "
                           "debug file without code: disassembly needs the binary itself)")  # fmt: skip


def _read_code(info: ElfInfo, start: int, end: int) -> tuple[int, bytes]:
    """Bytes of [start, end) clipped to the file-backed part of the executable segment holding ``start``."""
    for seg in info.load_segments:
        if seg.flags & 1 and seg.vaddr <= start < seg.vaddr + seg.filesz:
            end = min(end, seg.vaddr + seg.filesz)
            with open(info.path, "rb") as fh:
                fh.seek(seg.offset + (start - seg.vaddr))
                return start, fh.read(end - start)
    raise DisassemblyError(f"{info.path} holds no code at 0x{start:x} (a debug file without code? "
                           "disassembly needs the binary itself)")  # fmt: skip


def _function_start(info: ElfInfo, address: int) -> int | None:
    functions = sorted(info.functions)
    i = bisect.bisect_right(functions, (address, float("inf"), "")) - 1
    if i >= 0:
        start, size, _name = functions[i]
        if start <= address < start + max(size, 1) and address - start <= MAX_FUNCTION_PREFIX:
            return start
    return None


def disassemble(info: ElfInfo, address: int, before: int = 12, after: int = 12,
                line_at: Callable[[int], tuple[str, int] | None] | None = None,
                source_line: Callable[[str, int], str | None] | None = None) -> list[Line]:  # fmt: skip
    """``before``/``after`` instructions around the one containing ``address`` (module-relative, as the
    ELF's virtual addresses); ``line_at(addr)``: the innermost source (file, line) of an address, whose
    changes are interleaved as rows with ``source_line(file, line)``'s text."""
    cs = _capstone(info)
    _code_segment(info, address)
    start = _function_start(info, address)
    candidates = [start] if start is not None else [address - k for k in range(BACKTRACK, -1, -1)]
    insns = []
    for begin in candidates:
        if begin < 0:
            continue
        try:
            base, code = _read_code(info, begin, address + 16 * (after + 1))
        except DisassemblyError:
            if begin == candidates[-1]:
                raise
            continue
        insns = list(cs.disasm(code, base))
        if any(i.address <= address < i.address + i.size for i in insns):
            break
    at = next((k for k, i in enumerate(insns) if i.address <= address < i.address + i.size), None)
    if at is None:
        raise DisassemblyError(f"no instruction decodes at 0x{address:x}")
    rows: list[Line] = []
    previous = None
    for k in range(max(at - before, 0), min(at + after + 1, len(insns))):
        i = insns[k]
        where = line_at(i.address) if line_at is not None else None
        if where is not None and where != previous:
            text = source_line(*where) if source_line is not None else None
            rows.append(Line(-1, (text or "").rstrip(), file=where[0], line=where[1]))
            previous = where
        rows.append(Line(i.address, f"{i.mnemonic} {i.op_str}".strip(), i.bytes.hex(" "), k == at))
    return rows
