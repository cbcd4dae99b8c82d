"""``fxscope generate -o OUT.fxt --events N [--seed S] [--big-endian] [--crash-log FILE] [--scheduling] [--start-ns NS] [--threads N] [--providers-in-turn]``: a deterministic synthetic trace."""

from __future__ import annotations

import argparse
from pathlib import Path

from fxscope.app.cli_error import CliError

MAX_EVENTS = 500_000_000


def run(args: argparse.Namespace) -> int:
    if not 0 <= args.events <= MAX_EVENTS:
        raise CliError(f"--events must be between 0 and {MAX_EVENTS}")
    from fxscope.core.synthetic_trace import MAX_START_NS

    if not 0 <= args.start_ns <= MAX_START_NS:
        raise CliError(f"--start-ns must be between 0 and {MAX_START_NS}")
    if not 0 <= args.threads <= 100_000:
        raise CliError("--threads must be between 0 and 100000")
    crash_log = None
    if args.crash_log:
        try:
            crash_log = Path(args.crash_log).read_text(encoding="utf-8", errors="surrogateescape")
        except OSError as exc:
            raise CliError(f"{args.crash_log}: {exc.strerror}") from None
    from fxscope.core.synthetic_trace import write_trace  # (here: every fxscope command loads this module)

    size = write_trace(args.output, args.events, seed=args.seed, big_endian=args.big_endian, crash_log=crash_log,
                       scheduling=args.scheduling, start_ns=args.start_ns, extra_threads=args.threads,
                       providers_in_turn=args.providers_in_turn)
    print(f"wrote {args.output}: {args.events} events, {size} bytes")
    return 0


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser(
        "generate",
        help="write a deterministic synthetic FXT trace",
        description="Write a synthetic FXT trace (several providers, processes and threads, every record "
        "and argument type). The same arguments always give the same bytes.",
    )
    p.add_argument("-o", "--output", required=True, help="output .fxt file (written atomically)")
    p.add_argument("--events", type=int, required=True, help="number of event records")
    p.add_argument("--seed", type=int, default=1, help="random seed (default 1)")
    p.add_argument("--big-endian", action="store_true", help="write big-endian words")
    p.add_argument("--crash-log", metavar="FILE",
                   help="append this log (e.g. a crash report in symbolizer markup) as log records, one per line")
    p.add_argument("--scheduling", action="store_true",
                   help="add a busy four-CPU schedule of the threads (context switches and wakeups)")
    p.add_argument("--start-ns", type=int, default=0, metavar="NS",
                   help="shift every timestamp by NS (real traces are stamped from boot: hours are 2**33 ns and more)")
    p.add_argument("--threads", type=int, default=0, metavar="N",
                   help="add N threads (processes of 20), each with slices, a log record and a counter sample")
    p.add_argument("--providers-in-turn", action="store_true",
                   help="write each provider's records together, one provider after the other, as a one-shot "
                   "Fuchsia trace is saved (the file is then out of time order between providers)")
    p.set_defaults(func=run)
