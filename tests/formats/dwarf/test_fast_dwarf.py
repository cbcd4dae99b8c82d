"""The hand-written DWARF decoder (formats/dwarf/fast.py) against the pyelftools walk: the same model.

Functions (names, ranges, declaration sites, inline trees with call sites and columns), line sequences
(addresses, files, lines, columns, end markers) and warnings must be equal on every test binary, on
programs compiled here (C and C++, DWARF 4 and 5, split DWARF, compressed sections) and on libpython.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sysconfig
from pathlib import Path

import pytest

from fxscope.formats.dwarf.fast import Unsupported, read_dwarf_fast
from fxscope.formats.dwarf.functions import read_dwarf, read_dwarf_pyelftools

CASES = ["tiny", "crashdemo", "libdemo", "textstats", "textstats-dwarf4"]


def _assert_same(path: Path) -> None:
    fast = read_dwarf_fast(path)
    ref = read_dwarf_pyelftools(path)
    assert fast.warnings == ref.warnings
    assert len(fast.functions) == len(ref.functions)
    for a, b in zip(fast.functions, ref.functions, strict=True):
        assert a == b
    assert fast.sequences == ref.sequences


@pytest.mark.parametrize("case", CASES)
def test_fast_model_equals_pyelftools_model(testdata: Path, case: str) -> None:
    _assert_same(testdata / "gsym" / case / "binary")
    # and read_dwarf takes the fast path on every corpus binary (a fallback would be its first warning)
    assert not any("fast DWARF decoder" in w for w in read_dwarf(testdata / "gsym" / case / "binary").warnings)


def _corpus_elf_files_with_dwarf() -> list[Path]:
    data = Path(os.environ.get("FXSCOPE_TESTDATA", Path(__file__).resolve().parents[2] / "data"))
    found = []
    for path in sorted(data.rglob("*")):
        if path.is_file() and path.suffix != ".xz" and path.stat().st_size < 64 << 20:
            head = path.read_bytes()
            if head[:4] == b"\x7fELF" and b".debug_info" in head:
                found.append(path)
    return found


CORPUS_DWARF = _corpus_elf_files_with_dwarf()


def test_the_corpus_scan_finds_the_binaries() -> None:
    assert len(CORPUS_DWARF) >= 15, CORPUS_DWARF


@pytest.mark.parametrize("path", CORPUS_DWARF, ids=lambda p: str(p.relative_to(p.parents[3])))
def test_no_fallback_on_any_corpus_binary(path: Path) -> None:
    """Every ELF file with DWARF in tests/data: executables and shared libraries take the fast path with the
    reference's model; relocatable objects (llvm-mc's, for the lit cases) fall back, saying why. (This found
    the local-class subprograms the fast walk skipped in pycrash.)"""
    model = read_dwarf(path)
    reasons = [w for w in model.warnings if w.startswith("fast DWARF decoder not used")]
    if int.from_bytes(path.read_bytes()[16:18], "little") == 1:  # ET_REL
        assert reasons == ["fast DWARF decoder not used: Unsupported: relocatable object: DWARF needs relocations"]
    else:
        assert reasons == []
        _assert_same(path)


CXX_SOURCE = """
#include <cstdio>
namespace outer { namespace inner {
struct Shape {
  virtual ~Shape() {}
  virtual int area() const = 0;
  static inline int twice(int x) { return 2 * x; }
};
struct Square : Shape {
  int side;
  explicit Square(int s) : side(s) {}
  int area() const override { return twice(side) * side / 2; }
};
template <typename T> static inline T clamp(T v, T lo, T hi) { return v < lo ? lo : v > hi ? hi : v; }
} }
static inline int helper(int x) { { int y = outer::inner::clamp(x, 0, 100); return y * 3; } }
__attribute__((noinline)) int work(int x) {
  outer::inner::Square s(x);
  return helper(s.area()) + outer::inner::Shape::twice(x);
}
__attribute__((cold, noinline)) void rare(const char *m) { std::puts(m); }
int main(int argc, char **argv) { if (argc > 5) rare(argv[0]); return work(argc); }
"""


@pytest.mark.parametrize("flags", [
    ["-O2", "-gdwarf-5"],
    ["-O2", "-gdwarf-4"],
    ["-O0", "-gdwarf-5"],
    ["-O2", "-gdwarf-5", "-gsplit-dwarf"],
    ["-O2", "-gdwarf-4", "-gz"],
])
def test_fast_model_on_compiled_cxx(tmp_path: Path, flags: list[str]) -> None:
    gxx = shutil.which("g++")
    if gxx is None:
        pytest.skip("needs g++")
    src = tmp_path / "prog.cc"
    src.write_text(CXX_SOURCE)
    binary = tmp_path / "prog"
    result = subprocess.run([gxx, *flags, str(src), "-o", str(binary)], capture_output=True, cwd=tmp_path)
    if result.returncode != 0:
        # the compiler is there: a failed build is a broken test environment, not a reason to pass quietly
        pytest.fail(f"g++ {' '.join(flags)} failed: {result.stderr.decode()[:200]}")
    if "-gz" in flags:
        with pytest.raises(Unsupported):  # compressed sections: the pyelftools path reads them
            read_dwarf_fast(binary)
        model, reference = read_dwarf(binary), read_dwarf_pyelftools(binary)
        assert (model.functions, model.sequences) == (reference.functions, reference.sequences)
        # the fallback is said, with its reason, ahead of the reference's own warnings
        assert model.warnings[0].startswith("fast DWARF decoder not used: Unsupported: ")
        assert model.warnings[1:] == reference.warnings
        return
    _assert_same(binary)
    model = read_dwarf_fast(binary)
    if "-gsplit-dwarf" in flags:
        assert model.warnings
    elif "-O2" in flags:
        assert any(f.has_inline_children for f in model.functions)


def test_relocatable_object_takes_the_pyelftools_path(tmp_path: Path) -> None:
    gcc = shutil.which("gcc")
    if gcc is None:
        pytest.skip("needs gcc")
    src = tmp_path / "a.c"
    src.write_text("static inline int f(int x) { return x + 1; }\nint g(int x) { return f(x) * 2; }\n")
    obj = tmp_path / "a.o"
    subprocess.run([gcc, "-O2", "-g", "-c", str(src), "-o", str(obj)], check=True)
    with pytest.raises(Unsupported):
        read_dwarf_fast(obj)
    assert read_dwarf(obj).functions == read_dwarf_pyelftools(obj).functions


@pytest.mark.slow
def test_fast_model_equals_pyelftools_on_libpython() -> None:
    lib = Path(sysconfig.get_config_var("LIBDIR") or "") / (sysconfig.get_config_var("INSTSONAME") or "")
    if not lib.is_file() or b".debug_info" not in lib.read_bytes():
        pytest.skip(f"no shared libpython with DWARF at {lib}")
    _assert_same(lib)
