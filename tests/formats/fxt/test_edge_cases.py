"""Hand-built records for each robustness rule of the spec (Part 3): build the words, read, assert."""

from __future__ import annotations

import struct

import numpy as np
import pytest

from fxscope.formats.errors import FormatError
from fxscope.formats.fxt.args import ArgType as A
from fxscope.formats.fxt.columns import EventKind as K
from fxscope.formats.fxt.reader import read_fxt, read_fxt_bytes
from fxscope.formats.fxt.writer import FxtWriter

MAGIC = bytes.fromhex("1000044678541600")


def words(*values: int) -> bytes:
    return b"".join(struct.pack("<Q", v) for v in values)


def test_spec_vector_instant_event_all_inline():
    """Part 4.2 of the spec, byte for byte."""
    data = MAGIC + bytes.fromhex(
        "8400100003800480" "e803000000000000" "3412000000000000" "7856000000000000"
        "6361740000000000" "6e616d6500000000" "210001802a000000" "7800000000000000"
    )  # fmt: skip
    cols = read_fxt_bytes(data)
    assert cols.ev_kind.tolist() == [K.INSTANT] and cols.ev_ts.tolist() == [1000]
    assert cols.strings[cols.ev_category[0]] == "cat" and cols.strings[cols.ev_name[0]] == "name"
    t = cols.ev_thread[0]
    assert (int(cols.threads_pid[t]), int(cols.threads_tid[t])) == (0x1234, 0x5678)
    assert [(a.name, a.type, a.value) for a in cols.event_args(0)] == [("x", A.INT32, 42)]
    # the same event written by our writer is the same bytes
    w = FxtWriter()
    w.event(K.INSTANT, 1000, (0x1234, 0x5678), "cat", "name", [("x", A.INT32, 42)])
    assert w.getvalue() == data


def test_spec_vector_arg_headers():
    body = words(5) + words(0x0000000180080029) + b"abcdefgh" + words(0x0000000080080029) + b"abcdefgh"
    body += words(0x000000008008002A) + b"abcdefgh"
    header = 4 | ((1 + len(body) // 8 + 2) << 4) | (3 << 20) | (0 << 24) | (1 << 32) | (1 << 48)
    data = (
        MAGIC + words(0x0000000500010022) + b"hello\0\0\0" + words(header) + body[:8] + words(1, 2) + body[8:]
    )
    cols = read_fxt_bytes(data)
    args = cols.event_args(0)
    assert [(a.name, a.type, a.value) for a in args] == [
        ("abcdefgh", A.BOOL, True),
        ("abcdefgh", A.BOOL, False),
        ("abcdefgh", A.BLOB, b""),
    ]
    assert cols.strings[cols.ev_name[0]] == "hello"


def test_not_fxt_raises_format_error(tmp_path):
    p = tmp_path / "x.fxt"
    p.write_bytes(b"hello world, not a trace")
    with pytest.raises(FormatError) as err:
        read_fxt(p)
    assert "x.fxt" in str(err.value) and "offset 0x0" in str(err.value)
    with pytest.raises(FormatError):
        read_fxt_bytes(b"\0" * 4)
    with pytest.raises(FormatError):
        read_fxt(tmp_path / "missing.fxt")
    forced = read_fxt_bytes(words(0x0000000000000021, 10), force=True)  # no magic, forced little-endian
    assert forced.ticks_per_second == [10]


def test_big_endian_equals_little_endian():
    def build(be: bool) -> bytes:
        w = FxtWriter(big_endian=be)
        w.provider_info(7, "p")
        w.initialization(10)
        w.string(1, "name")
        w.thread(1, 1 << 63, 5)
        w.event(K.COUNTER, 40, 1, "cat", 1, [("v", A.DOUBLE, 2.5), ("i", A.INT64, -3)], data=9)
        w.log(50, 1, "msg")
        w.context_switch(60, 1, 3, 5, 6)
        return w.getvalue()

    le, be = read_fxt_bytes(build(False)), read_fxt_bytes(build(True))
    assert be.big_endian and not le.big_endian
    for col in ("ev_ts", "ev_kind", "ev_id", "ev_thread", "threads_pid", "log_ts", "sched_in_tid"):
        assert np.array_equal(getattr(le, col), getattr(be, col)), col
    assert le.ev_ts.tolist() == [4_000_000_000]  # 40 ticks at 10/s (T1)
    assert le.threads_pid.tolist() == [1 << 63]  # full unsigned koids (E6)
    assert le.event_args(0) == be.event_args(0)
    assert be.strings[be.log_message[0]] == "msg"


def test_truncated_final_record_keeps_the_rest():
    w = FxtWriter()
    w.event(K.INSTANT, 1, (1, 2), "", "a")
    w.event(K.INSTANT, 2, (1, 2), "", "b")
    data = w.getvalue()
    cols = read_fxt_bytes(data[:-8])
    assert cols.ev_ts.tolist() == [1]
    assert any("truncated final record: 8 bytes missing" in x for x in cols.warnings)
    odd = read_fxt_bytes(data + b"\1\2\3")
    assert odd.ev_ts.tolist() == [1, 2] and any("not a multiple of 8" in x for x in odd.warnings)


def test_size_zero_record_stops_decoding():
    w = FxtWriter()
    w.event(K.INSTANT, 1, (1, 2), "", "a")
    w.raw(words(0x0016547846040000))  # the corrupt magic of Perfetto's CorruptedFxt test
    w.event(K.INSTANT, 2, (1, 2), "", "b")
    cols = read_fxt_bytes(w.getvalue())
    assert cols.ev_ts.tolist() == [1]
    assert any("Unexpected record of size 0" in x for x in cols.warnings)


def test_zero_words_are_padding():
    w = FxtWriter()
    w.raw(words(0, 0))
    w.event(K.INSTANT, 2, (1, 2), "", "b")
    cols = read_fxt_bytes(w.getvalue())
    assert cols.ev_ts.tolist() == [2]


def test_record_size_past_end_of_file():
    w = FxtWriter()
    w.event(K.INSTANT, 1, (1, 2), "", "a")
    w.raw(words(4 | (4000 << 4), 5))
    cols = read_fxt_bytes(w.getvalue())
    assert cols.ev_ts.tolist() == [1] and any("truncated final record" in x for x in cols.warnings)


def test_unknown_types_are_skipped_by_size():
    w = FxtWriter()
    w.raw(words(12 | (3 << 4), 1, 2))  # record type 12
    w.raw(words(4 | (3 << 4) | (13 << 16), 7, 0))  # event type 13
    w.raw(words(8 | (2 << 4) | (5 << 60), 1))  # scheduling type 5
    w.raw(words(15 | (2 << 4) | (3 << 36), 0))  # large record type 3
    w.raw(words(0 | (1 << 4) | (9 << 16)))  # metadata type 9
    w.event(K.INSTANT, 3, (1, 2), "", "after", [("u", 13, b"\1" * 8), ("k", A.INT32, 1)])
    cols = read_fxt_bytes(w.getvalue())
    assert cols.record_counts["unknown"] == 1 and cols.record_counts["large"] == 1
    assert cols.ev_ts.tolist() == [3] and len(cols.sched_ts) == 0
    assert [(a.name, a.type, a.value) for a in cols.event_args(0)] == [("u", 13, None), ("k", A.INT32, 1)]
    text = "\n".join(cols.warnings)
    for needle in ("unknown type 12", "event of unknown type 13", "scheduling record of unknown type 5",
                   "large record type 3", "metadata of unknown type 9"):  # fmt: skip
        assert needle in text


def test_argument_size_zero_and_arguments_past_record():
    w = FxtWriter()
    w.string(1, "n")
    w.raw(words(4 | (4 << 4) | (2 << 20) | (1 << 48), 5, 1, 2) + words(1 | (1 << 4) | (1 << 16) | (7 << 32)))
    w.raw(words(4 | (5 << 4) | (2 << 20) | (1 << 48), 6, 1, 2, 1 | (1 << 4) | (1 << 16) | (7 << 32), 0))
    w.raw(words(4 | (4 << 4) | (1 << 20) | (1 << 48), 7, 1, 2) + words(3 | (3 << 4) | (1 << 16)))
    cols = read_fxt_bytes(w.getvalue())
    # first: inline thread then one Int32 arg; its nargs says 2 but the record ends (dropped, A3)
    # second: an argument of size 0 after the first one (kept with 1 argument, A2); third: past the record
    assert cols.ev_ts.tolist() == [6]
    assert cols.ev_nargs.tolist() == [1] and cols.event_args(0)[0].value == 7
    assert sum("arguments run past the record" in x for x in cols.warnings) == 2
    assert any("argument of size 0" in x for x in cols.warnings)


def test_unresolved_refs_are_kept_with_warning():
    w = FxtWriter()
    w.event(K.INSTANT, 1, 9, 5, 6)
    w.event(K.INSTANT, 2, 9, 5, 6)
    cols = read_fxt_bytes(w.getvalue())
    assert cols.ev_ts.tolist() == [1, 2]
    assert cols.ev_thread.tolist() == [-1, -1] and cols.ev_name.tolist() == [-1, -1]
    text = "\n".join(cols.warnings)
    assert text.count("thread ref 9 not registered") == 1 and text.count("string ref 6 not registered") == 1


def test_string_reregistration_applies_to_following_records():
    w = FxtWriter()
    w.string(1, "first")
    w.event(K.INSTANT, 1, (1, 2), "", 1, [(1, A.STRING, 1)])
    w.string(1, "second")
    w.event(K.INSTANT, 2, (1, 2), "", 1, [(1, A.STRING, 1)])
    w.string(0, "ignored")
    w.thread(0, 1, 1)
    cols = read_fxt_bytes(w.getvalue())
    assert [cols.strings[i] for i in cols.ev_name] == ["first", "second"]
    assert cols.event_args(0)[0].value == "first" and cols.event_args(1)[0].name == "second"
    assert any("string record with index 0" in x for x in cols.warnings)
    assert any("thread record with index 0" in x for x in cols.warnings)


def test_providers_have_separate_tables():
    w = FxtWriter()
    w.string(1, "zero")  # provider 0 (implicit)
    w.provider_info(1, "one")
    w.string(1, "one-name")
    w.thread(1, 10, 11)
    w.initialization(1000)
    w.provider_info(2, "two")
    w.string(1, "two-name")
    w.event(K.INSTANT, 5, 1, "", 1)  # provider 2 has no thread 1
    w.provider_section(1)
    w.event(K.INSTANT, 5, 1, "", 1)  # provider 1: its tables and tick rate are kept (P3)
    w.provider_section(3)  # unknown provider (P4)
    w.event(K.INSTANT, 5, (1, 1), "", 1)
    w.provider_info(1, "one-again")  # fresh tables (P2)
    w.event(K.INSTANT, 5, 1, "", 1)
    w.provider_event(1, 0)
    w.initialization(0)
    cols = read_fxt_bytes(w.getvalue())
    assert [(p.id, p.name) for p in cols.providers] == [(0, ""), (1, "one-again"), (2, "two"), (3, "")]
    assert cols.ev_provider.tolist() == [2, 1, 3, 1]
    assert cols.ev_name.tolist()[:3] == [cols.strings.index("two-name"), cols.strings.index("one-name"), -1]
    assert cols.ev_name[3] == -1 and cols.ev_thread[3] == -1
    assert cols.ev_thread[0] == -1 and cols.ev_thread[1] >= 0
    assert cols.ev_ts.tolist() == [5, 5_000_000, 5, 5]
    assert cols.buffer_overflows == [(1, cols.buffer_overflows[0][1])]
    text = "\n".join(cols.warnings)
    assert "unregistered provider 3" in text and "buffer filled up" in text and "0 ticks per second" in text


def test_instant_scope_word_and_large_records():
    w = FxtWriter()
    w.event(K.INSTANT, 1, (1, 2), "", "global", extra_words=(2,))
    w.event(K.INSTANT, 2, (1, 2), "", "thread")
    payload = bytes(range(256)) * 200  # 51,200 bytes: more than a normal record can hold
    w.large_blob("c", "big", payload, ts=3, thread=(1, 2), args=[("a", A.UINT32, 1)])
    w.large_blob("", "att", b"xyz")
    w.blob("small", 3, b"perfetto")
    data = w.getvalue()
    cols = read_fxt_bytes(data)
    assert cols.ev_scope.tolist() == [2, 0]
    big, att, small = cols.blobs
    assert data[big.offset : big.offset + big.size] == payload and big.ts == 3 and big.large_format == 0
    assert big.args[0].value == 1 and cols.threads_tid[big.thread] == 2
    assert (att.name, att.size, att.large_format, att.ts) == ("att", 3, 1, None)
    assert (small.name, small.blob_type, data[small.offset : small.offset + small.size]) == (
        "small",
        3,
        b"perfetto",
    )


def test_scheduling_records():
    w = FxtWriter()
    w.thread(1, 100, 101)
    w.legacy_context_switch(10, 3, 3, 1, (100, 102), 7, 8)
    w.context_switch(
        20, 300, 2, 101, 102, [("incoming_weight", A.INT32, 5), ("outgoing_weight", A.INT32, -(2**31))]
    )
    w.string(1, "waker")
    w.thread_wakeup(30, 1, 103, [("weight", A.INT32, 1), (1, A.KOID, 101)])
    w.thread_wakeup(31, 1, 104, [("waker", A.KOID, 102)])
    cols = read_fxt_bytes(w.getvalue())
    assert cols.sched_kind.tolist() == [0, 1, 2, 2]
    assert cols.sched_cpu.tolist() == [3, 300, 1, 1]
    assert cols.sched_out_tid.tolist() == [101, 101, 0, 0]
    assert cols.sched_in_tid.tolist() == [102, 102, 103, 104]
    assert cols.sched_out_pid.tolist()[:1] == [100] and cols.sched_in_pid.tolist()[:1] == [100]
    assert cols.sched_out_state.tolist()[:2] == [3, 2]
    assert cols.sched_out_prio.tolist()[0] == 7 and cols.sched_in_prio.tolist()[0] == 8
    assert cols.sched_waker_tid.tolist() == [0, 0, 101, 102]
    assert cols.sched_args(1)[1].value == -(2**31)


def test_logs_and_objects():
    w = FxtWriter()
    w.thread(1, 5, 6)
    w.log(10, 1, "hello {{{pc:0x1234}}}")
    w.log(11, (5, 7), "\xff bad utf8 follows")
    w.raw(words(9 | (3 << 4) | (3 << 16) | (1 << 32), 12) + b"\xff\xfeA\0\0\0\0\0")
    w.kernel_object(5, 1, "proc", [("k", A.KOID, 1)])
    w.userspace_object(0x1000, 1, "obj", [("n", A.UINT32, 3)])
    w.userspace_object(0x2000, (9,), "obj2")
    cols = read_fxt_bytes(w.getvalue())
    assert [cols.strings[m] for m in cols.log_message[:2]] == [
        "hello {{{pc:0x1234}}}",
        "\xff bad utf8 follows",
    ]
    assert cols.strings[cols.log_message[2]] == "\ufffd\ufffdA"  # invalid UTF-8 replaced (A6)
    assert cols.threads_tid[cols.log_thread].tolist() == [6, 7, 6]
    assert (cols.kernel_objects[0].koid, cols.kernel_objects[0].name) == (5, "proc")
    assert [(o.pointer, o.pid, o.name) for o in cols.userspace_objects] == [
        (0x1000, 5, "obj"),
        (0x2000, 9, "obj2"),
    ]


def test_inline_strings_are_deduplicated_exactly():
    w = FxtWriter()
    names = ["a", "a\0", "abcdefgh", "abcdefghi", "abcdefgh", "", "ü"]
    for i, name in enumerate(names):
        w.event(K.INSTANT, i, (1, 2), name, name)
    cols = read_fxt_bytes(w.getvalue())
    assert [cols.strings[i] for i in cols.ev_name] == names
    assert cols.ev_name[2] == cols.ev_name[4] and cols.ev_name[0] != cols.ev_name[1]
