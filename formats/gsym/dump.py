"""Text dump of a GSYM file in exactly the layout ``llvm-gsymutil FILE.gsym`` prints (LLVM 19).

Byte-exact output lets a user diff our view of a file against LLVM's, and lets the tests compare with the
recorded dumps in ``../shared/testdata/gsym``.
"""

from __future__ import annotations

from collections.abc import Iterator

from fxscope.formats.gsym.errors import GsymLookupError
from fxscope.formats.gsym.inline_info import RawInlineNode
from fxscope.formats.gsym.reader import (
    INFO_INLINE,
    INFO_LINE_TABLE,
    GsymReader,
    join_path,
)

_OFFSET_TITLE = {1: "OFFSET8 ", 2: "OFFSET16", 4: "OFFSET32", 8: "OFFSET64"}
_OFFSET_DIGITS = {1: 2, 2: 4, 4: 8, 8: 8}


def dump_lines(reader: GsymReader) -> Iterator[str]:
    h = reader.header
    yield "Header:"
    yield "  Magic        = 0x4753594d"
    yield f"  Version      = 0x{h.version:04x}"
    yield f"  AddrOffSize  = 0x{h.addr_off_size:02x}"
    yield f"  UUIDSize     = 0x{len(h.uuid):02x}"
    yield f"  BaseAddress  = 0x{h.base_address:016x}"
    yield f"  NumAddresses = 0x{h.num_addresses:08x}"
    yield f"  StrtabOffset = 0x{h.strtab_offset:08x}"
    yield f"  StrtabSize   = 0x{h.strtab_size:08x}"
    yield f"  UUID         = {h.uuid.hex()}"
    yield ""
    yield "Address Table:"
    yield f"INDEX  {_OFFSET_TITLE[h.addr_off_size]} (ADDRESS)"
    yield "====== =============================== "
    digits = _OFFSET_DIGITS[h.addr_off_size]
    for i, off in enumerate(reader.addr_offsets.tolist()):
        yield f"[{i:4d}] 0x{off:0{digits}x} (0x{h.base_address + off:016x})"
    yield ""
    yield "Address Info Offsets:"
    yield "INDEX  Offset"
    yield "====== =========="
    for i, off in enumerate(reader.info_offsets.tolist()):
        yield f"[{i:4d}] 0x{off:08x}"
    yield ""
    yield "Files:"
    yield "INDEX  DIRECTORY  BASENAME   PATH"
    yield "====== ========== ========== =============================="
    for i, (d, b) in enumerate(reader.files.tolist()):
        path = join_path(reader.string(d), reader.string(b)) if i else ""
        yield f"[{i:4d}] 0x{d:08x} 0x{b:08x} {path}"
    yield ""
    yield "String table:"
    strtab = reader._strtab
    pos = 0
    while pos < len(strtab):
        end = strtab.find(b"\0", pos)
        end = len(strtab) if end < 0 else end
        yield f'0x{pos:08x}: "{strtab[pos:end].decode("utf-8", "replace")}"'
        pos = end + 1
    yield ""
    for i in range(len(reader)):
        yield from _function_lines(reader, i)


def _function_lines(reader: GsymReader, index: int) -> Iterator[str]:
    offset = int(reader.info_offsets[index])
    start = reader.address(index)
    try:
        size, name, chunks = reader._function_chunks(offset)
        yield f'FunctionInfo @ 0x{offset:08x}: [0x{start:016x} - 0x{start + size:016x}) "{reader.string(name)}"'
        if INFO_LINE_TABLE in chunks:
            yield "LineTable:"
            for addr, file_idx, line in reader.line_rows(*chunks[INFO_LINE_TABLE], start):
                where = f" {join_path(*reader.file(file_idx))}:{line}" if file_idx else f" {line}"
                yield f"  0x{addr:016x}{where}"
        if INFO_INLINE in chunks:
            root = reader.inline_tree(*chunks[INFO_INLINE], start)
            if root is not None:
                yield "InlineInfo:"
                yield from _inline_lines(reader, root, 0)
    except GsymLookupError as exc:
        yield "FunctionInfo:"
        yield f"error: {exc}"


def _inline_lines(reader: GsymReader, node: RawInlineNode, depth: int) -> Iterator[str]:
    ranges = " ".join(f"[0x{lo:016x} - 0x{hi:016x})" for lo, hi in node.ranges)
    text = f"{'  ' * depth}{ranges} {reader.string(node.name)}"
    if node.call_file:
        text += f" called from {join_path(*reader.file(node.call_file))}:{node.call_line}"
    yield text
    for child in node.children:
        yield from _inline_lines(reader, child, depth + 1)


def dump_text(reader: GsymReader) -> str:
    return "".join(line + "\n" for line in dump_lines(reader))
