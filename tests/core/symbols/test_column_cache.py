"""The columns cached beside a GSYM file answer exactly as the DWARF they came from, a warm symbol cache
symbolizes without decoding DWARF, and a damaged columns file only costs the decode it was meant to save."""

from __future__ import annotations

import random
from collections import Counter
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from fxscope.core.symbolize.markup_filter import filter_text
from fxscope.core.symbolize.resolver import SymbolFileResolver
from fxscope.core.symbols.column_cache import decode_columns, encode_columns, load_columns
from fxscope.core.symbols.store import SymbolStore
from fxscope.formats.dwarf.functions import read_dwarf
from fxscope.formats.dwarf.model import DwarfModel
from fxscope.formats.elf.reader import read_elf

ROOT = Path(__file__).resolve().parents[3]
DATA = ROOT / "tests" / "data"
#: the corpus ELFs with DWARF (one of each build)
ELVES = [
    "gsym/crashdemo/binary", "gsym/libdemo/binary", "gsym/textstats/binary", "gsym/textstats-dwarf4/binary",
    "gsym/tiny/binary", "markup/cpython-crash/pycrash", "markup/llvm-lit/bt/.build-id/ab/cdef.debug",
    "markup/llvm-lit/pc/.build-id/ab/cdef.debug", "markup/relative-dirs/reldirs-dwarf4",
    "markup/relative-dirs/reldirs-dwarf5", "sframe/crashdemo-fp/binary", "sframe/textstats/binary",
    "sframe/textstats-fp/binary", "symbfile/inline-no-tco",
]  # fmt: skip


def _interesting(model: DwarfModel) -> list[int]:
    """Every boundary where an answer can change (rows, function and inline ranges), and its neighbours."""
    edges = {a for cu in model.sequences for seq in cu for a in seq.addresses}
    for fn in model.functions:
        edges.update(x for lo, hi in fn.ranges for x in (lo, hi))
        stack = list(fn.inlines)
        while stack:
            node = stack.pop()
            edges.update(x for lo, hi in node.ranges for x in (lo, hi))
            stack.extend(node.children)
    return sorted({a + d for a in edges for d in (-1, 0, 1) if a + d >= 0})


def _same(model: DwarfModel, table, address: int) -> None:
    for count in range(1, 7):
        assert table.columns(address, count) == model.frame_columns(address, count), (hex(address), count)
    assert table.row_at(address) == (model.row_at(address) if 0 <= address < 2**64 else None), hex(address)


@pytest.mark.parametrize("name", ELVES)
def test_cached_columns_equal_dwarf_columns(name: str) -> None:
    path = DATA / name
    model = read_dwarf(path)
    build_id = read_elf(path).build_id or b"\x01"
    data = encode_columns(model, build_id)
    assert data is not None
    table = decode_columns(data, build_id)
    assert table is not None
    addresses = _interesting(model)
    assert any(model.frame_columns(a, 1) != [0] for a in addresses)  # the file has columns to get right
    assert any(model.row_at(a) for a in addresses)  # and rows
    rng = random.Random(14)
    high = max(addresses) + 64
    for address in addresses + [rng.randrange(high) for _ in range(2000)] + [2**64 - 1, 2**64, -1]:
        _same(model, table, address)


_DEMO_LIB = DATA / "markup" / "crash-demo" / ".build-id" / "5c" / "7743dceebb74fe9bb07feedcededf0da0e852d.debug"
_DEMO_MODEL = read_dwarf(_DEMO_LIB)
_DEMO_TABLE = decode_columns(encode_columns(_DEMO_MODEL, b"id") or b"", b"id")


@settings(max_examples=500, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.integers(min_value=0, max_value=0x3000))
def test_random_addresses_of_the_demo_library(address: int) -> None:
    _same(_DEMO_MODEL, _DEMO_TABLE, address)


def test_inline_call_columns_come_from_the_cache() -> None:
    """The demo library has inlined calls; their call columns (not just the rows') come out of the file."""
    model = read_dwarf(DATA / "markup" / "crash-demo" / ".build-id" / "3d" / "3a85572513e6cff897b8e9637d480eeb092027.debug")
    table = decode_columns(encode_columns(model, b"id") or b"", b"id")
    deep = [a for a in _interesting(model) if model.frame_columns(a, 2) != [0, 0]]
    assert deep
    assert all(table.columns(a, 2) == model.frame_columns(a, 2) for a in deep)


def test_damaged_files_read_as_missing() -> None:
    data = encode_columns(_DEMO_MODEL, b"\xab" * 20)
    assert data is not None and decode_columns(data, b"\xab" * 20) is not None
    assert decode_columns(data, b"\xcd" * 20) is None  # another module's
    assert decode_columns(data[:8] + b"\x02" + data[9:], b"\xab" * 20) is None  # another version
    for cut in range(0, len(data), max(1, len(data) // 300)):
        assert decode_columns(data[:cut], b"\xab" * 20) is None
    rng = random.Random(3)
    for _ in range(300):
        i = rng.randrange(len(data))
        flipped = data[:i] + bytes([data[i] ^ (1 << rng.randrange(8))]) + data[i + 1 :]
        assert decode_columns(flipped, b"\xab" * 20) is None
    assert decode_columns(b"", b"") is None


def _symbolize(demo: Path, cache: Path) -> tuple[str, str]:
    store = SymbolStore([demo], debuginfod_urls=[], cache_dir=cache)
    return filter_text((demo / "input.log").read_text(), SymbolFileResolver([], [], [demo], store=store))


def test_warm_cache_symbolizes_without_dwarf(tmp_path: Path, decodes: Counter) -> None:
    demo = DATA / "markup" / "crash-demo"
    cold = _symbolize(demo, tmp_path / "cache")
    assert cold == ((demo / "expected.llvm19.stdout").read_text(), (demo / "expected.llvm19.stderr").read_text())
    assert sorted(decodes.values()) == [1, 1]
    assert len(list((tmp_path / "cache" / "gsym").glob("*.columns"))) == 2
    decodes.clear()
    assert _symbolize(demo, tmp_path / "cache") == cold
    assert not decodes  # columns from the cache; no frame of the demo needs the line table itself


@pytest.mark.parametrize("damage", ["truncate", "garbage", "delete"])
def test_damaged_columns_file_falls_back_to_dwarf(tmp_path: Path, decodes: Counter, damage: str) -> None:
    demo = DATA / "markup" / "crash-demo"
    cold = _symbolize(demo, tmp_path / "cache")
    files = sorted((tmp_path / "cache" / "gsym").glob("*.columns"))
    good = {f: f.read_bytes() for f in files}
    for f in files:
        if damage == "truncate":
            f.write_bytes(good[f][: len(good[f]) // 2])
        elif damage == "garbage":
            f.write_bytes(b"FXCOLUMN" + b"\xff" * 64)
        else:
            f.unlink()  # a cache of an fxscope that kept no columns
    decodes.clear()
    assert _symbolize(demo, tmp_path / "cache") == cold
    assert sorted(decodes.values()) == [1, 1]
    assert {f: f.read_bytes() for f in files} == good  # rewritten from the DWARF, for the next run
    assert load_columns(files[0], bytes.fromhex(files[0].stem)) is not None


def test_without_the_elf_columns_stay_zero_as_before(tmp_path: Path) -> None:
    """Columns print only when the module's ELF is at hand (as llvm-symbolizer reads them from it): a cached
    columns file does not change what a run with the GSYM alone prints."""
    demo = DATA / "markup" / "crash-demo"
    _symbolize(demo, tmp_path / "cache")  # fills the cache with GSYM and columns
    store = SymbolStore([], debuginfod_urls=[], cache_dir=tmp_path / "cache")
    resolver = SymbolFileResolver(store=store)
    build_id = bytes.fromhex("5c7743dceebb74fe9bb07feedcededf0da0e852d")
    frames = [f for a in range(0x1000, 0x1400, 4) for f in resolver.code(build_id, a)]
    assert any(f.line for f in frames)
    assert all(f.column == 0 for f in frames)


def _random_model(rng: random.Random) -> DwarfModel:
    """Overlapping, nested and far-apart sequences and functions (the 16 MiB look-back of row_at and
    function_at matters only where intervals are that far apart, which the corpus binaries are not)."""
    from fxscope.formats.dwarf.model import DwarfFunction, LineSequence
    from fxscope.formats.gsym.model import InlineNode, SourceFile

    files = [SourceFile(f"/src/d{i}", f"f{i}.c") for i in range(4)] + [None]
    spread = 1 << 26
    sequences = []
    for _ in range(rng.randrange(1, 12)):
        low = rng.randrange(spread)
        addresses = sorted(low + rng.randrange(1 << rng.choice((4, 12, 25))) for _ in range(rng.randrange(1, 8)))
        addresses[0] = low
        n = len(addresses) + 1
        addresses.append(addresses[-1] + rng.randrange(1, 1 << rng.choice((4, 25))))
        sequences.append(LineSequence(addresses, [rng.choice(files) for _ in range(n)],
                                      [rng.randrange(100) for _ in range(n)], [False] * (n - 1) + [True],
                                      [rng.randrange(80) for _ in range(n)] if rng.random() < 0.8 else []))  # fmt: skip

    def nodes(lo: int, depth: int) -> list[InlineNode]:
        out = []
        for _ in range(rng.randrange(0, 3) if depth < 3 else 0):
            start = lo + rng.randrange(64)
            out.append(InlineNode("f", [(start, start + rng.randrange(1, 64))], call_column=rng.randrange(50),
                                  children=nodes(start, depth + 1)))  # fmt: skip
        return out

    functions_ = []
    for _ in range(rng.randrange(0, 10)):
        lo = rng.randrange(spread)
        hi = lo + rng.randrange(1, 1 << rng.choice((6, 25)))
        functions_.append(DwarfFunction("f", [(lo, hi)], None, 0, 0, nodes(lo, 0)))
    return DwarfModel(functions_, [sequences], [])


def test_random_models_far_apart() -> None:
    rng = random.Random(141)
    for _ in range(150):
        model = _random_model(rng)
        table = decode_columns(encode_columns(model, b"id") or b"", b"id")
        assert table is not None
        probes = _interesting(model) + [rng.randrange(1 << 27) for _ in range(200)]
        for address in probes:
            _same(model, table, address)
