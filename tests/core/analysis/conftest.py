"""Fixtures of the analysis tests."""

from __future__ import annotations

from pathlib import Path

import pytest


@pytest.fixture(scope="session")
def fxt_testdata(testdata: Path) -> Path:
    """``tests/data/fxt`` (third-party traces and their MANIFEST)."""
    return testdata / "fxt"
