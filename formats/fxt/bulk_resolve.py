"""Shared vectorised steps of the bulk records (events, logs, scheduling): many records at once.

Gathering words, finding each record's provider generation and tick rate, resolving indexed string and
thread refs against the registration history (:class:`fxscope.formats.fxt.tables.Lookup`), interning inline
streams, and walking argument blocks argument-by-argument for all records at once. This is a mixin of
:class:`fxscope.formats.fxt.assemble.Decoder`; nothing here loops per record.
"""

from __future__ import annotations

import numpy as np

from fxscope.formats.fxt import compiled
from fxscope.formats.fxt import fields as F
from fxscope.formats.fxt.args import decode_text
from fxscope.formats.fxt.fields import column
from fxscope.formats.fxt.tables import STRING_KEYS, THREAD_KEYS, ProviderTables

_U = np.uint64
#: inline streams below which they are decoded one at a time
_FEW_STREAMS = 48
#: records left in an argument walk below which the rest is walked in Python
_FEW_RECORDS = 24


def intern_streams(
    raw64: np.ndarray, tables: ProviderTables, word_off: np.ndarray, lengths: np.ndarray
) -> np.ndarray:
    """Global string ids of inline streams (word offset, byte length), deduplicated by content without a
    loop per stream: one decode per distinct content."""
    out = np.zeros(len(lengths), np.int64)  # length 0 -> "" (id 0)
    if len(lengths) <= _FEW_STREAMS:  # (the vectorized dedup costs ~30 numpy calls)
        for i, (off, length) in enumerate(zip(word_off.tolist(), lengths.tolist(), strict=True)):
            if length:
                data = raw64[off : off + ((length + 7) >> 3)].tobytes()[:length]
                out[i] = tables.intern(decode_text(data))
        return out
    nw = (lengths + 7) >> 3
    for width in sorted(set(nw[nw > 0].tolist())):
        sel = np.flatnonzero(nw == width)
        mat = raw64[word_off[sel][:, None] + np.arange(width)]
        rem = (lengths[sel] & 7).astype(np.uint64)
        mask = np.where(rem == 0, _U(0xFFFFFFFFFFFFFFFF), (_U(1) << (rem * _U(8))) - _U(1))
        mat[:, -1] &= mask
        key = np.column_stack([lengths[sel].astype(np.uint64), mat])
        uniq, inv = _distinct_rows(key)
        gids = np.array(
            [tables.intern(decode_text(row[1:].astype("<u8").tobytes()[: int(row[0])])) for row in uniq],
            dtype=np.int64,
        )
        out[sel] = gids[inv]
    return out


def _distinct_rows(key: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``np.unique(key, axis=0, return_inverse=True)`` of a uint64 matrix, by a 64-bit hash of each row:
    sorting the hashes is several times faster than sorting the rows. Every row is checked against its
    hash's first row, so a collision costs time (the exact sort), never a wrong answer."""
    h = np.full(len(key), 0x9E3779B97F4A7C15, np.uint64)
    with np.errstate(over="ignore"):
        for j in range(key.shape[1]):
            h ^= key[:, j]
            h *= np.uint64(0xBF58476D1CE4E5B9)
            h ^= h >> np.uint64(31)
    _, first, inv = np.unique(h, return_index=True, return_inverse=True)
    inv = inv.reshape(-1)
    uniq = key[first]
    if not (uniq[inv] == key).all():  # a collision
        uniq, inv = np.unique(key, axis=0, return_inverse=True)
        inv = inv.reshape(-1)
    return uniq, inv


class BulkResolve:
    """Vectorised ref resolution and argument walking (see the module docstring)."""

    def _gather(self, idx: np.ndarray) -> np.ndarray:
        return np.take(self.w, idx, mode="clip") if self.n else np.zeros(len(idx), np.uint64)

    def _segments(self, pos: np.ndarray) -> tuple[np.ndarray, np.ndarray, list[tuple[int, int, int]]]:
        """Generation and provider index at each (ascending) position, and the runs of rows whose tick
        rate is not 1e9 as ``(start row, end row, ticks per second)``."""
        m = len(pos)
        if m == 0:
            return np.zeros(0, np.int64), np.zeros(0, np.uint16), []
        sp = self._seg_pos
        lo = int(np.searchsorted(sp, pos[0], side="right")) - 1
        hi = int(np.searchsorted(sp, pos[-1], side="right"))
        if hi - lo == 1:  # (one generation: a read-only broadcast, which the lookups recognise)
            gen = np.broadcast_to(self._seg_gen[lo : lo + 1], (m,))
            prov = np.broadcast_to(self._seg_prov[lo : lo + 1], (m,))
            bounds = [0, m]
        else:
            inner = np.searchsorted(pos, sp[lo + 1 : hi], side="left")
            counts = np.diff(np.concatenate([[0], inner, [m]]))
            gen = np.repeat(self._seg_gen[lo:hi], counts)
            prov = np.repeat(self._seg_prov[lo:hi], counts)
            bounds = [0, *inner.tolist(), m]
        runs = [
            (bounds[i], bounds[i + 1], rate)
            for i, rate in enumerate(self._seg_tps[lo:hi].tolist())
            if rate != 1_000_000_000 and bounds[i + 1] > bounds[i]
        ]
        return gen, prov, runs

    def _freeze_segments(self) -> None:
        t = self.t
        self.rates = set(t.seg_tps)
        self._seg_pos = np.asarray(t.seg_pos, np.int64)
        self._seg_gen = np.asarray(t.seg_gen, np.int64)
        self._seg_prov = np.asarray(t.gen_provider, np.uint16)[self._seg_gen]
        self._seg_tps = np.asarray(t.seg_tps, np.int64)

    def _intern_streams(self, word_off: np.ndarray, lengths: np.ndarray) -> np.ndarray:
        return intern_streams(self.raw64, self.t, word_off, lengths)

    def _strings(self, ref: np.ndarray, inline_word, gen: np.ndarray, pos: np.ndarray) -> np.ndarray:
        """Global string ids (int32) for string refs (-1 unresolved, warned once per provider and index).
        ``inline_word``: where each row's inline stream would start (an array, or a function of rows)."""
        special = (ref.astype(np.uint16) - np.uint16(1)) >= np.uint16(0x7FFF)  # 0 (empty) or inline
        any_special = bool(special.any())
        # Resolve every ref as if indexed (the index bits of an inline ref are its length), then overwrite
        # the empty and inline ones.
        index = ref & np.uint16(F.INLINE_LENGTH_MASK) if any_special else ref
        got = self._by_generation(self.str_lookup, index, gen, pos, STRING_KEYS)
        if got is None:
            got = self.str_lookup(gen * STRING_KEYS + index.astype(np.int64), pos).astype(np.int32)
        if not any_special:
            if self._has_unresolved(got):
                self._warn_unresolved_bulk(np.flatnonzero(got < 0), ref.astype(np.int64), gen, pos, "string")
            return got
        unresolved = np.flatnonzero((got < 0) & ~special)
        got[special] = 0
        inline = np.flatnonzero(ref >= F.INLINE_STRING)
        if len(inline):
            lengths = (ref[inline] & np.uint16(F.INLINE_LENGTH_MASK)).astype(np.int64)
            words = inline_word(inline) if callable(inline_word) else inline_word[inline]
            got[inline] = self._intern_streams(words, lengths)
        self._warn_unresolved_bulk(unresolved, ref.astype(np.int64), gen, pos, "string")
        return got

    @staticmethod
    def _by_generation(lookup, refs: np.ndarray, gen: np.ndarray, pos: np.ndarray, width: int) -> np.ndarray | None:
        """int32 values of small unsigned ``refs`` (each below ``width``: callers mask inline flags off) of
        rows whose provider generations are ``gen`` (:meth:`~fxscope.formats.fxt.tables.Lookup.of_generations`);
        None when that does not apply (refs of another type, no dense table)."""
        if refs.dtype.kind != "u" or refs.dtype.itemsize > 2:
            return None
        return lookup.of_generations(gen, refs, pos, width)

    @staticmethod
    def _has_unresolved(got: np.ndarray) -> bool:
        return bool(len(got)) and int(got.min()) < 0

    def _warn_unresolved_bulk(self, bad: np.ndarray, ref, gen, pos, what: str) -> None:
        if not len(bad):
            return
        pindex = np.asarray(self.t.gen_provider, np.int64)[gen[bad]]
        keys = pindex * 65536 + ref[bad]
        _, first = np.unique(keys, return_index=True)
        seen = self._unresolved_str if what == "string" else self._unresolved_thr
        for i in np.sort(first).tolist():
            key = (int(pindex[i]), int(ref[bad][i]))
            if key in seen:
                continue
            seen.add(key)
            prov = self.t.providers[key[0]].id
            self.diag.warn(
                f"unresolved {what}",
                int(pos[bad][i]) * 8,
                f"{what} ref {key[1]} not registered (provider {prov})",
            )

    def _threads(self, ref: np.ndarray, gen: np.ndarray, pos: np.ndarray) -> np.ndarray:
        """Registration row of each indexed thread ref (-1 unresolved); inline refs (0) give -1 too."""
        out = self._by_generation(self.thr_lookup, ref, gen, pos, THREAD_KEYS)  # (ref 0 is never registered)
        if out is not None:
            if self._has_unresolved(out):
                self._warn_unresolved_bulk(np.flatnonzero((out < 0) & (ref != 0)), ref.astype(np.int64), gen,
                                           pos, "thread")  # fmt: skip
            return out
        ref = ref.astype(np.int64)
        if (ref != 0).all():
            out = self.thr_lookup(gen * THREAD_KEYS + ref, pos)
            self._warn_unresolved_bulk(np.flatnonzero(out < 0), ref, gen, pos, "thread")
            return out
        out = np.full(len(ref), -1, np.int64)
        idx = np.flatnonzero(ref != 0)
        if len(idx):
            got = self.thr_lookup(gen[idx] * THREAD_KEYS + ref[idx], pos[idx])
            out[idx] = got
            self._warn_unresolved_bulk(idx[got < 0], ref, gen, pos, "thread")
        return out

    def _walk_args(
        self,
        first: np.ndarray,
        nargs: np.ndarray,
        end: np.ndarray,
        ok: np.ndarray,
        pos: np.ndarray,
        collect: bool,
    ) -> tuple[np.ndarray, np.ndarray, list[tuple[np.ndarray, np.ndarray, np.ndarray]]]:
        """Advance past every record's arguments at once; returns (word after args, usable arg count, args).

        Records whose arguments run past the record are marked not ``ok`` (F5/A3); an argument of size 0
        ends that record's arguments (A2). With ``collect``, returns (row, position, header) per argument.
        """
        scan = compiled.record_scan
        if not collect and scan is not None and compiled.contiguous_words(self.w):
            return self._walk_args_compiled(scan, first, nargs, end, ok, pos)
        a = first.copy()
        nargs_eff = nargs.copy()
        found: list[tuple[np.ndarray, np.ndarray, np.ndarray]] = []
        act = np.flatnonzero(ok & (nargs > 0))
        for k in range(15):
            act = act[nargs[act] > k]
            if not len(act):
                break
            if len(act) <= _FEW_RECORDS:  # (a dozen numpy calls an argument cost more than a Python walk)
                self._walk_args_few(k, act, a, nargs, nargs_eff, end, ok, pos, found if collect else None)
                break
            ah = self._gather(a[act])
            asz = column(ah, F.ARG_SIZE).astype(np.int64)
            zero = asz == 0
            if zero.any():
                nargs_eff[act[zero]] = k
                self.diag.warn_many(
                    "argument size 0", pos[act[zero]] * 8, "argument of size 0: later arguments dropped"
                )
            past = ~zero & (a[act] + asz > end[act])
            if past.any():
                ok[act[past]] = False
                self.diag.warn_many(
                    "short record", pos[act[past]] * 8, "record dropped: arguments run past the record"
                )
            keep = ~zero & ~past
            act, asz, ah = act[keep], asz[keep], ah[keep]
            if collect:
                found.append((act, a[act].copy(), ah))
            a[act] += asz
        return a, nargs_eff, found

    def _walk_args_compiled(self, scan, first, nargs, end, ok, pos) -> tuple[np.ndarray, np.ndarray, list]:
        """:meth:`_walk_args` without ``collect`` by the compiled loop (one pass, no numpy call per
        argument): the same results, and the same warnings in the same order (by argument, size-0 ones
        first)."""
        m = len(first)
        after = np.empty(m, np.int64)
        nargs_eff = np.empty(m, np.uint8)
        status = np.empty(m, np.uint8)
        nargs8 = np.ascontiguousarray(nargs, np.uint8)
        flagged = scan.walk_args(
            self.w, np.ascontiguousarray(first, np.int64), nargs8, np.ascontiguousarray(end, np.int64),
            np.ascontiguousarray(ok).view(np.uint8), after, nargs_eff, status,
        )  # fmt: skip
        if flagged:
            self._warn_walk(status, pos, ok)
        return after, nargs_eff.astype(nargs.dtype, copy=False), []

    def _warn_walk(self, status: np.ndarray, pos: np.ndarray, ok: np.ndarray, warn=None) -> None:
        """The warnings of a compiled argument walk (``status``: 16 * reason + argument index per row, see
        record_scan.walk_args) in the numpy walk's order, by argument, size-0 ones first, to ``warn(kind,
        offsets, message)`` (default: the reader's diagnostics); records whose arguments run past them are
        marked not ``ok``."""
        warn = warn or self.diag.warn_many
        rows = np.flatnonzero(status)
        st = status[rows]
        for k in np.unique(st & np.uint8(15)).tolist():
            at_k = rows[(st & np.uint8(15)) == k]
            reason = status[at_k] >> np.uint8(4)
            zero, past = at_k[reason == 1], at_k[reason == 2]
            if len(zero):
                warn("argument size 0", pos[zero] * 8, "argument of size 0: later arguments dropped")
            if len(past):
                ok[past] = False
                warn("short record", pos[past] * 8, "record dropped: arguments run past the record")

    def _walk_args_few(self, k0, act, a, nargs, nargs_eff, end, ok, pos, found) -> None:
        """:meth:`_walk_args` from argument ``k0`` on for the few records ``act`` left, in Python (the same
        results and warnings, in the same order)."""
        w = self.w
        n = self.n
        act_l = act.tolist()
        for k in range(k0, 15):
            act_l = [r for r in act_l if int(nargs[r]) > k]
            if not act_l:
                break
            at = [int(a[r]) for r in act_l]
            heads = [int(w[min(max(x, 0), n - 1)]) if n else 0 for x in at]
            sizes = [(h >> F.ARG_SIZE.shift) & F.ARG_SIZE.mask for h in heads]
            zero = [r for r, z in zip(act_l, sizes, strict=True) if z == 0]
            if zero:
                nargs_eff[zero] = k
                self.diag.warn_many("argument size 0", pos[zero] * 8, "argument of size 0: later arguments dropped")
            past = [r for r, x, z in zip(act_l, at, sizes, strict=True) if z and x + z > int(end[r])]
            if past:
                ok[past] = False
                self.diag.warn_many("short record", pos[past] * 8, "record dropped: arguments run past the record")
            kept = [(r, x, z, h) for r, x, z, h in zip(act_l, at, sizes, heads, strict=True)
                    if z and x + z <= int(end[r])]  # fmt: skip
            act_l = [r for r, _, _, _ in kept]
            if found is not None:
                found.append((np.array(act_l, np.int64), np.array([x for _, x, _, _ in kept], np.int64),
                              np.array([h for _, _, _, h in kept], np.uint64)))  # fmt: skip
            for r, x, z, _ in kept:
                a[r] = x + z

    def _thread_codes(
        self, tref: np.ndarray, gen: np.ndarray, pos: np.ndarray, inl: np.ndarray, cur: np.ndarray
    ):
        """int32 codes: >= 0 a thread registration row, -1 unresolved, <= -2 an inline pair (collected)."""
        code = self._threads(tref, gen, pos).astype(np.int32)
        sel = np.flatnonzero(inl)
        if len(sel):
            # Keep each block's distinct pairs only: a trace of inline thread refs would otherwise hold
            # 16 bytes per event until the end, more than the event columns' share of the memory budget.
            pairs = np.empty((len(sel), 2), np.uint64)
            pairs[:, 0] = self._gather(cur[sel])
            pairs[:, 1] = self._gather(cur[sel] + 1)
            uniq, inv = np.unique(pairs.view(f"V{16}").reshape(-1), return_inverse=True)
            uniq = uniq.view(np.uint64).reshape(-1, 2)
            self.inline_pids.append(uniq[:, 0].copy())
            self.inline_tids.append(uniq[:, 1].copy())
            code[sel] = -2 - (self.n_inline + inv.reshape(-1).astype(np.int32))
            self.n_inline += len(uniq)
        return code
