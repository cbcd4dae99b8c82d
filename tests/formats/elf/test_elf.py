"""The ELF layer on the real testdata binaries, against what readelf reports, and on broken files."""

from __future__ import annotations

import contextlib
import shutil
import subprocess
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from fxscope.core.symbols.store import SymbolStore
from fxscope.formats.elf.reader import read_elf
from fxscope.formats.errors import FormatError

BINARIES = ["gsym/crashdemo/binary", "gsym/libdemo/binary", "gsym/tiny/binary", "symbfile/inline-no-tco"]


@pytest.mark.parametrize("rel", BINARIES)
def test_build_id_and_segments_match_readelf(testdata: Path, rel: str) -> None:
    readelf = shutil.which("readelf")
    if readelf is None:
        pytest.skip("readelf is not installed (apt-get install binutils)")
    path = testdata / rel
    info = read_elf(path)
    notes = subprocess.run([readelf, "-n", str(path)], capture_output=True, text=True).stdout
    assert f"Build ID: {info.build_id.hex()}" in notes
    headers = subprocess.run([readelf, "-lW", str(path)], capture_output=True, text=True).stdout
    loads = [line.split() for line in headers.splitlines() if line.strip().startswith("LOAD")]
    assert [s.vaddr for s in info.load_segments] == [int(parts[2], 16) for parts in loads]
    assert info.has_dwarf


def test_symbols_and_data_lookup(testdata: Path) -> None:
    info = read_elf(testdata / "gsym" / "crashdemo" / "binary")
    assert ("main" in {name for _a, _s, name in info.functions})
    address = next(a for a, _s, n in info.symbols if n == "g_pipeline_state")
    assert info.symbol_at(address) == "g_pipeline_state"
    assert info.symbol_at(address + 1) == "g_pipeline_state"
    assert info.base_address == 0


def test_debuglink_and_separate_debug_file(testdata: Path, tmp_path: Path) -> None:
    objcopy = shutil.which("objcopy")
    if objcopy is None:
        pytest.skip("objcopy is not installed (apt-get install binutils)")
    src = testdata / "gsym" / "tiny" / "binary"
    debug = tmp_path / "tiny.debug"
    stripped = tmp_path / "tiny"
    subprocess.run([objcopy, "--only-keep-debug", str(src), str(debug)], check=True)
    subprocess.run([objcopy, "--strip-debug", f"--add-gnu-debuglink={debug}", str(src), str(stripped)], check=True)
    info = read_elf(stripped)
    assert not info.has_dwarf and info.debuglink is not None and info.debuglink[0] == "tiny.debug"
    assert SymbolStore([], debuginfod_urls=[], cache_dir=tmp_path).find_debug_file(stripped) == debug
    debug.write_bytes(debug.read_bytes() + b"x")  # wrong CRC: not the right file
    assert SymbolStore([], debuginfod_urls=[], cache_dir=tmp_path).find_debug_file(stripped) is None


def test_not_elf_and_truncated(tmp_path: Path, testdata: Path) -> None:
    text = tmp_path / "a.txt"
    text.write_text("hello")
    with pytest.raises(FormatError):
        read_elf(text)
    data = (testdata / "gsym" / "tiny" / "binary").read_bytes()
    for cut in (0, 10, 63, 64, 500, 4000, len(data) - 100):
        p = tmp_path / f"t{cut}"
        p.write_bytes(data[:cut])
        try:
            read_elf(p)
        except FormatError as exc:
            assert str(p) in str(exc)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data())
def test_fuzz_header_mutations(testdata: Path, tmp_path_factory, data: st.DataObject) -> None:
    blob = bytearray((testdata / "gsym" / "tiny" / "binary").read_bytes())
    for _ in range(data.draw(st.integers(1, 6))):
        pos = data.draw(st.integers(0, 255))  # ELF and program headers: where parsers trip
        blob[pos] = data.draw(st.integers(0, 255))
    path = tmp_path_factory.mktemp("elf") / "mutant"
    path.write_bytes(bytes(blob))
    with contextlib.suppress(FormatError):
        read_elf(path)


def _section_header(path: Path, name: str) -> tuple[int, int]:
    """(file offset of the section's header, file offset of its bytes) in a 64-bit little-endian ELF."""
    from elftools.elf.elffile import ELFFile

    with open(path, "rb") as fh:
        elf = ELFFile(fh)
        index = next(i for i, s in enumerate(elf.iter_sections()) if s.name == name)
        return elf["e_shoff"] + index * elf["e_shentsize"], elf.get_section(index)["sh_offset"]


def _patched(path: Path, out: Path, at: int, value: bytes) -> Path:
    data = bytearray(path.read_bytes())
    data[at : at + len(value)] = value
    out.write_bytes(bytes(data))
    return out


def test_build_id_note_with_another_owner_is_no_build_id(testdata: Path, tmp_path: Path) -> None:
    """Issue 13 finding 2: a note of type 3 whose owner is not "GNU" left pyelftools' descriptor as bytes and
    read_elf failed with TypeError (fromhex); it is simply not a GNU build ID."""
    binary = testdata / "gsym" / "libdemo" / "binary"
    _, note_at = _section_header(binary, ".note.gnu.build-id")
    assert binary.read_bytes()[note_at + 12 : note_at + 16] == b"GNU\0"
    info = read_elf(_patched(binary, tmp_path / "b", note_at + 12, b"GNV"))
    assert info.build_id == b""
    assert info.functions == read_elf(binary).functions


def test_build_id_note_running_past_its_section_is_a_format_error(testdata: Path, tmp_path: Path) -> None:
    """Issue 13 finding 2: a note descriptor size past the section raised ArrayError or MemoryError (pyelftools
    reads the claimed size); now a FormatError with the note's file offset."""
    binary = testdata / "gsym" / "libdemo" / "binary"
    _, note_at = _section_header(binary, ".note.gnu.build-id")
    path = _patched(binary, tmp_path / "b", note_at + 4, (0xFFFFFFF0).to_bytes(4, "little"))
    with pytest.raises(FormatError, match=rf"offset 0x{note_at:x}: note at section offset 0x0 .* runs past"):
        read_elf(path)


@pytest.mark.parametrize("name", [".symtab", ".debug_info", ".sframe"])
def test_section_claiming_more_than_the_file_is_a_format_error(testdata: Path, tmp_path: Path, name: str) -> None:
    """Issue 13 finding 2: a section header claiming a huge size made pyelftools allocate it (MemoryError in
    gsym convert and sframe dump); sizes and offsets are checked against the file first, naming the section."""
    from fxscope.core.symbols.gsym_convert import build_gsym
    from fxscope.formats.dwarf.functions import read_dwarf
    from fxscope.formats.sframe.section import find_sframe_section

    binary = testdata / "sframe" / "libdemo" / "binary"
    header_at, data_at = _section_header(binary, name)
    path = _patched(binary, tmp_path / "b", header_at + 32, (1 << 40).to_bytes(8, "little"))  # sh_size
    message = rf"offset 0x{data_at:x}: section \[\d+\] .* claims 0x10000000000 bytes .* past the end of the file"
    readers = [read_elf, build_gsym, find_sframe_section] + ([read_dwarf] if name.startswith(".debug") else [])
    for read in readers:
        with pytest.raises(FormatError, match=message):
            read(path)


def test_compressed_section_claiming_a_bomb_is_a_format_error(testdata: Path, tmp_path: Path) -> None:
    """A compressed .debug_str whose zlib stream inflates 1000x (64 MiB of zeros from 64 KiB) was inflated
    whole by pyelftools; a claim above 64x the compressed size is refused before reading, naming the section."""
    import struct
    import zlib

    from fxscope.formats.dwarf.functions import read_dwarf

    binary = testdata / "gsym" / "libdemo" / "binary"
    header_at, _ = _section_header(binary, ".debug_str")
    data = bytearray(binary.read_bytes())
    payload = struct.pack("<IIQQ", 1, 0, 64 << 20, 1) + zlib.compress(bytes(64 << 20), 9)
    at = len(data)
    data += payload
    flags = int.from_bytes(data[header_at + 8 : header_at + 16], "little") | 0x800  # SHF_COMPRESSED
    data[header_at + 8 : header_at + 16] = flags.to_bytes(8, "little")
    data[header_at + 24 : header_at + 40] = struct.pack("<QQ", at, len(payload))  # sh_offset, sh_size
    path = tmp_path / "bomb"
    path.write_bytes(bytes(data))
    for read in (read_elf, read_dwarf):
        with pytest.raises(FormatError, match=rf"offset 0x{at:x}: compressed section \[\d+\] claims 0x4000000 "
                                              r"bytes .*decompression bomb"):
            read(path)


def test_dwarf_error_names_the_compile_unit(testdata: Path, tmp_path: Path) -> None:
    """A corrupt unit length in .debug_info: the error says which compile unit pyelftools could not read (it
    named only the file)."""
    from fxscope.formats.dwarf.functions import read_dwarf

    binary = testdata / "gsym" / "tiny" / "binary"
    _, info_at = _section_header(binary, ".debug_info")
    path = _patched(binary, tmp_path / "b", info_at, b"\xff")
    with pytest.raises(FormatError, match=r"cannot read DWARF: the compile unit at \.debug_info offset 0x0: "):
        read_dwarf(path)


def _decompressed(testdata: Path, tmp_path: Path, name: str) -> Path:
    import lzma

    out = tmp_path / name.removesuffix(".xz")
    out.write_bytes(lzma.decompress((testdata / "markup" / "cpython-crash" / name).read_bytes()))
    return out


def test_build_id_ignores_systemtap_notes(testdata: Path, tmp_path: Path) -> None:
    """Debian's libpython carries SystemTap probe notes (name "stapsdt") with type 3, NT_GNU_BUILD_ID's
    number: only the note named GNU is the build ID (this file was an internal error)."""
    info = read_elf(_decompressed(testdata, tmp_path, "libpython3.11.so.1.0.xz"))
    assert info.build_id.hex() == "9c43ffefa67ac31d2070c69c46db6d8ced25b942"


def test_stripped_library_symbols_come_from_dynsym(testdata: Path, tmp_path: Path) -> None:
    """No .symtab: llvm-symbolizer's symbol list is .dynsym's, one per address (aliases: the last in table
    order among equal sizes, as LLVM's stable sort keeps them)."""
    info = read_elf(_decompressed(testdata, tmp_path, "libc.so.6.xz"))
    assert ".symtab" not in info.section_names
    assert info.symbol_lookup(0x27304) == ("__libc_start_main", "")
    assert info.symbol_at(0x3bfb1) == "raise"  # gsignal is the alias at the same address and size
    assert info.symbol_at(0x3c04f) is None  # __restore_rt is local: not in .dynsym
    starts = [a for a, _s, _n in info.symbols]
    assert starts == sorted(set(starts))


def test_local_symbols_carry_their_stt_file(testdata: Path) -> None:
    """A local symbol's STT_FILE name is what LLVM prints as the file of a frame without line info."""
    info = read_elf(testdata / "markup" / "cpython-crash" / "pycrash")
    files = dict(zip((n for _a, _s, n in info.symbols), info.symbol_files, strict=True))
    assert files["_ZL8on_crashiP9siginfo_tPv"] == "pycrash.cc"
    assert files["main"] == ""
