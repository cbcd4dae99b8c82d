"""The duration histogram's percentile labels: marks a few pixels apart (p50 and p90 of a narrow
distribution) get their labels on different lines instead of drawn over each other."""

from __future__ import annotations

import numpy as np

from fxscope.app.analysis.histogram_view import HistogramView
from fxscope.core.analysis.stats import duration_histogram


def test_close_percentile_labels_take_different_lines(qtbot) -> None:
    view = HistogramView()
    qtbot.addWidget(view)
    view.resize(350, 120)
    rng = np.random.default_rng(1)
    dur = np.r_[rng.integers(7_000, 8_000, 2000), rng.integers(9_000, 9_300, 300), [4_000_000]].astype(np.int64)
    marks = {"p50": int(np.percentile(dur, 50)), "p90": int(np.percentile(dur, 90)), "p99": 4_000_000}
    view.set_histogram(duration_histogram(dur), "rpc", marks)
    view.show()
    qtbot.waitExposed(view)
    lines = []
    real = view._label_line

    def noted(placed, x0, x1):
        line = real(placed, x0, x1)
        lines.append((x0, x1, line))
        return line

    view._label_line = noted
    view.grab()  # (a paint of the widget, now)
    assert len(lines) == 3
    (_a0, a1, la), (b0, _b1, lb), (_c0, _c1, lc) = lines
    assert b0 < a1 + 2  # p50's and p90's labels would overlap on one line (the marks are pixels apart)
    assert la != lb
    assert lc == 0  # p99, far right, on the first line
    # the rule itself: overlapping extents stack, separate ones share the first line
    placed: list = []
    assert [HistogramView._label_line(placed, x, x + 20) for x in (10, 15, 18, 60)] == [0, 1, 2, 0]
