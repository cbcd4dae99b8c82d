"""The error a GSYM lookup reports: its own module so that the reader and its byte cursor share it without
importing each other."""

from __future__ import annotations

from fxscope.formats.errors import FormatError


class GsymLookupError(FormatError):
    """An address that a GSYM file does not cover, or whose FunctionInfo is broken; ``str()`` is LLVM's
    wording exactly (``llvm-gsymutil --address`` prints it after ``error:``), so no path or offset is added."""
