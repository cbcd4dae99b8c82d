"""Regression guard: PySide6 6.12.0 on Python 3.11 dropped a reference to ``None`` on every void Qt call.

After a few thousand calls the interpreter aborts. pyproject.toml pins ``PySide6-Essentials<6.12`` for
Python < 3.12; this test catches a build that still has the bug, whatever version it claims.
"""

from __future__ import annotations

import sys

from PySide6.QtCore import QObject, QPointF


def test_void_qt_calls_keep_none_refcount() -> None:
    obj = QObject()
    point = QPointF(1.0, 2.0)
    before = sys.getrefcount(None)
    for i in range(5000):
        obj.setObjectName(f"n{i % 7}")  # void call
        point.setX(float(i))  # void call
    after = sys.getrefcount(None)
    assert after >= before - 50, f"refcount of None fell from {before} to {after} across void Qt calls"
