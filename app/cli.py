"""The ``fxscope`` command line.

Each subcommand lives in ``app/commands/<name>.py`` and exposes ``register(subparsers)``, which adds its
parser and sets ``func`` (called with the parsed namespace, returns the exit status). Commands are listed
in :data:`COMMANDS` so that a new one is one line here and one module there.

``fxscope`` with no arguments, or with file arguments that are not a command, opens the GUI
(a first argument that is neither a command nor an existing file is an error, not a window)
(``app/gui.py``: ``launch(paths) -> int``); a running fxscope gets the files instead unless
``--new-window`` comes first.

Errors reach the user as one line, ``fxscope: error: ...``, with exit status 2; a traceback is shown
only when ``FXSCOPE_DEBUG=1`` is set.
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys
from collections.abc import Sequence

from fxscope.app import version
from fxscope.app.cli_error import CliError

#: subcommand name -> module under app.commands that registers it
COMMANDS: dict[str, str] = {
    "info": "info",
    "generate": "generate",
    "export": "export",
    "screenshot": "screenshot",
    "gsym": "gsym",
    "symbolize": "symbolize",
    "sframe": "sframe",
    "symbfile": "symbfile",
    "push-symbols": "push_symbols",
    "stats": "stats",
    "stacks": "stacks",
    "diff": "diff",
    "query": "query",
}


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:
        self.print_usage(sys.stderr)
        self.exit(2, f"fxscope: error: {message}\n")


class _VersionAction(argparse.Action):
    """``--version``, with the version looked up only when asked (importlib.metadata is slow to import)."""

    def __init__(self, option_strings, dest=argparse.SUPPRESS, **kwargs) -> None:
        super().__init__(option_strings, dest, nargs=0, help="show the version and exit", **kwargs)

    def __call__(self, parser, namespace, values, option_string=None) -> None:
        print(f"fxscope {version()}")  # on stdout, as argparse's own version action prints it
        parser.exit()


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="fxscope",
        description="Trace (FXT) and crash-report viewer with symbol tooling. "
        "Run without a command to open the GUI (the bundled demo when no file is given).",
    )
    parser.add_argument("--version", action=_VersionAction)
    parser.add_argument("--new-window", action="store_true",
                        help="fxscope --new-window [FILE...]: open a window of its own instead of handing FILE to "
                        "the running fxscope (also FXSCOPE_NEW_INSTANCE=1)")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    for module_name in COMMANDS.values():
        try:
            module = importlib.import_module(f"fxscope.app.commands.{module_name}")
        except ModuleNotFoundError as exc:
            if exc.name == f"fxscope.app.commands.{module_name}":
                continue  # command not built yet
            raise
        module.register(sub)
    return parser


def _fail(message: str) -> int:
    print(f"fxscope: error: {message}", file=sys.stderr)
    return 2


def main(argv: Sequence[str] | None = None) -> int:
    # fxscope does no linear algebra, but numpy's OpenBLAS starts a thread per core when numpy is imported:
    # ~60 ms of a 0.4 s `fxscope symbolize` run. One thread, unless the user asked for more.
    os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
    args_list = list(sys.argv[1:] if argv is None else argv)
    try:
        new_window = bool(args_list) and args_list[0] == "--new-window"
        if new_window:
            args_list = args_list[1:]
        if (not new_window and args_list and args_list[0] not in COMMANDS and not args_list[0].startswith("-")
                and not os.path.exists(args_list[0])):  # a mistyped command, or a file that is not there
            raise CliError(f"no such command or file: {args_list[0]} (commands: {', '.join(COMMANDS)})")
        if new_window or not args_list or (args_list[0] not in COMMANDS and not args_list[0].startswith("-")):
            from fxscope.app import gui

            return gui.launch(args_list, new_window=new_window)
        parser = build_parser()
        args = parser.parse_args(args_list)
        if not getattr(args, "func", None):
            parser.print_help()
            return 0
        maps_before = _maps_made()
        try:
            return int(args.func(args) or 0)
        finally:
            _warn_changed_traces(maps_before)
    except CliError as exc:
        return _fail(str(exc))
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        return 0
    except Exception as exc:  # last line of defence: a user never sees a traceback
        if os.environ.get("FXSCOPE_DEBUG") == "1":
            raise
        from fxscope.formats.errors import FormatError

        if isinstance(exc, (FormatError, OSError)):
            return _fail(str(exc))
        return _fail(f"internal error: {type(exc).__name__}: {exc} (set FXSCOPE_DEBUG=1 for details)")


def _maps_made() -> int:
    """How many trace files were mapped in this process before the command (none if nothing imported the
    module that maps them: importing it for this would cost a command that reads no trace)."""
    mapped_file = sys.modules.get("fxscope.formats.mapped_file")
    return 0 if mapped_file is None else mapped_file.maps_made()


def _warn_changed_traces(maps_before: int) -> None:
    """Say on stderr when a trace file the command read changed on disk while it was open (a truncated
    one reads as zeros past its new end: the output may be incomplete); not the files of maps made before
    the command (``maps_before``: :func:`main` called again in one process, as the tests do)."""
    if "fxscope.formats.mapped_file" not in sys.modules:  # no trace was read: nothing to import
        return
    from fxscope.core.trace.file_change import changed_trace_warnings

    for line in changed_trace_warnings(maps_before):
        print(line, file=sys.stderr)


if __name__ == "__main__":
    raise SystemExit(main())
