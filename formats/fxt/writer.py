"""Write FXT records: every record and argument type, little- or big-endian, inline or indexed refs.

Used by the synthetic trace generator and by tests that build edge cases. A string argument given as a
``str`` is written inline (``""`` as the empty ref 0); an ``int`` is an index the caller registered with
:meth:`FxtWriter.string`. A thread given as ``(pid, tid)`` is written inline; an ``int`` is a thread index.
"""

from __future__ import annotations

import struct
from collections.abc import Iterable, Sequence

from fxscope.formats.fxt.args import ArgType
from fxscope.formats.fxt.magic import MAGIC_WORD

StrRef = int | str
ThreadRef = int | tuple[int, int]
#: (name, type, value) as the writer takes an argument
ArgSpec = tuple[StrRef, int, object]

_M64 = (1 << 64) - 1


def _pad(data: bytes) -> bytes:
    return data + b"\0" * (-len(data) % 8)


class FxtWriter:
    """Accumulates records in memory; :meth:`getvalue` returns the bytes."""

    def __init__(self, big_endian: bool = False, magic: bool = True) -> None:
        self.big_endian = big_endian
        self._fmt = ">Q" if big_endian else "<Q"
        self._parts: list[bytes] = []
        if magic:
            self.magic()

    # ------------------------------------------------------------------ primitives
    def word(self, value: int) -> bytes:
        return struct.pack(self._fmt, value & _M64)

    def raw(self, data: bytes) -> None:
        """Append bytes as they are (hand-built edge cases)."""
        self._parts.append(bytes(data))

    def raw_words(self, values: Iterable[int]) -> None:
        self._parts.append(b"".join(self.word(v) for v in values))

    def getvalue(self) -> bytes:
        return b"".join(self._parts)

    def _emit(self, header: int, body: list[bytes], size_bits: int = 12) -> None:
        payload = b"".join(body)
        size = 1 + len(payload) // 8
        if size >= 1 << size_bits:
            raise ValueError(f"record of {size} words does not fit a {size_bits}-bit size field")
        self._parts.append(self.word(header | (size << 4)) + payload)

    @staticmethod
    def _sref(ref: StrRef) -> tuple[int, bytes]:
        if isinstance(ref, str):
            if ref == "":
                return 0, b""
            data = ref.encode()
            if len(data) > 0x7FFF:
                raise ValueError("inline string longer than 32767 bytes")
            return 0x8000 | len(data), _pad(data)
        if not 0 <= ref < 0x8000:
            raise ValueError(f"string index out of range: {ref}")
        return ref, b""

    def _tref(self, ref: ThreadRef) -> tuple[int, bytes]:
        if isinstance(ref, tuple):
            return 0, self.word(ref[0]) + self.word(ref[1])
        if not 0 < ref < 256:
            raise ValueError(f"thread index out of range: {ref}")
        return ref, b""

    def encode_args(self, args: Sequence[ArgSpec]) -> list[bytes]:
        out = []
        for name, atype, value in args:
            nref, nstream = self._sref(name)
            high = 0
            tail = b""
            if atype in (ArgType.INT32, ArgType.UINT32):
                high = int(value) & 0xFFFFFFFF
            elif atype in (ArgType.INT64, ArgType.UINT64, ArgType.POINTER, ArgType.KOID):
                tail = self.word(int(value))
            elif atype == ArgType.DOUBLE:
                tail = self.word(struct.unpack("<Q", struct.pack("<d", float(value)))[0])
            elif atype == ArgType.STRING:
                vref, tail = self._sref(value)  # type: ignore[arg-type]
                high = vref
            elif atype == ArgType.BOOL:
                high = 1 if value else 0
            elif atype == ArgType.BLOB:
                data = bytes(value)  # type: ignore[arg-type]
                high = len(data)
                tail = _pad(data)
            elif atype != ArgType.NULL:
                tail = bytes(value or b"")  # unknown type: raw payload words
            size = 1 + (len(nstream) + len(tail)) // 8
            out.append(self.word(atype | (size << 4) | (nref << 16) | (high << 32)) + nstream + tail)
        return out

    # ------------------------------------------------------------------ metadata
    def magic(self) -> None:
        self._parts.append(self.word(MAGIC_WORD))

    def provider_info(self, provider_id: int, name: str, name_length: int | None = None) -> None:
        data = name.encode()
        length = len(data) if name_length is None else name_length
        self._emit(0 | (1 << 16) | (provider_id << 20) | (length << 52), [_pad(data)])

    def provider_section(self, provider_id: int) -> None:
        self._emit(0 | (2 << 16) | (provider_id << 20), [])

    def provider_event(self, provider_id: int, event: int = 0) -> None:
        self._emit(0 | (3 << 16) | (provider_id << 20) | (event << 52), [])

    def initialization(self, ticks_per_second: int, extra_words: Sequence[int] = ()) -> None:
        self._emit(1, [self.word(ticks_per_second), *(self.word(v) for v in extra_words)])

    def string(self, index: int, text: str) -> None:
        data = text.encode()
        self._emit(2 | (index << 16) | (len(data) << 32), [_pad(data)])

    def thread(self, index: int, pid: int, tid: int) -> None:
        self._emit(3 | (index << 16), [self.word(pid), self.word(tid)])

    # ------------------------------------------------------------------ events
    def event(
        self,
        kind: int,
        ts: int,
        thread: ThreadRef,
        category: StrRef,
        name: StrRef,
        args: Sequence[ArgSpec] = (),
        data: int | None = None,
        extra_words: Sequence[int] = (),
    ) -> None:
        """An event record; ``data`` is the counter/async/flow id or the end time of a complete event."""
        tref, tbody = self._tref(thread)
        cref, cbody = self._sref(category)
        nref, nbody = self._sref(name)
        body = [self.word(ts), tbody, cbody, nbody, *self.encode_args(args)]
        if data is not None:
            body.append(self.word(data))
        body.extend(self.word(v) for v in extra_words)
        self._emit(4 | (kind << 16) | (len(args) << 20) | (tref << 24) | (cref << 32) | (nref << 48), body)

    # ------------------------------------------------------------------ other records
    def blob(self, name: StrRef, blob_type: int, payload: bytes) -> None:
        nref, nbody = self._sref(name)
        self._emit(5 | (nref << 16) | (len(payload) << 32) | (blob_type << 48), [nbody, _pad(payload)])

    def userspace_object(
        self, pointer: int, process: int | tuple[int], name: StrRef, args: Sequence[ArgSpec] = ()
    ) -> None:
        """``process`` is a thread index or ``(pid,)`` for an inline process koid."""
        if isinstance(process, tuple):
            tref, tbody = 0, self.word(process[0])
        else:
            tref, tbody = process, b""
        nref, nbody = self._sref(name)
        body = [self.word(pointer), tbody, nbody, *self.encode_args(args)]
        self._emit(6 | (tref << 16) | (nref << 24) | (len(args) << 40), body)

    def kernel_object(self, koid: int, obj_type: int, name: StrRef, args: Sequence[ArgSpec] = ()) -> None:
        nref, nbody = self._sref(name)
        self._emit(
            7 | (obj_type << 16) | (nref << 24) | (len(args) << 40),
            [self.word(koid), nbody, *self.encode_args(args)],
        )

    def legacy_context_switch(
        self,
        ts: int,
        cpu: int,
        out_state: int,
        out_thread: ThreadRef,
        in_thread: ThreadRef,
        out_prio: int = 0,
        in_prio: int = 0,
    ) -> None:
        oref, obody = self._tref(out_thread)
        iref, ibody = self._tref(in_thread)
        header = (
            8
            | (cpu << 16)
            | (out_state << 24)
            | (oref << 28)
            | (iref << 36)
            | (out_prio << 44)
            | (in_prio << 52)
        )
        self._emit(header, [self.word(ts), obody, ibody])

    def context_switch(
        self, ts: int, cpu: int, out_state: int, out_tid: int, in_tid: int, args: Sequence[ArgSpec] = ()
    ) -> None:
        header = 8 | (len(args) << 16) | (cpu << 20) | (out_state << 36) | (1 << 60)
        self._emit(header, [self.word(ts), self.word(out_tid), self.word(in_tid), *self.encode_args(args)])

    def thread_wakeup(self, ts: int, cpu: int, tid: int, args: Sequence[ArgSpec] = ()) -> None:
        header = 8 | (len(args) << 16) | (cpu << 20) | (2 << 60)
        self._emit(header, [self.word(ts), self.word(tid), *self.encode_args(args)])

    def log(self, ts: int, thread: ThreadRef, message: str) -> None:
        tref, tbody = self._tref(thread)
        data = message.encode()[:0x7FFF]
        self._emit(9 | (len(data) << 16) | (tref << 32), [self.word(ts), tbody, _pad(data)])

    def large_blob(
        self,
        category: StrRef,
        name: StrRef,
        payload: bytes,
        *,
        ts: int | None = None,
        thread: ThreadRef | None = None,
        args: Sequence[ArgSpec] = (),
    ) -> None:
        """Large BLOB record: format 0 (with metadata) when ``ts`` is given, else format 1."""
        cref, cbody = self._sref(category)
        nref, nbody = self._sref(name)
        if ts is None:
            fmt, fh, body = 1, cref | (nref << 16), [cbody, nbody]
        else:
            tref, tbody = self._tref(thread if thread is not None else (0, 0))
            fmt = 0
            fh = cref | (nref << 16) | (len(args) << 32) | (tref << 36)
            body = [cbody, nbody, self.word(ts), tbody, *self.encode_args(args)]
        body += [self.word(len(payload)), _pad(payload)]
        self._emit(15 | (fmt << 40), [self.word(fh), *body], size_bits=32)
