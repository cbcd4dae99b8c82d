"""SFrame section decoder (versions 1, 2 and 3), FDE/FRE lookup for a PC.

Layouts follow ``../shared/specs/sframe.md``: the 28-byte header (plus auxiliary header), 17-byte (v1),
20-byte (v2) or 16-byte index + 5-byte attribute (v3) FDEs, and variable-length FREs. The byte order comes
from the magic. Everything is bounds-checked: a count or offset that points outside the section is reported
as a warning and the affected FDEs are dropped or truncated, never read past the data.

FDE columns are numpy arrays so a batch of PCs finds its FDEs with one ``searchsorted``; an FDE's FREs are
decoded when first needed.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass, field

import numpy as np

from fxscope.formats.errors import FormatError

MAGIC = 0xDEE2
F_FDE_SORTED = 0x1
F_FRAME_POINTER = 0x2
F_FDE_FUNC_START_PCREL = 0x4

ABI_AARCH64_BE = 1
ABI_AARCH64_LE = 2
ABI_AMD64_LE = 3
ABI_S390X_BE = 4

FDE_PCINC = 0
FDE_PCMASK = 1
#: v3 FDE types (``sfda_func_info2`` bits 0-4)
FDE_TYPE_DEFAULT = 0
FDE_TYPE_FLEX = 1
#: DWARF register numbers of (SP, FP) per ABI: FLEX rules name registers, DEFAULT rules SP or FP
DWARF_SP_FP = {ABI_AARCH64_BE: (31, 29), ABI_AARCH64_LE: (31, 29), ABI_AMD64_LE: (7, 6), ABI_S390X_BE: (15, 11)}
#: s390x: caller SP = CFA - 160; stored CFA offsets are (offset - 160) / 8
S390X_SP_VAL_OFFSET = -160
BASE_FP = 0
BASE_SP = 1
HEADER_SIZE = 28
NOT_TRACKED = -(1 << 62)


@dataclass(frozen=True)
class Header:
    version: int
    flags: int
    abi: int
    fixed_fp_offset: int
    fixed_ra_offset: int
    auxhdr_len: int
    num_fdes: int
    num_fres: int
    fre_len: int
    fde_off: int
    fre_off: int


@dataclass(frozen=True)
class FRE:
    """One frame row entry: the rule for ``start`` (offset from the function start) onwards."""

    start: int
    base_reg: int  # BASE_FP or BASE_SP
    offsets: tuple[int, ...]  # signed stack offsets / data words
    mangled_ra: bool
    offset_size: int = 1  # bytes per offset (FLEX control words are unsigned at this width)

    @property
    def cfa_offset(self) -> int | None:
        return self.offsets[0] if self.offsets else None


@dataclass(frozen=True)
class Rule:
    """How to recover the caller's frame at one PC (``None`` = not tracked; ``ra_undefined`` = outermost)."""

    cfa_base: str  # "sp", "fp", or "reg" (FLEX: the DWARF register ``cfa_register``)
    cfa_offset: int
    ra_offset: int | None  # RA = *(CFA + ra_offset); None: not saved (still in its register)
    fp_offset: int | None  # FP = *(CFA + fp_offset); None: unchanged
    ra_undefined: bool = False
    mangled_ra: bool = False
    # --- beyond "CFA + offset, dereferenced": FLEX FDEs (v3) and s390x register slots ---
    cfa_register: int | None = None  # DWARF register number of the CFA base (FLEX)
    cfa_deref: bool = False  # CFA = *(base + cfa_offset) (FLEX, e.g. DRAP)
    ra_register: int | None = None  # RA's base is this DWARF register instead of the CFA
    ra_deref: bool = True  # False: RA = base + ra_offset itself (s390x: the register's value)
    fp_register: int | None = None
    fp_deref: bool = True
    sp_offset: int = 0  # caller SP = CFA + sp_offset (s390x: -160)


@dataclass
class SFrameSection:
    data: bytes
    address: int  # load address of the section (0 for relocatable objects)
    header: Header
    byte_order: str
    fde_start: np.ndarray  # int64 absolute function start
    fde_size: np.ndarray  # int64
    fde_fre_off: np.ndarray  # int64 offset of the first FRE (v3: of the attribute) in the FRE sub-section
    fde_num_fres: np.ndarray  # int64
    fde_info: np.ndarray  # uint8
    fde_rep_size: np.ndarray  # uint8 (v2/v3; 0 in v1)
    fde_info2: np.ndarray  # uint8 (v3 FDE type; 0 before)
    warnings: list[str] = field(default_factory=list)
    _fres: dict[int, list[FRE]] = field(default_factory=dict)
    _order: np.ndarray | None = None

    @property
    def fre_base(self) -> int:
        return HEADER_SIZE + self.header.auxhdr_len + self.header.fre_off

    def __len__(self) -> int:
        return len(self.fde_start)

    def fde_type(self, i: int) -> int:
        return (int(self.fde_info[i]) >> 4) & 1

    def fre_type(self, i: int) -> int:
        return int(self.fde_info[i]) & 0xF

    def pauth_key_b(self, i: int) -> bool:
        return bool((int(self.fde_info[i]) >> 5) & 1)

    # ------------------------------------------------------------------ FREs
    def fres(self, i: int) -> list[FRE]:
        """FREs of FDE ``i``; a corrupt FRE ends the list with a warning."""
        cached = self._fres.get(i)
        if cached is not None:
            return cached
        out: list[FRE] = []
        h, data, bo = self.header, self.data, self.byte_order
        fre_end = min(self.fre_base + h.fre_len, len(data))
        pos = self.fre_base + int(self.fde_fre_off[i]) + (5 if h.version >= 3 else 0)
        addr_size = {0: 1, 1: 2, 2: 4}.get(self.fre_type(i))
        if addr_size is None:
            self.warnings.append(f"FDE {i}: invalid FRE type {self.fre_type(i)}")
            self._fres[i] = out
            return out
        addr_fmt = {1: "B", 2: "H", 4: "I"}[addr_size]
        for j in range(int(self.fde_num_fres[i])):
            if pos + addr_size + 1 > fre_end:
                self.warnings.append(f"FDE {i}: FRE {j} at section offset 0x{pos:x} runs past the FRE sub-section")
                break
            (start,) = struct.unpack_from(bo + addr_fmt, data, pos)
            info = data[pos + addr_size]
            pos += addr_size + 1
            size_code = (info >> 5) & 3
            count = (info >> 1) & 0xF
            if size_code == 3:
                self.warnings.append(f"FDE {i}: FRE {j} has the invalid offset size code 3")
                break
            osize = 1 << size_code
            if pos + count * osize > fre_end:
                self.warnings.append(f"FDE {i}: FRE {j} offsets run past the FRE sub-section")
                break
            fmt = {1: "b", 2: "h", 4: "i"}[osize]
            offsets = struct.unpack_from(bo + fmt * count, data, pos)
            pos += count * osize
            out.append(FRE(start, info & 1, tuple(offsets), bool(info >> 7), osize))
        self._fres[i] = out
        return out

    # ------------------------------------------------------------------ lookup
    def _sorted(self) -> np.ndarray:
        if self._order is None:
            self._order = np.argsort(self.fde_start, kind="stable")
        return self._order

    def find_fde(self, pc: int) -> int:
        """Index of the FDE covering ``pc``, or -1 (binary search; unsorted sections are sorted first). Of FDEs
        starting at or before ``pc`` only the last one (by start) is asked; the end is compared as a distance
        from the start so a start near the top of the address space cannot overflow."""
        order = self._sorted()
        starts = self.fde_start[order]
        k = int(np.searchsorted(starts, pc, side="right")) - 1
        if k < 0:
            return -1
        i = int(order[k])
        return i if pc - int(self.fde_start[i]) < int(self.fde_size[i]) else -1

    def find_fdes(self, pcs: np.ndarray) -> np.ndarray:
        """Vectorized :meth:`find_fde` for many PCs (-1 for every PC of a section without FDEs)."""
        pcs = np.asarray(pcs, dtype=np.int64)
        if not len(self):
            return np.full(len(pcs), -1, np.int64)
        order = self._sorted()
        starts = self.fde_start[order]
        k = np.searchsorted(starts, pcs, side="right") - 1
        i = order[np.maximum(k, 0)]
        # pc >= start where k >= 0, so the unsigned difference is the exact distance (no int64 overflow)
        distance = pcs.astype(np.uint64) - self.fde_start[i].astype(np.uint64)
        ok = (k >= 0) & (distance < self.fde_size[i].astype(np.uint64))
        return np.where(ok, i, -1)

    def _rep_size(self, i: int) -> int:
        """The repeat size of a PCMASK FDE (0: none, no rule), 16 for AMD64 v1 sections that leave it out."""
        return int(self.fde_rep_size[i]) or (16 if self.header.abi == ABI_AMD64_LE else 0)

    def find_fre(self, pc: int) -> tuple[int, FRE] | None:
        i = self.find_fde(pc)
        if i < 0:
            return None
        off = pc - int(self.fde_start[i])
        if self.fde_type(i) == FDE_PCMASK:
            rep = self._rep_size(i)
            if rep == 0:
                return None
            off %= rep
        best = None
        for fre in self.fres(i):
            if fre.start > off:
                break
            best = fre
        return (i, best) if best is not None else None

    def _batch_fde(self, i: int) -> bool:
        """Whether :meth:`rules` answers for FDE ``i``: FLEX FDEs and s390x slots need :meth:`rule`."""
        if self.header.abi == ABI_S390X_BE:
            return False
        return not (self.header.version >= 3 and int(self.fde_info2[i]) & 0x1F == FDE_TYPE_FLEX)

    def fre_table(self) -> dict[str, np.ndarray]:
        """Every FRE of every FDE :meth:`rules` answers for, as columns in FDE order, then FRE order (built once).

        Columns: ``key`` (FDE index << 32 | the largest FRE start so far in the FDE: non-decreasing, so one
        ``searchsorted`` finds the FRE :meth:`find_fre`'s loop stops at, even in an FDE whose FREs are out of
        order), ``fde``, ``base`` (BASE_SP/BASE_FP), ``cfa``, ``ra``, ``fp`` (offsets; ``ra``/``fp`` hold
        ``NOT_TRACKED`` when absent), ``count`` (offset count; 0 = outermost frame).
        """
        cached = self.__dict__.get("_fre_table")
        if cached is not None:
            return cached
        h = self.header
        rows: list[tuple[int, int, int, int, int, int, int]] = []
        for i in range(len(self)):
            if not self._batch_fde(i):
                continue
            reach = 0
            for fre in self.fres(i):
                reach = max(reach, fre.start)
                offsets = list(fre.offsets)
                cfa = offsets[0] if offsets else 0
                rest = offsets[1:]
                ra = h.fixed_ra_offset if h.fixed_ra_offset else (rest.pop(0) if rest else NOT_TRACKED)
                fp = h.fixed_fp_offset if h.fixed_fp_offset else (rest.pop(0) if rest else NOT_TRACKED)
                rows.append((i << 32 | reach, i, fre.base_reg, cfa, ra, fp, len(offsets)))
        table = np.array(rows, dtype=np.int64).reshape(-1, 7)
        cached = {name: table[:, k].copy() for k, name in
                  enumerate(("key", "fde", "base", "cfa", "ra", "fp", "count"))}
        self.__dict__["_fre_table"] = cached
        return cached

    def rules(self, pcs: np.ndarray) -> dict[str, np.ndarray]:
        """Vectorized :meth:`rule`: one row per PC, ``found`` False where :meth:`rule` returns None, and for FLEX
        FDEs and s390x (whose rules the columns cannot hold: ask :meth:`rule`). Where ``found``, the columns are
        :meth:`rule`'s answer (``count`` 0: the outermost frame, RA undefined)."""
        pcs = np.asarray(pcs, dtype=np.int64)
        t = self.fre_table()
        fde = self.find_fdes(pcs)
        has = fde >= 0
        fi = np.maximum(fde, 0)
        off = np.zeros(len(pcs), np.int64)
        if len(self):
            off = (pcs.astype(np.uint64) - self.fde_start[fi].astype(np.uint64)).astype(np.int64)  # < 2**32 if has
            pcmask = has & ((self.fde_info[fi] >> 4) & 1 == FDE_PCMASK)
            if pcmask.any():
                rep = self.fde_rep_size[fi].astype(np.int64)
                if self.header.abi == ABI_AMD64_LE:
                    rep = np.where(rep == 0, 16, rep)
                has &= ~pcmask | (rep > 0)
                off = np.where(pcmask & (rep > 0), off % np.maximum(rep, 1), off)
        k = np.searchsorted(t["key"], (fi << 32) | np.where(has, off, 0), side="right") - 1
        kc = np.maximum(k, 0)
        found = has & (k >= 0)
        found &= (t["fde"][kc] == fde) if len(t["key"]) else False
        columns = {name: np.where(found, t[name][kc] if len(t["key"]) else 0, 0)
                   for name in ("base", "cfa", "ra", "fp", "count")}
        if self.header.version >= 3 and len(self):
            # v3 DEFAULT FDE without FREs: the outermost frame (as rule() says)
            outer = (fde >= 0) & ~found & (self.fde_num_fres[fi] == 0) & (self.fde_info2[fi] & 0x1F == FDE_TYPE_DEFAULT)
            outer &= self.header.abi != ABI_S390X_BE
            if outer.any():
                found = found | outer
                columns["base"] = np.where(outer, BASE_SP, columns["base"])
        return {"found": found, **columns}

    def rule(self, pc: int) -> Rule | None:
        """The unwind rule at ``pc`` (spec 5.5; v3 FLEX FDEs per 5.6, s390x slots per 4.4), or ``None``
        without SFrame info."""
        found = self.find_fre(pc)
        if found is None:
            i = self.find_fde(pc)
            if i >= 0 and self.header.version >= 3 and int(self.fde_num_fres[i]) == 0 and self.fde_info2[i] & 0x1F == 0:
                return Rule("sp", 0, None, None, ra_undefined=True)  # v3 DEFAULT FDE without FREs: outermost
            return None
        i, fre = found
        h = self.header
        base = "sp" if fre.base_reg == BASE_SP else "fp"
        if not fre.offsets:
            return Rule(base, 0, None, None, ra_undefined=True)
        if h.version >= 3 and int(self.fde_info2[i]) & 0x1F == FDE_TYPE_FLEX:
            return self._flex_rule(fre)
        if h.abi == ABI_S390X_BE:
            return self._s390x_rule(base, fre)
        cfa = fre.offsets[0]
        rest = list(fre.offsets[1:])
        if h.fixed_ra_offset != 0:
            ra = h.fixed_ra_offset
        else:
            ra = rest.pop(0) if rest else None
        if h.fixed_fp_offset != 0:
            fp = h.fixed_fp_offset
        else:
            fp = rest.pop(0) if rest else None
        return Rule(base, cfa, ra, fp, mangled_ra=fre.mangled_ra)

    def _flex_rule(self, fre: FRE) -> Rule | None:
        """FLEX FRE (spec 4.5): (control word, displacement) pairs for CFA, RA and FP; a control word of 0 has
        no displacement and leaves that entity to its default. Control: bit 0 register base, bit 1 dereference,
        bits 3+ the DWARF register number."""
        words = list(fre.offsets)
        pairs: list[tuple[int, int] | None] = []
        for _entity in range(3):
            if not words:
                pairs.append(None)
                continue
            control = words.pop(0) & ((1 << (8 * fre.offset_size)) - 1)
            if control == 0:
                pairs.append(None)
                continue
            if not words:
                return None  # a control word without its displacement: corrupt
            pairs.append((control, words.pop(0)))
        cfa, ra, fp = pairs
        if cfa is None or not cfa[0] & 1:
            return None  # the CFA must be recovered from a register
        sp_reg, fp_reg = DWARF_SP_FP.get(self.header.abi, (-1, -1))
        reg = cfa[0] >> 3
        base = "sp" if reg == sp_reg else "fp" if reg == fp_reg else "reg"
        rule = {"cfa_base": base, "cfa_offset": cfa[1], "cfa_register": reg, "cfa_deref": bool(cfa[0] & 2),
                "mangled_ra": fre.mangled_ra}  # fmt: skip
        if self.header.abi == ABI_S390X_BE:
            rule["sp_offset"] = S390X_SP_VAL_OFFSET
        for name, pair, fixed in (("ra", ra, self.header.fixed_ra_offset), ("fp", fp, None)):
            if pair is None:
                rule[f"{name}_offset"] = fixed or None
                continue
            control, disp = pair
            rule[f"{name}_offset"] = disp
            rule[f"{name}_register"] = control >> 3 if control & 1 else None
            rule[f"{name}_deref"] = bool(control & 2)
        return Rule(**rule)


    def _s390x_rule(self, base: str, fre: FRE) -> Rule:
        """s390x DEFAULT FRE (spec 4.4): CFA = base + offset * 8 + 160; an RA/FP slot of 0 is "not saved", an
        odd slot names the DWARF register (slot >> 1) that holds the value, an even one a CFA offset."""
        o = list(fre.offsets)
        slots: dict[str, dict] = {}
        for name, k in (("ra", 1), ("fp", 2)):
            v = o[k] if len(o) > k else 0
            if v == 0:
                slots[name] = {f"{name}_offset": None}
            elif v & 1:
                slots[name] = {f"{name}_offset": 0, f"{name}_register": v >> 1, f"{name}_deref": False}
            else:
                slots[name] = {f"{name}_offset": v}
        return Rule(base, o[0] * 8 - S390X_SP_VAL_OFFSET, mangled_ra=fre.mangled_ra, sp_offset=S390X_SP_VAL_OFFSET,
                    **slots["ra"], **slots["fp"])  # fmt: skip


def parse_sframe(data: bytes, address: int = 0, path: str | None = None) -> SFrameSection:
    """Decode a ``.sframe`` section's bytes (``address`` = its load address)."""
    if len(data) < 4:
        raise FormatError("SFrame section shorter than its preamble", path=path, offset=0)
    (magic_le,) = struct.unpack_from("<H", data, 0)
    if magic_le == MAGIC:
        bo = "<"
    elif magic_le == 0xE2DE:
        bo = ">"
    else:
        raise FormatError(f"bad SFrame magic 0x{magic_le:04x}", path=path, offset=0)
    version, flags = data[2], data[3]
    if version not in (1, 2, 3):
        raise FormatError(f"unsupported SFrame version {version}", path=path, offset=2)
    if len(data) < HEADER_SIZE:
        raise FormatError("SFrame section shorter than its header", path=path, offset=0)
    abi, fixed_fp, fixed_ra, aux, nfdes, nfres, fre_len, fde_off, fre_off = struct.unpack_from(
        bo + "BbbBIIIII", data, 4
    )
    header = Header(version, flags, abi, fixed_fp, fixed_ra, aux, nfdes, nfres, fre_len, fde_off, fre_off)
    warnings: list[str] = []
    hsize = HEADER_SIZE + aux
    fde_size = {1: 17, 2: 20, 3: 16}[version]
    fde_pos = hsize + fde_off
    available = max(0, (len(data) - fde_pos) // fde_size) if fde_pos <= len(data) else 0
    n = nfdes
    if n > available:
        warnings.append(f"{nfdes} FDEs announced but only {available} fit in the section: the rest are ignored")
        n = available
    fre_base = hsize + fre_off
    if fre_base + fre_len > len(data):
        warnings.append(f"FRE sub-section [0x{fre_base:x}, +0x{fre_len:x}) runs past the section (0x{len(data):x})")
    raw = np.frombuffer(data, np.uint8, count=n * fde_size, offset=min(fde_pos, len(data))) if n else np.zeros(0, np.uint8)
    rows = raw.reshape(n, fde_size)

    def field(offset: int, width: int, signed: bool) -> np.ndarray:
        dt = np.dtype(f"{bo}{'i' if signed else 'u'}{width}")
        return rows[:, offset : offset + width].copy().view(dt).ravel().astype(np.int64)

    info2 = np.zeros(n, np.uint8)
    rep = np.zeros(n, np.uint8)
    if version == 3:
        start = field(0, 8, True)
        size = field(8, 4, False)
        fre_offs = field(12, 4, False)
        num = np.zeros(n, np.int64)
        info = np.zeros(n, np.uint8)
        attr_base = fre_base + fre_offs
        for i in range(n):  # the 5-byte attribute lives in the FRE sub-section
            a = int(attr_base[i])
            if a + 5 > len(data):
                warnings.append(f"FDE {i}: attribute at 0x{a:x} runs past the section")
                continue
            num[i], info[i], info2[i], rep[i] = struct.unpack_from(bo + "HBBB", data, a)
    else:
        start = field(0, 4, True)
        size = field(4, 4, False)
        fre_offs = field(8, 4, False)
        num = field(12, 4, False)
        info = rows[:, 16].copy() if n else np.zeros(0, np.uint8)
        if version == 2:
            rep = rows[:, 17].copy() if n else np.zeros(0, np.uint8)
    if flags & F_FDE_FUNC_START_PCREL and version >= 2:
        field_pos = fde_pos + fde_size * np.arange(n, dtype=np.int64)
        abs_start = address + field_pos + start
    else:
        abs_start = address + start
    too_many = num > max(fre_len, 0)
    if np.any(too_many):
        warnings.append(f"{int(too_many.sum())} FDEs claim more FREs than the FRE sub-section has bytes")
        num = np.minimum(num, max(fre_len, 0))
    if n > 1 and not flags & F_FDE_SORTED and np.any(np.diff(abs_start) < 0):
        warnings.append("FDEs are not sorted and the section does not say they are: sorted for lookups")
    return SFrameSection(data, address, header, bo, abs_start, size, fre_offs, num, info, rep, info2, warnings)


def find_sframe_section(path: str) -> tuple[bytes, int]:
    """Bytes and load address of an ELF file's ``.sframe`` (by name, section type or PT_GNU_SFRAME)."""
    from fxscope.formats.elf.reader import find_section

    found = find_section(path, names=(".sframe",), types=("SHT_GNU_SFRAME", 0x6FFFFFF4),
                         segment_types=("PT_GNU_SFRAME", 0x6474E554))
    if found is None:
        raise FormatError("no .sframe section", path=path)
    return found
