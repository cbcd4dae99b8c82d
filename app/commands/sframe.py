"""``fxscope sframe``: SFrame stack-trace sections of ELF files."""

from __future__ import annotations

import argparse
import os
import sys

_FORMATS = {
    ("ELFCLASS64", "EM_X86_64"): "elf64-x86-64",
    ("ELFCLASS64", "EM_AARCH64"): "elf64-littleaarch64",
    ("ELFCLASS64", "EM_S390"): "elf64-s390",
}


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("sframe", help="SFrame stack-trace sections")
    ssub = p.add_subparsers(dest="sframe_command", metavar="SUBCOMMAND", required=True)
    dump = ssub.add_parser("dump", help="print the .sframe section as objdump --sframe does")
    dump.add_argument("elf", metavar="ELF")
    dump.set_defaults(func=_run_dump)


def _file_format(path: str) -> str:
    """objdump's BFD target name for the header line."""
    from fxscope.formats.elf.reader import read_elf

    info = read_elf(path)
    if info.machine == "EM_AARCH64":
        return f"elf{info.elfclass}-{'little' if info.little_endian else 'big'}aarch64"
    key = (f"ELFCLASS{info.elfclass}", info.machine)
    return _FORMATS.get(key, f"elf{info.elfclass}-{info.machine.lower().removeprefix('em_')}")


def _run_dump(args: argparse.Namespace) -> int:
    from fxscope.formats.sframe.dump import objdump_text
    from fxscope.formats.sframe.section import find_sframe_section, parse_sframe

    data, address = find_sframe_section(args.elf)
    section = parse_sframe(data, address, path=args.elf)
    sys.stdout.write(objdump_text(section, args.elf, _file_format(args.elf)))
    for warning in section.warnings:
        print(f"fxscope: warning: {os.path.basename(args.elf)}: {warning}", file=sys.stderr)
    return 0
