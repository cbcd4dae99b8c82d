"""DWARF line programs for the hand-written decoder (:mod:`fxscope.formats.dwarf.fast`): the header of a unit's
program (versions 2-5: directories and file entries) and a small state machine that runs the opcodes over the
section bytes into row columns, one list per column instead of an object per row.

Opcode numbers are pyelftools' (``elftools.dwarf.constants``); what this does not decode (VLIW programs,
``DW_LNE_define_file``, unknown opcodes) raises :class:`Unsupported`, and the pyelftools path reads the file.
"""

from __future__ import annotations

from elftools.dwarf.constants import (
    DW_LNE_define_file,
    DW_LNE_end_sequence,
    DW_LNE_set_address,
    DW_LNE_set_discriminator,
    DW_LNS_advance_line,
    DW_LNS_advance_pc,
    DW_LNS_const_add_pc,
    DW_LNS_copy,
    DW_LNS_fixed_advance_pc,
    DW_LNS_negate_stmt,
    DW_LNS_set_basic_block,
    DW_LNS_set_column,
    DW_LNS_set_epilogue_begin,
    DW_LNS_set_file,
    DW_LNS_set_isa,
    DW_LNS_set_prologue_end,
)
from elftools.dwarf.enums import ENUM_DW_LNCT

from fxscope.formats.dwarf.fast_forms import (
    F_BLOCK,
    F_DATA1,
    F_DATA2,
    F_DATA4,
    F_DATA8,
    F_DATA16,
    F_LINE_STRP,
    F_STRING,
    F_STRP,
    F_UDATA,
    Unsupported,
    cstr,
    initial_length,
    sleb,
    uleb,
)

_LNCT_PATH = ENUM_DW_LNCT["DW_LNCT_path"]
_LNCT_DIRECTORY_INDEX = ENUM_DW_LNCT["DW_LNCT_directory_index"]


def read_line_header(data: bytes, offset: int, line_str: bytes, debug_str: bytes) -> dict:
    """Header fields, directories and file entries of the line program at ``offset`` of ``.debug_line``
    (``data``); names through ``.debug_line_str`` and ``.debug_str``."""
    pos = offset
    length, off_size, pos = initial_length(data, pos)
    end = pos + length
    if end > len(data):
        raise Unsupported("line program past .debug_line")
    version = int.from_bytes(data[pos:pos + 2], "little")
    pos += 2
    if not 2 <= version <= 5:
        raise Unsupported(f"line table version {version}")
    if version >= 5:
        pos += 2  # address size, segment selector size
    header_length = int.from_bytes(data[pos:pos + off_size], "little")
    pos += off_size
    program_start = pos + header_length
    min_inst = data[pos]
    pos += 1
    max_ops = 1
    if version >= 4:
        max_ops = data[pos]
        pos += 1
    if max_ops != 1:
        raise Unsupported("VLIW line program")
    pos += 1  # default_is_stmt
    line_base = data[pos] - 256 if data[pos] >= 128 else data[pos]
    line_range = data[pos + 1]
    opcode_base = data[pos + 2]
    pos += 3 + max(opcode_base - 1, 0)
    if line_range == 0 or opcode_base == 0:
        raise Unsupported("line_range or opcode_base 0")
    dirs: list[bytes] = []
    files: list[tuple[bytes, int]] = []
    if version < 5:
        while data[pos]:
            s = cstr(data, pos)
            dirs.append(s)
            pos += len(s) + 1
        pos += 1
        while data[pos]:
            s = cstr(data, pos)
            pos += len(s) + 1
            d, pos = uleb(data, pos)
            _, pos = uleb(data, pos)
            _, pos = uleb(data, pos)
            files.append((s, d))
        pos += 1
    else:
        for target in (dirs, files):
            nformats = data[pos]
            pos += 1
            formats = []
            for _ in range(nformats):
                ct, pos = uleb(data, pos)
                form, pos = uleb(data, pos)
                formats.append((ct, form))
            count, pos = uleb(data, pos)
            for _ in range(count):
                path: bytes | None = None
                dir_index: int | None = None
                for ct, form in formats:
                    value, pos = _line_form(data, pos, form, off_size, line_str, debug_str)
                    if ct == _LNCT_PATH:
                        path = value
                    elif ct == _LNCT_DIRECTORY_INDEX:
                        dir_index = value
                if not isinstance(path, bytes):
                    raise Unsupported("line table path is not a string")
                if target is dirs:
                    dirs.append(path)
                else:
                    if not isinstance(dir_index, int):
                        raise Unsupported("line table file without a directory index")
                    files.append((path, dir_index))
    if pos != program_start:
        raise Unsupported("line table header length disagrees with its contents")
    return {
        "version": version, "min_inst": min_inst, "line_base": line_base, "line_range": line_range,
        "opcode_base": opcode_base, "dirs": dirs, "files": files, "start": program_start, "end": end,
    }


def _line_form(data: bytes, pos: int, form: int, off_size: int, line_str: bytes, debug_str: bytes):
    if form == F_STRING:
        s = cstr(data, pos)
        return s, pos + len(s) + 1
    if form == F_LINE_STRP:
        return cstr(line_str, int.from_bytes(data[pos:pos + off_size], "little")), pos + off_size
    if form == F_STRP:
        return cstr(debug_str, int.from_bytes(data[pos:pos + off_size], "little")), pos + off_size
    if form == F_UDATA:
        return uleb(data, pos)
    sizes = {F_DATA1: 1, F_DATA2: 2, F_DATA4: 4, F_DATA8: 8, F_DATA16: 16}
    if form in sizes:
        n = sizes[form]
        return int.from_bytes(data[pos:pos + n], "little"), pos + n
    if form == F_BLOCK:
        n, pos = uleb(data, pos)
        return data[pos:pos + n], pos + n
    raise Unsupported(f"line table entry form 0x{form:x}")


def run_line_program(data: bytes, hdr: dict, addr_size: int) -> list[tuple[list, list, list, list]]:
    """Every complete sequence's rows as (addresses, file indexes, lines, columns), in program order; the
    last row of each is its end_sequence row. ``hdr``: the program's :func:`read_line_header`."""
    # the opcodes as locals: as fast as literals in the loop, and named as pyelftools names them
    copy, advance_pc, advance_line, set_file, set_column = (DW_LNS_copy, DW_LNS_advance_pc, DW_LNS_advance_line,
                                                            DW_LNS_set_file, DW_LNS_set_column)
    const_add_pc, fixed_advance_pc, set_isa = DW_LNS_const_add_pc, DW_LNS_fixed_advance_pc, DW_LNS_set_isa
    no_operand = (DW_LNS_negate_stmt, DW_LNS_set_basic_block, DW_LNS_set_prologue_end, DW_LNS_set_epilogue_begin)
    end_sequence, set_address, define_file, set_discriminator = (DW_LNE_end_sequence, DW_LNE_set_address,
                                                                  DW_LNE_define_file, DW_LNE_set_discriminator)
    pos, end = hdr["start"], hdr["end"]
    min_inst, line_base, line_range, opcode_base = (hdr["min_inst"], hdr["line_base"], hdr["line_range"],
                                                    hdr["opcode_base"])
    adv_addr = [0] * 256
    adv_line = [0] * 256
    for op in range(opcode_base, 256):
        adj = op - opcode_base
        adv_addr[op] = (adj // line_range) * min_inst
        adv_line[op] = line_base + adj % line_range
    const_add = ((255 - opcode_base) // line_range) * min_inst
    seqs = []
    addrs: list[int] = []
    file_ids: list[int] = []
    lines: list[int] = []
    cols: list[int] = []
    addr, file, line, col = 0, 1, 1, 0
    while pos < end:
        op = data[pos]
        pos += 1
        if op >= opcode_base:
            addr += adv_addr[op]
            line += adv_line[op]
            addrs.append(addr)
            file_ids.append(file)
            lines.append(line)
            cols.append(col)
        elif op == set_column:
            col = data[pos]
            if col < 0x80:
                pos += 1
            else:
                col, pos = uleb(data, pos)
        elif op == 0:
            _, pos = uleb(data, pos)
            ex = data[pos]
            pos += 1
            if ex == end_sequence:
                addrs.append(addr)
                file_ids.append(file)
                lines.append(line)
                cols.append(col)
                seqs.append((addrs, file_ids, lines, cols))
                addrs, file_ids, lines, cols = [], [], [], []
                addr, file, line, col = 0, 1, 1, 0
            elif ex == set_address:
                addr = int.from_bytes(data[pos:pos + addr_size], "little")
                pos += addr_size
            elif ex == set_discriminator:
                _, pos = uleb(data, pos)
            elif ex == define_file:
                raise Unsupported("DW_LNE_define_file")
            else:
                raise Unsupported(f"extended line opcode {ex}")
        elif op == copy:
            addrs.append(addr)
            file_ids.append(file)
            lines.append(line)
            cols.append(col)
        elif op == advance_pc:
            value, pos = uleb(data, pos)
            addr += value * min_inst
        elif op == advance_line:
            value, pos = sleb(data, pos)
            line += value
        elif op == set_file:
            file, pos = uleb(data, pos)
        elif op == const_add_pc:
            addr += const_add
        elif op == fixed_advance_pc:
            addr += int.from_bytes(data[pos:pos + 2], "little")
            pos += 2
        elif op in no_operand:
            pass
        elif op == set_isa:
            _, pos = uleb(data, pos)
        else:
            raise Unsupported(f"line opcode {op}")
    if pos > end:
        raise Unsupported("line program runs past its end")
    return seqs
