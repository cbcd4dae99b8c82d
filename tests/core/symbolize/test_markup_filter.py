"""The markup filter against llvm-symbolizer 19's recorded --filter-markup output."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest

from fxscope.core.symbolize.markup_filter import filter_text
from fxscope.core.symbolize.resolver import SymbolFileResolver

# Cases that need no code symbolization: byte-identical stdout and stderr.
NO_SYMBOLS = [
    "build-id-not-found", "color", "context-line-elision", "error-location", "mmap", "module",
    "parse-fields", "reset", "symbol", "tag",
]


def _case(testdata: Path, name: str) -> Path:
    return testdata / "markup" / "llvm-lit" / name


@pytest.mark.parametrize("name", NO_SYMBOLS)
def test_lit_case_byte_identical(testdata: Path, name: str) -> None:
    case = _case(testdata, name)
    color = "--color=always" in (case / "cmd.txt").read_text()
    out, err = filter_text((case / "input.txt").read_text(), SymbolFileResolver(), color=color)
    assert out == (case / "expected.stdout").read_text()
    assert err == (case / "expected.stderr").read_text()


def _with_object(testdata: Path, tmp_path: Path, name: str) -> tuple[str, str, Path]:
    llvm_mc = shutil.which("llvm-mc-19") or shutil.which("llvm-mc")
    if llvm_mc is None:
        pytest.skip("llvm-mc is not installed (apt-get install llvm-19): cannot build the lit test's object")
    case = _case(testdata, name)
    obj = tmp_path / ".build-id" / "ab" / "cdef.debug"  # where llvm-symbolizer finds BuildID=abcdef
    obj.parent.mkdir(parents=True)
    subprocess.run([llvm_mc, "-filetype=obj", "-triple=x86_64-pc-linux", str(case / "asm.s"), "-o", str(obj)],
                   check=True)
    # the object's DWARF is converted to GSYM on first use
    out, err = filter_text((case / "input.txt").read_text(), SymbolFileResolver(debug_file_directories=[tmp_path]))
    return out, err, case


@pytest.mark.parametrize("name", ["data", "pc"])
def test_lit_case_with_the_object_built_by_llvm_mc(testdata: Path, tmp_path: Path, name: str) -> None:
    out, err, case = _with_object(testdata, tmp_path, name)
    assert out == (case / "expected.stdout").read_text()
    assert err == (case / "expected.stderr").read_text()


def test_lit_bt_case(testdata: Path, tmp_path: Path) -> None:
    """Inline frames from GSYM, columns from the object's DWARF (GSYM has none): byte-identical."""
    out, err, case = _with_object(testdata, tmp_path, "bt")
    assert out == (case / "expected.stdout").read_text()
    assert err == (case / "expected.stderr").read_text()


_COLUMN = re.compile(r"(:(?:\x1b\[[0-9;]*m)?)\d+((?:\x1b\[[0-9;]*m)? \()")


def _without_columns(text: str) -> str:
    return _COLUMN.sub(r"\g<1>0\2", text)


@pytest.mark.parametrize("suffix", ["", ".color"])
def test_crash_demo_byte_identical(testdata: Path, suffix: str) -> None:
    """The real crash log: frames from LLVM-made GSYM files, columns and data symbols from the ELF files
    of its .build-id tree."""
    demo = testdata / "markup" / "crash-demo"
    resolver = SymbolFileResolver(
        [testdata / "gsym" / "crashdemo" / "binary.gsym", testdata / "gsym" / "libdemo" / "binary.gsym"],
        sorted((demo / ".build-id").glob("*/*.debug")),
    )
    out, err = filter_text((demo / "input.log").read_text(), resolver, color=bool(suffix))
    assert out == (demo / f"expected.llvm19{suffix}.stdout").read_text()
    assert err == (demo / f"expected.llvm19{suffix}.stderr").read_text()


def test_crash_demo_from_the_build_id_tree_alone(testdata: Path) -> None:
    """Only --debug-file-directory: the ELF files are converted to GSYM on first use; same output."""
    demo = testdata / "markup" / "crash-demo"
    out, err = filter_text((demo / "input.log").read_text(), SymbolFileResolver(debug_file_directories=[demo]))
    assert out == (demo / "expected.llvm19.stdout").read_text()
    assert err == (demo / "expected.llvm19.stderr").read_text()


def test_gsym_without_its_elf_prints_column_zero(testdata: Path) -> None:
    """Deliberate difference: with only GSYM files there is no column information, so frames say :0."""
    demo = testdata / "markup" / "crash-demo"
    resolver = SymbolFileResolver([testdata / "gsym" / "crashdemo" / "binary.gsym",
                                   testdata / "gsym" / "libdemo" / "binary.gsym"])
    out, _ = filter_text((demo / "input.log").read_text(), resolver)
    expected = (demo / "expected.llvm19.stdout").read_text()
    assert "payload.h:24:0 (crashdemo+0x13ff)" in out
    frames = [line for line in out.splitlines() if line.startswith("    #")]
    assert frames == [_COLUMN.sub(r"\g<1>0\2", line) for line in expected.splitlines() if line.startswith("    #")]


_CONTEXT = (
    "{{{module:0:crashdemo:elf:3d3a85572513e6cff897b8e9637d480eeb092027}}}\n"
    "{{{mmap:0x55bc37e48000:0x5000:load:0:rx:0x0}}}\n"
)


def _lines_strategy():
    from hypothesis import strategies as st

    address = st.sampled_from(["0x55bc37e493ff", "0x55bc37e49204", "0x55bc37e4933f", "0x55bc37e48000",
                               "0x55BC37E493FF", "0x0", "0", "0x1", "0xzz", "0x10000000000000000"])  # fmt: skip
    bt = st.builds(
        lambda lead, n, a, kind, trail, eol: f"{lead}{{{{{{bt:{n}:{a}{kind}}}}}}}{trail}{eol}",
        st.sampled_from(["", "   ", "x "]), st.sampled_from(["0", "1", "29", "007", "99999999999999999999999"]),
        address, st.sampled_from(["", ":ra", ":pc", ":xx", ":ra:extra"]), st.sampled_from(["", " tail", " }}}"]),
        st.sampled_from(["\n", "\r\n"]),
    )  # fmt: skip
    other = st.sampled_from(["plain text\n", "\x1b[31mred\x1b[0m {{{pc:0x55bc37e493ff}}}\n", "{{{reset}}}\n", _CONTEXT])
    return st.lists(st.one_of(bt, bt, other), max_size=40)


@pytest.fixture(scope="module")
def demo_resolver(testdata: Path) -> SymbolFileResolver:
    return SymbolFileResolver([testdata / "gsym" / "crashdemo" / "binary.gsym"])


def test_caches_and_fast_paths_change_nothing(demo_resolver) -> None:
    """Line reuse, the bare-bt fast path and whole-text feeding give exactly the plain filter's output."""
    from hypothesis import given, settings

    from fxscope.core.symbolize.markup_filter import MarkupFilter

    class Plain(MarkupFilter):
        caching = False

    def run(cls, text: str, color: bool, whole: bool) -> tuple[str, str]:
        out: list[str] = []
        err: list[str] = []
        f = cls(demo_resolver, out.append, err.append, color=color)
        if whole:
            f.filter_lines(text)
        else:
            for line in text.splitlines(keepends=True):
                f.filter_line(line)
        f.finish()
        return "".join(out), "".join(err)

    @settings(max_examples=300, deadline=None)
    @given(lines=_lines_strategy())
    def check(lines: list[str]) -> None:
        text = _CONTEXT + "".join(lines)
        for color in (False, True):
            expected = run(Plain, text, color, whole=False)
            assert run(MarkupFilter, text, color, whole=False) == expected
            assert run(MarkupFilter, text, color, whole=True) == expected

    check()
