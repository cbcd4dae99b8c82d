"""Element boundaries and field values as LLVM's MarkupParser finds them (spec Part 2)."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from fxscope.formats.markup.fields import parse_address, parse_build_id, parse_integer, parse_mode
from fxscope.formats.markup.parser import MarkupParser, parse_line


def test_elements_text_and_columns() -> None:
    nodes = parse_line("foo{{{pc:0x9:ra}}}bar\n")
    assert [n.text for n in nodes] == ["foo", "{{{pc:0x9:ra}}}", "bar\n"]
    pc = nodes[1]
    assert (pc.tag, pc.fields, pc.column, pc.field_columns, pc.tag_end) == ("pc", ("0x9", "ra"), 3, (9, 13), 8)


def test_field_splitting_keeps_empty_fields() -> None:
    assert parse_line("{{{reset:}}}")[0].fields == ("",)
    assert parse_line("{{{reset}}}")[0].fields == ()
    assert parse_line("{{{bt:0:0:}}}")[0].fields == ("0", "0", "")


def test_empty_tag_is_text_and_search_goes_on() -> None:
    nodes = parse_line("a{{{:x}}}b{{{symbol:s}}}c")
    assert [(n.text, n.tag) for n in nodes] == [("a{{{:x}}}b", ""), ("{{{symbol:s}}}", "symbol"), ("c", "")]
    assert [n.text for n in parse_line("x {{{ unterminated")] == ["x {{{ unterminated"]


def test_only_the_llvm_sgr_sequences_are_split_out() -> None:
    nodes = parse_line("\x1b[1mA\x1b[31mB\x1b[0;31mC\x1b[38mD\x1b[0m")
    assert [(n.text, n.is_sgr) for n in nodes] == [
        ("\x1b[1m", True), ("A", False), ("\x1b[31m", True), ("B\x1b[0;31mC\x1b[38mD", False), ("\x1b[0m", True),
    ]


def test_multiline_hexdict() -> None:
    parser = MarkupParser(multiline=True)
    assert parser.feed("regs {{{hexdict:\n") is None
    assert parser.feed("  RAX: 0x5\n") is None
    nodes = parser.feed("}}} done\n")
    assert nodes is not None
    element = next(n for n in nodes if n.tag == "hexdict")
    assert element.fields == ("\n  RAX", " 0x5\n")
    assert parser.feed("{{{hexdict:\n") is None
    assert [n.text for n in parser.flush()] == ["{{{hexdict:\n"]


def test_field_syntax() -> None:
    assert parse_address("000") == 0 and parse_address("0x1F") == 0x1F
    assert parse_address("42") is None and parse_address("0X1") is None and parse_address("") is None
    assert parse_address("0x" + "f" * 17) is None
    assert parse_integer("077") == 63 and parse_integer("0xff") == 255 and parse_integer("12") == 12
    assert parse_integer("079") is None and parse_integer("0x") is None and parse_integer("-1") is None
    assert parse_build_id("0") == b"\x00" and parse_build_id("fg") is None and parse_build_id("") is None
    assert parse_mode("RWX") == "rwx" and parse_mode("wr") is None and parse_mode("") is None


@given(st.text(alphabet="{}:abcx01\x1b[m \n", max_size=60))
def test_parser_never_fails_and_loses_nothing(line: str) -> None:
    assert "".join(n.text for n in parse_line(line)) == line
