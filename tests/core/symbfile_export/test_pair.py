"""``symbfile create`` writes its two files as a pair (issue 13 finding 5): a writer killed at any rename
leaves either a matching pair or a mismatch that ``symbfile dump`` reports, never a silent mix."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from fxscope.core.symbfile_export.pair import check_pair, manifest_path, pair_paths, write_pair

ROOT = Path(__file__).resolve().parents[3]
ENV = {**os.environ, "PYTHONPATH": str(ROOT)}

# Runs `fxscope symbfile create` and SIGKILLs the process right after its Nth rename into place.
KILL_AFTER_RENAME = """
import os, signal, sys
from fxscope.app.cli import main
real, seen, after = os.replace, [0], int(sys.argv[1])
def replace(src, dst):
    real(src, dst)
    seen[0] += 1
    if seen[0] == after:
        os.kill(os.getpid(), signal.SIGKILL)
os.replace = replace
sys.exit(main(sys.argv[2:]))
"""


def _create(elf: Path, prefix: Path, kill_after: int = 0) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", KILL_AFTER_RENAME, str(kill_after), "symbfile", "create",
                           str(elf), "-o", str(prefix)], env=ENV, capture_output=True, text=True, timeout=300)


def _dump_warnings(path: str) -> str:
    result = subprocess.run([sys.executable, "-m", "fxscope", "symbfile", "dump", path], env=ENV,
                            capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    return result.stderr


def test_write_pair_and_check(tmp_path: Path) -> None:
    prefix = str(tmp_path / "m")
    paths = write_pair(prefix, b"symbfile-ranges", b"symbfile-pads", "00ff")
    assert Path(paths["ranges"]).read_bytes() == b"symbfile-ranges"
    manifest = json.loads(Path(manifest_path(prefix)).read_text())
    assert manifest["file_id"] == "00ff" and manifest["returnpads"]["size"] == len(b"symbfile-pads")
    assert check_pair(paths["ranges"]) is None and check_pair(paths["returnpads"]) is None
    Path(paths["returnpads"]).write_bytes(b"other")  # replaced by hand: said so, from either side
    for path in paths.values():
        assert "returnpads not as written with the rest of the pair" in check_pair(path)
    Path(paths["returnpads"]).unlink()
    assert "returnpads (missing)" in check_pair(paths["ranges"])
    Path(manifest_path(prefix)).write_text("[" * 5000)
    assert "unreadable" in check_pair(paths["ranges"])
    Path(manifest_path(prefix)).unlink()
    assert check_pair(paths["ranges"]) is None  # no manifest (another tool's files): not judged
    assert check_pair(tmp_path / "plain.symbfile") is None


@pytest.mark.slow
def test_a_create_killed_at_any_rename_never_leaves_a_silent_mix(testdata: Path, tmp_path: Path) -> None:
    old_elf, new_elf = testdata / "symbfile" / "inline-no-tco", testdata / "gsym" / "crashdemo" / "binary"
    reference = {}
    for name, elf in (("old", old_elf), ("new", new_elf)):
        assert _create(elf, tmp_path / name).returncode == 0
        reference[name] = {k: Path(p).read_bytes() for k, p in pair_paths(str(tmp_path / name)).items()}
    assert all(reference["old"][k] != reference["new"][k] for k in reference["old"])

    prefix = str(tmp_path / "out")
    paths = pair_paths(prefix)
    # renames in a create: 1 the manifest, 2 the return pads, 3 the ranges
    for kill_after in (1, 2, 3):
        assert _create(old_elf, tmp_path / "out").returncode == 0
        killed = _create(new_elf, tmp_path / "out", kill_after)
        assert killed.returncode == -9
        state = tuple(next(n for n in ("old", "new") if Path(paths[k]).read_bytes() == reference[n][k])
                      for k in ("ranges", "returnpads"))
        warning = _dump_warnings(paths["ranges"])
        if state[0] == state[1] and kill_after == 3:
            assert warning == ""
        else:
            assert "not as written with the rest of the pair" in warning, (kill_after, state)
        assert (state == ("old", "new")) == (kill_after == 2)  # the mixed pair really was left behind
    # the SIGKILLed writers' temporaries are removed by the next create to the same place
    assert _create(new_elf, tmp_path / "out").returncode == 0
    assert _dump_warnings(paths["returnpads"]) == ""
    assert sorted(p.name for p in tmp_path.iterdir() if p.name.startswith((".out", "out"))) == [
        "out.ranges.symbfile", "out.returnpads.symbfile", "out.symbfiles.json"]
