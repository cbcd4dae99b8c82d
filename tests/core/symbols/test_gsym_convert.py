"""DWARF -> GSYM conversion against llvm-gsymutil 19 on the testdata binaries (and on a gcc build)."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest

from fxscope.core.symbols.gsym_convert import build_gsym, convert_elf_to_gsym
from fxscope.formats.errors import FormatError
from fxscope.formats.gsym.reader import GsymReader, format_lookup

CASES = ["tiny", "crashdemo", "libdemo", "textstats", "textstats-dwarf4"]


def _addresses(case_dir: Path) -> list[int]:
    return [int(w, 16) for w in (case_dir / "addresses.txt").read_text().split()]


@pytest.mark.parametrize("case", CASES)
def test_converted_file_answers_like_llvm19(testdata: Path, tmp_path: Path, case: str) -> None:
    case_dir = testdata / "gsym" / case
    out = tmp_path / "ours.gsym"
    report = convert_elf_to_gsym(case_dir / "binary", out)
    with GsymReader(out) as reader:
        got = "".join(format_lookup(r) for r in reader.lookup_many(_addresses(case_dir)))
        assert reader.uuid == GsymReader(case_dir / "binary.gsym").uuid  # the GNU build ID
    assert got == (case_dir / "lookup.llvm19.txt").read_text().split("\n", 1)[1]
    total = re.search(r"ended with (\d+) total", (case_dir / "convert.llvm19.txt").read_text())
    assert total and report.total == int(total.group(1))


def test_llvm_gsymutil_reads_our_conversion(testdata: Path, tmp_path: Path) -> None:
    exe = shutil.which("llvm-gsymutil-19")
    if exe is None:
        pytest.skip("llvm-gsymutil-19 is not installed (apt-get install llvm-19)")
    case_dir = testdata / "gsym" / "textstats"
    out = tmp_path / "ours.gsym"
    convert_elf_to_gsym(case_dir / "binary", out)
    result = subprocess.run([exe, *(f"--address=0x{a:x}" for a in _addresses(case_dir)), str(out)],
                            capture_output=True, text=True, timeout=60)
    assert result.stdout.split("\n", 1)[1] == (case_dir / "lookup.llvm19.txt").read_text().split("\n", 1)[1]


def test_gcc_build_with_inlining_matches_llvm_gsymutil(tmp_path: Path) -> None:
    """A program compiled here (gcc -O2 -g, inlined helpers) converted by us and by LLVM 19: same lookups."""
    gcc, exe = shutil.which("gcc"), shutil.which("llvm-gsymutil-19")
    if gcc is None or exe is None:
        pytest.skip("needs gcc and llvm-gsymutil-19 (apt-get install gcc llvm-19)")
    src = tmp_path / "prog.c"
    src.write_text(
        "static inline int sq(int x) { return x * x; }\n"
        "static inline int f2(int x) { return sq(x) + 1; }\n"
        "__attribute__((noinline)) int work(int x) { return f2(x) * 3; }\n"
        "int main(int argc, char **argv) { (void)argv; return work(argc); }\n"
    )
    binary = tmp_path / "prog"
    subprocess.run([gcc, "-O2", "-g", str(src), "-o", str(binary)], check=True)
    ours, theirs = tmp_path / "ours.gsym", tmp_path / "theirs.gsym"
    convert_elf_to_gsym(binary, ours)
    subprocess.run([exe, f"--convert={binary}", f"--out-file={theirs}"], check=True, capture_output=True)
    reference = GsymReader(theirs)
    addresses = [reference.address(i) + k for i in range(len(reference)) for k in range(0, 40, 3)]
    with GsymReader(ours) as reader:
        assert [format_lookup(r) for r in reader.lookup_many(addresses)] == [
            format_lookup(r) for r in reference.lookup_many(addresses)
        ]


def test_bad_input_is_a_format_error(tmp_path: Path, testdata: Path) -> None:
    text = tmp_path / "notes.txt"
    text.write_text("not an ELF file")
    with pytest.raises(FormatError):
        build_gsym(text)
    data = (testdata / "gsym" / "tiny" / "binary").read_bytes()
    for cut in (16, 64, 1000, len(data) // 2):
        truncated = tmp_path / f"cut{cut}"
        truncated.write_bytes(data[:cut])
        try:
            build_gsym(truncated)
        except FormatError as exc:
            assert str(truncated) in str(exc)


@pytest.mark.slow
def test_large_dwarf5_library_matches_llvm_gsymutil(tmp_path: Path) -> None:
    """The Python runtime's own libpython (DWARF 5, -O3, thousands of functions) when it has debug info.

    Compared with llvm-gsymutil 19's conversion of the same file (llvm-symbolizer differs from GSYM on
    .cold parts and folded functions by design, so GSYM-to-GSYM is the meaningful check) on 1000 addresses
    sampled inside its functions.
    """
    import random
    import sysconfig

    exe = shutil.which("llvm-gsymutil-19")
    libdir = sysconfig.get_config_var("LIBDIR") or ""
    name = sysconfig.get_config_var("INSTSONAME") or ""
    lib = Path(libdir) / name
    if exe is None:
        pytest.skip("llvm-gsymutil-19 is not installed (apt-get install llvm-19)")
    if not name or not lib.is_file():
        pytest.skip(f"no shared libpython at {lib} on this machine")
    if b".debug_info" not in lib.read_bytes()[-200_000:] and b".debug_info" not in lib.read_bytes():
        pytest.skip(f"{lib} has no DWARF")
    ours, theirs = tmp_path / "ours.gsym", tmp_path / "theirs.gsym"
    convert_elf_to_gsym(lib, ours)
    subprocess.run([exe, f"--convert={lib}", f"--out-file={theirs}"], check=True, capture_output=True)
    reference = GsymReader(theirs)
    rng = random.Random(7)
    picks = rng.sample(range(len(reference)), min(1000, len(reference)))
    addresses = [reference.address(i) + rng.randrange(0, 48) for i in picks]
    with GsymReader(ours) as reader:
        got = [format_lookup(r) for r in reader.lookup_many(addresses)]
    assert got == [format_lookup(r) for r in reference.lookup_many(addresses)]


def _mutated(testdata: Path, tmp_path: Path, case: str, changes: dict[int, int]) -> Path:
    data = bytearray((testdata / "gsym" / case / "binary").read_bytes())
    for offset, value in changes.items():
        data[offset] = value
    path = tmp_path / "mutated"
    path.write_bytes(bytes(data))
    return path


def test_line_program_with_a_negative_line_converts_with_a_warning(testdata: Path, tmp_path: Path,
                                                                   hang_guard) -> None:
    """Issue 13 finding 1: one byte of .debug_line (0x7a -> 0xfa at 0x6621) turns an advance_line negative;
    the conversion looped forever in the ULEB encoder. Now the sequence is dropped with a warning naming the
    compile unit, and every other function still answers as before."""
    path = _mutated(testdata, tmp_path, "textstats-dwarf4", {0x6621: 0xFA})
    report = convert_elf_to_gsym(path, tmp_path / "out.gsym")
    assert any("line -4853: sequence ignored" in w and "compile unit at 0x" in w for w in report.warnings)
    good = tmp_path / "good.gsym"
    convert_elf_to_gsym(testdata / "gsym" / "textstats-dwarf4" / "binary", good)
    with GsymReader(tmp_path / "out.gsym") as ours, GsymReader(good) as ref:
        assert ours.uuid == ref.uuid
        addresses = _addresses(testdata / "gsym" / "textstats-dwarf4")
        names = [r.locations[0].name if r.ok else None for r in ours.lookup_many(addresses)]
        assert names == [r.locations[0].name if r.ok else None for r in ref.lookup_many(addresses)]


def test_unencodable_symbols_are_dropped_with_a_warning(testdata: Path, tmp_path: Path) -> None:
    """Issue 13 finding 2: a symbol of 4 GiB or more (struct.error in the writer) and a function below the base
    address (GsymEncodeError shown as an internal error) come from a corrupt file: dropped with warnings, the
    other functions converted."""
    from elftools.elf.elffile import ELFFile

    elf = testdata / "gsym" / "libdemo" / "binary"
    data = bytearray(elf.read_bytes())
    with open(elf, "rb") as fh:
        symtab = ELFFile(fh).get_section_by_name(".symtab")
        index = {s.name: i for i, s in enumerate(symtab.iter_symbols())}
        symtab_at = symtab["sh_offset"]
    # plugin_walk's .symtab st_size (64-bit entries of 24 bytes, st_size at +16) set to 4 GiB
    at = symtab_at + 24 * index["plugin_walk"] + 16
    data[at : at + 8] = (2**32).to_bytes(8, "little")
    # the first two PT_LOAD headers (56 bytes each from e_phoff 64, p_vaddr at +16) start at 0x1040: the base
    # address is then above _init (0x1000)
    for k in range(2):
        at = 64 + 56 * k + 16
        data[at : at + 8] = (0x1040).to_bytes(8, "little")
    path = tmp_path / "mutated"
    path.write_bytes(bytes(data))
    report = convert_elf_to_gsym(path, tmp_path / "out.gsym")
    assert any("1 function(s) with a size of 4 GiB or more ignored (the first: 'plugin_walk' at 0x1130" in w
               for w in report.warnings), report.warnings
    assert any("below the base address 0x1040 ignored (the first: '_init' at 0x1000" in w for w in report.warnings)
    with GsymReader(tmp_path / "out.gsym") as reader:
        assert reader.base_address == 0x1040
        assert reader.lookup(0x1130).locations[0].name == "plugin_walk"  # its DWARF entry is still there
        assert reader.lookup(0x11B0).locations[0].name == "plugin_version"


def test_symbolize_with_a_hostile_debug_file_does_not_hang(testdata: Path, tmp_path: Path, hang_guard) -> None:
    """Issue 13 finding 1 through the filter: an ELF found by build ID under a debug file directory is converted
    on first use; the mutated textstats-dwarf4 binary hung it. Now its frames symbolize (the dropped sequence
    aside) like the intact file's."""
    from fxscope.core.symbolize.markup_filter import filter_text
    from fxscope.core.symbolize.resolver import SymbolFileResolver
    from fxscope.formats.elf.reader import read_elf

    case_dir = testdata / "gsym" / "textstats-dwarf4"
    build_id = read_elf(case_dir / "binary").build_id.hex()
    addresses = _addresses(case_dir)[:6]
    log = "{{{reset}}}\n{{{module:0:textstats:elf:" + build_id + "}}}\n{{{mmap:0x0:0x100000:load:0:rx:0x0}}}\n"
    log += "".join(f"{{{{{{bt:{n}:0x{a:x}:pc}}}}}}\n" for n, a in enumerate(addresses))

    def symbolized(binary_bytes: bytes, name: str) -> tuple[str, str]:
        tree = tmp_path / name / ".build-id" / build_id[:2]
        tree.mkdir(parents=True)
        (tree / f"{build_id[2:]}.debug").write_bytes(binary_bytes)
        return filter_text(log, SymbolFileResolver(debug_file_directories=[tmp_path / name]))

    data = bytearray((case_dir / "binary").read_bytes())
    data[0x6621] = 0xFA
    out, err = symbolized(bytes(data), "hostile")
    good_out, good_err = symbolized((case_dir / "binary").read_bytes(), "good")
    assert err == good_err
    names = re.compile(r"#\d+\s+0x[0-9a-f]+ (\S+) ")
    assert names.findall(out) == names.findall(good_out)
    assert "die" in names.findall(out)
