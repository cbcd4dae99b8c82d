"""A GSYM file truncated or rewritten in place while a reader has it mapped (a tool rebuilding it at the same
path while the window shows a crash report): the process must not die of SIGBUS, the reader says what
changed, and the resolver opens the file again.

Each case runs in a child process (a SIGBUS would kill this one), with the compiled guard and with the
pure-Python fallback (``FXSCOPE_NO_COMPILED=1``). The file is llvm-gsymutil's (tests/data/gsym/textstats): one
page, so truncating it to nothing leaves every read of the map past the file's end.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from fxscope.formats.gsym.reader import GsymReader

DATA = Path(__file__).resolve().parents[2] / "data" / "gsym" / "textstats"

PREAMBLE = """
import os, sys
from fxscope.formats.gsym.reader import GsymReader
path = sys.argv[1]
addresses = [int(line.split()[0], 16) for line in open(sys.argv[2]) if line.strip()]
"""

MODES = [
    pytest.param({}, id="compiled"),
    pytest.param({"FXSCOPE_NO_COMPILED": "1"}, id="fallback"),
]


def _addresses() -> list[int]:
    return [int(line.split()[0], 16) for line in (DATA / "addresses.txt").read_text().splitlines() if line.strip()]


def _run(tmp_path: Path, body: str, env_extra: dict) -> subprocess.CompletedProcess:
    gsym = tmp_path / "binary.gsym"
    shutil.copy(DATA / "binary.gsym", gsym)
    script = tmp_path / "child.py"
    script.write_text(PREAMBLE + textwrap.dedent(body))
    env = {key: value for key, value in os.environ.items() if key != "FXSCOPE_NO_COMPILED"} | env_extra
    return subprocess.run([sys.executable, str(script), str(gsym), str(DATA / "addresses.txt")], env=env,
                          capture_output=True, text=True, timeout=120)  # fmt: skip


@pytest.mark.parametrize("env", MODES)
def test_lookups_after_truncation_do_not_kill_and_say_so(tmp_path, env):
    got = _run(tmp_path, """
        reader = GsymReader(path)
        before = [reader.lookup(a) for a in addresses]
        print("resolved before", sum(r.ok for r in before), flush=True)
        os.truncate(path, 0)
        after = [reader.lookup(a) for a in addresses]
        many = reader.lookup_many(addresses)
        print("resolved after", sum(r.ok for r in after), sum(r.ok for r in many), flush=True)
        print("change", reader.change().message(), flush=True)
    """, env)
    assert got.returncode == 0, got.stderr
    out = got.stdout.splitlines()
    with GsymReader(DATA / "binary.gsym") as intact:  # (in this process, the file untouched)
        resolved = sum(intact.lookup(a).ok for a in _addresses())
    assert resolved > 40 and out[0] == f"resolved before {resolved}"
    assert out[1].startswith("resolved after")  # the lookups after the truncation returned (zeros decoded)
    assert "the GSYM file" in out[2] and "truncated from 2584 to 0 bytes" in out[2]
    assert "reload it" in out[2]


@pytest.mark.parametrize("env", MODES)
def test_resolver_opens_a_rebuilt_file_again(tmp_path, env):
    """Rewritten in place with the same symbols: the next frames come from the new file, the same as before;
    emptied: a ResolveError that says what happened, not a crash."""
    got = _run(tmp_path, """
        from fxscope.core.symbolize.resolver import ResolveError, SymbolFileResolver
        resolver = SymbolFileResolver(gsym_paths=[path])
        uuid = GsymReader(path).uuid
        first = resolver._gsyms[uuid]
        before = [resolver.code(uuid, a) for a in addresses]
        data = open(path, "rb").read()
        with open(path, "r+b") as fh:  # in place: the same inode, truncated then written (O_TRUNC-like)
            fh.truncate(0)
            fh.flush()
            os.utime(path, ns=(1, 1))  # (a new modification time even on a coarse-clock filesystem)
            fh.write(data)
        again = [resolver.code(uuid, a) for a in addresses]
        print("same", again == before, "reopened", resolver._gsyms[uuid] is not first, flush=True)
        os.truncate(path, 0)
        try:
            resolver.code(uuid, addresses[0])
        except ResolveError as exc:
            print("error", exc, flush=True)
    """, env)
    assert got.returncode == 0, got.stderr
    out = got.stdout.splitlines()
    assert out[0] == "same True reopened True"
    assert out[1].startswith("error the GSYM file") and "opening it again failed" in out[1]
