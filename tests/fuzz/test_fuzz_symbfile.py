"""Elastic symbfiles, mutated: the protobuf-runtime reader and the columnar reader give the same records and
the same error (or both a FormatError), and their lookups agree at every range start."""

from __future__ import annotations

from pathlib import Path

import pytest
from fuzz_bounds import fuzz_settings
from fuzz_mutations import mutated
from hypothesis import given
from hypothesis import strategies as st

from fxscope.core.symbfile_export.create import create_symbfiles
from fxscope.formats.errors import FormatError
from fxscope.formats.symbfile.codec import Range, lookup, read_symbfile, write_symbfile
from fxscope.formats.symbfile.table import read_range_table


@pytest.fixture(scope="module")
def seeds(testdata: Path) -> list[bytes]:
    ranges, pads = create_symbfiles(testdata / "gsym" / "tiny" / "binary")
    return [(testdata / "symbfile" / "inline-no-tco.ranges.symbfile").read_bytes(), write_symbfile(ranges),
            write_symbfile(pads)]


@fuzz_settings(100)
@given(st.data())
def test_readers_agree_on_mutated_files(seeds, campaign, data: st.DataObject) -> None:
    blob = data.draw(mutated(data.draw(st.sampled_from(seeds))))

    def case():
        try:
            expected = read_symbfile(blob)
        except FormatError as exc:
            with pytest.raises(FormatError) as got:
                read_range_table(blob)
            assert str(got.value) == str(exc)
            raise
        table = read_range_table(blob)
        ranges = [r for r in expected.records if isinstance(r, Range)]
        assert [table.record(i) for i in range(len(table))] == ranges
        assert table.error == expected.error
        for r in ranges[:32]:
            assert table.lookup(r.elf_va) == lookup(ranges, r.elf_va)
        return expected

    campaign.run(len(blob), case)
