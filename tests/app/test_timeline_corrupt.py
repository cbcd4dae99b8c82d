"""The timeline on corrupted traces: whatever partial result the reader returns, the window builds, draws at
every zoom, hit-tests, selects and searches without an exception escaping (a Python exception inside a Qt
paint can take the process down). Seeded corruptions of the bundled demo, as a user's damaged file would be:
truncation, flipped bytes, overwritten words, spliced ranges."""

from __future__ import annotations

import logging
import random

import pytest

from fxscope.core.trace.model import TraceModel
from fxscope.core.trace.prepare import prepare_model
from fxscope.formats.fxt.reader import read_fxt_bytes
from fxscope.resources import DEMO_TRACE


def _corrupt(data: bytes, rng: random.Random) -> bytes:
    b = bytearray(data)
    mode = rng.choice(["trunc", "flip", "words", "splice"])
    if mode == "trunc":
        return bytes(b[: rng.randrange(8, len(b))])
    if mode == "flip":
        for _ in range(rng.randrange(1, 200)):
            b[rng.randrange(len(b))] = rng.randrange(256)
    elif mode == "words":  # whole 64-bit words: headers, timestamps, string refs
        for _ in range(rng.randrange(1, 50)):
            i = rng.randrange(len(b) // 8) * 8
            b[i : i + 8] = rng.randrange(1 << 64).to_bytes(8, "little")
    else:
        a, c = rng.randrange(len(b)), rng.randrange(len(b))
        b[a:a] = b[c : c + rng.randrange(1, 4000)]
    return bytes(b)


@pytest.mark.parametrize("seed", range(12))
def test_corrupted_trace_opens_draws_and_selects(qtbot, trace_tab, caplog, seed: int) -> None:
    rng = random.Random(seed)
    try:
        cols = read_fxt_bytes(_corrupt(DEMO_TRACE.read_bytes(), rng))
    except ValueError:
        return  # not readable at all: a clear error (the reader's own tests check those)
    model = TraceModel(cols)
    prepare_model(model)
    tab = trace_tab(model, 1000, 700)
    timeline = tab.timeline
    span = max(model.end_ns - model.start_ns, 1)
    with caplog.at_level(logging.WARNING, logger="fxscope.timeline"):
        for fraction in (1.0, 0.1, 1e-3, 1e-6):
            a = model.start_ns + rng.randrange(0, span)
            timeline.set_range_ns(a, a + max(1, int(span * fraction)))
            qtbot.wait(5)
            vb = timeline.plot.getViewBox()
            (x0, x1), (y0, y1) = vb.viewRange()
            for _ in range(15):
                kind, row = timeline.hit_item(rng.uniform(x0, x1), rng.uniform(y0, y1))
                timeline.select_item(kind, row)
                assert tab.details.toPlainText()  # the panel shows something for every selection
            timeline.fit_selection()
            qtbot.wait(5)
        timeline._search_changed("o")
        timeline.search_step(1)
        qtbot.wait(5)
    assert not [r for r in caplog.records if "could not draw" in r.getMessage()]
