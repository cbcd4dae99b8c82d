"""Unwind a real stack captured under gdb from a program built with -Wa,--gsframe, and compare with gdb."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest

from fxscope.core.unwind.sframe_unwinder import StackMemory, unwind
from fxscope.formats.elf.reader import read_elf
from fxscope.formats.sframe.section import find_sframe_section, parse_sframe

PROGRAM = r"""
#include <stdio.h>
__attribute__((noinline)) int leaf(int x) { volatile int y = x * 3; __asm__ volatile("" ::: "memory"); return y + 1; }
__attribute__((noinline)) int mid(int x) { int r = leaf(x + 1); return r * 2; }
__attribute__((noinline)) int top(int x) { int r = mid(x + 2); return r - 1; }
int main(int argc, char **argv) { (void)argv; printf("%d\n", top(argc)); return 0; }
"""

GDB_SCRIPT = """set pagination off
set disable-randomization on
break leaf
run
printf "REGS %lx %lx %lx %lx\\n", $pc, $sp, $rbp, &leaf
dump binary memory {stack} $sp $sp+1024
bt
quit
"""


@pytest.mark.parametrize("flags", [["-O2"], ["-O2", "-fno-omit-frame-pointer"]])
def test_unwind_matches_gdb_backtrace(tmp_path: Path, flags: list[str]) -> None:
    gcc, gdb = shutil.which("gcc"), shutil.which("gdb")
    if gcc is None or gdb is None:
        pytest.skip("needs gcc and gdb (apt-get install gcc gdb)")
    src = tmp_path / "t.c"
    src.write_text(PROGRAM)
    binary = tmp_path / "t"
    build = subprocess.run([gcc, *flags, "-g", "-Wa,--gsframe", str(src), "-o", str(binary)],
                           capture_output=True, text=True)
    if build.returncode != 0:
        pytest.skip(f"this assembler cannot emit SFrame: {build.stderr.strip()[:200]}")
    stack = tmp_path / "stack.bin"
    script = tmp_path / "cmds.gdb"
    script.write_text(GDB_SCRIPT.format(stack=stack))
    out = subprocess.run([gdb, "-batch", "-x", str(script), str(binary)], capture_output=True, text=True,
                         timeout=60).stdout
    regs = re.search(r"REGS ([0-9a-f]+) ([0-9a-f]+) ([0-9a-f]+) ([0-9a-f]+)", out)
    if regs is None or not stack.exists():
        pytest.skip(f"gdb could not run the program here (ptrace not permitted?): {out[-300:]}")
    pc, sp, fp, leaf_runtime = (int(g, 16) for g in regs.groups())
    gdb_pcs = [pc] + [int(m, 16) for m in re.findall(r"^#\d+\s+0x([0-9a-f]+) in ", out, re.M)]

    info = read_elf(binary)
    leaf_static = next(a for a, _s, n in info.functions if n == "leaf")
    section = parse_sframe(*find_sframe_section(str(binary)))
    result = unwind(section, pc, sp, fp, StackMemory(sp, stack.read_bytes()), load_bias=leaf_runtime - leaf_static)
    # leaf -> mid -> top -> main, then main's caller in libc, which has no SFrame section here
    assert result.pcs[:4] == gdb_pcs[:4]
    assert len(result.pcs) >= 4
    assert "no SFrame information" in result.stop_reason or "outside the captured stack" in result.stop_reason


def test_stops_cleanly_on_garbage(testdata: Path) -> None:
    folder = testdata / "sframe" / "t-O2"
    section = parse_sframe((folder / "sframe.bin").read_bytes(), 0x2100)
    # a PC inside a function, with a stack that holds nothing useful
    result = unwind(section, 0x1151, 0x1000, 0, StackMemory(0x1000, b"\xff" * 64))
    assert result.pcs[0] == 0x1151 and result.stop_reason
    result = unwind(section, 0x1151, 0x1000, 0, StackMemory(0x1000, b""))
    assert "outside the captured stack" in result.stop_reason
    result = unwind(section, 0x9999, 0x1000, 0, StackMemory(0x1000, b""))
    assert result.pcs == [0x9999] and "no SFrame information" in result.stop_reason


def _stack(start: int, words: dict[int, int], size: int = 0x400, order: str = "<") -> StackMemory:
    import struct

    data = bytearray(size)
    for address, value in words.items():
        struct.pack_into(order + "Q", data, address - start, value)
    return StackMemory(start, bytes(data), order)


def _flex_section(cfa_control: int) -> bytes:
    """v3, AMD64: one FLEX function at 0x3000 with one FRE: CFA = *(reg + -8) (DRAP when reg is RBP),
    RA = *(CFA - 8), FP = *(CFA - 16)."""
    import struct

    words = (cfa_control, -8, 0x02, -8, 0x02, -16)
    words = tuple(w - 256 if w > 127 else w for w in words)  # stored as signed bytes
    fre = struct.pack("<HBBB", 1, 0, 1, 0) + struct.pack("<BB", 0, (len(words) << 1) | 1) + struct.pack("<6b", *words)
    fde = struct.pack("<qII", 0x3000, 0x40, 0)  # absolute start (no PC-relative flag)
    header = struct.pack("<HBBBbbBIIIII", 0xDEE2, 3, 0x1, 3, 0, -8, 0, 1, 1, len(fre), 0, len(fde))
    return header + fde + fre


def test_flex_fde_drap_rule_and_unwind() -> None:
    from fxscope.formats.sframe.section import Rule

    section = parse_sframe(_flex_section((6 << 3) | 2 | 1))
    rule = section.rule(0x3010)
    assert rule == Rule("fp", -8, -8, -16, cfa_register=6, cfa_deref=True)
    memory = _stack(0x6C00, {0x7000 - 8: 0x7100, 0x7100 - 8: 0x401234, 0x7100 - 16: 0x7200}, size=0x800)
    result = unwind(section, 0x3010, sp=0x6F00, fp=0x7000, memory=memory)
    assert result.pcs == [0x3010, 0x401234]
    assert "no SFrame information" in result.stop_reason
    # a CFA based on r10 cannot be recovered in a walk: refused, not guessed
    other = parse_sframe(_flex_section((10 << 3) | 1))
    assert other.rule(0x3010).cfa_base == "reg" and other.rule(0x3010).cfa_register == 10
    result = unwind(other, 0x3010, sp=0x6F00, fp=0x7000, memory=memory)
    assert result.pcs == [0x3010] and result.stop_reason.startswith("unsafe unwind")
    # control words are unsigned: register 20 (0xa1) in a 1-byte data word is not a negative number
    assert parse_sframe(_flex_section((20 << 3) | 1)).rule(0x3010).cfa_register == 20


def _s390x_section() -> bytes:
    """v2, s390x (big-endian): a function at 0x5000; at +0 CFA = SP + 160 with RA still in r14 (odd slot
    29 = register 14) and FP not saved; at +8 CFA = SP + 320, RA = *(CFA - 48), FP = *(CFA - 56)."""
    import struct

    fres = struct.pack(">BB", 0, (2 << 1) | 1) + struct.pack(">bb", 0, 29)
    fres += struct.pack(">BB", 8, (3 << 1) | 1) + struct.pack(">bbb", (320 - 160) // 8, -48, -56)
    fde = struct.pack(">iIIIBBH", 0x5000, 0x20, 0, 2, 0, 0, 0)
    header = struct.pack(">HBBBbbBIIIII", 0xDEE2, 2, 0x1, 4, 0, 0, 0, 1, 2, len(fres), 0, len(fde))
    return header + fde + fres


def test_s390x_rules_and_unwind() -> None:
    from fxscope.formats.sframe.section import Rule

    section = parse_sframe(_s390x_section())
    assert section.header.abi == 4 and section.byte_order == ">"
    assert section.rule(0x5002) == Rule("sp", 160, 0, None, ra_register=14, ra_deref=False, sp_offset=-160)
    assert section.rule(0x5010) == Rule("sp", 320, -48, -56, sp_offset=-160)
    assert not section.rules([0x5002, 0x5010])["found"].any()  # s390x slots: the scalar rule only
    # leaf at the top: RA comes from r14 (given as the link register)
    top = unwind(section, 0x5002, sp=0x9000, fp=0x1, memory=_stack(0x8C00, {}, order=">"), lr=0x6000)
    assert top.pcs == [0x5002, 0x6000] and "no SFrame information" in top.stop_reason
    # deeper: RA and FP from the stack, caller SP = CFA - 160, then r14 is unknown below the top frame
    memory = _stack(0x8C00, {0x9140 - 48: 0x5006, 0x9140 - 56: 0x4242}, size=0x800, order=">")
    deep = unwind(section, 0x5010, sp=0x9000, fp=0x1, memory=memory)
    assert deep.pcs == [0x5010, 0x5006]
    assert "register 14" in deep.stop_reason
