"""Log records (type 9): timestamp, thread and an inline message, a block at a time (vectorised).

A mixin of :class:`fxscope.formats.fxt.assemble.Decoder`.
"""

from __future__ import annotations

import numpy as np

from fxscope.formats.fxt import fields as F
from fxscope.formats.fxt.fields import column
from fxscope.formats.fxt.ticks import ticks_to_ns


class LogRecords:
    """Vectorised decoding of log records into the log columns."""

    def _logs(self, pos: np.ndarray) -> dict[str, np.ndarray]:
        h = self.w[pos]
        size = column(h, F.RECORD_SIZE).astype(np.int64)
        end = pos + size
        length = column(h, F.LOG_MESSAGE_LENGTH).astype(np.int64)
        tref = column(h, F.LOG_THREAD_REF).astype(np.int64)
        ticks = self._gather(pos + 1)
        inl = tref == 0
        cur = pos + 2 + 2 * inl
        ok = (size >= 2) & (cur + ((length + 7) >> 3) <= end)
        if not ok.all():
            self.diag.warn_many(
                "short record", pos[~ok] * 8, "log record dropped: message runs past the record"
            )
            pos, tref, ticks, cur, length, inl = (x[ok] for x in (pos, tref, ticks, cur, length, inl))
        gen, _provider, tps = self._segments(pos)
        return {
            "pos": pos,
            "ts": ticks_to_ns(ticks, tps),
            "thread": self._thread_codes(tref, gen, pos, inl, pos + 2),
            "message": self._intern_streams(cur, length).astype(np.int32),
        }
