"""Arguments decoded on demand, after the read, with the string table that was in force at each record.

The reader keeps only where each record's arguments are; :class:`ArgDecoder` (held by the columns)
decodes them when a view or an export asks, one record (details) or many string refs (columns) at a time.
"""

from __future__ import annotations

import numpy as np

from fxscope.formats.fxt import compiled
from fxscope.formats.fxt import fields as F
from fxscope.formats.fxt.args import decode_args, decode_text
from fxscope.formats.fxt.bulk_resolve import intern_streams
from fxscope.formats.fxt.fields import record_size
from fxscope.formats.fxt.tables import STRING_KEYS, Lookup, ProviderTables


class ArgDecoder:
    """Lazy argument decoding with the string table in force at a given record (kept by the columns)."""

    def __init__(
        self, words: np.ndarray, raw: np.ndarray, tables: ProviderTables, str_lookup: Lookup
    ) -> None:
        self.w, self.raw, self.t = words, raw, tables
        self.raw64 = raw.view("<u8") if len(raw) else np.zeros(0, "<u8")
        self.str_lookup = str_lookup
        self._seg_pos = np.asarray(tables.seg_pos, np.int64)
        self._seg_gen = np.asarray(tables.seg_gen, np.int64)

    @property
    def segments(self) -> tuple[np.ndarray, np.ndarray]:
        """The provider segments: the word where each begins (int64, ascending) and the provider generation
        in force in it (int64): a record's string refs resolve with the table of the last segment at or before
        its word (the first segment's before any)."""
        return self._seg_pos, self._seg_gen

    def providers_at(self, record_words: np.ndarray) -> np.ndarray:
        """uint16 provider index of the records whose headers are at ``record_words`` (the provider whose
        section each is in), a block at a time."""
        gen_provider = np.asarray(self.t.gen_provider, np.uint16)
        out = np.empty(len(record_words), np.uint16)
        block = 1 << 20
        for a in range(0, len(record_words), block):
            seg = np.searchsorted(self._seg_pos, record_words[a : a + block], side="right") - 1
            out[a : a + block] = gen_provider[self._seg_gen[np.maximum(seg, 0)]]
        return out

    def string_ids(self, refs: np.ndarray, stream_words: np.ndarray, record_words: np.ndarray) -> np.ndarray:
        """Global string ids (into ``FxtColumns.strings``, -1 unresolved) of many string refs at once.

        ``refs`` are 16-bit string refs found in the records whose headers are at ``record_words``
        (ascending); ``stream_words`` is where each inline stream would start. Indexed refs resolve with the
        table of the provider in force at the record; inline streams are interned (new texts are appended
        to the strings list, so ids stay valid for everyone holding it). The indexed refs are resolved by one
        compiled pass when the string table has a dense lookup (:meth:`_string_ids` is the numpy path, the
        tests' reference).
        """
        refs = np.asarray(refs, np.int64)
        record_words = np.asarray(record_words, np.int64)
        scan = compiled.record_scan
        dense = self.str_lookup.dense
        if scan is not None and dense is not None and len(refs) and len(refs) == len(record_words):
            # one compiled pass (record_scan.ref_ids): the segment, the key and the dense table's answer of each
            # ref, without the masks, gathers and segment search of the path below (a quarter of the counter
            # track's build at 10M events); what it leaves (inline streams, keys registered more than once)
            # takes that path
            first, value, single_last = dense
            refs, record_words = np.ascontiguousarray(refs), np.ascontiguousarray(record_words)
            out = np.empty(len(refs), np.int64)
            if scan.ref_ids(refs, record_words, self._seg_pos, self._seg_gen, value, first, STRING_KEYS,
                            int(record_words.min()) <= single_last, out):  # fmt: skip
                left = np.flatnonzero(out <= -2)
                out[left] = self._string_ids(refs[left], np.asarray(stream_words, np.int64)[left], record_words[left])
            return out
        return self._string_ids(refs, stream_words, record_words)

    def _string_ids(self, refs: np.ndarray, stream_words: np.ndarray, record_words: np.ndarray) -> np.ndarray:
        """:meth:`string_ids` with numpy: the reference of its compiled pass, and the refs that pass leaves."""
        out = np.zeros(len(refs), np.int64)
        indexed = np.flatnonzero((refs != 0) & (refs < F.INLINE_STRING))
        if len(indexed):
            seg = np.searchsorted(self._seg_pos, record_words[indexed], side="right") - 1
            gen = self._seg_gen[np.maximum(seg, 0)]
            out[indexed] = self.str_lookup(gen * STRING_KEYS + refs[indexed], record_words[indexed])
        inline = np.flatnonzero(refs >= F.INLINE_STRING)
        if len(inline):
            words = np.asarray(stream_words, np.int64)[inline]
            lengths = refs[inline] & F.INLINE_LENGTH_MASK
            # a stream that would run past the end of the data (a corrupt or truncated record) is unresolved
            fits = (words >= 0) & (words + ((lengths + 7) >> 3) <= len(self.raw64))
            out[inline] = -1
            if fits.any():
                out[inline[fits]] = intern_streams(self.raw64, self.t, words[fits], lengths[fits])
        return out

    def args_at(self, record_word: int, first: int, nargs: int) -> list:
        """Decode ``nargs`` arguments at word ``first`` of the record whose header is at ``record_word``."""
        if nargs == 0:
            return []
        end = min(record_word + record_size(int(self.w[record_word])), len(self.w))
        seg = int(np.searchsorted(self._seg_pos, record_word, side="right")) - 1
        gen = self.t.seg_gen[seg]

        def sref(ref: int, word: int) -> tuple[str, int]:
            if ref == 0:
                return "", 0
            if ref & F.INLINE_STRING:
                length = ref & F.INLINE_LENGTH_MASK
                return decode_text(self.raw[word * 8 : word * 8 + length].tobytes()), (length + 7) // 8
            gid = self.str_lookup.scalar(gen * STRING_KEYS + ref, record_word)
            return (self.t.strings[gid] if gid >= 0 else f"<unresolved string #{ref}>"), 0

        return decode_args(self.w, self.raw, first, nargs, end, sref)
