"""The Qt application and the ``fxscope`` command line: the only layer that imports PySide6/pyqtgraph."""

from __future__ import annotations


def version() -> str:
    """The installed distribution's version: pyproject.toml is the one place it is written."""
    from importlib.metadata import PackageNotFoundError
    from importlib.metadata import version as _version

    try:
        return _version("fxscope")
    except PackageNotFoundError:  # running from a source tree that was never installed
        return "0+unknown"
