"""``fxscope screenshot``: render the main window offscreen to a PNG (how to look at the app without a screen)."""

from __future__ import annotations

import argparse
import os

from fxscope.app.cli_error import CliError


def _size(text: str) -> tuple[int, int]:
    try:
        w, h = (int(v) for v in text.lower().split("x"))
    except ValueError:
        raise argparse.ArgumentTypeError(f"size must be WIDTHxHEIGHT, not {text!r}") from None
    if not (100 <= w <= 10000 and 100 <= h <= 10000):
        raise argparse.ArgumentTypeError("width and height must be between 100 and 10000")
    return w, h


def _range(text: str) -> tuple[int, int]:
    try:
        a, b = (int(v) for v in text.split(":"))
    except ValueError:
        raise argparse.ArgumentTypeError(f"range must be START_NS:END_NS, not {text!r}") from None
    if b <= a:
        raise argparse.ArgumentTypeError("range end must be after its start")
    return a, b


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("screenshot", help="render the window for FILE (default: the bundled demo) offscreen to a PNG")
    p.add_argument("file", metavar="FILE", nargs="?", default=None,
                   help="trace or crash log (default: the bundled demo trace, so an installation can be checked)")
    p.add_argument("-o", "--output", required=True, metavar="OUT.png")
    p.add_argument("--size", type=_size, default=(1600, 1000), metavar="WxH")
    p.add_argument("--range", type=_range, default=None, metavar="START_NS:END_NS",
                   help="visible time range in trace nanoseconds")
    p.add_argument("--theme", choices=("light", "dark"), default=None, help="the window's theme (default: the saved one)")
    p.add_argument("--filter", default=None, metavar="TEXT",
                   help="show only the tracks whose process or thread name or id contains TEXT")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    if args.file is None:
        from fxscope.resources import DEMO_TRACE

        args.file = str(DEMO_TRACE)
    if not os.path.isfile(args.file):
        raise CliError(f"{args.file}: no such file")
    from fxscope.app.gui import application
    from fxscope.app.main_window import MainWindow, is_crash_log, load_model
    from fxscope.app.trace_tab import TraceTab

    app = application()
    window = MainWindow()
    if args.theme:
        window.set_theme(args.theme, remember=False)
    if is_crash_log(args.file):
        from fxscope.app.crash.view import CrashView

        view = CrashView()
        view.open_log(args.file)  # the first frame is selected, its source shown
        window.tabs.addTab(view, os.path.basename(args.file))
        tab = None
    else:
        tab = TraceTab(load_model(args.file))  # errors surface as one line through the CLI
        tab.timeline.set_theme(window.theme)
        if args.filter:
            tab.timeline.filter_box.setText(args.filter)
        window.tabs.addTab(tab, os.path.basename(args.file))
    window.resize(*args.size)
    window.show()
    if args.range and tab is not None:
        tab.timeline.set_range_ns(*args.range)
    for _ in range(3):
        app.processEvents()
    image = window.grab().toImage()
    from fxscope.core.atomic_file import atomic_output

    with atomic_output(args.output) as tmp:
        if not image.save(tmp, "PNG"):
            raise CliError(f"{args.output}: could not write the PNG")
    window.close()
    return 0
