"""SFrame lookup benchmark: FRE lookups per second for 100,000 PCs in a real binary with ``.sframe``.

Prints ``sframe_lookups_per_s`` (vectorized :meth:`SFrameSection.rules`) and, as the peer in the same run,
``sframe_scalar_lookups_per_s`` (one :meth:`SFrameSection.rule` call per PC) with their ratio. The binary is
the testdata word counter (built with -Wa,--gsframe) unless a path is given. Then ``symbfile_records_per_s``:
reading a ranges file made from a large real binary (the Python runtime's libpython, converted once and
cached under tests/bench/.cache/). Run: ``.venv/bin/python tests/bench/bench_sframe_symbfile.py [ELF]``.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from fxscope.formats.sframe.section import find_sframe_section, parse_sframe  # noqa: E402


def main() -> None:
    default = ROOT / "tests" / "data" / "sframe" / "textstats" / "binary"
    elf = sys.argv[1] if len(sys.argv) > 1 else str(default)
    section = parse_sframe(*find_sframe_section(elf))
    rng = np.random.default_rng(5)
    pick = rng.integers(0, len(section), 100_000)
    pcs = section.fde_start[pick] + rng.integers(0, 1 << 30, 100_000) % np.maximum(section.fde_size[pick], 1)
    section.rules(pcs[:10])  # builds the FRE table once
    t = time.perf_counter()
    batch = section.rules(pcs)
    vec_s = time.perf_counter() - t
    t = time.perf_counter()
    for pc in pcs[:20_000].tolist():
        section.rule(pc)
    scalar_s = (time.perf_counter() - t) * 5
    print(f"binary: {elf} ({len(section)} FDEs)")
    print(f"sframe_lookups_per_s: {len(pcs) / vec_s:,.0f}  (found {int(batch['found'].sum())} of {len(pcs)})")
    print(f"sframe_scalar_lookups_per_s: {len(pcs) / scalar_s:,.0f}")
    print(f"vectorized_over_scalar: {scalar_s / vec_s:.1f}x")
    symbfile_benchmark()


def symbfile_benchmark() -> None:
    import sysconfig

    from fxscope.core.symbfile_export.create import create_symbfiles
    from fxscope.formats.symbfile.codec import read_symbfile, write_symbfile
    from fxscope.formats.symbfile.table import read_range_table

    lib = Path(sysconfig.get_config_var("LIBDIR") or "") / (sysconfig.get_config_var("INSTSONAME") or "")
    cache = Path(__file__).resolve().parent / ".cache" / f"{lib.name}.ranges.symbfile"
    if not cache.exists():
        cache.parent.mkdir(parents=True, exist_ok=True)
        t = time.perf_counter()
        ranges, _pads = create_symbfiles(lib)
        cache.write_bytes(write_symbfile(ranges))
        print(f"symbfile_create_s: {time.perf_counter() - t:.1f} ({lib})")
    data = cache.read_bytes()
    # best of 3 for each reader, run alternately (the machine is noisy)
    columnar, objects = [], []
    for _ in range(3):
        t = time.perf_counter()
        table = read_range_table(data)
        columnar.append(time.perf_counter() - t)
        t = time.perf_counter()
        records = read_symbfile(data).records
        objects.append(time.perf_counter() - t)
    assert len(table) == len(records) and table.error is None
    print(f"symbfile: {len(data) / 1e6:.1f} MB, {len(records):,} records")
    print(f"symbfile_records_per_s: {len(table) / min(columnar):,.0f}  (columnar reader, read_range_table)")
    print(f"symbfile_object_records_per_s: {len(records) / min(objects):,.0f}  (protobuf runtime, read_symbfile)")
    print(f"columnar_over_objects: {min(objects) / min(columnar):.1f}x")


if __name__ == "__main__":
    main()
