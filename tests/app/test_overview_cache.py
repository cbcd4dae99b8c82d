"""The overview strip keeps its density curve and match ticks as pixmaps (every pan or zoom of the timeline
repaints the strip, and only its region moves): the strip must be the pixels it draws without them."""

from __future__ import annotations

import numpy as np
from PySide6.QtWidgets import QGraphicsItem


def test_the_cached_strip_is_the_uncached_pixels(qtbot, sched_model, shown_timeline) -> None:
    timeline = shown_timeline(sched_model)
    strip = timeline.overview
    items = (strip.density_curve, strip.overview_ticks)
    assert all(item.cacheMode() == QGraphicsItem.CacheMode.DeviceCoordinateCache for item in items)
    rng = np.random.default_rng(1)
    strip.show_matches(np.sort(rng.integers(sched_model.start_ns, sched_model.end_ns, 3000)))
    images = {}
    for mode in (QGraphicsItem.CacheMode.DeviceCoordinateCache, QGraphicsItem.CacheMode.NoCache):
        for item in items:
            item.setCacheMode(mode)
        timeline.fit_all()
        frames = []
        for i in range(9):
            timeline.zoom(0.6) if i % 3 == 0 else timeline.pan(0.3 if i % 3 == 1 else -0.1)
            qtbot.wait(1)
            frames.append(strip.grab().toImage())
        images[mode] = frames
    cached, plain = images.values()
    assert all(a == b for a, b in zip(cached, plain, strict=True))
    assert len({bytes(f.constBits()) for f in plain}) > 1  # (the region moved: different frames)
