"""Event records (type 4), the bulk of any trace, decoded a block at a time with vectorised gathers.

Field offsets that inline thread/string refs shift are computed as arrays; the argument blocks are
walked for all records at once (:meth:`fxscope.formats.fxt.bulk_resolve.BulkResolve._walk_args`) and only
their extent is kept (arguments are decoded lazily, :mod:`fxscope.formats.fxt.lazy_args`). A mixin of
:class:`fxscope.formats.fxt.assemble.Decoder`.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from fxscope.formats.fxt import compiled
from fxscope.formats.fxt import fields as F
from fxscope.formats.fxt.fields import column
from fxscope.formats.fxt.ticks import ticks_at_rates, ticks_to_ns

#: byte 2 of an event header: the event type (low 4 bits) and argument count (high 4 bits)
_TYPE_AND_NARGS = F.Field("event type and argument count", F.EVENT_TYPE.shift, 8)
# the strided views of EventRecords._header_fields read these fields as whole bytes and halfwords
assert (F.RECORD_TYPE.width, F.RECORD_SIZE.shift, F.RECORD_SIZE.width) == (4, 4, 12)
assert (F.EVENT_TYPE.shift, F.EVENT_TYPE.width, F.EVENT_NARGS.shift, F.EVENT_NARGS.width) == (16, 4, 20, 4)
assert (F.EVENT_THREAD_REF.shift, F.EVENT_THREAD_REF.width) == (24, 8)
assert (F.EVENT_CATEGORY_REF.shift, F.EVENT_NAME_REF.shift, F.EVENT_NAME_REF.width) == (32, 48, 16)


class EventRecords:
    """Vectorised decoding of event records into the event columns."""

    def _header_fields(self, h: np.ndarray) -> tuple[np.ndarray, ...]:
        """(size, type-and-argument-count byte, thread ref, category ref, name ref) of event headers.

        On little-endian machines these fields are whole bytes and halfwords of the header, so strided
        views read them without a shift (the layout this needs is checked against the field table below).
        """
        if np.little_endian:
            h16 = h.view(np.uint16).reshape(-1, 4)
            h8 = h.view(np.uint8).reshape(-1, 8)
            return h16[:, 0] >> 4, h8[:, 2], h8[:, 3], h16[:, 2], h16[:, 3]
        return (
            column(h, F.RECORD_SIZE).astype(np.uint16),
            column(h, _TYPE_AND_NARGS).astype(np.uint8),
            column(h, F.EVENT_THREAD_REF).astype(np.uint8),
            column(h, F.EVENT_CATEGORY_REF).astype(np.uint16),
            column(h, F.EVENT_NAME_REF).astype(np.uint16),
        )

    def _scan_events(self, pos: np.ndarray, fields: bool = True) -> CleanBlock | tuple | None:
        """The compiled pass over the event records at ``pos`` (int64): :meth:`_event_fields` when the block
        needs no checks (``fields``: try it), else header, time and last word of each record and the argument
        walk (``record_scan.event_block``); None without the compiled loops."""
        scan = compiled.record_scan if compiled.contiguous_words(self.w) else None
        if scan is None:
            return None
        pos = np.ascontiguousarray(pos, np.int64)
        if fields:
            got = self._event_fields(scan, pos)
            if got is not None:
                return got
        m = len(pos)
        h, ticks, last = np.empty(m, np.uint64), np.empty(m, np.uint64), np.empty(m, np.uint64)
        walked = (np.empty(m, np.int64), np.empty(m, np.uint8), np.empty(m, np.uint8))
        flagged = scan.event_block(self.w, pos, h, ticks, last, *walked)
        return h, ticks, last, walked, flagged

    def _event_fields(self, scan, pos: np.ndarray) -> CleanBlock | None:
        """``record_scan.event_fields`` of the event records at ``pos`` (int64, contiguous): the usual block's
        fields and what follows from them in one pass; None when some record needs the reader's checks."""
        m = len(pos)
        if not m:
            return None
        out = CleanBlock(*(np.empty(m, dt) for dt in (np.uint8, np.uint8, np.uint8, np.uint16, np.uint16)),
                         np.empty(m, np.int64), np.empty(m, np.int64), np.empty(m, np.uint64), None)  # fmt: skip
        got = scan.event_fields(self.w, pos, self._seg_pos, self._seg_tps, *out[:8])
        if got is None:
            return None
        n_complete, n_odd, tmin, tmax = got
        return out._replace(
            complete_end=out.complete_end[:n_complete].copy(), odd_rows=out.odd_rows[:n_odd].copy(),
            odd_vals=out.odd_vals[:n_odd].copy(), times=(tmin, tmax),
        )  # fmt: skip

    def _events_ahead(self, pos: np.ndarray) -> CleanBlock | object | None:
        """What a worker thread does for the next block: :meth:`_event_fields` of the event records at ``pos``
        (int64), one compiled call with the GIL released (the thread takes the GIL only around it, so the
        reader's thread is not made to wait for it); :data:`NEEDS_CHECKS` when some record needs the reader's
        checks and warnings (the reader reads that block itself, in order); None without the compiled loops."""
        scan = compiled.record_scan if compiled.contiguous_words(self.w) else None
        if scan is None:
            return None
        return self._event_fields(scan, np.ascontiguousarray(pos, np.int64)) or NEEDS_CHECKS

    def _events(self, pos: np.ndarray, ahead: CleanBlock | object | None = None) -> dict[str, np.ndarray]:
        """The columns of the event records at ``pos`` (int64, ascending); ``ahead``: their
        :meth:`_events_ahead`, when a worker did it."""
        if isinstance(ahead, CleanBlock):
            b = self._clean_events(pos, ahead)
        else:
            b = self._prepare_events(pos, self._scan_events(pos, ahead is not NEEDS_CHECKS), self.diag.warn_many)
        pos, nargs, nargs_eff, inl, c_word, n_word = (b[k] for k in ("pos", "nargs", "nargs_eff", "inl", "c_word", "n_word"))
        cut = np.flatnonzero(nargs_eff != nargs)  # an argument of size 0 ended the arguments (warned)
        if len(cut):
            self.nargs_cut.append((pos[cut].astype(np.int64), nargs_eff[cut].astype(np.uint8)))
        gen = b["gen"]
        return {
            "pos": pos,
            "times": b["times"],
            "kind": b["kind"],
            "provider": b["provider"],
            "category": self._strings(b["cref"], lambda rows: c_word[np.searchsorted(inl, rows)], gen, pos),
            "name": self._strings(b["nref"], lambda rows: n_word[np.searchsorted(inl, rows)], gen, pos),
            "thread": self._thread_codes(b["tref"], gen, pos, b["inl_t"], pos + 2),
            "odd_rows": b["odd_rows"],
            "odd_vals": b["odd_vals"],
            "complete_end": b["complete_end"],
        }

    def _prepare_events(self, pos: np.ndarray, scanned: tuple | None, warn) -> dict[str, np.ndarray]:
        """What the columns of the event records at ``pos`` need that follows from the words and the frozen
        provider tables alone (nothing that interns strings or threads): the records kept, their fields,
        times and data words, and the rows left for :meth:`_events` to resolve; ``scanned``: their
        :meth:`_scan_events` (None: the numpy paths); warnings go to ``warn(kind, offsets, message)``."""
        if isinstance(scanned, CleanBlock):
            return self._clean_events(pos, scanned)
        walked = None
        if scanned is not None:  # header, time and last word of each record, and the argument walk: one pass
            h, ticks, last, walked, flagged = scanned
        else:
            h, last = self.w[pos], None
        size16, b2, b3, cref, nref = self._header_fields(h)
        end = pos + size16
        kind = b2 & np.uint8(F.EVENT_TYPE.mask)
        nargs = b2 >> np.uint8(F.EVENT_NARGS.shift - _TYPE_AND_NARGS.shift)
        tref = b3
        ok = size16 >= 2
        unknown = kind > 10
        if unknown.any():
            for k in np.unique(kind[unknown]).tolist():
                warn(f"event type {k}", pos[kind == k] * 8, f"skipping event of unknown type {k}")
            ok &= ~unknown
        if walked is None:
            ticks = self._gather(pos + 1)
        inl_t = tref == 0
        c_inl = cref >= F.INLINE_STRING
        n_inl = nref >= F.INLINE_STRING
        # Inline thread and strings push the arguments further: computed for those records only (few)
        args_word = pos + 2
        inl, c_word, n_word = _inline_words(pos, inl_t, c_inl, n_inl, cref)
        if len(inl):
            a_word = n_word + np.where(n_inl[inl], ((nref[inl] & F.INLINE_LENGTH_MASK).astype(np.int64) + 7) >> 3, 0)
            args_word[inl] = a_word
            short = inl[ok[inl] & (a_word > end[inl])]
            if len(short):
                warn("short record", pos[short] * 8, "record dropped: event fields run past the record")
                ok[short] = False
        if walked is None:
            after, nargs_eff, _ = self._walk_args(args_word, nargs, end, ok, pos, False)
        else:  # (the compiled walk skipped the records found not ok above, as the numpy walk does)
            after, nargs_eff = walked[0], walked[1]
            if flagged:
                self._warn_walk(walked[2], pos, ok, warn)
        has_data = (kind == 1) | (kind >= 4)
        full_args = nargs_eff == nargs
        room = after < end
        missing = ok & has_data & ~room & full_args
        if missing.any():
            warn("short record", pos[missing] * 8, "record dropped: event data word missing")
            ok &= ~missing
        data_ok = room & full_args
        # The data word is not stored (FxtColumns.ev_data reads a record's last word when asked): keep the
        # rows where that rule does not hold, with their value (instants: a scope word other than 0).
        odd = has_data & ~(data_ok & (after == end - 1))
        scope_m = data_ok & (kind == 0)
        if scope_m.any():
            sv = self._gather(after[scope_m])
            bad = sv > 2
            if bad.any():
                warn("scope", pos[scope_m][bad] * 8, "instant event scope out of range: thread scope used")
            odd[np.flatnonzero(scope_m)[(sv != 0) & ~bad]] = True
        odd &= ok
        odd_rows = np.flatnonzero(odd)
        odd_vals = np.where(data_ok[odd_rows], self._gather(after[odd_rows]), np.uint64(0))
        if not ok.all():
            keep = np.flatnonzero(ok)
            odd_rows = np.searchsorted(keep, odd_rows)
            pos, end, kind, nargs, nargs_eff, tref, cref, nref, inl_t = (
                x[keep] for x in (pos, end, kind, nargs, nargs_eff, tref, cref, nref, inl_t)
            )
            ticks = ticks[keep]
            if last is not None:
                last = last[keep]
            kept = ok[inl]
            inl, c_word, n_word = np.searchsorted(keep, inl[kept]), c_word[kept], n_word[kept]
        gen, provider, tps = self._segments(pos)
        odd_complete = np.flatnonzero(kind[odd_rows] == 4)
        if len(odd_complete):  # a complete event's end, in ns
            at = odd_rows[odd_complete]
            seg = np.searchsorted(self._seg_pos, pos[at], side="right") - 1
            odd_vals[odd_complete] = ticks_at_rates(odd_vals[odd_complete], self._seg_tps[seg]).view(np.uint64)
        complete_end = self._complete_ends(pos, end, kind, odd_rows[odd_complete], odd_vals[odd_complete], last)
        return {
            "pos": pos, "times": _extremes(ticks_to_ns(ticks, tps)), "kind": kind, "provider": provider, "gen": gen,
            "nargs": nargs, "nargs_eff": nargs_eff, "cref": cref, "nref": nref, "tref": tref, "inl_t": inl_t,
            "inl": inl, "c_word": c_word, "n_word": n_word, "odd_rows": odd_rows, "odd_vals": odd_vals,
            "complete_end": complete_end,
        }  # fmt: skip

    def _clean_events(self, pos: np.ndarray, f: CleanBlock) -> dict[str, np.ndarray]:
        """:meth:`_prepare_events` of a block that ``record_scan.event_fields`` read whole (no record needed a
        warning: every record kept, every argument counted): the same dict from its outputs."""
        inl_t = f.tref == 0
        inl, c_word, n_word = _inline_words(pos, inl_t, f.cref >= F.INLINE_STRING, f.nref >= F.INLINE_STRING, f.cref)
        gen, provider, _ = self._segments(pos)
        return {
            "pos": pos, "times": f.times, "kind": f.kind, "provider": provider, "gen": gen, "nargs": f.nargs,
            "nargs_eff": f.nargs, "cref": f.cref, "nref": f.nref, "tref": f.tref, "inl_t": inl_t, "inl": inl,
            "c_word": c_word, "n_word": n_word, "odd_rows": f.odd_rows, "odd_vals": f.odd_vals,
            "complete_end": f.complete_end,
        }  # fmt: skip

    def _complete_ends(self, pos: np.ndarray, end: np.ndarray, kind: np.ndarray, odd_rows: np.ndarray,
                       odd_ends: np.ndarray, last: np.ndarray | None = None) -> np.ndarray:  # fmt: skip
        """int64 ns end of each complete event of the block (rows of kept records ``pos``/``end``), read
        while the block's pages are mapped (``FxtColumns.ev_complete_end``): their record's last word
        (``last``, when already read), or ``odd_ends`` for the complete events among ``odd_rows``
        (ascending) whose data word is elsewhere."""
        rows = np.flatnonzero(kind == 4)
        seg = np.searchsorted(self._seg_pos, pos[rows], side="right") - 1
        ends = self._gather(end[rows] - 1) if last is None else last[rows]
        out = ticks_at_rates(ends, self._seg_tps[np.maximum(seg, 0)])
        if len(odd_rows):
            out[np.searchsorted(rows, odd_rows)] = odd_ends.view(np.int64)
        return out


#: :meth:`EventRecords._events_ahead`'s answer for a block that needs the reader's checks
NEEDS_CHECKS = object()


class CleanBlock(NamedTuple):
    """What ``record_scan.event_fields`` reads of a block of event records that needs no warning (see
    :meth:`EventRecords._clean_events`): header fields (uint8 kind, argument count and thread ref; uint16
    category and name refs), the complete events' ends (int64 ns), the rows whose data word is not their
    record's last or whose instant scope is not 0 and those values, and the block's earliest and latest time."""

    kind: np.ndarray
    nargs: np.ndarray
    tref: np.ndarray
    cref: np.ndarray
    nref: np.ndarray
    complete_end: np.ndarray
    odd_rows: np.ndarray
    odd_vals: np.ndarray
    times: tuple[int, int] | None


def _inline_words(pos: np.ndarray, inl_t: np.ndarray, c_inl: np.ndarray, n_inl: np.ndarray,
                  cref: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:  # fmt: skip
    """The rows with an inline thread, category or name (few), where each one's inline category and its
    inline name would start (int64 words)."""
    inl = np.flatnonzero(inl_t | c_inl | n_inl)
    c_word = pos[inl] + 2 + 2 * inl_t[inl]
    n_word = c_word + np.where(c_inl[inl], ((cref[inl] & F.INLINE_LENGTH_MASK).astype(np.int64) + 7) >> 3, 0)
    return inl, c_word, n_word


def _extremes(times: np.ndarray) -> tuple[int, int] | None:
    """The block's earliest and latest event time: ``ev_ts`` is read from the file when indexed, but the
    model's extent needs these two, found while the block's pages are mapped rather than by a pass later."""
    return (int(times.min()), int(times.max())) if len(times) else None
