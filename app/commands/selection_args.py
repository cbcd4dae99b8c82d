"""The options that pick what ``fxscope stats`` and ``fxscope stacks`` look at (``--thread``, ``--process``,
``--range``), and the loading of a trace into a model for them, with bad input as one-line errors."""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING

from fxscope.app.cli_error import CliError

if TYPE_CHECKING:
    from fxscope.core.analysis.selection import Area
    from fxscope.core.trace.model import TraceModel


def time_range(text: str) -> tuple[int | None, int | None]:
    """``START_NS:END_NS`` in trace nanoseconds; either side may be left empty (the trace's start / end)."""
    a, sep, b = text.partition(":")
    try:
        if not sep:
            raise ValueError
        start = int(a) if a.strip() else None
        end = int(b) if b.strip() else None
    except ValueError:
        raise argparse.ArgumentTypeError(f"range must be START_NS:END_NS, not {text!r}") from None
    if start is not None and end is not None and end <= start:
        raise argparse.ArgumentTypeError("range end must be after its start")
    return start, end


def add_selection_options(p: argparse.ArgumentParser) -> None:
    who = p.add_mutually_exclusive_group()
    who.add_argument("--thread", type=int, metavar="TID", help="only the slices of this thread (koid)")
    who.add_argument("--process", type=int, metavar="PID", help="only the slices of this process's threads")
    p.add_argument("--range", type=time_range, default=(None, None), metavar="START_NS:END_NS",
                   help="only this time range, in trace nanoseconds (slices cut by it count with their time inside)")


def load_model(path: str) -> TraceModel:
    """The model of the trace at ``path`` (plain or compressed FXT, through :func:`fxscope.core.trace.reading.read_trace`
    as every command reads traces); reader warnings (a partial trace) are noted on stderr."""
    from fxscope.core.trace.model import TraceModel
    from fxscope.core.trace.reading import read_trace

    cols = read_trace(path)  # any form the detector knows (.fxt.gz, ...); FormatError / OSError: exit 2
    if cols.warnings:
        print(f"fxscope: warning: {path}: {len(cols.warnings)} reader "
              f"warning{'s' if len(cols.warnings) != 1 else ''}, the trace may be partial "
              f"(fxscope info {path} lists them)", file=sys.stderr)  # fmt: skip
    return TraceModel(cols)


def selected_area(model: TraceModel, args: argparse.Namespace) -> Area:
    """The area the options name (the whole trace by default)."""
    from fxscope.core.analysis.selection import Area, process_area, thread_area

    t0, t1 = args.range
    try:
        if args.thread is not None:
            return thread_area(model, args.thread, t0, t1)
        if args.process is not None:
            return process_area(model, args.process, t0, t1)
    except LookupError as exc:
        raise CliError(str(exc)) from None
    return Area(t0, t1)
