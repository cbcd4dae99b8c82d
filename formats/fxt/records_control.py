"""Control and descriptive records, decoded one at a time in Python, in file order.

The records that change how later ones are read (metadata, initialization, string, thread) and the rare
descriptive ones (kernel and userspace objects, blobs, large records) are few even in huge traces, so a
plain loop is both simplest and fast enough; the live string/thread tables they build are
:mod:`fxscope.formats.fxt.tables`. This is a mixin of :class:`fxscope.formats.fxt.assemble.Decoder` (it reads the
decoder's words, tables and diagnostics).
"""

from __future__ import annotations

import numpy as np

from fxscope.formats.fxt import fields as F
from fxscope.formats.fxt.args import decode_args, decode_text
from fxscope.formats.fxt.columns import Blob, KernelObject, UserspaceObject
from fxscope.formats.fxt.diagnostics import ShortRecord
from fxscope.formats.fxt.fields import field


class ControlRecords:
    """Decoding of every record type except events, logs and scheduling (see the module docstring)."""

    def _string_ref(self, ref: int, word: int, end: int, offset: int) -> tuple[str, int]:
        """Resolve a string ref against the live tables; ``word`` is where an inline stream would be."""
        if ref == 0:
            return "", 0
        if ref & F.INLINE_STRING:
            length = ref & F.INLINE_LENGTH_MASK
            used = (length + 7) // 8
            if word + used > end:
                raise ShortRecord("inline string runs past the record")
            return decode_text(self.raw[word * 8 : word * 8 + length].tobytes()), used
        gid = self.t.live_string(ref)
        if gid is None:
            self._warn_unresolved_string(ref, offset)
            return f"<unresolved string #{ref}>", 0
        return self.t.strings[gid], 0

    def _warn_unresolved_string(self, ref: int, offset: int) -> None:
        key = (self.t.provider, ref)
        if key not in self._unresolved_str:
            self._unresolved_str.add(key)
            pid = self.t.providers[self.t.provider].id
            self.diag.warn("unresolved string", offset, f"string ref {ref} not registered (provider {pid})")

    def _args(self, first: int, nargs: int, end: int, offset: int) -> list:
        problems: list[str] = []

        def sref(ref: int, word: int) -> tuple[str, int]:
            return self._string_ref(ref, word, end, offset)

        try:
            args = decode_args(self.w, self.raw, first, nargs, end, sref, problems)
        except ShortRecord as exc:
            problems.append(str(exc))
            args = []
        for p in problems:
            self.diag.warn("argument", offset, p)
        return args

    def _control(self, starts: np.ndarray, types: np.ndarray) -> None:
        w, t, diag = self.w, self.t, self.diag
        sel = np.flatnonzero((types != F.EVENT_RECORD) & (types != F.SCHED_RECORD) & (types != F.LOG_RECORD))
        for pos, rtype in zip(starts[sel].tolist(), types[sel].tolist(), strict=True):
            h = int(w[pos])
            off = pos * 8
            size = field(h, F.LARGE_RECORD_SIZE if rtype == F.LARGE_RECORD else F.RECORD_SIZE)
            end = pos + size
            try:
                if rtype == 0:
                    self._metadata(pos, h, end)
                elif rtype == 1:
                    if size < 2:
                        raise ShortRecord("initialization record without its ticks-per-second word")
                    tps = int(w[pos + 1])
                    if tps == 0 or tps >= 1 << 63:
                        diag.warn("init0", off, f"initialization record with {tps} ticks per second ignored")
                    else:
                        t.initialization(pos, tps)
                elif rtype == 2:
                    index, length = field(h, F.STRING_INDEX), field(h, F.STRING_LENGTH)
                    if pos + 1 + (length + 7) // 8 > end:
                        raise ShortRecord("string record shorter than its string")
                    if index == 0:
                        diag.warn("string index 0", off, "string record with index 0 ignored")
                    else:
                        text = decode_text(self.raw[(pos + 1) * 8 : (pos + 1) * 8 + length].tobytes())
                        t.register_string(pos, index, text)
                elif rtype == 3:
                    index = field(h, F.THREAD_INDEX)
                    if size < 3:
                        raise ShortRecord("thread record shorter than 3 words")
                    if index == 0:
                        diag.warn("thread index 0", off, "thread record with index 0 ignored")
                    else:
                        t.register_thread(pos, index, int(w[pos + 1]), int(w[pos + 2]))
                elif rtype == 5:
                    self._blob(pos, h, end)
                elif rtype == 6:
                    self._userspace_object(pos, h, end)
                elif rtype == 7:
                    self._kernel_object(pos, h, end)
                elif rtype == 15:
                    self._large(pos, h, end)
                else:
                    diag.warn(f"unknown record type {rtype}", off, f"skipping record of unknown type {rtype}")
            except ShortRecord as exc:
                diag.warn("short record", off, f"record dropped: {exc}")

    def _metadata(self, pos: int, h: int, end: int) -> None:
        mtype = field(h, F.METADATA_TYPE)
        off = pos * 8
        provider_id = field(h, F.PROVIDER_ID)
        if mtype == 1:
            length = field(h, F.PROVIDER_NAME_LENGTH)
            avail = (end - pos - 1) * 8
            if length > avail:
                self.diag.warn("provider name", off, "provider name longer than its record: truncated")
                length = avail
            name = decode_text(self.raw[(pos + 1) * 8 : (pos + 1) * 8 + length].tobytes())
            self.t.provider_info(pos, provider_id, name)
        elif mtype == 2:
            if not self.t.provider_section(pos, provider_id):
                self.diag.warn(
                    "unknown provider", off, f"provider section for unregistered provider {provider_id}"
                )
        elif mtype == 3:
            event = field(h, F.PROVIDER_EVENT_TYPE)
            if event == 0:
                pindex = next(
                    (i for i, p in enumerate(self.t.providers) if p.id == provider_id), self.t.provider
                )
                self.overflows.append((pindex, off))
                self.diag.warn(
                    "overflow", off, f"provider {provider_id}: buffer filled up, records were likely dropped"
                )
            else:
                self.diag.warn("provider event", off, f"skipping provider event of unknown type {event}")
        elif mtype == 4:
            info = field(h, F.TRACE_INFO_TYPE)
            if info != 0:
                self.diag.warn("trace info", off, f"skipping trace info record of unknown type {info}")
        else:
            self.diag.warn("metadata", off, f"skipping metadata of unknown type {mtype}")

    def _thread_of(self, ref: int, word: int, end: int, offset: int) -> tuple[tuple[int, int] | None, int]:
        if ref == 0:
            if word + 2 > end:
                raise ShortRecord("inline thread runs past the record")
            return (int(self.w[word]), int(self.w[word + 1])), 2
        pair = self.t.live_thread(ref)
        if pair is None:
            self._warn_unresolved_thread(ref, offset)
        return pair, 0

    def _warn_unresolved_thread(self, ref: int, offset: int) -> None:
        key = (self.t.provider, ref)
        if key not in self._unresolved_thr:
            self._unresolved_thr.add(key)
            pid = self.t.providers[self.t.provider].id
            self.diag.warn("unresolved thread", offset, f"thread ref {ref} not registered (provider {pid})")

    def _kernel_object(self, pos: int, h: int, end: int) -> None:
        if end - pos < 2:
            raise ShortRecord("kernel object record shorter than 2 words")
        obj_type = field(h, F.KERNEL_OBJECT_TYPE)
        name_ref, nargs = field(h, F.OBJECT_NAME_REF), field(h, F.OBJECT_NARGS)
        koid = int(self.w[pos + 1])
        name, used = self._string_ref(name_ref, pos + 2, end, pos * 8)
        args = self._args(pos + 2 + used, nargs, end, pos * 8)
        self.kernel_objects.append(KernelObject(koid, obj_type, name, args, self.t.provider, pos * 8))

    def _userspace_object(self, pos: int, h: int, end: int) -> None:
        if end - pos < 2:
            raise ShortRecord("userspace object record shorter than 2 words")
        tref = field(h, F.USERSPACE_PROCESS_REF)
        name_ref, nargs = field(h, F.OBJECT_NAME_REF), field(h, F.OBJECT_NARGS)
        pointer = int(self.w[pos + 1])
        cur = pos + 2
        if tref == 0:
            if cur >= end:
                raise ShortRecord("inline process koid runs past the record")
            pid = int(self.w[cur])
            cur += 1
        else:
            pair = self.t.live_thread(tref)
            if pair is None:
                self._warn_unresolved_thread(tref, pos * 8)
            pid = pair[0] if pair else 0
        name, used = self._string_ref(name_ref, cur, end, pos * 8)
        args = self._args(cur + used, nargs, end, pos * 8)
        self.userspace_objects.append(UserspaceObject(pointer, pid, name, args, self.t.provider, pos * 8))

    def _blob(self, pos: int, h: int, end: int) -> None:
        name_ref, length = field(h, F.BLOB_NAME_REF), field(h, F.BLOB_LENGTH)
        btype = field(h, F.BLOB_TYPE)
        name, used = self._string_ref(name_ref, pos + 1, end, pos * 8)
        start = pos + 1 + used
        if start + (length + 7) // 8 > end:
            raise ShortRecord("blob payload runs past the record")
        if btype not in (1, 2, 3):
            self.diag.warn("blob type", pos * 8, f"blob of undefined type {btype} kept as raw data")
        self.blobs.append(Blob(name, btype, start * 8, length))

    def _large(self, pos: int, h: int, end: int) -> None:
        lrt, fmt = field(h, F.LARGE_TYPE), field(h, F.LARGE_FORMAT)
        off = pos * 8
        if lrt != 0:
            self.diag.warn("large type", off, f"skipping unknown large record type {lrt}")
            return
        if fmt not in (0, 1):
            self.diag.warn("large format", off, f"skipping unknown large blob record format {fmt}")
            return
        if end - pos < 3:
            raise ShortRecord("large blob record too short")
        fh = int(self.w[pos + 1])
        cat_ref, name_ref = field(fh, F.LARGE_CATEGORY_REF), field(fh, F.LARGE_NAME_REF)
        cur = pos + 2
        category, used = self._string_ref(cat_ref, cur, end, off)
        cur += used
        name, used = self._string_ref(name_ref, cur, end, off)
        cur += used
        blob = Blob(name, 0, 0, 0, large_format=fmt)
        blob.category = self.t.intern(category)
        if fmt == 0:
            nargs, tref = field(fh, F.LARGE_NARGS), field(fh, F.LARGE_THREAD_REF)
            if cur >= end:
                raise ShortRecord("large blob record too short")
            ticks = int(self.w[cur])
            cur += 1
            pair, used = self._thread_of(tref, cur, end, off)
            cur += used
            blob.args = self._args(cur, nargs, end, off)
            cur = self._skip_args(cur, nargs, end)
            blob.ts = min(ticks * 1_000_000_000 // self.t.gen_tps[self.t.gen], (1 << 63) - 1)
            if pair is not None:  # an inline-thread code, mapped to the thread table at the end
                self.inline_pids.append(np.array([pair[0]], np.uint64))
                self.inline_tids.append(np.array([pair[1]], np.uint64))
                blob.thread = -2 - self.n_inline
                self.n_inline += 1
        if cur >= end:
            raise ShortRecord("large blob record without its size word")
        length = int(self.w[cur])
        cur += 1
        if cur * 8 + length > end * 8:
            raise ShortRecord("large blob payload runs past the record")
        blob.offset, blob.size = cur * 8, length
        self.blobs.append(blob)

    def _skip_args(self, cur: int, nargs: int, end: int) -> int:
        for _ in range(nargs):
            if cur >= end:
                break
            size = field(int(self.w[cur]), F.ARG_SIZE)
            if size == 0:
                break
            cur += size
        return cur
