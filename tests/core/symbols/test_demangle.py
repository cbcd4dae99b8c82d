"""Demangling as LLVM 19 prints it: a recorded corpus of real C++ and Rust names (llvm-cxxfilt-19), the
``{{{symbol}}}`` element's flavour (llvm-symbolizer-19) and a live run of llvm-cxxfilt-19 when it is installed."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from fxscope.core.symbols.demangle import demangle, demangle_any


def _corpus(testdata: Path) -> tuple[list[str], list[str]]:
    folder = testdata / "demangle"
    names = (folder / "names.txt").read_text().split("\n")[:-1]
    expected = (folder / "llvm-cxxfilt-19.txt").read_text().split("\n")[:-1]
    assert len(names) == len(expected) > 7000
    return names, expected


def test_corpus_equals_llvm_cxxfilt_19(testdata: Path) -> None:
    names, expected = _corpus(testdata)
    differ = [(n, e, demangle(n)) for n, e in zip(names, expected, strict=True) if demangle(n) != e]
    assert differ == []


def test_corpus_covers_llvm_style_and_both_rust_schemes(testdata: Path) -> None:
    """The corpus holds what the issue is about (a corpus of plain C names would prove nothing)."""
    names, expected = _corpus(testdata)
    assert sum(n.startswith("_R") for n in names) > 500  # Rust v0
    assert sum(n.startswith("_ZN") and n.endswith("E") and "17h" in n for n in names) > 100  # Rust legacy
    assert any(">>" in e and "std::allocator" in e for e in expected)  # LLVM's style, no "> >"
    assert not any("> >" in e for e in expected)
    assert any("'lambda'" in e for e in expected) and any("(anonymous namespace)" in e for e in expected)
    assert demangle("_ZNSt6vectorIiSaIiEE9push_backERKi") == "std::vector<int, std::allocator<int>>::push_back(int const&)"


def test_plain_and_broken_names_pass_through() -> None:
    for name in ("main", "_Zgarbage", "_Rgarbage", "_Z", "_Z3fooi\0", ".L_Z3fooi", ""):
        assert demangle(name) == name


def test_symbol_elements_as_llvm_symbolizer_19(testdata: Path) -> None:
    """``{{{symbol:NAME}}}`` goes through ``llvm::demangle`` (leading ``_`` retried, MSVC names), frames do not."""
    from fxscope.core.symbolize.markup_filter import filter_text

    folder = testdata / "demangle"
    out, err = filter_text((folder / "symbol-elements.log").read_text(), resolver=None)
    assert out + err == (folder / "symbol-elements.llvm-symbolizer-19.txt").read_text()
    assert demangle_any("__Z3fooi") == "foo(int)" and demangle("__Z3fooi") == "__Z3fooi"


def test_live_llvm_cxxfilt_19(testdata: Path) -> None:
    tool = shutil.which("llvm-cxxfilt-19")
    if tool is None:
        pytest.skip("llvm-cxxfilt-19 is not installed (apt-get install llvm-19)")
    names, _expected = _corpus(testdata)
    extra = ["_ZN5boost6detail17sp_counted_impl_pIN3foo3BarEE7disposeEv", "_RNvMs_Cs4Cv8Wi1oAIB_7mycrateNtB4_3Foo3new"]
    names = names + extra
    result = subprocess.run([tool], input="\n".join(names) + "\n", capture_output=True, text=True, timeout=120)
    assert result.returncode == 0
    assert [demangle(n) for n in names] == result.stdout.split("\n")[:-1]


def test_hostile_nesting_is_shown_raw_not_a_crash() -> None:
    """100,000 nested pointers overflow the demangler's stack (the process dies with SIGSEGV, as
    llvm-cxxfilt-19 does): run in a child process so that the failure before the fix is a test failure."""
    code = (
        "from fxscope.core.symbols.demangle import demangle, demangle_any\n"
        "for name in ('_Z1f' + 'P' * 100000 + 'i', '_R' + 'Nv' * 60000 + 'C1a', '?' + 'PE' * 60000):\n"
        "    assert demangle(name) == name and demangle_any(name) == name\n"
        "print('ok')\n"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120,
                            cwd=Path(__file__).resolve().parents[3])
    assert result.returncode == 0 and result.stdout == "ok\n", result.stderr
