"""The symbolizer-markup filter on mutated logs (the real crash log and LLVM's lit inputs) and on generated
markup elements with hostile fields: output and diagnostics, never an exception, within the bounds."""

from __future__ import annotations

from pathlib import Path

import pytest
from fuzz_bounds import fuzz_settings
from fuzz_mutations import mutated
from hypothesis import given
from hypothesis import strategies as st

from fxscope.core.symbolize.markup_filter import filter_text
from fxscope.core.symbolize.resolver import SymbolFileResolver


@pytest.fixture(scope="module")
def resolver(testdata: Path) -> SymbolFileResolver:
    demo = testdata / "markup" / "crash-demo"
    return SymbolFileResolver(
        [testdata / "gsym" / "crashdemo" / "binary.gsym", testdata / "gsym" / "libdemo" / "binary.gsym"],
        sorted((demo / ".build-id").glob("*/*.debug")),
    )


@pytest.fixture(scope="module")
def logs(testdata: Path) -> list[bytes]:
    lit = sorted((testdata / "markup" / "llvm-lit").glob("*/input.txt"))
    return [(testdata / "markup" / "crash-demo" / "input.log").read_bytes()] + [p.read_bytes() for p in lit[:8]]


@fuzz_settings(60)
@given(st.data())
def test_mutated_logs(resolver, logs, campaign, data: st.DataObject) -> None:
    blob = data.draw(mutated(data.draw(st.sampled_from(logs)), max_ops=8))
    color = data.draw(st.booleans())
    campaign.run(len(blob), lambda: filter_text(blob.decode("utf-8", "surrogateescape"), resolver, color=color))


_FIELD = st.one_of(
    st.sampled_from(["0", "0x0", "0x1234", "0xffffffffffffffff", "0x10000000000000000", "-1", "", "x", "1e9",
                     "elf", "load", "r", "rwx", "3d3a85572513e6cff897b8e9637d480eeb092027", "ra", "pc"]),
    st.text(alphabet="0123456789abcdefx:{}\\\x1b[m ", max_size=12),
)
_TAG = st.sampled_from(["reset", "module", "mmap", "bt", "pc", "data", "hexdict", "dumpfile", "symbol", "unknown",
                        ""])


@st.composite
def markup_lines(draw) -> str:
    lines = []
    for _ in range(draw(st.integers(1, 12))):
        tag = draw(_TAG)
        fields = draw(st.lists(_FIELD, max_size=6))
        element = "{{{" + ":".join([tag, *fields]) + "}}}"
        lines.append(draw(st.sampled_from(["", "[1.0] ", "\x1b[31m"])) + element + draw(st.sampled_from(["", " x",
                                                                                                       "{{{"])))
    return "\n".join(lines) + draw(st.sampled_from(["", "\n"]))


@fuzz_settings(80)
@given(markup_lines(), st.booleans())
def test_generated_markup(resolver, campaign, text: str, color: bool) -> None:
    campaign.run(len(text.encode()), lambda: filter_text(text, resolver, color=color))
