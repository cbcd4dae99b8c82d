"""Atomic output files: write to a temporary file beside the target, then rename over it.

A reader of the target never sees a half-written file, and a failed write leaves the old file intact.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
from collections.abc import Iterator


@contextlib.contextmanager
def atomic_output(path: str | os.PathLike[str]) -> Iterator[str]:
    """Yield a temporary path in the target's directory; on success it replaces ``path``."""
    target = os.fspath(path)
    directory = os.path.dirname(os.path.abspath(target))
    fd, tmp = tempfile.mkstemp(prefix=".fxscope-", suffix=os.path.splitext(target)[1], dir=directory)
    os.close(fd)
    try:
        yield tmp
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(tmp, 0o666 & ~umask)  # mkstemp makes 0600; give the file the permissions a plain open would
        os.replace(tmp, target)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def write_atomic(path: str | os.PathLike[str], data: bytes) -> None:
    with atomic_output(path) as tmp, open(tmp, "wb") as fh:
        fh.write(data)
