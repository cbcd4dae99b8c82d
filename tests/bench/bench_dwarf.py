"""DWARF decoding benchmark: the hand-written decoder (formats/dwarf/fast.py) against pyelftools, its peer
and reference, on the same binary in the same run.

Prints, for each binary, the seconds each decoder takes to build the function/line model
(``read_dwarf_fast`` vs ``read_dwarf_pyelftools``), the ratio, and whether the two models are equal (the fast
decoder exists for speed only: a difference is a bug). Default binaries: the test corpus's DWARF 4 and
DWARF 5 word counters, the crash-demo shared library, and the Python runtime's libpython when it has DWARF
(the large case: tens of MB). Run: ``.venv/bin/python tests/bench/bench_dwarf.py [ELF...]``.
"""

from __future__ import annotations

import sys
import sysconfig
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from fxscope.formats.dwarf.fast import read_dwarf_fast  # noqa: E402
from fxscope.formats.dwarf.functions import read_dwarf_pyelftools  # noqa: E402


def _defaults() -> list[Path]:
    gsym = ROOT / "tests" / "data" / "gsym"
    paths = [gsym / "textstats-dwarf4" / "binary", gsym / "textstats" / "binary", gsym / "crashdemo" / "binary", gsym / "libdemo" / "binary"]
    lib = Path(sysconfig.get_config_var("LIBDIR") or "") / (sysconfig.get_config_var("INSTSONAME") or "")
    if lib.is_file() and b".debug_info" in lib.read_bytes():
        paths.append(lib)
    return [p for p in paths if p.is_file()]


def _timed(fn, path: Path) -> tuple[float, object]:
    t = time.perf_counter()
    model = fn(path)
    return time.perf_counter() - t, model


def main() -> None:
    paths = [Path(p) for p in sys.argv[1:]] or _defaults()
    # warm the imports both decoders make on first use (numpy for the section table, ~0.3 s; pyelftools'
    # ELF and DWARF modules): every fxscope path that reads DWARF has them loaded already
    if paths:  # on the smallest file: the warm-up is not the measurement
        small = min(paths, key=lambda p: p.stat().st_size)
        read_dwarf_fast(small)
        read_dwarf_pyelftools(small)
    for path in paths:
        fast_s, fast = _timed(read_dwarf_fast, path)
        ref_s, ref = _timed(read_dwarf_pyelftools, path)
        same = fast.functions == ref.functions and fast.sequences == ref.sequences
        print(f"{path} ({path.stat().st_size / 1e6:.1f} MB): {len(fast.functions)} functions")
        print(f"  dwarf_fast_s: {fast_s:.3f}  dwarf_pyelftools_s: {ref_s:.3f}  "
              f"speedup: {ref_s / max(fast_s, 1e-9):.1f}x  same_model: {same}")  # fmt: skip


if __name__ == "__main__":
    main()
