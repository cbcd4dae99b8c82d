"""The level-of-detail pyramid (and the direct merge used zoomed in past it) against the slices themselves: whatever the window and resolution, every
slice at least a pixel long is drawn as itself, every slice in the window is covered by a box of its depth,
boxes stay in the window, and their number is bounded by the pixels, not by the slices."""

from __future__ import annotations

import numpy as np
import pytest

from core.synthetic_trace import generate_trace
from core.trace.lod import LONG_BUCKETS
from core.trace.model import TraceModel
from formats.fxt.reader import read_fxt, read_fxt_bytes
from resources import DEMO_TRACE


@pytest.fixture(scope="module", params=["demo", "generated"])
def model(request) -> TraceModel:
    if request.param == "demo":
        return TraceModel(read_fxt(DEMO_TRACE))
    return TraceModel(read_fxt_bytes(generate_trace(200_000, seed=7)))


def test_pyramid_frames_keep_what_the_eye_needs(model: TraceModel) -> None:
    rng = np.random.default_rng(3)
    s = model.slices
    span = model.end_ns - model.start_ns
    checked = 0
    for _ in range(40):
        width = max(int(span * rng.choice([1.0, 0.3, 0.05, 0.01, 1e-4, 1e-5])), 1000)
        t0 = model.start_ns + int(rng.integers(0, max(span - width, 1)))
        t1 = t0 + width
        pixels = int(rng.choice([800, 1920]))
        ns_per_px = width / pixels
        level = model.pyramid.level_for(ns_per_px)
        # the pyramid's bucket, or (zoomed in past it) the pixel the direct merge uses
        bucket = (1 << level.shift) if level is not None else max(ns_per_px, 1.0)
        for track in model.tracks:
            vis = model.visible(track, t0, t1, ns_per_px)
            assert ((vis.end > t0) & (vis.start < t1)).all()
            for d, rows in enumerate(track.by_depth):
                at = vis.depth == d
                assert at.sum() <= 2 * width / bucket + 2 * LONG_BUCKETS + 4  # bounded by pixels
                inside = rows[(s.ts[rows] < t1) & (s.ts[rows] + s.dur[rows] > t0)]
                wide = inside[s.dur[inside] >= bucket]
                pairs = zip(vis.start[at].tolist(), vis.end[at].tolist(), strict=True)
                drawn = dict(zip(vis.rows[at].tolist(), pairs, strict=True))
                for r in wide.tolist():  # a pixel or longer: drawn as itself
                    assert drawn.get(r) == (int(s.ts[r]), int(s.ts[r] + s.dur[r]))
                # every slice in the window is under some box of its depth (within a bucket)
                order = np.argsort(vis.start[at], kind="stable")
                bs, be = vis.start[at][order], np.maximum.accumulate(vis.end[at][order]) if at.any() else []
                p = np.maximum(s.ts[inside], t0)
                k = np.searchsorted(bs, p + bucket, side="right") - 1
                assert (k >= 0).all() and (np.asarray(be)[k] >= p - bucket).all()
                checked += len(inside)
    assert checked > 1000
