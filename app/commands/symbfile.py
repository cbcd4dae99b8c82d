"""``fxscope symbfile dump``: the records of an Elastic symbfile, as text or JSON."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from fxscope.app.cli_error import CliError


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("symbfile", help="Elastic symbfiles")
    ssub = p.add_subparsers(dest="symbfile_command", metavar="SUBCOMMAND", required=True)
    create = ssub.add_parser("create", help="write PREFIX.ranges.symbfile and PREFIX.returnpads.symbfile from DWARF "
                                 "(and PREFIX.symbfiles.json, which ties the two together)")
    create.add_argument("elf", metavar="ELF")
    create.add_argument("-o", "--output", required=True, metavar="PREFIX")
    create.set_defaults(func=_run_create)
    dump = ssub.add_parser("dump", help="print the records of a symbfile")
    dump.add_argument("file", metavar="FILE")
    dump.add_argument("--json", action="store_true", help="one JSON object with the records")
    dump.set_defaults(func=_run_dump)


def _run_dump(args: argparse.Namespace) -> int:
    from fxscope.formats.symbfile.codec import Range, read_symbfile

    try:
        data = Path(args.file).read_bytes()
    except OSError as exc:
        raise CliError(f"{args.file}: {exc.strerror}") from None
    result = read_symbfile(data, path=args.file)
    if args.json:
        records = []
        for r in result.records:
            if isinstance(r, Range):
                records.append({"record": "Range", "elf_va": hex(r.elf_va), "length": r.length, "func": r.func,
                                "file": r.file, "call_file": r.call_file, "call_line": r.call_line,
                                "depth": r.depth, "line_table": [
                                    {"offset": o, "line_number": n, "address": hex(r.elf_va + o)}
                                    for o, n in r.line_table]})
            else:
                records.append({"record": "ReturnPad", "elf_va": hex(r.elf_va),
                                "entries": [{"func": f, "file": fi, "line": ln} for f, fi, ln in r.entries]})
        json.dump({"records": records, "error": result.error}, sys.stdout, indent=2)
        sys.stdout.write("\n")
    else:
        for r in result.records:
            if isinstance(r, Range):
                where = f" {r.file}" if r.file else ""
                call = f" called from {r.call_file or '?'}:{r.call_line}" if r.call_line else ""
                print(f"{'  ' * r.depth}[0x{r.elf_va:x}, 0x{r.elf_va + r.length:x}) {r.func}{where}{call}")
                for off, line in r.line_table:
                    print(f"{'  ' * r.depth}    0x{r.elf_va + off:x} line {line}")
            else:
                trace = " <- ".join(f"{f} {fi}:{ln}" for f, fi, ln in reversed(r.entries))
                print(f"return pad 0x{r.elf_va:x}: {trace}")
    if result.error:
        print(f"fxscope: warning: {args.file}: {result.error}", file=sys.stderr)
    from fxscope.core.symbfile_export.pair import check_pair

    mismatch = check_pair(args.file)
    if mismatch:
        print(f"fxscope: warning: {mismatch}", file=sys.stderr)
    return 0


def _run_create(args: argparse.Namespace) -> int:
    from fxscope.core.symbfile_export.create import create_symbfiles
    from fxscope.core.symbfile_export.fileid import file_id, file_id_hex
    from fxscope.core.symbfile_export.pair import write_pair
    from fxscope.formats.symbfile.codec import write_symbfile

    ranges, pads = create_symbfiles(args.elf)
    write_pair(args.output, write_symbfile(ranges), write_symbfile(pads), file_id_hex(file_id(args.elf)))
    print(f"{args.output}.ranges.symbfile: {len(ranges)} ranges")
    print(f"{args.output}.returnpads.symbfile: {len(pads)} return pads")
    return 0
