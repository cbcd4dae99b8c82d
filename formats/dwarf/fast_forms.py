"""DWARF forms, abbreviations and attribute decoding for the hand-written decoder (:mod:`fxscope.formats.dwarf.fast`).

The constants come from pyelftools' tables (``elftools.dwarf.enums``), the same numbers its walk uses. An
abbreviation becomes a *plan*: per attribute, whether the model keeps it and how its form is read, plus the
DIE's fixed size when every form has one, so that a DIE the model does not need is skipped in one addition.

LEB128s are read by :func:`fxscope.formats.leb128.uleb_unbounded` and ``sleb_unbounded`` (the DIE walk's hottest
calls): a truncated one is an IndexError (the section ends), a too big one a ``LebTooBigError``; like
:class:`Unsupported`, either makes :func:`~fxscope.formats.dwarf.functions.read_dwarf` take the pyelftools
path, with the reason in its warnings.
"""

from __future__ import annotations

from elftools.dwarf.enums import ENUM_DW_AT, ENUM_DW_FORM, ENUM_DW_TAG

from fxscope.formats.leb128 import sleb_unbounded as sleb
from fxscope.formats.leb128 import uleb_unbounded as uleb


class Unsupported(Exception):
    """This file needs the pyelftools path (a feature not decoded here, or malformed data)."""


def _tag(name: str) -> int:
    return ENUM_DW_TAG["DW_TAG_" + name]


def _at(name: str) -> int:
    return ENUM_DW_AT["DW_AT_" + name]


def _form(name: str) -> int:
    return ENUM_DW_FORM["DW_FORM_" + name]


# ---------------------------------------------------------------------------------------------- tags
TAG_SUBPROGRAM = _tag("subprogram")
TAG_INLINED = _tag("inlined_subroutine")
TAG_LEXICAL = _tag("lexical_block")
TAG_SKELETON = _tag("skeleton_unit")
#: tags whose subtrees hold no code (members, enumerators, parameters): skipped through DW_AT_sibling
SKIPPED_SUBTREES = frozenset(_tag(name) for name in (
    "array_type", "class_type", "enumeration_type", "structure_type", "subroutine_type", "union_type",
    "formal_parameter", "variable", "call_site", "GNU_call_site",
))
#: except a class defined inside a function: GCC nests its member functions' code in it (the _Guard of
#: libstdc++'s basic_string::_M_construct), so those subtrees are walked when inside a subprogram
LOCAL_CLASS_TAGS = frozenset(_tag(name) for name in ("class_type", "structure_type", "union_type"))

# ---------------------------------------------------------------------------------------------- attributes
AT_SIBLING = _at("sibling")
AT_NAME = _at("name")
AT_STMT_LIST = _at("stmt_list")
AT_LOW_PC = _at("low_pc")
AT_HIGH_PC = _at("high_pc")
AT_COMP_DIR = _at("comp_dir")
AT_ABSTRACT_ORIGIN = _at("abstract_origin")
AT_DECL_FILE = _at("decl_file")
AT_DECL_LINE = _at("decl_line")
AT_SPECIFICATION = _at("specification")
AT_RANGES = _at("ranges")
AT_CALL_COLUMN = _at("call_column")
AT_CALL_FILE = _at("call_file")
AT_CALL_LINE = _at("call_line")
AT_LINKAGE_NAME = _at("linkage_name")
AT_STR_OFFSETS_BASE = _at("str_offsets_base")
AT_ADDR_BASE = _at("addr_base")
AT_RNGLISTS_BASE = _at("rnglists_base")
AT_DWO_NAME = _at("dwo_name")
AT_MIPS_LINKAGE_NAME = _at("MIPS_linkage_name")
AT_GNU_DWO_NAME = _at("GNU_dwo_name")

#: the attributes the model reads from a subprogram, inlined subroutine or lexical block
KEPT = frozenset({
    AT_NAME, AT_LOW_PC, AT_HIGH_PC, AT_ABSTRACT_ORIGIN, AT_DECL_FILE, AT_DECL_LINE, AT_SPECIFICATION,
    AT_RANGES, AT_CALL_COLUMN, AT_CALL_FILE, AT_CALL_LINE, AT_LINKAGE_NAME, AT_MIPS_LINKAGE_NAME,
})
#: and from a unit's top DIE
TOP_KEPT = KEPT | {AT_STMT_LIST, AT_COMP_DIR, AT_STR_OFFSETS_BASE, AT_ADDR_BASE, AT_RNGLISTS_BASE, AT_DWO_NAME,
                   AT_GNU_DWO_NAME}

# ---------------------------------------------------------------------------------------------- forms
F_ADDR, F_BLOCK2, F_BLOCK4, F_DATA2, F_DATA4, F_DATA8, F_STRING, F_BLOCK, F_BLOCK1 = map(_form, (
    "addr", "block2", "block4", "data2", "data4", "data8", "string", "block", "block1"))
F_DATA1, F_FLAG, F_SDATA, F_STRP, F_UDATA, F_REF_ADDR = map(_form, (
    "data1", "flag", "sdata", "strp", "udata", "ref_addr"))
F_REF1, F_REF2, F_REF4, F_REF8, F_REF_UDATA, F_INDIRECT = map(_form, (
    "ref1", "ref2", "ref4", "ref8", "ref_udata", "indirect"))
F_SEC_OFFSET, F_EXPRLOC, F_FLAG_PRESENT, F_STRX, F_ADDRX = map(_form, (
    "sec_offset", "exprloc", "flag_present", "strx", "addrx"))
F_DATA16, F_LINE_STRP, F_REF_SIG8, F_IMPLICIT_CONST, F_LOCLISTX, F_RNGLISTX = map(_form, (
    "data16", "line_strp", "ref_sig8", "implicit_const", "loclistx", "rnglistx"))
F_STRX1, F_STRX2, F_STRX3, F_STRX4, F_ADDRX1, F_ADDRX2, F_ADDRX3, F_ADDRX4 = map(_form, (
    "strx1", "strx2", "strx3", "strx4", "addrx1", "addrx2", "addrx3", "addrx4"))
F_GNU_ADDR_INDEX, F_GNU_STR_INDEX = _form("GNU_addr_index"), _form("GNU_str_index")

STRX = {F_STRX, F_STRX1, F_STRX2, F_STRX3, F_STRX4, F_GNU_STR_INDEX}
ADDRX = {F_ADDRX, F_ADDRX1, F_ADDRX2, F_ADDRX3, F_ADDRX4, F_GNU_ADDR_INDEX}
LOCAL_REFS = {F_REF1, F_REF2, F_REF4, F_REF8, F_REF_UDATA}

# how a form's value is read: a byte count (unsigned little-endian, 0 = no bytes), or one of these
V_ULEB, V_SLEB, V_STRING, V_BLOCK_ULEB, V_BLOCK1, V_BLOCK2, V_BLOCK4, V_IMPLICIT, V_PRESENT = (
    -1, -2, -3, -4, -5, -6, -7, -8, -9)


def form_reader(form: int, addr_size: int, off_size: int, version: int) -> int:
    if form == F_ADDR:
        return addr_size
    fixed = {
        F_DATA1: 1, F_REF1: 1, F_FLAG: 1, F_STRX1: 1, F_ADDRX1: 1,
        F_DATA2: 2, F_REF2: 2, F_STRX2: 2, F_ADDRX2: 2,
        F_STRX3: 3, F_ADDRX3: 3,
        F_DATA4: 4, F_REF4: 4, F_STRX4: 4, F_ADDRX4: 4,
        F_DATA8: 8, F_REF8: 8, F_REF_SIG8: 8, F_DATA16: 16,
        F_STRP: off_size, F_SEC_OFFSET: off_size, F_LINE_STRP: off_size,
        F_REF_ADDR: off_size if version >= 3 else addr_size,
    }.get(form)
    if fixed is not None:
        return fixed
    variable = {
        F_UDATA: V_ULEB, F_REF_UDATA: V_ULEB, F_STRX: V_ULEB, F_ADDRX: V_ULEB, F_LOCLISTX: V_ULEB,
        F_RNGLISTX: V_ULEB, F_GNU_ADDR_INDEX: V_ULEB, F_GNU_STR_INDEX: V_ULEB,
        F_SDATA: V_SLEB, F_STRING: V_STRING, F_BLOCK: V_BLOCK_ULEB, F_EXPRLOC: V_BLOCK_ULEB,
        F_BLOCK1: V_BLOCK1, F_BLOCK2: V_BLOCK2, F_BLOCK4: V_BLOCK4,
        F_IMPLICIT_CONST: V_IMPLICIT, F_FLAG_PRESENT: V_PRESENT,
    }.get(form)
    if variable is None:
        raise Unsupported(f"DWARF form 0x{form:x}")
    return variable


def initial_length(data: bytes, pos: int) -> tuple[int, int, int]:
    """A unit's length, its offset size (4, or 8 for 64-bit DWARF) and where the unit's header goes on."""
    length = int.from_bytes(data[pos:pos + 4], "little")
    if length == 0xFFFFFFFF:
        return int.from_bytes(data[pos + 4:pos + 12], "little"), 8, pos + 12
    if length >= 0xFFFFFFF0:
        raise Unsupported("reserved unit length")
    return length, 4, pos + 4


def cstr(data: bytes, pos: int) -> bytes:
    end = data.index(b"\0", pos)
    return data[pos:end]


class Abbrev:
    __slots__ = (
        "children",
        "code",
        "fixed",
        "kind",
        "local_class",
        "plan",
        "sib_at",
        "sib_size",
        "skip_subtree",
        "tag",
    )

    def __init__(self, code: int, tag: int, children: bool, specs: list[tuple[int, int, int]],
                 addr_size: int, off_size: int, version: int) -> None:
        self.code, self.tag, self.children = code, tag, children
        self.kind = tag if tag in (TAG_SUBPROGRAM, TAG_INLINED, TAG_LEXICAL) else 0
        #: (attribute or -1 when not kept, form, reader, implicit value) per attribute
        plan = []
        fixed = 0
        self.sib_at = -1  # byte offset of DW_AT_sibling from the DIE's attributes, when fixed
        self.sib_size = 0
        for at, form, implicit in specs:
            if form == F_INDIRECT:
                raise Unsupported("DW_FORM_indirect")
            reader = form_reader(form, addr_size, off_size, version)
            if at == AT_SIBLING and fixed is not None and form in (F_REF1, F_REF2, F_REF4, F_REF8):
                self.sib_at, self.sib_size = fixed, reader
            plan.append((at, form, reader, implicit))
            if fixed is not None:
                if reader >= 0:
                    fixed += reader
                elif reader in (V_IMPLICIT, V_PRESENT):
                    pass
                else:
                    fixed = None
        self.plan = plan
        self.fixed = fixed
        self.skip_subtree = children and self.kind == 0 and tag in SKIPPED_SUBTREES and self.sib_at >= 0
        self.local_class = tag in LOCAL_CLASS_TAGS


def parse_abbrevs(data: bytes, offset: int, addr_size: int, off_size: int, version: int) -> list:
    table: list = []
    pos = offset
    while True:
        code, pos = uleb(data, pos)
        if code == 0:
            return table
        tag, pos = uleb(data, pos)
        children = data[pos] != 0
        pos += 1
        specs = []
        while True:
            at, pos = uleb(data, pos)
            form, pos = uleb(data, pos)
            implicit = 0
            if form == F_IMPLICIT_CONST:
                implicit, pos = sleb(data, pos)
            if at == 0 and form == 0:
                break
            specs.append((at, form, implicit))
        if code >= len(table):
            if code > 100_000:
                raise Unsupported("sparse abbreviation codes")
            table.extend([None] * (code + 1 - len(table)))
        if table[code] is None:  # the first definition wins, as a dict lookup in pyelftools would not:
            table[code] = Abbrev(code, tag, children, specs, addr_size, off_size, version)
        else:
            raise Unsupported("duplicate abbreviation code")


def skip_plan(data: bytes, pos: int, plan: list) -> int:
    for _at, _form, reader, _imp in plan:
        if reader >= 0:
            pos += reader
        elif reader == V_ULEB:
            pos = pos + 1 if data[pos] < 0x80 else uleb(data, pos)[1]
        elif reader == V_SLEB:
            pos = pos + 1 if data[pos] < 0x80 else sleb(data, pos)[1]
        elif reader == V_STRING:
            pos = data.index(b"\0", pos) + 1
        elif reader == V_BLOCK_ULEB:
            n, pos = uleb(data, pos)
            pos += n
        elif reader == V_BLOCK1:
            pos += 1 + data[pos]
        elif reader == V_BLOCK2:
            pos += 2 + int.from_bytes(data[pos:pos + 2], "little")
        elif reader == V_BLOCK4:
            pos += 4 + int.from_bytes(data[pos:pos + 4], "little")
    return pos


def read_attrs(data: bytes, pos: int, plan: list, kept: set) -> tuple[dict, int]:
    """{attribute: (form, raw value)} of the kept attributes (strings as bytes), and the end position."""
    attrs: dict = {}
    for at, form, reader, implicit in plan:
        if reader > 0:
            if at in kept:
                attrs[at] = (form, int.from_bytes(data[pos:pos + reader], "little"))
            pos += reader
        elif reader == V_ULEB:
            value, pos = uleb(data, pos)
            if at in kept:
                attrs[at] = (form, value)
        elif reader == V_SLEB:
            value, pos = sleb(data, pos)
            if at in kept:
                attrs[at] = (form, value)
        elif reader == V_STRING:
            end = data.index(b"\0", pos)
            if at in kept:
                attrs[at] = (form, data[pos:end])
            pos = end + 1
        elif reader == V_IMPLICIT:
            if at in kept:
                attrs[at] = (form, implicit)
        elif reader == V_PRESENT:
            if at in kept:
                attrs[at] = (form, True)
        elif reader == 0:
            if at in kept:
                attrs[at] = (form, 0)
        else:
            pos = skip_plan(data, pos, [(at, form, reader, implicit)])
    return attrs, pos


