"""Analysis speed on large generated traces: per-name statistics, flame graph (top-down), bottom-up tree and
butterfly of the whole trace and of an area of about 1M slices, and the ``fxscope stats``/``stacks``/``diff``
commands end to end (read, model, analysis, output).

Run: ``.venv/bin/python tests/bench/bench_analysis.py [--events N]``. Generates (once, cached under
tests/bench/.cache/) two synthetic traces of N events (default 10 million; seeds 1 and 2) with
``fxscope generate``'s code and prints ``name: value`` lines. The peer is a straightforward numpy-free Python
pass (per-slice dictionaries, as a script over the same columns would do it) over the first 200,000 slices,
scaled to the whole table, printed next to the numpy code's figure with their ratio. Goals (issue 16): whole
trace <= 1 s per analysis, an area of <= 1M slices <= 100 ms, ``diff`` of two traces <= 5 s, ``stacks`` <= 3 s.
The commands' time is split into the read (decoding, then the model) and their own work after it
(``stacks_after_read_s``, ``diff_after_read_s``), the part that is theirs to speed up.
"""

from __future__ import annotations

import argparse
import math
import os
import subprocess
import sys
import time
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
CACHE = Path(__file__).resolve().parent / ".cache"
PEER_SLICES = 200_000


def _trace(events: int, seed: int) -> Path:
    CACHE.mkdir(parents=True, exist_ok=True)
    path = CACHE / f"synthetic_{events}_seed{seed}.fxt"
    if not path.exists():
        from fxscope.core.synthetic_trace import write_trace

        write_trace(path, events, seed=seed)
    return path


def _best(fn, repeat: int = 3) -> tuple[float, object]:
    best, out = math.inf, None
    for _ in range(repeat):
        t0 = time.perf_counter()
        out = fn()
        best = min(best, time.perf_counter() - t0)
    return best, out


def _peer_stats(model, n: int) -> dict:
    """Per-name count/total/self/percentiles, one Python step per slice."""
    s = model.slices
    ts, dur, parent = s.ts[:n].tolist(), s.dur[:n].tolist(), s.parent[:n].tolist()
    names = s.name[:n].tolist()
    child = [0] * n
    for i, p in enumerate(parent):
        if 0 <= p < n:
            child[p] += dur[i]
    by = defaultdict(list)
    for i in range(n):
        by[names[i]].append((dur[i], max(dur[i] - child[i], 0), ts[i]))
    out = {}
    for name, items in by.items():
        d = sorted(x[0] for x in items)
        k = len(d)
        out[name] = (k, sum(d), sum(x[1] for x in items), d[0],
                     *(d[max(math.ceil(k * p / 100) - 1, 0)] for p in (50, 90, 99)), d[-1])  # fmt: skip
    return out


def _peer_top_down(model, n: int) -> dict:
    """Call-path totals, walking each slice's parents."""
    s = model.slices
    dur, parent, names = s.dur[:n].tolist(), s.parent[:n].tolist(), s.name[:n].tolist()
    tree: dict = {}
    for i in range(n):
        path, j = [], i
        while 0 <= j < n:
            path.append(names[j])
            j = parent[j]
        node = tree.setdefault(tuple(reversed(path)), [0, 0])
        node[0] += dur[i]
        node[1] += 1
    return tree


def _command(*args: str) -> float:
    t0 = time.perf_counter()
    r = subprocess.run([sys.executable, "-m", "fxscope", *args], capture_output=True, text=True, cwd=ROOT,
                       env={**os.environ, "PYTHONPATH": str(ROOT)})  # fmt: skip
    if r.returncode not in (0, 1):
        raise SystemExit(f"fxscope {' '.join(args)} failed: {r.stderr}")
    return time.perf_counter() - t0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--events", type=int, default=10_000_000)
    args = parser.parse_args()
    sys.path.insert(0, str(ROOT))
    from fxscope.core.analysis.call_tree import bottom_up, callees, callers, top_down
    from fxscope.core.analysis.diff import compare
    from fxscope.core.analysis.selection import Area
    from fxscope.core.analysis.stats import name_stats
    from fxscope.core.trace.model import TraceModel
    from fxscope.formats.fxt.reader import read_fxt

    a_path, b_path = _trace(args.events, 1), _trace(args.events, 2)
    t0 = time.perf_counter()
    cols = read_fxt(a_path)
    t_read = time.perf_counter() - t0
    t0 = time.perf_counter()
    model = TraceModel(cols)
    t_model = time.perf_counter() - t0
    del cols
    print(f"events: {args.events}")
    print(f"slices: {len(model.slices)}")
    print(f"read_and_model_s: {t_read + t_model:.3f} (read {t_read:.3f}, model {t_model:.3f})")
    n = len(model.slices)
    scale = n / min(PEER_SLICES, n) if n else 1.0

    t_stats, stats = _best(lambda: name_stats(model))
    t_td, td = _best(lambda: top_down(model))
    t_bu, bu = _best(lambda: bottom_up(td))
    top_name = int(stats.name_id[0]) if len(stats) else 0
    t_bf, _ = _best(lambda: (callers(td, top_name), callees(td, top_name)))
    print(f"names: {len(stats)}  top_down_nodes: {len(td)}  bottom_up_nodes: {len(bu)}")
    peer_stats_s = _best(lambda: _peer_stats(model, min(PEER_SLICES, n)), 1)[0] * scale
    peer_td_s = _best(lambda: _peer_top_down(model, min(PEER_SLICES, n)), 1)[0] * scale
    print(f"stats_whole_s: {t_stats:.3f}  peer_python_s: {peer_stats_s:.2f}  ratio: {peer_stats_s / t_stats:.0f}x")
    print(f"flame_graph_whole_s: {t_td:.3f}  peer_python_s: {peer_td_s:.2f}  ratio: {peer_td_s / t_td:.0f}x")
    print(f"bottom_up_whole_s: {t_td + t_bu:.3f} (from the flame graph: {t_bu:.4f})")
    print(f"butterfly_whole_s: {t_td + t_bf:.3f} (from the flame graph: {t_bf:.4f})")

    # an area of about 1M slices: a time range across every thread
    span = model.end_ns - model.start_ns
    frac = min(1.0, 1_000_000 / max(n, 1))
    area = Area(model.start_ns + int(span * 0.3), model.start_ns + int(span * (0.3 + frac)))
    t_area_stats, st = _best(lambda: name_stats(model, area))
    t_area_td, _ = _best(lambda: top_down(model, area))
    print(f"area_slices: {int(st.count.sum())}")
    print(f"stats_area_s: {t_area_stats:.3f}  flame_graph_area_s: {t_area_td:.3f}")

    # the commands' own work after the read, in this process: what is theirs to speed up
    out = CACHE / "bench.folded"

    def stacks() -> None:
        from fxscope.core.analysis.folded import folded_lines

        with open(out, "w", encoding="utf-8") as fh:
            fh.writelines(line + "\n" for line in folded_lines(top_down(model), model))

    model_b = TraceModel(read_fxt(b_path))
    t_stacks, _ = _best(stacks)
    t_diff, _ = _best(lambda: compare(name_stats(model), name_stats(model_b)))
    model_b = None  # (its memory back before the commands run)
    print(f"stacks_after_read_s: {t_stacks:.3f}  diff_after_read_s: {t_diff:.3f} (both traces' statistics, "
          f"one after the other)  per-trace read+model: {t_read + t_model:.3f}")  # fmt: skip
    print(f"cmd_stats_s: {_command('stats', str(a_path), '--json') :.2f}")
    print(f"cmd_stacks_s: {_command('stacks', str(a_path), '-o', str(out)):.2f}")
    print(f"cmd_diff_s: {_command('diff', str(a_path), str(b_path)):.2f}")
    out.unlink(missing_ok=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
