"""Symbolizing-filter benchmark: ``fxscope symbolize`` against ``llvm-symbolizer --filter-markup`` (LLVM 19).

Makes a 100,000-line log (ordinary text, with a 30-frame ``{{{bt}}}`` backtrace every 100 lines) against the
real crash-demo binaries of the shared test data (gcc-built ``crashdemo`` and ``libdemo.so``, found by build ID
under their ``.build-id`` directory), runs both tools on it as whole processes (start-up included) and prints
``lines_per_s`` for each and the ratio. fxscope converts the binaries' DWARF to GSYM on first use and caches
the result (as a user's second run would find it): a warm-up run fills a temporary cache first, and writes the
modules' bytecode as an installed package has it.
Run: ``.venv/bin/python tests/bench/bench_symbolize.py [--lines N]``.
"""

from __future__ import annotations

import argparse
import os
import random
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
DEMO = ROOT / "tests" / "data" / "markup" / "crash-demo"
GSYM = ROOT / "tests" / "data" / "gsym"


def make_log(lines: int, seed: int = 1) -> str:
    """The benchmark log: the crash demo's module and mmap context, then text and backtraces."""
    context = [line for line in (DEMO / "input.log").read_text().splitlines() if line.startswith(("{{{module", "{{{mmap", "{{{reset"))]
    # module 0 (crashdemo) is mapped at 0x55bc37e48000, module 2 (libdemo.so) at 0x7f5cdd59c000
    bases = {"crashdemo": 0x55BC37E48000, "libdemo": 0x7F5CDD59C000}
    pcs = [base + a for name, base in bases.items() for a in (int(w, 16) for w in (GSYM / name / "addresses.txt").read_text().split())
           if 0x1000 <= a < 0x2000]  # fmt: skip  (addresses in the mapped code; the list also probes outside)
    rng = random.Random(seed)
    out = list(context)
    words = ["scheduler", "tick", "worker", "request", "queued", "done", "latency", "ms", "cache", "miss"]
    while len(out) < lines:
        for _ in range(min(69, lines - len(out))):
            out.append(f"[{len(out) * 0.001:10.6f}] INFO " + " ".join(rng.choice(words) for _ in range(8)))
        frames = min(30, lines - len(out))
        for k in range(frames):
            out.append(f"   {{{{{{bt:{k}:{rng.choice(pcs):#x}{':pc' if k == 0 else ''}}}}}}}")
        out.append("")
    return "\n".join(out[:lines]) + "\n"


def _run(cmd: list[str], log: str, env: dict[str, str]) -> float:
    t = time.perf_counter()
    result = subprocess.run(cmd, input=log, capture_output=True, text=True, env=env)
    elapsed = time.perf_counter() - t
    if result.returncode != 0:
        raise SystemExit(f"{cmd[0]} failed: {result.stderr[-2000:]}")
    return elapsed


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--lines", type=int, default=100_000)
    ap.add_argument("--runs", type=int, default=3)
    args = ap.parse_args()
    log = make_log(args.lines)
    n = log.count("\n")
    cache = tempfile.mkdtemp(prefix="fxscope-bench-cache-")
    env = {**os.environ, "PYTHONPATH": str(ROOT), "FXSCOPE_CACHE_DIR": cache}
    env.pop("DEBUGINFOD_URLS", None)
    # an installed fxscope runs from compiled bytecode (pip compiles it); a session that sets
    # PYTHONDONTWRITEBYTECODE would recompile every module on every run and time that instead
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    ours_cmd = [sys.executable, "-m", "fxscope", "symbolize", "--no-color", "--debug-file-directory", str(DEMO)]
    t = _run(ours_cmd, log, env)  # warm-up: converts and caches the GSYM files
    print(f"log_lines: {n}  (backtrace frames: {log.count('{{{bt:')})")
    print(f"fxscope_first_run_s: {t:.2f}  (DWARF -> GSYM conversion included)")
    ours = min(_run(ours_cmd, log, env) for _ in range(args.runs))
    print(f"fxscope_lines_per_s: {n / ours:,.0f}  ({ours:.2f} s)")
    llvm = shutil.which("llvm-symbolizer-19")
    if llvm is None:
        print("llvm-symbolizer-19 not installed: no peer figure (apt-get install llvm-19)")
        return
    theirs = min(_run([llvm, "--filter-markup", f"--debug-file-directory={DEMO}"], log, env) for _ in range(args.runs))
    print(f"llvm_symbolizer_lines_per_s: {n / theirs:,.0f}  ({theirs:.2f} s)")
    print(f"ratio: {theirs / ours:.2f}  (>1: fxscope faster)")
    shutil.rmtree(cache, ignore_errors=True)


if __name__ == "__main__":
    main()
