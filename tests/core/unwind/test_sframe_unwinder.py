"""Unwind a real stack captured under gdb from a program built with -Wa,--gsframe, and compare with gdb."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest

from core.unwind.sframe_unwinder import StackMemory, unwind
from formats.elf.reader import read_elf
from formats.sframe.section import find_sframe_section, parse_sframe

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
