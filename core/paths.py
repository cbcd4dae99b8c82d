"""Where fxscope keeps per-user data: one cache directory (XDG on Linux), overridable for tests and CI."""

from __future__ import annotations

import os
from pathlib import Path


def user_cache_dir() -> Path:
    """``$FXSCOPE_CACHE_DIR``, else ``$XDG_CACHE_HOME/fxscope``, else ``~/.cache/fxscope``."""
    override = os.environ.get("FXSCOPE_CACHE_DIR")
    if override:
        return Path(override)
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "fxscope"
