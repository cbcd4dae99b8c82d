"""``fxscope stacks TRACE [--thread TID|--process PID] [--range START_NS:END_NS] -o OUT.folded``: the
selection's call stacks as folded stacks (``root;child;leaf SELF_NS`` per line) for flamegraph.pl, inferno
and speedscope (:mod:`fxscope.core.analysis.folded`), written atomically."""

from __future__ import annotations

import argparse

from fxscope.app.commands.selection_args import add_selection_options, load_model, selected_area


def run(args: argparse.Namespace) -> int:
    from fxscope.core.analysis.call_tree import top_down
    from fxscope.core.analysis.folded import folded_lines
    from fxscope.core.atomic_file import atomic_output

    model = load_model(args.trace)
    tree = top_down(model, selected_area(model, args))
    lines = 0
    with atomic_output(args.output) as tmp, open(tmp, "w", encoding="utf-8", errors="surrogateescape") as fh:
        for line in folded_lines(tree, model):
            fh.write(line + "\n")
            lines += 1
    total = int(tree.self_ns.sum())
    print(f"wrote {args.output}: {lines} stacks, {total} ns")
    return 0


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser(
        "stacks", help="write the call stacks as folded stacks (flamegraph.pl, inferno, speedscope)",
        description="Write the selection's call stacks in the folded format: one line 'root;child;leaf WEIGHT' per "
        "call path, WEIGHT its self time in ns inside the range. ';' in names is written as ':'.",
    )  # fmt: skip
    p.add_argument("trace", help="FXT trace file")
    add_selection_options(p)
    p.add_argument("-o", "--output", required=True, metavar="OUT.folded", help="output file (written atomically)")
    p.set_defaults(func=run)
