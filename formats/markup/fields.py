"""Field value syntax of symbolizer markup, accepted exactly as LLVM's filter accepts it (spec 2.4).

Each parser returns the value or ``None``; the caller words the diagnostic
(``expected <kind>; found '<field>'``) because only it knows the column.
"""

from __future__ import annotations

import re

_HEX = re.compile(r"[0-9a-fA-F]+")
_DEC = re.compile(r"[0-9]+")
_OCT = re.compile(r"[0-7]+")
_BIN = re.compile(r"[01]+")
U64_MAX = (1 << 64) - 1


def parse_address(text: str) -> int | None:
    """``%p``: all zeros, or lower-case ``0x`` plus hex digits (any count), at most 64 bits."""
    if not text:
        return None
    if set(text) == {"0"}:
        return 0
    if not text.startswith("0x") or not _HEX.fullmatch(text[2:]):
        return None
    value = int(text[2:], 16)
    return value if value <= U64_MAX else None


def parse_integer(text: str) -> int | None:
    """``%i``: C-style radix (``0x`` hex, ``0b`` binary, ``0o`` or leading ``0`` octal, else decimal)."""
    digits, pattern, base = text, _DEC, 10
    low = text.lower()
    if low.startswith("0x"):
        digits, pattern, base = text[2:], _HEX, 16
    elif low.startswith("0b"):
        digits, pattern, base = text[2:], _BIN, 2
    elif text.startswith("0o"):
        digits, pattern, base = text[2:], _OCT, 8
    elif len(text) > 1 and text[0] == "0" and text[1].isdigit():
        digits, pattern, base = text[1:], _OCT, 8
    if not digits or not pattern.fullmatch(digits):
        return None
    value = int(digits, base)
    return value if value <= U64_MAX else None


def parse_decimal(text: str) -> int | None:
    """``%u``: decimal digits only."""
    if not _DEC.fullmatch(text):
        return None
    value = int(text)
    return value if value <= U64_MAX else None


def parse_build_id(text: str) -> bytes | None:
    """``%x``: hex digits without ``0x``; an odd count gets a leading zero nibble (LLVM 17 and later)."""
    if not text or not _HEX.fullmatch(text):
        return None
    if len(text) % 2:
        text = "0" + text
    return bytes.fromhex(text)


def parse_mode(text: str) -> str | None:
    """``r``, ``w``, ``x`` in that order, each optional, at least one, any case; returned in lower case."""
    if not text or not re.fullmatch(r"r?w?x?", text.lower()):
        return None
    return text.lower()


def parse_pc_type(text: str) -> str | None:
    return text if text in ("ra", "pc") else None
