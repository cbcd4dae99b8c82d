"""Diagnostics as llvm-symbolizer prints them (carets counted in bytes), and bounded: the first few of a line
in LLVM's words, then one note, so that output stays linear in the input (issue 14, output amplification)."""

from __future__ import annotations

import re
from pathlib import Path

from fxscope.core.symbolize.markup_filter import MAX_LINE_DIAGNOSTICS, filter_text
from fxscope.core.symbolize.resolver import SymbolFileResolver


def _split_diagnostics(text: str) -> list[str]:
    """stderr text cut before each ``error:``/``warning:`` line."""
    return [d for d in re.split(r"(?m)^(?=(?:error|warning): )", text) if d]


def test_first_diagnostics_of_a_line_are_llvm_19s_then_one_note(testdata: Path) -> None:
    case = testdata / "markup" / "diagnostics"
    out, err = filter_text((case / "eight-bad-elements.log").read_text(), SymbolFileResolver())
    assert out == (case / "eight-bad-elements.llvm19.stdout").read_text()
    llvm = _split_diagnostics((case / "eight-bad-elements.llvm19.stderr").read_text())
    assert len(llvm) == 8
    note = (f"note: {8 - MAX_LINE_DIAGNOSTICS} more diagnostics for this line suppressed "
            f"(fxscope prints the first {MAX_LINE_DIAGNOSTICS} of a line)\n")
    assert err.endswith(note)
    assert _split_diagnostics(err[: -len(note)]) == llvm[:MAX_LINE_DIAGNOSTICS]


def test_six_thousand_bad_elements_on_one_line_stay_linear() -> None:
    """A 90 KB line of 6,000 pc elements no mmap covers: LLVM writes 6,000 echoes of the line (~1 GB);
    the output here is bounded by a constant times the input, and each line is counted on its own."""
    line = " ".join(f"{{{{{{pc:0x{0x7f0000000000 + 16 * i:x}}}}}}}" for i in range(6000)) + "\n"
    assert len(line) > 90_000
    text = line * 2 + "no markup here\n"
    out, err = filter_text(text, SymbolFileResolver())
    assert len(err) < 2 * (MAX_LINE_DIAGNOSTICS * 2 + 1) * len(line)
    assert err.count("error: no mmap covers address\n") == 2 * MAX_LINE_DIAGNOSTICS
    assert err.count(f"note: {6000 - MAX_LINE_DIAGNOSTICS} more diagnostics for this line suppressed") == 2
    assert out.count("[[[pc:0x") == 12000 and out.endswith("no markup here\n")


def test_caret_counts_bytes_as_llvm_does(testdata: Path) -> None:
    """Valid UTF-8 before an element moves LLVM's caret by its bytes (``é`` is two); the text the filter
    sees is decoded with surrogateescape, as the command line decodes it."""
    case = testdata / "markup" / "diagnostics"
    text = (case / "invalid-utf8.log").read_bytes().decode("utf-8", "surrogateescape")
    out, err = filter_text(text, SymbolFileResolver())
    assert out.encode("utf-8", "surrogateescape") == (case / "invalid-utf8.llvm19.stdout").read_bytes()
    assert err.encode("utf-8", "surrogateescape") == (case / "invalid-utf8.llvm19.stderr").read_bytes()
