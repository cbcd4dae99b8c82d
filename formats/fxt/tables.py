"""Provider state of an FXT archive: providers, string and thread registrations, tick rates.

The few records that change how later records are read (metadata, initialization, string, thread) are
applied here in file order, in Python; they are rare. Every registration is also kept as history
``(key, word position, value)`` so that the many records that *use* the tables (events, logs,
scheduling) can be resolved afterwards in bulk: a ref at position ``pos`` means the latest registration
of the same key before ``pos`` (:func:`lookup`).

Keys are per provider *generation*: a provider-info record starts a fresh generation (empty tables,
default tick rate; spec P2), a provider-section record makes that provider's current generation active
again (P3). Provider 0, generation 0, is current from the start of the file (P1).
"""

from __future__ import annotations

import threading

import numpy as np

from fxscope.formats.fxt import compiled
from fxscope.formats.fxt.columns import Provider

DEFAULT_TPS = 1_000_000_000
STRING_KEYS = 1 << 15
THREAD_KEYS = 1 << 8


class ProviderTables:
    """Mutable provider state while walking the control records, then frozen into numpy arrays."""

    def __init__(self) -> None:
        self.strings: list[str] = [""]
        self._string_ids: dict[str, int] = {"": 0}
        # after the read, readers of arguments intern inline strings from several threads (a search's
        # index build, the UI's details): the id and the append must be one step, or two new texts
        # interned at once could both take the same id and one of them would name the other's text
        self._intern_lock = threading.Lock()
        self.providers: list[Provider] = [Provider(0, "")]
        self._provider_index: dict[int, int] = {0: 0}
        self.gen_provider: list[int] = [0]  # generation -> index in providers
        self.gen_tps: list[int] = [DEFAULT_TPS]
        self.gen_has_init: list[bool] = [False]
        self._current_gen_of: dict[int, int] = {0: 0}  # provider index -> its current generation
        self.gen = 0
        # segments: a new one starts at every provider switch or tick-rate change
        self.seg_pos: list[int] = [0]
        self.seg_gen: list[int] = [0]
        self.seg_tps: list[int] = [DEFAULT_TPS]
        # registration history
        self.str_key: list[int] = []
        self.str_pos: list[int] = []
        self.str_gid: list[int] = []
        self.thr_key: list[int] = []
        self.thr_pos: list[int] = []
        self.thr_pid: list[int] = []
        self.thr_tid: list[int] = []
        self._live_str: list[dict[int, int]] = [{}]
        self._live_thr: list[dict[int, tuple[int, int]]] = [{}]

    # --- strings ---
    def intern(self, text: str) -> int:
        gid = self._string_ids.get(text)
        if gid is None:
            with self._intern_lock:
                gid = self._string_ids.get(text)  # (another thread may have interned it meanwhile)
                if gid is None:
                    gid = len(self.strings)
                    self.strings.append(text)
                    self._string_ids[text] = gid
        return gid

    def string_id(self, text: str) -> int | None:
        return self._string_ids.get(text)

    # --- providers ---
    @property
    def provider(self) -> int:
        """Index (in :attr:`providers`) of the current provider."""
        return self.gen_provider[self.gen]

    def _segment(self, pos: int) -> None:
        if self.seg_pos[-1] == pos:
            self.seg_gen[-1], self.seg_tps[-1] = self.gen, self.gen_tps[self.gen]
        else:
            self.seg_pos.append(pos)
            self.seg_gen.append(self.gen)
            self.seg_tps.append(self.gen_tps[self.gen])

    def _new_gen(self, pindex: int) -> int:
        self.gen_provider.append(pindex)
        self.gen_tps.append(DEFAULT_TPS)
        self.gen_has_init.append(False)
        self._live_str.append({})
        self._live_thr.append({})
        gen = len(self.gen_provider) - 1
        self._current_gen_of[pindex] = gen
        return gen

    def provider_info(self, pos: int, provider_id: int, name: str) -> None:
        pindex = self._provider_index.get(provider_id)
        if pindex is None:
            pindex = len(self.providers)
            self.providers.append(Provider(provider_id, name))
            self._provider_index[provider_id] = pindex
        else:
            self.providers[pindex].name = name
        self.gen = self._new_gen(pindex)
        self._segment(pos)

    def provider_section(self, pos: int, provider_id: int) -> bool:
        """Switch to a provider; returns False when it was unknown (and has been created empty, P4)."""
        pindex = self._provider_index.get(provider_id)
        known = pindex is not None
        if pindex is None:
            pindex = len(self.providers)
            self.providers.append(Provider(provider_id, ""))
            self._provider_index[provider_id] = pindex
            self._new_gen(pindex)
        self.gen = self._current_gen_of[pindex]
        self._segment(pos)
        return known

    def initialization(self, pos: int, ticks_per_second: int) -> None:
        self.gen_tps[self.gen] = ticks_per_second
        self.gen_has_init[self.gen] = True
        self._segment(pos)

    # --- registrations ---
    def register_string(self, pos: int, index: int, text: str) -> None:
        gid = self.intern(text)
        self.str_key.append(self.gen * STRING_KEYS + index)
        self.str_pos.append(pos)
        self.str_gid.append(gid)
        self._live_str[self.gen][index] = gid

    def register_thread(self, pos: int, index: int, pid: int, tid: int) -> None:
        self.thr_key.append(self.gen * THREAD_KEYS + index)
        self.thr_pos.append(pos)
        self.thr_pid.append(pid)
        self.thr_tid.append(tid)
        self._live_thr[self.gen][index] = (pid, tid)

    def live_string(self, index: int) -> int | None:
        return self._live_str[self.gen].get(index)

    def live_thread(self, index: int) -> tuple[int, int] | None:
        return self._live_thr[self.gen].get(index)


class Lookup:
    """Resolve (key, position) -> value of the latest registration of ``key`` before ``position``."""

    def __init__(self, keys: list[int], pos: list[int], values: np.ndarray, keyspace: int) -> None:
        k = np.asarray(keys, dtype=np.int64)
        p = np.asarray(pos, dtype=np.int64)
        order = np.lexsort((p, k))
        self.keys, self.pos, self.values = k[order], p[order], np.asarray(values, dtype=np.int64)[order]
        self.keyspace = keyspace
        self._dense: tuple[np.ndarray, np.ndarray] | None = None
        self._single_last = -1
        if keyspace <= (1 << 22):
            # Common case: most keys are registered once. A dense table answers those with gathers;
            # value -2 marks keys registered more than once (answered by binary search).
            count = np.bincount(self.keys, minlength=keyspace) if len(k) else np.zeros(keyspace, np.int64)
            first = np.full(keyspace, np.iinfo(np.int64).max, dtype=np.int64)
            value = np.full(keyspace, -1, dtype=np.int32)  # (string ids and thread rows fit 31 bits)
            single = count[self.keys] == 1
            first[self.keys[single]] = self.pos[single]
            value[self.keys[single]] = self.values[single]
            value[count > 1] = -2
            self._dense = (first, value)
            self._single_last = int(self.pos[single].max()) if single.any() else -1
            self._has_multi = bool((count > 1).any())

    @property
    def dense(self) -> tuple[np.ndarray, np.ndarray, int] | None:
        """The dense table a compiled pass resolves keys with, as :meth:`__call__` does: ``(first, value,
        single_last)``: per key its one registration's position (int64) and value (int32; -1 none, -2
        registered more than once: :meth:`__call__`'s), and the last position of such a registration (a record
        after it needs no ``first`` check); None when the keyspace is too large for one (every key searched)."""
        if self._dense is None:
            return None
        return (*self._dense, self._single_last)

    def __call__(self, keys: np.ndarray, pos: np.ndarray) -> np.ndarray:
        """Values for each query (-1 when no registration of the key precedes the position).

        ``pos`` must be ascending (records in file order).
        """
        if len(keys) == 0 or len(self.keys) == 0:
            return np.full(len(keys), -1, dtype=np.int64)
        if self._dense is not None:
            first, value = self._dense
            if keys.min() < 0 or keys.max() >= self.keyspace:
                keys = np.clip(keys, 0, self.keyspace - 1)  # cannot happen for well-formed keys
            out = value[keys].astype(np.int64)
            if int(pos[0]) <= self._single_last:  # some single registration may follow these records
                out[(out >= 0) & (pos <= first[keys])] = -1
            slow = np.flatnonzero(out == -2) if self._has_multi else np.zeros(0, np.int64)
        else:
            out = np.full(len(keys), -1, dtype=np.int64)
            slow = np.arange(len(keys))
        if len(slow):
            out[slow] = self._searched(keys[slow], pos[slow])
        return out

    def of_generations(self, gen: np.ndarray, refs: np.ndarray, pos: np.ndarray, width: int) -> np.ndarray | None:
        """:meth:`__call__` of the keys ``gen * width + refs`` for refs below ``width`` (uint8/uint16 refs of
        the provider generations ``gen``): the keys are computed in int32, without the range checks of
        arbitrary keys (the bulk of a block's ref resolution). int32 values; None when there is no dense
        table or the keys would not fit int32 (then call the lookup)."""
        if self._dense is None or self.keyspace >= (1 << 31):
            return None
        if len(refs) == 0 or len(self.keys) == 0:
            return np.full(len(refs), -1, np.int32)
        first, value = self._dense
        scan = compiled.record_scan
        if (
            scan is not None
            and refs.dtype.itemsize <= 2
            and refs.flags.c_contiguous
            and pos.dtype == np.int64
            and pos.flags.c_contiguous
            and gen.dtype == np.int64
            and (gen.strides == (0,) or gen.flags.c_contiguous)
            and len(gen) == len(refs) == len(pos)
        ):  # one pass, no int32 keys nor widened gathers (record_scan.generation_refs)
            out = np.empty(len(refs), np.int32)
            multi = scan.generation_refs(value, first, width, gen[:1] if gen.strides == (0,) else gen, refs, pos,
                                         int(pos[0]) <= self._single_last, out)  # fmt: skip
            if multi:
                slow = np.flatnonzero(out == -2)
                keys = gen[slow] * width + refs[slow].astype(np.int64)
                out[slow] = self._searched(keys, pos[slow])
            return out
        if gen.strides == (0,):  # one generation (a broadcast): its slice of the table, read at the refs
            base = int(gen[0]) * width
            out = value[base : base + width][refs]

            def keys_at(rows) -> np.ndarray:
                return refs[rows].astype(np.int64) + base

        else:
            keys = gen.astype(np.int32)
            keys *= np.int32(width)
            keys += refs
            out = value[keys]

            def keys_at(rows) -> np.ndarray:
                return keys[rows].astype(np.int64)

        if int(pos[0]) <= self._single_last:  # some single registration may follow these records
            out[(out >= 0) & (pos <= first[keys_at(slice(None))])] = -1
        if self._has_multi:
            slow = np.flatnonzero(out == -2)
            if len(slow):
                out[slow] = self._searched(keys_at(slow), pos[slow])
        return out

    def _searched(self, keys: np.ndarray, pos: np.ndarray) -> np.ndarray:
        """Values of keys registered several times (or any key without a dense table), by binary search."""
        comp_reg = (self.keys << 32) | self.pos
        comp_q = (keys << 32) | pos
        j = np.searchsorted(comp_reg, comp_q, side="left") - 1
        ok = (j >= 0) & (self.keys[np.maximum(j, 0)] == keys)
        return np.where(ok, self.values[np.maximum(j, 0)], -1)

    def scalar(self, key: int, pos: int) -> int:
        return int(self(np.array([key], np.int64), np.array([pos], np.int64))[0])
