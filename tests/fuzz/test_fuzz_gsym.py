"""GSYM reader on mutated LLVM-made files (header, dump, lookups) and GSYM writer on generated models with
hostile values (negative or huge lines, sizes, addresses, unsorted rows): a FormatError or a file that reads
back and answers lookups at every function start."""

from __future__ import annotations

from pathlib import Path

import pytest
from fuzz_bounds import fuzz_settings
from fuzz_mutations import mutated
from hypothesis import given
from hypothesis import strategies as st

from fxscope.formats.gsym.dump import dump_lines
from fxscope.formats.gsym.model import FunctionInfo, InlineNode, LineRow, SourceFile
from fxscope.formats.gsym.reader import GsymReader
from fxscope.formats.gsym.writer import write_gsym

CASES = ["tiny", "crashdemo", "libdemo", "textstats", "textstats-dwarf4"]


@pytest.fixture(scope="module")
def seeds(testdata: Path) -> list[tuple[bytes, list[int]]]:
    out = []
    for case in CASES:
        folder = testdata / "gsym" / case
        addresses = [int(w, 16) for w in (folder / "addresses.txt").read_text().split()]
        out.append(((folder / "binary.gsym").read_bytes(), addresses))
    return out


@fuzz_settings(80)
@given(st.data())
def test_reader_on_mutated_files(seeds, campaign, data: st.DataObject) -> None:
    seed, addresses = data.draw(st.sampled_from(seeds))
    blob = data.draw(mutated(seed))

    def case():
        with GsymReader.from_bytes(blob) as reader:
            lines = list(dump_lines(reader))
            results = reader.lookup_many(addresses)
            singles = [reader.lookup(a) for a in addresses]  # batch and single lookups agree on every address
            assert [(r.error, r.locations) for r in results] == [(r.error, r.locations) for r in singles]
            return len(lines)

    campaign.run(len(blob), case)


_FILES = st.builds(SourceFile, st.sampled_from(["", "/src", "/very/long/" * 3]), st.sampled_from(["a.c", "b.h", ""]))
HOSTILE = [-1, -4853, 2**32 - 1, 2**32, 2**63, 2**64]


def _value(draw, normal: st.SearchStrategy[int], hostile: list[int] = HOSTILE) -> int:
    """Mostly an ordinary value, one time in sixteen a hostile one (so most models get written and read back)."""
    return draw(st.sampled_from(hostile)) if draw(st.integers(0, 15)) == 9 else draw(normal)


@st.composite
def functions(draw) -> list[FunctionInfo]:
    out = []
    for _ in range(draw(st.integers(0, 6))):
        start = _value(draw, st.integers(0x1000, 0x1400), [0, 2**63, 2**64 - 16, 2**64, -16])
        size = _value(draw, st.integers(0, 0x200))
        rows = None
        if draw(st.booleans()):
            offsets = [*draw(st.lists(st.integers(0, 0x40), min_size=1, max_size=6)), _value(draw, st.just(0), [-4])]
            if draw(st.integers(0, 15)) != 9:
                offsets = sorted(offsets)
            rows = [LineRow(start + o, draw(_FILES), _value(draw, st.integers(0, 200))) for o in offsets]
        inline = None
        if draw(st.booleans()):
            lo = start + _value(draw, st.integers(0, 6), [-2, 20])
            child = InlineNode(draw(st.text(max_size=4)), [(lo, lo + _value(draw, st.integers(1, 8), [-1, 0, 40]))],
                               draw(_FILES),
                               _value(draw, st.integers(0, 200)), [])
            inline = InlineNode("f", [(start, start + 16)], None, 0, [child])
        name = draw(st.sampled_from(["f", "g", "\u00e9\u00e9", "x" * 300])) if draw(st.integers(0, 15)) != 9 else ""
        out.append(FunctionInfo(start, size, name, rows, inline))
    return out


def _nodes(node: InlineNode) -> list[InlineNode]:
    return [node, *(n for child in node.children for n in _nodes(child))]


@fuzz_settings(100)
@given(functions(), st.sampled_from([None, None, None, 0, 0x1000, 2**64]), st.booleans())
def test_writer_on_generated_models(campaign, funcs: list[FunctionInfo], base: int | None, big: bool) -> None:
    def case():
        blob = write_gsym(funcs, b"\x01" * 20, base, big_endian=big)
        with GsymReader.from_bytes(blob) as reader:
            list(dump_lines(reader))
            names = {g.name for g in funcs} | {n.name for g in funcs if g.inline for n in _nodes(g.inline)}
            for f in funcs:
                result = reader.lookup(f.start)
                if f.size and result.ok:  # the innermost frame: the function's or an inlined call's name
                    assert result.locations[-1].name in {g.name for g in funcs if g.start <= f.start}
                    assert result.locations[0].name in names
        return blob

    campaign.run(4096, case)
