"""Disassembly around an address in a real module (the crash demo's debug file keeps its code)."""

from __future__ import annotations

from pathlib import Path

import pytest

from fxscope.core.symbolize.disassembly import DisassemblyError, disassemble
from fxscope.formats.elf.reader import read_elf


@pytest.fixture
def crashdemo(testdata: Path):
    return read_elf(testdata / "markup" / "crash-demo" / ".build-id" / "3d" / "3a85572513e6cff897b8e9637d480eeb092027.debug")


def test_window_around_an_address_from_the_function_start(crashdemo) -> None:
    rows = disassemble(crashdemo, 0x1402, before=2, after=3)
    assert [r.address for r in rows] == [0x13FB, 0x13FF, 0x1402, 0x1406, 0x140A, 0x140D]
    assert [r.marked for r in rows] == [False, False, True, False, False, False]
    # mid-instruction addresses mark the instruction that contains them (a return address - 1 does)
    assert [r.address for r in disassemble(crashdemo, 0x1400, 0, 0)] == [0x13FF]


def test_addresses_without_code_are_a_clear_error(crashdemo) -> None:
    with pytest.raises(DisassemblyError, match="holds no code at 0x4240"):
        disassemble(crashdemo, 0x4240)  # .bss (the `nodes` array): no file-backed bytes
    with pytest.raises(DisassemblyError):
        disassemble(crashdemo, 1 << 40)
