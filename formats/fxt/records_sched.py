"""Scheduling records (type 8): legacy context switch, context switch and wakeup, vectorised by subtype.

The waker of a wakeup is the koid argument named "waker" (a Perfetto convention), found among all the
records' arguments at once. A mixin of :class:`fxscope.formats.fxt.assemble.Decoder`.
"""

from __future__ import annotations

import numpy as np

from fxscope.formats.fxt import compiled
from fxscope.formats.fxt import fields as F
from fxscope.formats.fxt.args import ArgType
from fxscope.formats.fxt.fields import column
from fxscope.formats.fxt.tables import STRING_KEYS
from fxscope.formats.fxt.ticks import ticks_to_ns

_U = np.uint64

#: the scheduling columns and their dtypes
SCHED_COLUMNS = {
    "ts": np.int64, "kind": np.uint8, "cpu": np.uint16, "out_tid": np.uint64, "in_tid": np.uint64,
    "out_pid": np.uint64, "in_pid": np.uint64, "state": np.uint8, "waker": np.uint64, "offset": np.int64,
    "out_prio": np.uint8, "in_prio": np.uint8, "args_word": np.int64, "nargs": np.uint8,
}  # fmt: skip


#: the koid columns: uint64 in the records, stored as uint32 when every value of the file fits (koids are
#: counters from 1024 up: they do in any trace seen so far; values are unchanged, 20 bytes a record saved)
KOID_COLUMNS = ("out_tid", "in_tid", "out_pid", "in_pid", "waker")
#: the word/byte position columns, stored as uint32 when the file is under 4 GiB (8 bytes a record saved)
POSITION_COLUMNS = ("offset", "args_word")


def narrow_sched_columns(nbytes: int) -> dict[str, type]:
    """The scheduling columns the reader keeps in uint32 (:meth:`~fxscope.formats.fxt.assemble.Decoder._columns`'
    ``narrow``): the koid columns (:data:`KOID_COLUMNS`), widened back to uint64 by a value past 2**32 - 1, and
    the position columns (:data:`POSITION_COLUMNS`) of a file under 4 GiB. Consumers read them as values
    (``int()``, comparisons, indexing)."""
    narrow = dict.fromkeys(KOID_COLUMNS, np.uint32)
    if nbytes <= np.iinfo(np.uint32).max:
        narrow.update(dict.fromkeys(POSITION_COLUMNS, np.uint32))
    return narrow


class SchedRecords:
    """Vectorised decoding of scheduling records into the scheduling columns."""

    def _sched(self, pos: np.ndarray) -> dict[str, np.ndarray]:
        scan = compiled.record_scan if compiled.contiguous_words(self.w) else None
        m = len(pos)
        if scan is not None:  # header, time and the two thread words of every record in one pass
            pos = np.ascontiguousarray(pos, np.int64)
            h, ts, w2, w3 = (np.empty(m, np.uint64) for _ in range(4))
            scan.gather4(self.w, pos, h, ts, w2, w3)
        else:
            h, ts = self.w[pos], self._gather(pos + 1)
            w2 = w3 = None
        size = column(h, F.RECORD_SIZE).astype(np.int64)
        end = pos + size
        sub = column(h, F.SCHED_TYPE).astype(np.int64)
        out_tid = np.zeros(m, np.uint64)
        in_tid = np.zeros(m, np.uint64)
        out_pid = np.zeros(m, np.uint64)
        in_pid = np.zeros(m, np.uint64)
        cpu = np.zeros(m, np.uint16)
        state = np.zeros(m, np.uint8)
        oprio = np.zeros(m, np.uint8)
        iprio = np.zeros(m, np.uint8)
        args_word = np.zeros(m, np.int64)
        nargs = np.zeros(m, np.int64)
        ok = size >= 2
        gen, _provider, tps = self._segments(pos)
        # legacy context switch (0)
        leg = np.flatnonzero(sub == 0)
        if len(leg):
            hl = h[leg]
            cpu[leg] = column(hl, F.LEGACY_CPU)
            state[leg] = column(hl, F.LEGACY_OUT_STATE)
            oref = column(hl, F.LEGACY_OUT_THREAD_REF).astype(np.int64)
            iref = column(hl, F.LEGACY_IN_THREAD_REF).astype(np.int64)
            oprio[leg] = column(hl, F.LEGACY_OUT_PRIO)
            iprio[leg] = column(hl, F.LEGACY_IN_PRIO)
            cur = pos[leg] + 2
            for ref, pid_col, tid_col in ((oref, out_pid, out_tid), (iref, in_pid, in_tid)):
                inl = ref == 0
                pid_col[leg] = np.where(inl, self._gather(cur), _U(0))
                tid_col[leg] = np.where(inl, self._gather(cur + 1), _U(0))
                cur = cur + 2 * inl
                rows = self._threads(ref, gen[leg], pos[leg])
                got = rows >= 0
                if got.any():
                    pid_col[leg[got]] = np.asarray(self.t.thr_pid, np.uint64)[rows[got]]
                    tid_col[leg[got]] = np.asarray(self.t.thr_tid, np.uint64)[rows[got]]
            ok[leg] &= cur <= end[leg]
        for kind, fixed in ((1, 4), (2, 3)):
            sel = np.flatnonzero(sub == kind)
            if not len(sel):
                continue
            hs = h[sel]
            nargs[sel] = column(hs, F.SCHED_NARGS)
            cpu[sel] = column(hs, F.SCHED_CPU)
            third = self._gather(pos[sel] + 2) if w2 is None else w2[sel]
            if kind == 1:
                state[sel] = column(hs, F.SWITCH_OUT_STATE)
                out_tid[sel] = third
                in_tid[sel] = self._gather(pos[sel] + 3) if w3 is None else w3[sel]
            else:
                in_tid[sel] = third
            args_word[sel] = pos[sel] + fixed
            ok[sel] &= size[sel] >= fixed
        unknown = (sub > 2) & ok
        if unknown.any():
            for k in np.unique(sub[unknown]).tolist():
                self.diag.warn_many(
                    f"scheduling type {k}",
                    pos[sub == k] * 8,
                    f"skipping scheduling record of unknown type {k}",
                )
            ok &= ~unknown
        short = (size >= 2) & ~ok & (sub <= 2)
        if short.any():
            self.diag.warn_many(
                "short record", pos[short] * 8, "scheduling record dropped: shorter than its fields"
            )
        if scan is None:
            _after, nargs_eff, found = self._walk_args(args_word, nargs, end, ok, pos, True)
        else:  # the walk (its warnings, the counts), then the koid arguments of the wakeups kept
            _after, nargs_eff, _ = self._walk_args_compiled(scan, args_word, nargs, end, ok, pos)
            counts = np.ascontiguousarray(nargs_eff, np.uint8)
            wake = np.flatnonzero(ok & (sub == 2) & (counts > 0))
            cap = int(counts[wake].sum(dtype=np.int64))
            rows, apos, heads = np.empty(cap, np.int64), np.empty(cap, np.int64), np.empty(cap, np.uint64)
            c = scan.typed_args(self.w, wake, np.ascontiguousarray(args_word, np.int64), counts, int(ArgType.KOID),
                                rows, apos, heads)  # fmt: skip
            found = [(rows[:c], apos[:c], heads[:c])]
        waker = self._waker(found, sub, gen, pos)
        keep = slice(None) if ok.all() else np.flatnonzero(ok)  # (every record kept, as a rule: no gathers)
        return {
            "ts": ticks_to_ns(ts, tps)[keep],
            "kind": sub[keep].astype(np.uint8),
            "cpu": cpu[keep],
            "out_tid": out_tid[keep],
            "in_tid": in_tid[keep],
            "out_pid": out_pid[keep],
            "in_pid": in_pid[keep],
            "state": state[keep],
            "waker": waker[keep],
            "offset": pos[keep] * 8,
            "out_prio": oprio[keep],
            "in_prio": iprio[keep],
            "args_word": args_word[keep],
            "nargs": nargs_eff[keep].astype(np.uint8),
        }

    def _waker(self, found, sub: np.ndarray, gen: np.ndarray, pos: np.ndarray) -> np.ndarray:
        """Koid argument named "waker" of wakeup records (a Perfetto convention), vectorized."""
        waker = np.zeros(len(sub), np.uint64)
        target = self.t.string_id("waker")
        inline_key = np.frombuffer(b"waker\0\0\0", "<u8")[0]
        for rows, apos, ah in found:
            is_koid = (column(ah, F.ARG_TYPE) == ArgType.KOID) & (sub[rows] == 2)
            if not is_koid.any():
                continue
            rows, apos, ah = rows[is_koid], apos[is_koid], ah[is_koid]
            ref = column(ah, F.ARG_NAME_REF).astype(np.int64)
            inline = (ref & F.INLINE_STRING) != 0
            match = (
                inline
                & ((ref & F.INLINE_LENGTH_MASK) == 5)
                & (self.raw64[np.minimum(apos + 1, len(self.raw64) - 1)] == inline_key)
            )
            if target is not None:
                idx = ~inline & (ref != 0)
                got = self.str_lookup(gen[rows] * STRING_KEYS + ref, pos[rows])
                match |= idx & (got == target)
            value_word = apos + 1 + np.where(inline, ((ref & F.INLINE_LENGTH_MASK) + 7) >> 3, 0)
            waker[rows[match]] = self._gather(value_word[match])
        return waker
