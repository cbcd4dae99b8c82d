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

from formats.sframe.section import SFrameSection


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
) -> Unwind:
    """PCs from the current frame outwards. ``load_bias`` = runtime address - link-time address."""
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
        base = sp if rule.cfa_base == "sp" else fp
        cfa = base + rule.cfa_offset
        if rule.ra_offset is None:
            result.stop_reason = "return address not tracked (in a register) below the top frame"
            return result
        ra = memory.read64(cfa + rule.ra_offset)
        if ra is None:
            result.stop_reason = f"return address at 0x{cfa + rule.ra_offset:x} is outside the captured stack"
            return result
        new_fp = fp
        if rule.fp_offset is not None:
            saved = memory.read64(cfa + rule.fp_offset)
            if saved is None:
                result.stop_reason = f"saved FP at 0x{cfa + rule.fp_offset:x} is outside the captured stack"
                return result
            new_fp = saved
        if cfa <= sp:
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
