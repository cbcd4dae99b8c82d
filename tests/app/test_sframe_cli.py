"""``fxscope sframe dump`` prints what objdump --sframe (binutils 2.40) printed."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def _run(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "fxscope", *args], capture_output=True, text=True, timeout=120,
                          cwd=cwd, env={**os.environ, "PYTHONPATH": str(ROOT)})


def test_dump_like_objdump(testdata: Path) -> None:
    folder = testdata / "sframe" / "crashdemo"
    result = _run("sframe", "dump", "binary", cwd=folder)
    assert result.returncode == 0, result.stderr
    assert result.stdout == (folder / "objdump-sframe.txt").read_text()


def test_elf_without_sframe(testdata: Path) -> None:
    result = _run("sframe", "dump", "binary", cwd=testdata / "gsym" / "tiny")
    assert result.returncode == 2
    assert result.stderr.strip() == "fxscope: error: binary: no .sframe section"


def test_section_claiming_more_than_the_file_is_one_line_error(testdata: Path, tmp_path: Path) -> None:
    """Issue 13 finding 2: an .sframe header claiming 1 TiB made pyelftools allocate it (internal error:
    MemoryError); now one line naming the section and offset, exit 2."""
    from elftools.elf.elffile import ELFFile

    binary = testdata / "sframe" / "libdemo" / "binary"
    with open(binary, "rb") as fh:
        elf = ELFFile(fh)
        index = next(i for i, s in enumerate(elf.iter_sections()) if s.name == ".sframe")
        header_at = elf["e_shoff"] + index * elf["e_shentsize"]
        data_at = elf.get_section(index)["sh_offset"]
    data = bytearray(binary.read_bytes())
    data[header_at + 32 : header_at + 40] = (1 << 40).to_bytes(8, "little")
    (tmp_path / "binary").write_bytes(bytes(data))
    result = _run("sframe", "dump", "binary", cwd=tmp_path)
    assert result.returncode == 2
    assert result.stderr.startswith(f"fxscope: error: binary: offset 0x{data_at:x}: section [{index}] ")
    assert "past the end of the file" in result.stderr and "internal error" not in result.stderr
    assert len(result.stderr.splitlines()) == 1
