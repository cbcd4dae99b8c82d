"""Symbols benchmark: DWARF -> GSYM conversion and batch lookups, against LLVM 19's tools on the same input.

Prints ``convert_s`` (ours) and ``llvm_convert_s`` with their ratio for a large real binary (the Python
runtime's libpython by default, or the path given as the first argument), and ``lookups_per_s`` for 100,000
addresses through our GSYM reader (each address's full inline stack: names, files, lines) against
``llvm-symbolizer --inlining`` reading the same addresses from stdin, best of three runs each.
Run: ``.venv/bin/python tests/bench/bench_symbols.py [ELF]``.
"""

from __future__ import annotations

import random
import shutil
import subprocess
import sys
import sysconfig
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
RUNS = 3
sys.path.insert(0, str(ROOT))

from fxscope.core.symbols.gsym_convert import convert_elf_to_gsym  # noqa: E402
from fxscope.formats.gsym.reader import GsymReader  # noqa: E402


def main() -> None:
    default = Path(sysconfig.get_config_var("LIBDIR") or "") / (sysconfig.get_config_var("INSTSONAME") or "")
    elf = Path(sys.argv[1]) if len(sys.argv) > 1 else default
    print(f"binary: {elf} ({elf.stat().st_size / 1e6:.1f} MB)")
    tmp = Path(tempfile.mkdtemp())
    ours = tmp / "ours.gsym"
    t = time.perf_counter()
    convert_elf_to_gsym(elf, ours)
    convert_s = time.perf_counter() - t
    print(f"convert_s: {convert_s:.2f}")
    gsymutil = shutil.which("llvm-gsymutil-19")
    if gsymutil:
        t = time.perf_counter()
        subprocess.run([gsymutil, f"--convert={elf}", f"--out-file={tmp / 'llvm.gsym'}"], check=True,
                       capture_output=True)
        llvm_s = time.perf_counter() - t
        print(f"llvm_convert_s: {llvm_s:.2f}")
        print(f"convert_ratio_vs_llvm: {convert_s / llvm_s:.1f}x slower")
    reader = GsymReader(ours)
    rng = random.Random(3)
    addresses = [reader.address(rng.randrange(len(reader))) + rng.randrange(0, 64) for _ in range(100_000)]
    # Both sides do the whole job each run: ours from the opened file with empty caches to every address's
    # full inline stack (names, files, lines), llvm-symbolizer from process start to its printed stacks.
    # The best of RUNS runs of each is reported (the machine's noise is larger than the difference).
    ours_s = float("inf")
    for _ in range(RUNS):
        fresh = GsymReader(ours)
        t = time.perf_counter()
        results = fresh.lookup_many(addresses)
        ours_s = min(ours_s, time.perf_counter() - t)
        fresh.close()
    frames = sum(len(r.locations) for r in results)
    print(f"lookups_per_s: {len(addresses) / ours_s:,.0f} ({frames:,} frames, "
          f"{sum(not r.ok for r in results):,} errors)")
    symbolizer = shutil.which("llvm-symbolizer-19")
    if symbolizer:
        text = "".join(f"0x{a:x}\n" for a in addresses)
        sym_s = float("inf")
        for _ in range(RUNS):
            t = time.perf_counter()
            out = subprocess.run([symbolizer, f"--obj={elf}", "--inlining"], input=text, text=True, check=True,
                                 capture_output=True).stdout
            sym_s = min(sym_s, time.perf_counter() - t)
        sym_frames = sum(1 for line in out.splitlines() if line) // 2
        print(f"llvm_symbolizer_lookups_per_s: {len(addresses) / sym_s:,.0f} ({sym_frames:,} frames)")
        print(f"lookup_ratio_vs_llvm_symbolizer: {sym_s / ours_s:.2f}x")

if __name__ == "__main__":
    main()
