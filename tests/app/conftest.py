"""Fixtures of the window tests."""

from __future__ import annotations

from collections.abc import Callable

import pytest


@pytest.fixture
def trace_tab(qtbot) -> Callable:
    """``trace_tab(model, width=1200, height=700)``: a shown, exposed :class:`~app.main_window.TraceTab` of
    ``model`` (its own top-level window, closed with the test)."""
    from app.main_window import TraceTab

    def make(model, width: int = 1200, height: int = 700):
        tab = TraceTab(model)
        qtbot.addWidget(tab)
        tab.resize(width, height)
        tab.show()
        qtbot.waitExposed(tab)
        return tab

    return make
