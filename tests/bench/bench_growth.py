"""How the whole-trace queries grow from 30M to 100M events, measured in one process (issue 18: "the 100M
figures <= 3.5x the 30M figures"; the events grow 3.33x).

Run: ``.venv/bin/python tests/bench/bench_growth.py [--pieces stats,analysis,names,indexed,flows] [--rounds 7]``.
Reads bench_scale.py's cached traces (``scale_30000000_sched.fxt`` and ``scale_100000000_sched.fxt`` under
tests/bench/.cache/: run bench_scale.py with ``--sizes 30m,100m`` once to make them), builds both models in
this process (~4.5 GB), then times each piece on the 30M model and on the 100M model in turn, ``--rounds``
times, and prints the fastest of each, their ratio, the median of each round's ratio (its peer is the
same piece on the smaller trace, run just before it: a loaded machine's minute-to-minute swings, 1.5-2x on
the development VM, cancel out of it) and the ratio of the CPU times. A bench_scale.py run times each piece
once per size, each size in its own process minutes apart, whose ratios moved by +-0.3 from run to run.

Pieces: ``stats`` (the Info tab's statistics, :func:`~fxscope.core.trace.stats.trace_stats`), ``analysis``
(the analysis panel of the whole trace: its rows, per-name statistics and flame graph), ``names``
(the search without the argument index: the window's first count), ``indexed`` (the search with it),
``flows`` (the flow table's build, the file pages it reads held as the loader's build holds them).
Run it with another checkout's interpreter to measure that checkout's code.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path

CACHE = Path(__file__).resolve().parent / ".cache"
SIZES = {"30m": 30_000_000, "100m": 100_000_000}


def _pieces(model) -> dict:
    """The timed calls on ``model``: name -> a function of no arguments."""
    from fxscope.core.analysis.call_tree import top_down
    from fxscope.core.analysis.selection import Area, area_names, area_rows
    from fxscope.core.analysis.stats import name_stats
    from fxscope.core.trace.flows import build_flows
    from fxscope.core.trace.search_hits import search_all
    from fxscope.core.trace.stats import trace_stats

    cols = model.cols

    def flows() -> None:
        with cols.holding_pages():
            build_flows(cols, model.slices)

    def analysis() -> None:  # (the analysis panel of the whole trace, as bench_scale.py's load child times it)
        ar = area_rows(model, Area())
        names = {"names": area_names(model, ar)}
        name_stats(model, ar=ar, **names)
        top_down(model, ar=ar, **names)

    return {
        "stats": lambda: trace_stats(model),
        "analysis": analysis,
        "names": lambda: search_all(model, "frame", arguments=False),
        "indexed": lambda: search_all(model, "frame"),
        "flows": flows,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--pieces", default="stats,analysis,names,indexed,flows")
    parser.add_argument("--rounds", type=int, default=7)
    args = parser.parse_args()
    names = args.pieces.split(",")
    from fxscope.core.trace.model import TraceModel
    from fxscope.core.trace.prepare import prepare_model
    from fxscope.core.trace.reading import read_trace

    pieces = {}
    for size, events in SIZES.items():
        path = CACHE / f"scale_{events}_sched.fxt"
        if not path.exists():
            sys.exit(f"{path} is missing: run tests/bench/bench_scale.py --sizes 30m,100m once to generate it")
        model = TraceModel(read_trace(str(path)))
        prepare_model(model)
        if "indexed" in names:
            model.search_index  # noqa: B018 - built once, before the timing
        pieces[size] = _pieces(model)
    print(f"machine: {os.cpu_count()} cores, load average {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    print(f"{'piece':10s} {'30m_ms':>9s} {'100m_ms':>9s} {'ratio':>6s} {'median':>7s} {'cpu':>6s}")
    for name in names:
        wall: dict[str, list[float]] = {size: [] for size in SIZES}
        cpu: dict[str, list[float]] = {size: [] for size in SIZES}
        ratios = []
        for size in SIZES:
            pieces[size][name]()  # (warm: the first call's own costs are not the growth)
        for _ in range(args.rounds):
            for size in SIZES:
                w, c = time.perf_counter(), time.process_time()
                pieces[size][name]()
                wall[size].append(time.perf_counter() - w)
                cpu[size].append(time.process_time() - c)
            ratios.append(wall["100m"][-1] / wall["30m"][-1])
        small, large = min(wall["30m"]), min(wall["100m"])
        print(f"{name:10s} {small * 1e3:9.2f} {large * 1e3:9.2f} {large / small:6.2f} {statistics.median(ratios):7.2f} "
              f"{min(cpu['100m']) / min(cpu['30m']):6.2f}", flush=True)  # fmt: skip
    print(f"load average after: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")


if __name__ == "__main__":
    main()
