"""Walk a captured stack with SFrame rules: registers + stack bytes -> the chain of return addresses.

Each step applies the rule of the current PC (``../shared/specs/sframe.md`` 5.5): CFA = SP or FP + offset,
RA = *(CFA + RA offset), FP = *(CFA + FP offset) when tracked, then the caller has PC = RA and SP = CFA.
Callers' PCs are return addresses, so their rule is looked up at PC - 1. The walk stops, saying why, when a
PC has no SFrame information, a rule marks the outermost frame, a read falls outside the captured memory,
the stack does not grow, or a frame limit is reached: never an exception for bad input.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass, field

from fxscope.formats.sframe.section import DWARF_SP_FP, SFrameSection


@dataclass
class StackMemory:
    """A captured byte range of the stack starting at ``start`` (little- or big-endian words)."""

    start: int
    data: bytes
    byte_order: str = "<"

    def read64(self, address: int) -> int | None:
        off = address - self.start
        if off < 0 or off + 8 > len(self.data):
            return None
        return struct.unpack_from(self.byte_order + "Q", self.data, off)[0]


@dataclass
class Unwind:
    pcs: list[int] = field(default_factory=list)
    stop_reason: str = ""


def unwind(
    section: SFrameSection,
    pc: int,
    sp: int,
    fp: int,
    memory: StackMemory,
    load_bias: int = 0,
    max_frames: int = 512,
    lr: int | None = None,
) -> Unwind:
    """PCs from the current frame outwards. ``load_bias`` = runtime address - link-time address; ``lr``: the
    link register (AArch64 x30, s390x r14) of the top frame, where a leaf function's return address is."""
    result = Unwind([pc])
    first = True
    while len(result.pcs) < max_frames:
        lookup = pc - load_bias - (0 if first else 1)
        rule = section.rule(lookup)
        if rule is None:
            result.stop_reason = f"no SFrame information for pc 0x{pc:x}"
            return result
        if rule.ra_undefined:
            result.stop_reason = "outermost frame (return address undefined)"
            return result
        sp_reg, fp_reg = DWARF_SP_FP.get(section.header.abi, (-1, -1))
        regs = {sp_reg: sp, fp_reg: fp}  # the registers a walk knows in every frame
        link = _LINK_REGISTER.get(section.header.abi)
        if first and lr is not None and link is not None:
            regs[link] = lr
        if rule.cfa_base == "reg" and rule.cfa_register not in regs:
            result.stop_reason = f"unsafe unwind: CFA based on register {rule.cfa_register}, not recoverable"
            return result
        base = sp if rule.cfa_base == "sp" else fp if rule.cfa_base == "fp" else regs[rule.cfa_register]
        cfa = base + rule.cfa_offset
        if rule.cfa_deref:
            loaded = memory.read64(cfa)
            if loaded is None:
                result.stop_reason = f"CFA pointer at 0x{cfa:x} is outside the captured stack"
                return result
            cfa = loaded
        if rule.ra_offset is None and not (first and link in regs):
            result.stop_reason = "return address not tracked (in a register) below the top frame"
            return result
        if rule.ra_offset is None:  # not saved yet: still in the link register (top frame only)
            ra, why = regs[link], ""
        else:
            ra, why = _recover("return address", rule.ra_register, rule.ra_offset, rule.ra_deref, cfa, regs, memory)
        if ra is None:
            result.stop_reason = why
            return result
        new_fp = fp
        if rule.fp_offset is not None:
            new_fp, why = _recover("saved FP", rule.fp_register, rule.fp_offset, rule.fp_deref, cfa, regs, memory)
            if new_fp is None:
                result.stop_reason = why
                return result
        cfa += rule.sp_offset  # the caller's SP (s390x: CFA - 160)
        if cfa < sp or (cfa == sp and not first):  # (a leaf's caller may share its SP: AArch64, s390x)
            result.stop_reason = "stack pointer did not grow: corrupt stack or rule"
            return result
        if ra == 0:
            result.stop_reason = "return address 0: end of the stack"
            return result
        pc, sp, fp = ra, cfa, new_fp
        result.pcs.append(pc)
        first = False
    result.stop_reason = f"stopped after {max_frames} frames"
    return result


#: DWARF number of the link register per SFrame ABI (AArch64 x30, s390x r14)
_LINK_REGISTER = {1: 30, 2: 30, 4: 14}


def _recover(
    what: str, register: int | None, offset: int, deref: bool, cfa: int, regs: dict[int, int], memory: StackMemory
) -> tuple[int | None, str]:
    """A saved value: ``[*](base + offset)`` with base the CFA or a known register; (None, why) if not."""
    if register is not None and register not in regs:
        return None, f"{what} is in register {register}, which is not recovered below the top frame"
    address = (cfa if register is None else regs[register]) + offset
    if not deref:
        return address, ""
    value = memory.read64(address)
    if value is None:
        return None, f"{what} at 0x{address:x} is outside the captured stack"
    return value, ""
