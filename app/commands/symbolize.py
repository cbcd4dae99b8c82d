"""``fxscope symbolize``: the symbolizing markup filter, output-compatible with ``llvm-symbolizer --filter-markup``."""

from __future__ import annotations

import argparse
import contextlib
import io
import sys
from pathlib import Path

from fxscope.app.cli_error import CliError


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "symbolize",
        help="symbolize a log with symbolizer markup (like llvm-symbolizer --filter-markup)",
        description="Reads logs (stdin by default), replaces {{{...}}} markup with symbolized text and prints "
        "diagnostics on stderr in llvm-symbolizer's words. Code addresses resolve through GSYM files; data "
        "addresses through ELF symbol tables. A log may be gzip-, xz- or zstd-compressed; an FXT trace "
        "(plain or compressed) gives the crash reports in its log records, each under a line that says "
        "where it was logged.",
    )
    p.add_argument("files", nargs="*", metavar="FILE", help="log files or traces (default: stdin)")
    p.add_argument("--debug-file-directory", action="append", default=[], metavar="DIR",
                   help="directory with a .build-id/xx/rest.debug tree (repeatable)")
    p.add_argument("--symbols", action="append", default=[], metavar="PATH",
                   help="a .gsym or ELF file, a BUILDID.ranges.symbfile, or a directory of those (repeatable)")
    p.add_argument("--debuginfod", action="append", default=None, metavar="URL",
                   help="debuginfod server (repeatable; default: $DEBUGINFOD_URLS)")
    p.add_argument("--color", choices=["always", "never", "auto"], default="auto")
    p.add_argument("--no-color", action="store_const", const="never", dest="color")
    p.set_defaults(func=run)


def _symbol_files(paths: list[str]) -> tuple[list[Path], list[Path], list[Path]]:
    """(GSYM files, ELF files, ranges symbfiles named BUILDID.ranges.symbfile) among the --symbols paths."""
    from fxscope.core.symbolize.resolver import ResolveError, symbfile_build_id

    gsyms: list[Path] = []
    elves: list[Path] = []
    symbfiles: list[Path] = []
    for text in paths:
        path = Path(text)
        if path.is_dir():
            gsyms.extend(sorted(path.glob("*.gsym")))
            symbfiles.extend(sorted(path.glob("*.ranges.symbfile")))
            continue
        if not path.is_file():
            raise CliError(f"{text}: no such file or directory")
        with open(path, "rb") as f:
            head = f.read(8)
        if head[:4] in (b"MYSG", b"GSYM"):
            gsyms.append(path)
        elif head == b"symbfile":
            symbfiles.append(path)
        else:
            elves.append(path)
    for path in symbfiles:
        try:
            symbfile_build_id(path)
        except ResolveError as exc:
            raise CliError(str(exc)) from None
    return gsyms, elves, symbfiles


def run(args: argparse.Namespace) -> int:
    from fxscope.core.symbolize.markup_filter import MarkupFilter
    from fxscope.core.symbolize.resolver import SymbolFileResolver

    gsyms, elves, symbfiles = _symbol_files(args.symbols)
    for directory in args.debug_file_directory:
        if not Path(directory).is_dir():
            raise CliError(f"{directory}: not a directory")
    from fxscope.core.symbols.store import SymbolStore

    dirs = [Path(d) for d in args.debug_file_directory]
    resolver = SymbolFileResolver(gsyms, elves, dirs, store=SymbolStore(dirs, args.debuginfod), symbfile_paths=symbfiles)
    color = args.color == "always" or (args.color == "auto" and sys.stdout.isatty())
    # Output is collected and written in blocks: a symbolized line is a dozen small pieces. Both streams
    # get bytes: the input was decoded with surrogateescape, and bytes that are not UTF-8 go out as they
    # came in (as LLVM does), on stdout and in the line a diagnostic echoes, whatever the locale.
    pending: list[str] = []
    stdout = _binary(sys.stdout)
    stderr = _binary(sys.stderr)

    def flush() -> None:
        stdout.write("".join(pending).encode("utf-8", "surrogateescape"))
        stdout.flush()
        pending.clear()

    def diagnose(text: str) -> None:
        flush()  # keep stdout and stderr in order on a shared terminal
        stderr.write(text.encode("utf-8", "surrogateescape"))
        stderr.flush()

    filt = MarkupFilter(resolver, pending.append, diagnose, color=color)
    sources = args.files or ["-"]
    for source in sources:
        found = None if source == "-" else _detect(source)
        if found is not None and found.is_trace:  # its crash reports, each in a context of its own
            filt.finish()
            for header, text in _trace_reports(source, diagnose):
                pending.append(header)
                report = MarkupFilter(resolver, pending.append, diagnose, color=color)
                report.filter_lines(text)
                report.finish()
                flush()
            continue
        if source == "-":
            stream = sys.stdin.buffer
        elif found is not None and found.compression:
            stream = io.BytesIO(_decompressed_log(source))
        else:
            try:
                stream = open(source, "rb")  # noqa: SIM115 - closed below
            except OSError as exc:
                raise CliError(f"{source}: {exc.strerror}") from None
        with stream if source != "-" else contextlib.nullcontext(stream):
            _filter_stream(stream, filt, flush)
    filt.finish()
    flush()
    return 0


def _detect(source: str):
    """What ``source`` holds (:func:`fxscope.core.filetype.detect`); a file that cannot be read is a CliError."""
    from fxscope.core.filetype import detect
    from fxscope.formats.errors import FormatError

    try:
        return detect(source)
    except FormatError as exc:
        raise CliError(str(exc)) from None


def _decompressed_log(source: str) -> bytes:
    """A compressed log's bytes, as the crash view reads it (:func:`fxscope.core.reports.crash_log.log_bytes`)."""
    from fxscope.core.reports.crash_log import LogReadError, log_bytes

    try:
        return log_bytes(source)
    except LogReadError as exc:
        raise CliError(str(exc)) from None
    except OSError as exc:
        raise CliError(f"{source}: {exc.strerror or exc}") from None


def _trace_reports(source: str, diagnose) -> list[tuple[str, str]]:
    """The crash reports in the log records of the trace ``source``: a header line saying where each was
    logged (process, thread, time since boot as the trace stamps it) and the report's text; a trace without
    one is said on stderr."""
    from fxscope.core.trace.logs import LogTable
    from fxscope.core.trace.reading import read_trace
    from fxscope.formats.errors import FormatError

    try:
        cols = read_trace(source)
    except FormatError as exc:
        raise CliError(str(exc)) from None
    logs = LogTable(cols)
    reports = logs.reports
    if not reports:
        diagnose(f"fxscope: {source}: no crash report (symbolizer markup) in its {len(logs)} log records\n")
        return []
    out = []
    for k, report in enumerate(reports):
        first = int(report.rows[0])
        thread = int(logs.thread[first])
        tid = int(cols.threads_tid[thread]) if 0 <= thread < len(cols.threads_tid) else 0
        when = int(logs.ts[first])
        header = (f"--- {source}: crash report {k + 1} of {len(reports)}, process {int(logs.pid[first])} thread "
                  f"{tid}, at {when // 1_000_000_000}.{when % 1_000_000_000:09d} s ---\n")  # fmt: skip
        out.append((header, logs.report_text_at(k)))
    return out


def _binary(stream):
    """The byte stream under a text stream (what was written to the text layer goes first)."""
    stream.flush()
    return getattr(stream, "buffer", stream)


def _filter_stream(stream, filt, flush) -> None:
    """Feed whole lines to the filter as they arrive: ``read1`` returns what a pipe has (a tail -f keeps
    flowing), and lines without markup are handed over in runs rather than one by one."""
    import codecs

    decoder = codecs.getincrementaldecoder("utf-8")(errors="surrogateescape")
    read = getattr(stream, "read1", stream.read)
    rest = ""
    while True:
        chunk = read(1 << 16)
        text = rest + decoder.decode(chunk, final=not chunk)
        if not chunk:
            if text:
                filt.filter_lines(text)
            flush()
            return
        cut = text.rfind("\n") + 1
        rest = text[cut:]
        if cut:
            filt.filter_lines(text[:cut])
            flush()
