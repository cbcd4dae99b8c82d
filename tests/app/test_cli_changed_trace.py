"""A command whose trace file is truncated while it runs ends normally and says so on stderr (app/cli.py)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
DEMO = ROOT / "resources" / "demo" / "demo.fxt"

#: truncate the trace when the command builds its model (after the read, while the file is mapped)
CHILD = """
import os, sys
from fxscope.app import cli
from fxscope.core.trace import model

original = model.TraceModel.__init__

def truncating_init(self, cols, *args, **kwargs):
    os.truncate(cols.path, 4096)
    original(self, cols, *args, **kwargs)

model.TraceModel.__init__ = truncating_init
sys.exit(cli.main(sys.argv[1:]))
"""


def test_stats_on_a_trace_truncated_while_open_warns(tmp_path):
    trace = tmp_path / "trace.fxt"
    shutil.copy(DEMO, trace)
    script = tmp_path / "child.py"
    script.write_text(textwrap.dedent(CHILD))
    got = subprocess.run([sys.executable, str(script), "stats", str(trace)], capture_output=True, text=True,
                         timeout=120, env={**os.environ})  # fmt: skip
    assert got.returncode == 0, got.stderr
    assert got.stdout.strip()  # the statistics (of what could be read)
    size = DEMO.stat().st_size
    assert (f"warning: the trace file {trace} changed on disk while open (truncated from {size} to 4096 bytes"
            in got.stderr)  # fmt: skip
    assert "Traceback" not in got.stderr


def test_unchanged_trace_prints_no_warning(tmp_path):
    trace = tmp_path / "trace.fxt"
    shutil.copy(DEMO, trace)
    got = subprocess.run([sys.executable, "-m", "fxscope", "stats", str(trace)], capture_output=True, text=True,
                         timeout=120)  # fmt: skip
    assert got.returncode == 0, got.stderr
    assert "changed on disk" not in got.stderr


def test_a_command_reports_only_the_traces_it_read(tmp_path, capsys):
    """:func:`cli.main` called again in one process (as tests and scripts do) does not report a trace that an
    earlier caller read and that changed since: only the command's own."""
    from fxscope.app import cli
    from fxscope.formats.fxt.reader import read_fxt

    earlier = tmp_path / "earlier.fxt"
    shutil.copy(DEMO, earlier)
    cols = read_fxt(str(earlier))  # still open (mapped) while the command runs
    os.truncate(earlier, 4096)
    trace = tmp_path / "trace.fxt"
    shutil.copy(DEMO, trace)
    assert cli.main(["stats", str(trace)]) == 0
    assert "changed on disk" not in capsys.readouterr().err
    mine = tmp_path / "mine.fxt"
    shutil.copy(DEMO, mine)
    assert cli.main(["stats", str(mine)]) == 0  # (the earlier one's change is still not this command's)
    assert "changed on disk" not in capsys.readouterr().err
    del cols
