"""GSYM reader: memory-mapped, either byte order, lookups with inline call stacks.

The layout and the lookup algorithm follow LLVM's implementation (``../shared/specs/gsym.md`` Part 2):
lookups must print what ``llvm-gsymutil --address`` (LLVM 19) prints, so the quirks are LLVM's on purpose:
a zero-size FunctionInfo covers every address up to the next entry, the *last* line row at an address wins,
and an inline node contributes a frame only when its call file is set.

The map is guarded (:class:`~fxscope.formats.mapped_file.MappedFile`): a file truncated in place while open (a
tool rebuilding it at the same path) reads zeros past its new end instead of killing the process with SIGBUS,
lookups on it fail or return what the zeros decode to, and :meth:`GsymReader.change` says what happened (the
resolver then opens the file again).

Only the header and the two address tables are decoded up front (as numpy views of the mapping); a
FunctionInfo is decoded when a lookup lands in it, so opening a large file costs nothing: its LineTable by
:mod:`~fxscope.formats.gsym.line_table`, its InlineInfo by :mod:`~fxscope.formats.gsym.inline_info`. This module
is the file and the lookups over it: the header and tables, single and batch lookups, LLVM's output format.
"""

from __future__ import annotations

import bisect
import contextlib
import os
import struct
from dataclasses import dataclass, field
from pathlib import Path
from typing import NamedTuple

import numpy as np

from fxscope.formats.errors import FormatError
from fxscope.formats.gc_pause import paused_gc
from fxscope.formats.gsym.errors import GsymLookupError
from fxscope.formats.gsym.inline_info import RawInlineNode, decode_inline_tree
from fxscope.formats.gsym.line_table import decode_line_table
from fxscope.formats.mapped_file import FileChange, MappedFile

GSYM_MAGIC = 0x4753594D
GSYM_CIGAM = 0x4D595347
HEADER_SIZE = 48

INFO_END = 0
INFO_LINE_TABLE = 1
INFO_INLINE = 2
INFO_MERGED = 3
INFO_CALL_SITES = 4


@dataclass(frozen=True)
class Header:
    version: int
    addr_off_size: int
    uuid: bytes
    base_address: int
    num_addresses: int
    strtab_offset: int
    strtab_size: int


class SourceLocation(NamedTuple):
    """One frame of a lookup result; index 0 of a result is the innermost (inlined) frame.

    A named tuple: batch lookups make one per frame, and a dataclass's constructor would cost a third of it.
    """

    name: str
    offset: int
    directory: str = ""
    base: str = ""
    line: int = 0

    @property
    def path(self) -> str:
        return join_path(self.directory, self.base)


@dataclass(slots=True)
class LookupResult:
    address: int
    locations: list[SourceLocation] = field(default_factory=list)
    error: str | None = None

    @property
    def ok(self) -> bool:
        return self.error is None


def join_path(directory: str, base: str) -> str:
    """LLVM's display rule: ``\\`` separates only when the directory has backslashes and no slash."""
    if not directory:
        return base
    sep = "\\" if ("\\" in directory and "/" not in directory) else "/"
    return f"{directory}{sep}{base}"


class GsymReader:
    """A GSYM file opened for lookups. Use as a context manager or call :meth:`close`."""

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = str(path)
        with open(self.path, "rb") as fh:
            size = os.fstat(fh.fileno()).st_size
            if size == 0:
                raise FormatError("empty file, not a GSYM file", path=self.path, offset=0)
            self._mapped: MappedFile | None = MappedFile(self.path, fh.fileno(), noun="GSYM file")
        try:
            self._init(memoryview(self._mapped.map))
        except Exception:
            self.close()
            raise

    @classmethod
    def from_bytes(cls, data: bytes, path: str = "<bytes>") -> GsymReader:
        self = cls.__new__(cls)
        self.path = path
        self._mapped = None
        self._init(memoryview(bytes(data)))
        return self

    def __enter__(self) -> GsymReader:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        self._buf = memoryview(b"")
        self.addr_offsets = np.zeros(0, np.uint64)
        self.info_offsets = np.zeros(0, np.uint32)
        if self._mapped is not None:
            with contextlib.suppress(BufferError):  # a caller still holds a view; the OS frees it at exit
                self._mapped.map.close()
            self._mapped = None

    def change(self) -> FileChange | None:
        """How the file changed on disk since it was opened (truncated, rewritten, replaced...), or None (also
        None for a reader made from bytes). Without the compiled guard this also maps zeros over a truncated
        end, so call it before reading when in doubt (:meth:`lookup` does)."""
        return None if self._mapped is None else self._mapped.change()

    # ------------------------------------------------------------------ header and tables
    def _err(self, message: str, offset: int | None = None) -> FormatError:
        return FormatError(message, path=self.path, offset=offset)

    def _init(self, buf: memoryview) -> None:
        self._buf = buf
        n = len(buf)
        if n < 4:
            raise self._err("not enough data for a gsym::Header", 0)
        (magic_le,) = struct.unpack_from("<I", buf, 0)
        if magic_le == GSYM_MAGIC:
            self.byte_order = "<"
        elif magic_le == GSYM_CIGAM:
            self.byte_order = ">"
        else:
            raise self._err(f"invalid GSYM magic 0x{magic_le:08x}: not a GSYM file", 0)
        if n < HEADER_SIZE:
            raise self._err("not enough data for a gsym::Header", 0)
        bo = self.byte_order
        _, version, aos, uuid_size, base, num, str_off, str_size = struct.unpack_from(bo + "IHBBQIII", buf, 0)
        if version != 1:
            raise self._err(f"unsupported GSYM version {version}", 4)
        if aos not in (1, 2, 4, 8):
            raise self._err(f"invalid address offset size {aos}", 6)
        if uuid_size > 20:
            raise self._err(f"invalid UUID size {uuid_size}", 7)
        uuid = bytes(buf[0x1C : 0x1C + uuid_size])
        self.header = Header(version, aos, uuid, base, num, str_off, str_size)
        addr_end = HEADER_SIZE + num * aos
        info_start = (addr_end + 3) & ~3
        info_end = info_start + num * 4
        if info_end + 4 > n:
            raise self._err(
                f"address tables of {num} entries need {info_end + 4} bytes, file has {n}: truncated or corrupt",
                HEADER_SIZE,
            )
        dt = {1: "u1", 2: "u2", 4: "u4", 8: "u8"}[aos]
        self.addr_offsets = np.frombuffer(buf, dtype=np.dtype(bo + dt), count=num, offset=HEADER_SIZE).astype(
            np.uint64
        )
        self.info_offsets = np.frombuffer(buf, dtype=np.dtype(bo + "u4"), count=num, offset=info_start)
        if num > 1 and bool(np.any(self.addr_offsets[1:] < self.addr_offsets[:-1])):
            raise self._err("address table is not sorted", HEADER_SIZE)
        self._file_table_offset = info_end
        (nfiles,) = struct.unpack_from(bo + "I", buf, info_end)
        if info_end + 4 + nfiles * 8 > n:
            raise self._err(f"file table of {nfiles} entries runs past the end of the file", info_end)
        self.files = np.frombuffer(buf, dtype=np.dtype(bo + "u4"), count=nfiles * 2, offset=info_end + 4).reshape(
            nfiles, 2
        )
        if str_off + str_size > n:
            raise self._err(f"string table [0x{str_off:x}, +0x{str_size:x}) runs past the end of the file", 0x14)
        self._strtab = bytes(buf[str_off : str_off + str_size])
        self._str_cache: dict[int, str] = {}

    @property
    def uuid(self) -> bytes:
        return self.header.uuid

    @property
    def base_address(self) -> int:
        return self.header.base_address

    def __len__(self) -> int:
        return self.header.num_addresses

    def address(self, index: int) -> int:
        return self.header.base_address + int(self.addr_offsets[index])

    def string(self, offset: int) -> str:
        """NUL-terminated string at ``offset``; an offset past the table is the empty string (as LLVM)."""
        cached = self._str_cache.get(offset)
        if cached is not None:
            return cached
        if offset >= len(self._strtab):
            value = ""
        else:
            end = self._strtab.find(b"\0", offset)
            value = self._strtab[offset : end if end >= 0 else len(self._strtab)].decode("utf-8", "replace")
        self._str_cache[offset] = value
        return value

    def file(self, index: int) -> tuple[str, str]:
        """(directory, base name) of file-table entry ``index``."""
        cache = self.__dict__.setdefault("_file_cache", {})
        found = cache.get(index)
        if found is None:
            if index >= len(self.files):
                raise GsymLookupError(f"failed to extract file[{index}]")
            d, b = self.files[index]
            found = cache[index] = (self.string(int(d)), self.string(int(b)))
        return found

    # ------------------------------------------------------------------ FunctionInfo decoding
    def _function_chunks(self, offset: int) -> tuple[int, int, dict[int, tuple[int, int]]]:
        """Size, name offset and {info type: (data offset, length)} of the FunctionInfo at ``offset``."""
        buf, bo = self._buf, self.byte_order
        if offset + 8 > len(buf):
            raise GsymLookupError("FunctionInfo data is truncated")
        size, name = struct.unpack_from(bo + "II", buf, offset)
        pos = offset + 8
        chunks: dict[int, tuple[int, int]] = {}
        while True:
            if pos + 8 > len(buf):
                raise GsymLookupError("FunctionInfo data is truncated")
            itype, ilen = struct.unpack_from(bo + "II", buf, pos)
            pos += 8
            if itype == INFO_END:
                break
            if pos + ilen > len(buf):
                raise GsymLookupError("FunctionInfo data is truncated")
            chunks.setdefault(itype, (pos, ilen))
            pos += ilen
        return size, name, chunks

    def function_size(self, index: int) -> int:
        off = int(self.info_offsets[index])
        if off + 4 > len(self._buf):
            raise GsymLookupError("FunctionInfo data is truncated")
        return struct.unpack_from(self.byte_order + "I", self._buf, off)[0]

    def line_rows(self, data_off: int, length: int, func_start: int) -> list[tuple[int, int, int]]:
        """Decode a LineTable chunk into (address, file index, line) rows."""
        return list(zip(*self._line_columns(data_off, length, func_start), strict=True))

    def _line_columns(
        self, data_off: int, length: int, func_start: int, upto: int = 1 << 64, errors: list | None = None
    ) -> tuple[list, list, list]:
        """A LineTable chunk as its rows' addresses, file indexes and lines; with ``upto``, only the rows
        up to that address (what a lookup there needs: LLVM's LineTable::lookup stops there too, so a
        corrupt tail beyond it is not an error for it). With ``errors``, a corrupt opcode stream ends the
        rows decoded so far instead of raising, and its error is appended: a batch decodes once for many
        addresses, and only those the rows do not reach past get the error (as each alone would)."""
        if errors is None:
            return self._line_columns_strict(data_off, length, func_start, upto)
        partial: tuple[list, list, list] = ([], [], [])
        try:
            return self._line_columns_strict(data_off, length, func_start, upto, partial)
        except GsymLookupError as exc:
            errors.append(exc)
            return partial

    def _line_columns_strict(
        self, data_off: int, length: int, func_start: int, upto: int, partial: tuple | None = None
    ) -> tuple[list, list, list]:
        """:meth:`_line_columns` raising on a corrupt stream; ``partial`` receives the rows as they are decoded."""
        return decode_line_table(self._buf, data_off, length, func_start, self.byte_order, upto, partial)

    def inline_tree(self, data_off: int, length: int, func_start: int) -> RawInlineNode | None:
        """The InlineInfo chunk at ``data_off`` as stored (None for an empty tree)."""
        return decode_inline_tree(self._buf, data_off, length, func_start, self.byte_order)

    # ------------------------------------------------------------------ lookups
    def find_index(self, address: int) -> int:
        """Index of the FunctionInfo covering ``address``; raises GsymLookupError as LLVM words it."""
        base = self.header.base_address
        if address < base or len(self.addr_offsets) == 0:
            raise GsymLookupError(f"address 0x{address:x} is not in GSYM")
        off = address - base
        i = int(np.searchsorted(self.addr_offsets, np.uint64(off), side="right")) - 1
        if i < 0:
            raise GsymLookupError(f"address 0x{address:x} is not in GSYM")
        value = self.addr_offsets[i]
        first = int(np.searchsorted(self.addr_offsets, value, side="left"))
        for j in range(first, i + 1):
            size = self.function_size(j)
            start = base + int(value)
            if size == 0 or start <= address < start + size:
                return j
        raise GsymLookupError(f"address 0x{address:x} is not in GSYM")

    def lookup(self, address: int) -> LookupResult:
        """Inline call stack at ``address`` (innermost first), or a result whose ``error`` says why not."""
        self._check_map()
        try:
            return LookupResult(address, self._lookup(address))
        except GsymLookupError as exc:
            return LookupResult(address, error=str(exc))

    def _check_map(self) -> None:
        """Without the compiled SIGBUS guard: zero-map the part of the map past a truncated file's end before
        reading (one fstat); with it, nothing to do."""
        mapped = self._mapped
        if mapped is not None and not mapped.guarded:
            mapped.check_before_read()

    def _sizes(self) -> list[int]:
        """Every FunctionInfo's size, gathered in one vectorized read (-1 where the offset is past the end)."""
        if getattr(self, "_size_list", None) is None:
            raw = np.frombuffer(self._buf, np.uint8)
            offs = self.info_offsets.astype(np.int64)
            ok = offs + 4 <= len(raw)
            gathered = raw[np.where(ok, offs, 0)[:, None] + np.arange(4)]
            sizes = gathered.copy().view(np.dtype(self.byte_order + "u4")).ravel().astype(np.int64)
            sizes[~ok] = -1
            self._size_list = sizes.tolist()
        return self._size_list

    def lookup_many(self, addresses: np.ndarray | list[int]) -> list[LookupResult]:
        """Batch lookup: the address-table search is vectorized, each FunctionInfo is decoded once (line rows,
        inline tree and its address segments), and each inline call chain is resolved once per segment."""
        self._check_map()
        with paused_gc():
            return self._lookup_many(addresses)

    def _lookup_many(self, addresses: np.ndarray | list[int]) -> list[LookupResult]:
        addrs = np.asarray(addresses, dtype=np.uint64)
        base = self.header.base_address
        below = addrs < np.uint64(base)
        offs = np.where(below, np.uint64(0), addrs - np.uint64(base))
        idx = np.searchsorted(self.addr_offsets, offs, side="right").astype(np.int64) - 1
        found_offs = self.addr_offsets[np.maximum(idx, 0)] if len(self.addr_offsets) else np.zeros_like(addrs)
        firsts = np.searchsorted(self.addr_offsets, found_offs, side="left")
        starts = (found_offs + np.uint64(base)).tolist() if len(self.addr_offsets) else [0] * len(addrs)
        sizes = self._sizes()
        # the highest address each group of entries (same start) is asked for: line tables are decoded
        # that far only, once per batch
        upto = np.zeros(len(self.addr_offsets) + 1, np.uint64)
        if len(addrs):
            np.maximum.at(upto, np.where(below | (idx < 0), len(self.addr_offsets), firsts), addrs)
        upto_list = upto.tolist()
        cache: dict[int, tuple] = {}
        results: list[LookupResult] = []
        append = results.append
        frames = self._frames
        for a, i, first, low, start in zip(addrs.tolist(), idx.tolist(), firsts.tolist(), below.tolist(), starts,
                                           strict=True):
            if low or i < 0:
                append(LookupResult(a, error=f"address 0x{a:x} is not in GSYM"))
                continue
            if first == i:  # one entry at this start address (the common case)
                size = sizes[i]
                found = i if size == 0 or (size > 0 and a < start + size) else -1
            else:
                found = _first_covering(sizes, first, i, a, start)
            if found < 0:
                message = "FunctionInfo data is truncated" if sizes[first] < 0 else f"address 0x{a:x} is not in GSYM"
                append(LookupResult(a, error=message))
                continue
            try:
                entry = cache.get(found)
                if entry is None:
                    entry = self._decoded(found, cache, upto_list[first], batch=True)
                append(LookupResult(a, frames(a, entry)))
            except GsymLookupError as exc:
                append(LookupResult(a, error=str(exc)))
        return results

    def _decoded(self, index: int, cache: dict[int, tuple] | None, upto: int = 1 << 64,
                 batch: bool = False) -> tuple:
        """One FunctionInfo ready for lookups: (start, name, row addresses, row file indexes, row (directory,
        base name) or None where the file does not resolve, row lines, inline root, inline segment bounds,
        chain cache, line table error, inline error). A single lookup (``batch`` False) raises the first
        error; a batch keeps the line table's and the inline tree's errors for :meth:`_frames` to raise for
        exactly the addresses a single lookup would raise them for."""
        if cache is not None:
            entry = cache.get(index)
            if entry is not None:
                return entry
        func_start = self.address(index)
        _size, name, chunks = self._function_chunks(int(self.info_offsets[index]))
        if name == 0:
            raise GsymLookupError(f"0x{int(self.info_offsets[index]):08x}: invalid FunctionInfo Name value 0x00000000")
        row_addrs = row_files = row_paths = row_lines = None
        line_errors: list[GsymLookupError] | None = [] if batch else None
        if INFO_LINE_TABLE in chunks:
            row_addrs, row_files, row_lines = self._line_columns(*chunks[INFO_LINE_TABLE], func_start, upto,
                                                                 line_errors)
            paths = {}
            for f in set(row_files):
                try:
                    paths[f] = self.file(f) if f else None
                except GsymLookupError:  # raised again by the lookups that land on such a row
                    paths[f] = None
            row_paths = list(map(paths.__getitem__, row_files))
        inline = inline_error = None
        if INFO_INLINE in chunks:
            try:
                inline = self.inline_tree(*chunks[INFO_INLINE], func_start)
            except GsymLookupError as exc:
                if not batch:
                    raise
                inline_error = exc
        bounds = None
        if inline is not None:
            edges: set[int] = set()
            stack = [inline]
            while stack:
                node = stack.pop()
                for lo, hi in node.ranges:
                    edges.add(lo)
                    edges.add(hi)
                stack.extend(node.children)
            bounds = sorted(edges)
        entry = (func_start, self.string(name), row_addrs, row_files, row_paths, row_lines, inline, bounds, {},
                 line_errors[0] if line_errors else None, inline_error)
        if cache is not None:
            cache[index] = entry
        return entry

    def _lookup(self, address: int, cache: dict[int, tuple] | None = None) -> list[SourceLocation]:
        return self._frames(address, self._decoded(self.find_index(address), cache, address))

    def _frames(self, address: int, entry: tuple) -> list[SourceLocation]:
        (func_start, name, row_addrs, row_files, row_paths, row_lines, inline, bounds, chains, line_error,
         inline_error) = entry
        if line_error is not None and not (row_addrs and row_addrs[-1] > address):
            raise line_error  # a single lookup's decoding would not have stopped before the corrupt opcode
        if inline_error is not None:
            raise inline_error
        offset = address - func_start
        if row_addrs is None:
            return [SourceLocation(name, offset)]
        k = bisect.bisect_right(row_addrs, address) - 1
        if k < 0 or row_files[k] == 0:
            raise GsymLookupError(f"address 0x{address:x} is not in the line table")
        path = row_paths[k]
        directory, base = path if path is not None else self.file(row_files[k])
        line = row_lines[k]
        if inline is None:
            return [SourceLocation(name, offset, directory, base, line)]
        # the inline call chain is the same for every address between two consecutive range edges
        segment = bisect.bisect_right(bounds, address)
        chain = chains.get(segment)
        if chain is None:
            chain = chains[segment] = self._inline_chain(inline, address)
        locations = []
        for node_name, node_start, call_dir, call_base, call_line in chain:
            locations.append(SourceLocation(node_name, address - node_start, directory, base, line))
            directory, base, line = call_dir, call_base, call_line
        locations.append(SourceLocation(name, offset, directory, base, line))
        return locations

    def _inline_chain(self, root: RawInlineNode, address: int) -> tuple:
        """The inline nodes that contribute a frame at ``address``, innermost first, as (name, first range
        start, call directory, call base name, call line): LLVM's rule, a node whose ranges contain the
        address, its first child that does, and so on; a node counts when its call file is set."""
        path = []
        node = root
        while True:
            for lo, hi in node.ranges:
                if lo <= address < hi:
                    break
            else:
                break
            path.append(node)
            for child in node.children:
                if any(lo <= address < hi for lo, hi in child.ranges):
                    node = child
                    break
            else:
                break
        chain = []
        for node in reversed(path):
            if node.call_file != 0:
                directory, base = self.file(node.call_file)
                if directory or base:
                    chain.append((self.string(node.name), node.ranges[0][0], directory, base, node.call_line))
        return tuple(chain)


def _first_covering(sizes: list[int], first: int, last: int, address: int, start: int) -> int:
    """Among the entries first..last that share one start address, the first that covers ``address`` (a
    zero size covers everything up to the next entry); -1 for none or at an unreadable size."""
    for j in range(first, last + 1):
        size = sizes[j]
        if size < 0:
            return -1
        if size == 0 or address < start + size:
            return j
    return -1


def format_lookup(result: LookupResult) -> str:
    """One result exactly as ``llvm-gsymutil --address`` prints it (with the trailing newline)."""
    head = f"0x{result.address:016x}: "
    if result.error is not None:
        return f"{head}error: {result.error}\n"
    parts = []
    last = len(result.locations) - 1
    for i, loc in enumerate(result.locations):
        text = loc.name
        if loc.offset > 0:
            text += f" + {loc.offset}"
        if loc.directory or loc.base:
            text += f" @ {join_path(loc.directory, loc.base or '<invalid-file>')}:{loc.line}"
        if i != last:
            text += " [inlined]"
        parts.append(text)
    return head + ("\n" + " " * 20).join(parts) + "\n"


def open_gsym(path: str | Path) -> GsymReader:
    return GsymReader(path)


def function_infos(reader: GsymReader) -> list:
    """Decode every FunctionInfo into the table-free model (what the writer takes)."""
    from fxscope.formats.gsym.model import FunctionInfo, InlineNode, LineRow, SourceFile

    def source(index: int) -> SourceFile | None:
        if index == 0:
            return None
        directory, base = reader.file(index)
        return SourceFile(directory, base)

    def node(n: RawInlineNode) -> InlineNode:
        return InlineNode(
            reader.string(n.name), list(n.ranges), source(n.call_file), n.call_line, [node(c) for c in n.children]
        )

    out = []
    for i in range(len(reader)):
        start = reader.address(i)
        size, name, chunks = reader._function_chunks(int(reader.info_offsets[i]))
        lines = None
        if INFO_LINE_TABLE in chunks:
            lines = [
                LineRow(addr, source(f) or SourceFile("", ""), line)
                for addr, f, line in reader.line_rows(*chunks[INFO_LINE_TABLE], start)
            ]
        inline = None
        if INFO_INLINE in chunks:
            tree = reader.inline_tree(*chunks[INFO_INLINE], start)
            inline = node(tree) if tree is not None else None
        out.append(FunctionInfo(start, size, reader.string(name), lines, inline))
    return out
