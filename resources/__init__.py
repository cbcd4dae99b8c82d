"""Bundled resources: icons, styles and the demo (trace, crash log, binary and symbols)."""

from __future__ import annotations

from pathlib import Path

RESOURCES_DIR = Path(__file__).resolve().parent
DEMO_DIR = RESOURCES_DIR / "demo"
DEMO_TRACE = DEMO_DIR / "demo.fxt"
