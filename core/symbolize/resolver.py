"""What the markup filter asks of symbols: frames for a code address, a name for a data address.

A resolver answers for a module (named by its build ID) and a module-relative address, behind the
:class:`Resolver` protocol: the filter does not care where the answer comes from. :class:`SymbolFileResolver`
is the one implementation; it finds a module's symbol files (given, in debug directories, through a
:class:`~fxscope.core.symbols.store.SymbolStore`) and answers code lookups from a symbfile, else a GSYM file
(given, cached, or converted from the ELF on first use) with columns from the ELF's DWARF (kept in the symbol
cache beside the GSYM, so a later run does not decode the DWARF again), and data lookups
(and frames DWARF does not cover) from the ELF's symbol table.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from fxscope.formats.elf.reader import ElfInfo, read_elf
from fxscope.formats.elf.symtab import SymbolTable, read_symbol_table
from fxscope.formats.errors import FormatError

if TYPE_CHECKING:
    from fxscope.core.symbols.column_cache import ColumnTable
    from fxscope.formats.dwarf.model import DwarfModel
    from fxscope.formats.gsym.model import SourceFile


@dataclass(frozen=True)
class Frame:
    """One (possibly inlined) frame; ``file == ""`` means no line information."""

    function: str
    file: str = ""
    line: int = 0
    column: int = 0


class ResolveError(Exception):
    """The module cannot be symbolized at all (e.g. its binary was not found); worded like LLVM."""


class Resolver(Protocol):
    def code(self, build_id: bytes, address: int) -> list[Frame]:
        """Inline stack at ``address``, innermost first; ``[]`` when nothing is known there."""

    def data(self, build_id: bytes, address: int) -> str | None:
        """Name of the data object containing ``address``, or ``None``."""


class SymbolFileResolver:
    """Code and data lookups from a module's symbol files, found by build ID: a ranges symbfile, else a GSYM
    file (its UUID is the build ID; converted from the ELF's DWARF and symbol table when there is none), and
    the ELF itself for what GSYM lacks: columns from DWARF (GSYM stores none; with a GSYM file alone frames
    print column 0, as llvm-symbolizer prints them from DWARF), the line row and symbol-table name where
    DWARF has no function, and data symbols. A module's DWARF is decoded once, for conversion and columns.
    """

    def __init__(
        self,
        gsym_paths: list[Path] | None = None,
        elf_paths: list[Path] | None = None,
        debug_file_directories: list[Path] | None = None,
        store=None,
        symbfile_paths: list[Path] | None = None,
    ) -> None:
        """``store`` (a :class:`fxscope.core.symbols.store.SymbolStore`) adds directories, debuginfod and the cache.
        ``symbfile_paths``: ranges symbfiles named ``BUILDID.ranges.symbfile`` (see :func:`symbfile_build_id`;
        a symbfile does not record its build ID), consulted before GSYM for their modules."""
        self._store = store
        self._symbfile_paths: dict[bytes, Path] = {}
        for path in symbfile_paths or []:
            self._symbfile_paths.setdefault(symbfile_build_id(path), Path(path))
        self._symbfiles: dict[bytes, object] = {}
        from fxscope.formats.gsym.reader import GsymReader

        self._debug_dirs = list(debug_file_directories or [])

        self._gsyms: dict[bytes, GsymReader] = {}
        for path in gsym_paths or []:
            reader = GsymReader(path)
            self._gsyms.setdefault(reader.uuid, reader)
        self._elf_paths: dict[bytes, Path] = {}
        for path in elf_paths or []:
            try:
                build_id = read_elf(path).build_id
            except FormatError:
                continue
            if build_id:
                self._elf_paths.setdefault(build_id, path)
        self._elf_info: dict[bytes, ElfInfo] = {}
        self._symbol_tables: dict[bytes, SymbolTable | FormatError] = {}
        #: DWARF models by ELF path (a FormatError where the file's DWARF is unreadable)
        self._dwarf: dict[Path, DwarfModel | FormatError] = {}
        #: cached column tables by build ID (None: not in the cache, columns come from the DWARF)
        self._column_tables: dict[bytes, ColumnTable | None] = {}

    @property
    def store(self):
        """The :class:`fxscope.core.symbols.store.SymbolStore` behind this resolver, or None."""
        return self._store

    def known(self, build_id: bytes) -> bool:
        """Are there symbols for the module: a symbfile, a GSYM file (given, or the store's, the cache's
        included) or an ELF file."""
        if build_id in self._symbfile_paths or build_id in self._gsyms or self._elf_path(build_id) is not None:
            return True
        if self._store is None:
            return False
        try:
            return self._store.find_gsym(build_id, convert=False) is not None
        except FormatError:
            return False

    def elf_info(self, build_id: bytes) -> ElfInfo | None:
        """The module's ELF file (binary or debug file) as read, or None when there is none (the crash
        view disassembles from it)."""
        path = self._elf_path(build_id)
        if path is None:
            return None
        info = self._elf_info.get(build_id)
        if info is None:
            try:
                info = self._elf_info[build_id] = read_elf(path)
            except FormatError:
                return None
        return info

    def _symbfile_code(self, build_id: bytes, address: int) -> list[Frame]:
        table = self._symbfiles.get(build_id)
        if table is None:
            from fxscope.formats.symbfile.table import read_range_table

            path = self._symbfile_paths[build_id]
            try:
                table = read_range_table(path.read_bytes(), str(path))
            except (OSError, FormatError) as exc:
                raise ResolveError(str(exc)) from None
            self._symbfiles[build_id] = table
        return [Frame(func, file or "", line or 0) for func, file, line in table.lookup(address)]

    def _elf_path(self, build_id: bytes) -> Path | None:
        """An ELF given by the user, or ``DIR/.build-id/xx/rest.debug`` under a debug file directory."""
        path = self._elf_paths.get(build_id)
        if path is None and self._store is not None:
            path = self._store.find_elf(build_id)
            if path is not None:
                self._elf_paths[build_id] = path
        if path is None and len(build_id) >= 2:
            hex_id = build_id.hex()
            for directory in self._debug_dirs:
                candidate = Path(directory) / ".build-id" / hex_id[:2] / f"{hex_id[2:]}.debug"
                if candidate.is_file():
                    path = self._elf_paths[build_id] = candidate
                    break
        return path

    def code(self, build_id: bytes, address: int) -> list[Frame]:
        if build_id in self._symbfile_paths:
            return self._symbfile_code(build_id, address)
        reader = self._gsyms.get(build_id)
        if reader is None and self._store is not None:
            try:  # a conversion here reads the DWARF through this resolver: it is kept for the columns
                cached = self._store.find_gsym(build_id, dwarf=self._dwarf_at)
            except FormatError as exc:
                raise ResolveError(str(exc)) from None
            if cached is not None:
                from fxscope.formats.gsym.reader import GsymReader

                reader = self._gsyms[build_id] = GsymReader(cached)
        if reader is None:
            elf = self._elf_path(build_id)
            if elf is None:
                raise ResolveError("could not find build ID")
            reader = self._convert(build_id, elf)
            if reader is None:
                return []
        reader = self._unchanged_gsym(build_id, reader)
        result = reader.lookup(address)
        if not result.ok:
            return self._symbol_table_code(build_id, address)
        locations = result.locations
        if len(locations) == 1 and not locations[0].path:
            # a symbol-table function (no DWARF function there): LLVM still reads the line table, else
            # prints the STT_FILE name of a local symbol
            return self._symbol_table_code(build_id, address, locations[0].name)
        columns = self._columns(build_id, address, len(locations))
        frames = [Frame(loc.name, loc.path, loc.line, col) for loc, col in zip(locations, columns, strict=True)]
        return self._symbol_table_name(build_id, address, frames)

    def _unchanged_gsym(self, build_id: bytes, reader):
        """``reader``, or the same path opened again when its file changed on disk since it was opened (a
        GSYM file rebuilt in place while the window shows a crash report): lookups then read the new file.
        A file that is gone, unreadable or another module's now gives a ResolveError that says so."""
        change = reader.change()
        if change is None:
            return reader
        from fxscope.formats.gsym.reader import GsymReader

        try:
            fresh = GsymReader(reader.path)
        except (OSError, FormatError) as exc:
            raise ResolveError(f"{change.message()}; opening it again failed: {exc}") from None
        if fresh.uuid != reader.uuid:
            fresh.close()
            raise ResolveError(f"{change.message()}; it now holds another module's symbols (UUID {fresh.uuid.hex()})")
        reader.close()
        self._gsyms[build_id] = fresh
        return fresh

    def _symbol_table_name(self, build_id: bytes, address: int, frames: list[Frame]) -> list[Frame]:
        """LLVM names the outermost frame after the symbol table when a symbol contains the address (the
        linkage name: ``_ZL8on_crashiP9siginfo_tPv`` where DWARF says ``on_crash``); needs the module's ELF."""
        if self._elf_path(build_id) is None:
            return frames
        table = self._symbol_table(build_id)
        found = table.lookup(address) if table is not None else None
        if found is None or found[0] == frames[-1].function:
            return frames
        outer = frames[-1]
        frames[-1] = Frame(found[0], outer.file or found[1], outer.line, outer.column)
        return frames

    def _symbol_table_code(self, build_id: bytes, address: int, name: str | None = None) -> list[Frame]:
        """The frame llvm-symbolizer makes where DWARF has no function: the line row in force (if the line
        table covers the address) named after the symbol containing the address (``.symtab``, or ``.dynsym``
        in a stripped library): ``__libc_start_main <invalid>:0:0``, ``<invalid> guard.S:21:0``; ``[]``
        (the raw frame) when neither knows the address. ``name``: the GSYM's symbol-table function."""
        if self._elf_path(build_id) is None:
            return [] if name is None else [Frame(name)]
        table = self._symbol_table(build_id)
        found = table.lookup(address) if table is not None else None
        row = self._row_at(build_id, address)
        if found is None and row is None:
            return [] if name is None else [Frame(name)]
        function = found[0] if found is not None else name or "<invalid>"
        if row is not None:
            from fxscope.formats.gsym.reader import join_path

            file, line, column = row
            return [Frame(function, join_path(file.directory, file.base), line, column)]
        return [Frame(function, found[1] if found is not None else "")]

    def _row_at(self, build_id: bytes, address: int) -> tuple[SourceFile, int, int] | None:
        """The line row in force at ``address`` (file, line, column): from the symbol cache's columns file,
        else the DWARF. The module's ELF must be at hand (the caller checks)."""
        table = self._column_table(build_id)
        if table is not None:
            return table.row_at(address)
        model = self._dwarf_model(build_id)
        return model.row_at(address) if model else None

    def _symbol_table(self, build_id: bytes) -> SymbolTable | None:
        """The module's symbol list as llvm-symbolizer reads it (read once); None when the file is unreadable
        (:meth:`data` reports why)."""
        table = self._symbol_tables.get(build_id)
        if table is None:
            try:
                table = self._symbol_tables[build_id] = read_symbol_table(self._elf_path(build_id))
            except FormatError as exc:
                table = self._symbol_tables[build_id] = exc
        return None if isinstance(table, FormatError) else table

    def _dwarf_model(self, build_id: bytes) -> DwarfModel | None:
        """The module's DWARF model (read once), or None when its ELF is not at hand or has no readable DWARF."""
        elf = self._elf_path(build_id)
        return None if elf is None else self._dwarf_at(elf)

    def _dwarf_at(self, elf: Path) -> DwarfModel | None:
        """The DWARF model of the ELF file at ``elf``, decoded on first use (None when unreadable)."""
        model = self._dwarf.get(Path(elf))
        if model is None:
            from fxscope.formats.dwarf.functions import read_dwarf

            try:
                model = read_dwarf(elf)
            except FormatError as exc:
                model = exc
            self._dwarf[Path(elf)] = model
        return None if isinstance(model, FormatError) else model

    def _columns(self, build_id: bytes, address: int, count: int) -> list[int]:
        """Columns for a GSYM inline stack, from the module's DWARF when its ELF is at hand (else 0s): as the
        symbol cache keeps them, else decoded.

        GSYM stores no columns; llvm-symbolizer prints the line row's column for the innermost frame and
        DW_AT_call_column of each inlined call for the frames around it.
        """
        zeros = [0] * count
        if self._elf_path(build_id) is None:
            return zeros
        table = self._column_table(build_id)
        if table is not None:
            return table.columns(address, count)
        model = self._dwarf_model(build_id)
        return model.frame_columns(address, count) if model else zeros

    def _column_table(self, build_id: bytes) -> ColumnTable | None:
        """The module's columns as the symbol cache keeps them (read once); a cache without them (or with a
        damaged file) gets them from the DWARF, decoded here anyway, for the next run. None without a store
        or when the DWARF is unreadable or cannot be stored exactly: :meth:`_columns` reads the DWARF."""
        if build_id in self._column_tables:
            return self._column_tables[build_id]
        table = None
        if self._store is not None:
            from fxscope.core.symbols.column_cache import load_columns, save_columns

            path = self._store.columns_path(build_id)
            table = load_columns(path, build_id)
            if table is None:
                model = self._dwarf_model(build_id)
                if model is not None:
                    save_columns(path, model, build_id)
        self._column_tables[build_id] = table
        return table

    def _convert(self, build_id: bytes, elf: Path):
        """GSYM for an ELF found by build ID, converted once from its DWARF and symbol table."""
        from fxscope.core.symbols.gsym_convert import build_gsym
        from fxscope.formats.gsym.reader import GsymReader

        try:  # with unreadable DWARF, build_gsym reads it again to raise its error (the ELF's, if that comes first)
            data, _report = build_gsym(elf, self._dwarf_at(elf))
        except FormatError as exc:
            raise ResolveError(str(exc)) from None
        reader = self._gsyms[build_id] = GsymReader.from_bytes(data, path=str(elf))
        return reader

    def data(self, build_id: bytes, address: int) -> str | None:
        path = self._elf_path(build_id)
        if path is None:
            if build_id in self._gsyms or build_id in self._symbfile_paths:
                return None
            raise ResolveError("could not find build ID")
        table = self._symbol_table(build_id)
        if table is None:
            raise ResolveError(str(self._symbol_tables[build_id]))
        found = table.lookup(address)
        return None if found is None else found[0]



def symbfile_build_id(path: Path | str) -> bytes:
    """The build ID in a symbfile's name, ``BUILDID.ranges.symbfile`` or ``BUILDID.symbfile`` (hex).

    Symbfiles are keyed by the service's FileID, not the build ID, so a file given to the symbolizer has
    to say which module it describes; the name is where ``fxscope symbfile create`` users put it."""
    name = Path(path).name
    for suffix in (".ranges.symbfile", ".symbfile"):
        if name.endswith(suffix):
            stem = name[: -len(suffix)]
            try:
                if stem and len(stem) % 2 == 0:
                    return bytes.fromhex(stem)
            except ValueError:
                pass
    raise ResolveError(f"{path}: cannot tell which module this symbfile describes: name it BUILDID.ranges.symbfile")
