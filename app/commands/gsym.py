"""``fxscope gsym``: look up addresses in and dump GSYM files, in llvm-gsymutil's output formats."""

from __future__ import annotations

import argparse
import sys

from fxscope.app.cli_error import CliError


def _address(text: str) -> int:
    try:
        return int(text, 0)
    except ValueError:
        try:
            return int(text, 16)
        except ValueError:
            raise argparse.ArgumentTypeError(f"not an address: {text!r}") from None


def register(sub: argparse._SubParsersAction) -> None:
    parser = sub.add_parser("gsym", help="GSYM symbol files: lookup, dump")
    gsub = parser.add_subparsers(dest="gsym_command", metavar="SUBCOMMAND", required=True)

    convert = gsub.add_parser("convert", help="convert an ELF file's DWARF and symbol table to GSYM")
    convert.add_argument("elf", metavar="ELF")
    convert.add_argument("-o", "--output", required=True, metavar="OUT.gsym")
    convert.set_defaults(func=_run_convert)

    lookup = gsub.add_parser(
        "lookup", help="look up addresses (prints what llvm-gsymutil --address prints)"
    )
    lookup.add_argument("gsym", metavar="FILE.gsym")
    lookup.add_argument("addresses", metavar="ADDR", nargs="+", type=_address, help="0x-prefixed hex or decimal")
    lookup.set_defaults(func=_run_lookup)

    dump = gsub.add_parser("dump", help="dump header, tables and functions (llvm-gsymutil FILE.gsym format)")
    dump.add_argument("gsym", metavar="FILE.gsym")
    dump.set_defaults(func=_run_dump)


def _open(path: str):
    from fxscope.formats.gsym.reader import GsymReader

    try:
        return GsymReader(path)
    except FileNotFoundError:
        raise CliError(f"{path}: no such file") from None


def _run_lookup(args: argparse.Namespace) -> int:
    from fxscope.formats.gsym.reader import format_lookup

    with _open(args.gsym) as reader:
        out = [f'Looking up addresses in "{args.gsym}":\n']
        out.extend(format_lookup(r) for r in reader.lookup_many(args.addresses))
    sys.stdout.write("".join(out))
    return 0


def _run_dump(args: argparse.Namespace) -> int:
    from fxscope.formats.gsym.dump import dump_lines

    with _open(args.gsym) as reader:
        for line in dump_lines(reader):
            sys.stdout.write(line + "\n")
    return 0


def _run_convert(args: argparse.Namespace) -> int:
    from fxscope.core.symbols.gsym_convert import convert_elf_to_gsym

    report = convert_elf_to_gsym(args.elf, args.output)
    for line in report.lines():
        print(line)
    return 0
