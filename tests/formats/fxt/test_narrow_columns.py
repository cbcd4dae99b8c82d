"""The reader stores event codes and scheduling koids in the narrowest dtype the file's values allow: the
values are the same, only the width differs (int16 codes below 32768 table rows; uint32 koids below 2**32)."""

from __future__ import annotations

import numpy as np

from fxscope.core.trace.model import TraceModel
from fxscope.core.trace.prepare import prepare_model
from fxscope.formats.fxt.args import ArgType as A
from fxscope.formats.fxt.assemble import narrowest_codes
from fxscope.formats.fxt.columns import EventKind as K
from fxscope.formats.fxt.reader import read_fxt_bytes
from fxscope.formats.fxt.writer import FxtWriter


def test_codes_narrow_only_below_32768_rows():
    codes = np.array([-1, 0, 32766], np.int32)
    small = narrowest_codes(codes, 32767)
    assert small.dtype == np.int16 and small.tolist() == [-1, 0, 32766]
    assert narrowest_codes(codes, 32768).dtype == np.int32  # a row 32767 would not fit int16


def _sched_trace(big_koid: bool) -> bytes:
    w = FxtWriter()
    w.event(K.DURATION_BEGIN, 5, (100, 101), "cat", "outer")
    w.event(K.DURATION_END, 50, (100, 101), "cat", "outer")
    high = (1 << 40) + 7 if big_koid else 104
    w.context_switch(10, 1, 2, 101, 102, [])
    w.context_switch(20, 1, 2, 102, high, [])
    w.thread_wakeup(15, 1, 102, [("waker", A.KOID, 101)])
    return w.getvalue()


def test_event_codes_are_int16_with_the_same_strings():
    cols = read_fxt_bytes(_sched_trace(False))
    for col in (cols.ev_thread, cols.ev_category, cols.ev_name):
        assert col.dtype == np.int16
    assert [cols.strings[i] for i in cols.ev_name.tolist()] == ["outer", "outer"]
    assert cols.threads_tid[cols.ev_thread[0]] == 101


def test_sched_koids_uint32_when_they_fit_uint64_otherwise():
    narrow = read_fxt_bytes(_sched_trace(False))
    wide = read_fxt_bytes(_sched_trace(True))
    assert narrow.sched_in_tid.dtype == np.uint32 and narrow.sched_offset.dtype == np.uint32
    assert wide.sched_in_tid.dtype == np.uint64
    assert narrow.sched_in_tid.tolist() == [102, 104, 102]
    assert wide.sched_in_tid.tolist() == [102, (1 << 40) + 7, 102]
    assert narrow.sched_waker_tid.tolist() == wide.sched_waker_tid.tolist() == [0, 0, 101]
    assert narrow.sched_offset.tolist() == wide.sched_offset.tolist()
    # the model's tables hold the same koids either way, past 2**32 too (uint32 when they all fit)
    tables = []
    for cols, koid in ((narrow, np.uint32), (wide, np.uint64)):
        model = TraceModel(cols)
        prepare_model(model)
        cs, wk, st = model.sched.cpu_slices, model.sched.wakeups, model.sched.thread_states
        assert cs.tid.dtype == wk.tid.dtype == wk.waker_tid.dtype == st.tid.dtype == st.pid.dtype == koid
        tables.append((cs.tid.tolist(), cs.start.tolist(), model.sched.thread_states.tid.tolist()))
    assert tables[0][1] == tables[1][1]
    assert tables[1][0] == [102, (1 << 40) + 7] and tables[0][0] == [102, 104]
    assert (1 << 40) + 7 in tables[1][2]


def _many_inline(n: int, what: str) -> bytes:
    """``n`` events with a distinct inline name each (``what`` = "names") or a distinct inline thread each."""
    w = FxtWriter()
    for i in range(n):
        if what == "names":
            w.event(K.INSTANT, i, (1, 2), "c", f"n{i}", data=0)
        else:
            w.event(K.INSTANT, i, (1000 + i, 5000 + i), "c", "same", data=0)
    return w.getvalue()


def test_codes_widen_mid_read_when_inline_strings_pass_int16(monkeypatch):
    """The columns start in int16 and are widened to int32 when a later block's strings pass 32767 rows:
    every code keeps its value."""
    from fxscope.formats.fxt import assemble

    monkeypatch.setattr(assemble.Decoder, "BLOCK_RECORDS", 4096)  # several blocks before and after the limit
    n = 40_000
    cols = read_fxt_bytes(_many_inline(n, "names"))
    assert cols.ev_name.dtype == np.int32 and len(cols.strings) > 32767
    assert [cols.strings[i] for i in cols.ev_name.tolist()] == [f"n{i}" for i in range(n)]
    assert cols.ev_thread.dtype == np.int16  # (widened with the others, narrowed again at the end: 1 thread)
    assert set(cols.threads_tid[cols.ev_thread].tolist()) == {2}


def test_thread_codes_widen_mid_read_when_inline_threads_pass_int16(monkeypatch):
    from fxscope.formats.fxt import assemble

    monkeypatch.setattr(assemble.Decoder, "BLOCK_RECORDS", 4096)
    n = 34_000
    cols = read_fxt_bytes(_many_inline(n, "threads"))
    assert cols.ev_thread.dtype == np.int32 and len(cols.threads_tid) == n
    assert cols.threads_tid[cols.ev_thread].tolist() == [5000 + i for i in range(n)]
    assert cols.threads_pid[cols.ev_thread].tolist() == [1000 + i for i in range(n)]
    assert [cols.strings[i] for i in cols.ev_name[:3].tolist()] == ["same"] * 3


def test_sched_koids_widen_mid_read_when_a_later_block_passes_2_32(monkeypatch):
    """The koid columns start in uint32 and are widened to uint64 by the first block with a koid past
    2**32 - 1 (blocks of 256 records: that one the 25th): every koid, before and after, keeps its value;
    the other koid columns and the positions (a file under 4 GiB) stay uint32."""
    from fxscope.formats.fxt import assemble

    monkeypatch.setattr(assemble.Decoder, "BLOCK_RECORDS", 256)
    big = (1 << 40) + 7
    w = FxtWriter()
    ins = [1000 + i if i != 6_400 else big for i in range(10_000)]
    for i, tid in enumerate(ins):
        w.context_switch(10 * i, 1, 2, 1000 + i, tid, [])
    cols = read_fxt_bytes(w.getvalue())
    assert cols.sched_in_tid.dtype == np.uint64 and cols.sched_in_tid.tolist() == ins
    assert cols.sched_out_tid.dtype == np.uint32 and cols.sched_out_tid.tolist() == [1000 + i for i in range(10_000)]
    assert cols.sched_offset.dtype == np.uint32
    offsets = cols.sched_offset.tolist()
    assert offsets == sorted(offsets) and len(set(offsets)) == 10_000 and offsets[-1] < len(w.getvalue())
