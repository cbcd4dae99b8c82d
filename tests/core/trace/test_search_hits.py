"""Search over every kind (core.trace.search_hits) against a brute-force pass over the tables: a third-party
trace's slices and the bundled demo's async spans, instants, counters and logs."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from fxscope.core.trace.log_filter import strip_ansi
from fxscope.core.trace.model import TraceModel
from fxscope.core.trace.search_hits import KINDS, search_all
from fxscope.formats.fxt.reader import read_fxt
from fxscope.resources import DEMO_TRACE


def _brute(model: TraceModel, text: str) -> set[tuple[str, int]]:
    """Every (kind, row) whose name, category or text contains ``text``, one row at a time."""
    needle = text.casefold()
    strings = model.strings

    def has(i: int, shown=lambda t: t) -> bool:
        return 0 <= i < len(strings) and needle in shown(strings[i]).casefold()

    from fxscope.core.trace.query import search

    out = {("slice", int(r)) for r in search(model, text)}  # names and arguments (tested in test_search.py)
    s = model.slices
    out |= {("slice", r) for r in range(len(s)) if has(int(s.category[r]))}
    a = model.async_spans
    out |= {("async", r) for r in range(len(a.start)) if has(int(a.name[r])) or has(int(a.category[r]))}
    inst = model.instants
    out |= {("instant", r) for r in range(len(inst)) if has(int(inst.name[r])) or has(int(inst.category[r]))}
    out |= {("counter", i << 32) for i, c in enumerate(model.counters.series) if len(c.ts) and needle in c.label.casefold()}
    logs = model.logs
    out |= {("log", r) for r in range(len(logs)) if has(int(logs.message[r]), strip_ansi)}
    return out


def test_every_kind_matches_what_a_row_by_row_pass_finds_in_time_order(testdata: Path) -> None:
    demo = TraceModel(read_fxt(str(DEMO_TRACE)))
    real = TraceModel(read_fxt(str(testdata / "fxt" / "richiesams_fxt-python_trace.fxt")))
    for model, texts in ((demo, ["fetch", "VSYNC", "queue", "render", "frames queued", "pc:0x", "zzz-none"]),
                         (real, ["msr", "pt_", "jane"])):  # fmt: skip
        for text in texts:
            hits = search_all(model, text)
            found = {(KINDS[k], r) for k, r in zip(hits.kind.tolist(), hits.row.tolist(), strict=True)}
            assert found == _brute(model, text), text
            assert len(found) == len(hits)  # no duplicates
            assert (np.diff(hits.ts) >= 0).all()
    kinds = {KINDS[k] for k in search_all(demo, "e").kind.tolist()}
    assert kinds == set(KINDS)  # the demo has every kind
    assert len(search_all(demo, "   ")) == 0


def test_without_arguments_the_slices_match_by_name_and_category_only(testdata: Path) -> None:
    """What the window shows while the argument index is built: the slices whose name or category matches,
    one row at a time, and every other kind as the full search finds it; ``complete`` says which it is."""
    real = TraceModel(read_fxt(str(testdata / "fxt" / "richiesams_fxt-python_trace.fxt")))
    from fxscope.core.synthetic_trace import generate_trace
    from fxscope.formats.fxt.reader import read_fxt_bytes

    generated = TraceModel(read_fxt_bytes(generate_trace(20_000, seed=5)))  # arguments named "count", "ptr"
    partial = search_all(generated, "cou", arguments=False)
    assert not generated.search_index_ready  # (not built, nor waited for)
    assert len(partial.rows_of("slice")) < len(search_all(generated, "cou").rows_of("slice"))
    strings, s = real.strings, real.slices
    for text in ["msr", "pt_", "jane", "e"]:
        needle = text.casefold()
        partial, full = search_all(real, text, arguments=False), search_all(real, text)
        assert not partial.complete and full.complete
        by_text = {
            r for r in range(len(s)) if any(0 <= int(c[r]) < len(strings) and needle in strings[int(c[r])].casefold()
                                            for c in (s.name, s.category))
        }  # fmt: skip
        assert set(partial.rows_of("slice").tolist()) == by_text, text
        assert by_text <= set(full.rows_of("slice").tolist())
        for kind in KINDS[1:]:
            assert np.array_equal(partial.rows_of(kind), full.rows_of(kind))
        assert (np.diff(partial.ts) >= 0).all()


def test_a_search_stops_when_its_check_raises() -> None:
    """A running search calls ``check()`` between its steps (and between batches of rows): the window's
    new keystroke or Esc makes it raise, and the search ends there."""
    import fxscope.core.trace.query as query

    demo = TraceModel(read_fxt(str(DEMO_TRACE)))
    calls = []

    def counting() -> None:
        calls.append(1)

    search_all(demo, "e", counting)
    assert len(calls) >= 5  # between the kinds at least

    class Stop(Exception):
        pass

    for after in range(len(calls)):
        seen = []

        def stop_after(after=after, seen=seen) -> None:
            if len(seen) >= after:
                raise Stop
            seen.append(1)

        try:
            search_all(demo, "e", stop_after)
        except Stop:
            pass
        else:
            raise AssertionError(f"not stopped at check {after}")
    assert query.MATCH_BATCH > 0


def test_a_kinds_rows_in_time_order_are_its_rows(testdata: Path) -> None:
    """kind_rows (what the tracks' match masks are set from) holds the rows of rows_of, in the hits' order."""
    model = TraceModel(read_fxt(DEMO_TRACE))
    hits = search_all(model, "a")
    assert len(hits) > 10
    for kind in KINDS:
        rows = hits.kind_rows(kind)
        np.testing.assert_array_equal(np.sort(rows), hits.rows_of(kind))
        np.testing.assert_array_equal(rows, hits.row[hits.kind == KINDS.index(kind)])


def test_the_masks_the_search_keeps_are_its_rows_of_each_kind(testdata: Path) -> None:
    """SearchHits.masks (what the tracks outline matches with): per kind with hits, the bool mask over its
    table whose rows are that kind's hits; none for a kind without hits (nor for the counters)."""
    model = TraceModel(read_fxt(DEMO_TRACE))
    sizes = {"slice": len(model.slices), "async": len(model.async_spans.start), "instant": len(model.instants),
             "log": len(model.logs)}  # fmt: skip
    seen = set()
    for text in ("a", "e", "draw", "upload", "vsync", "disk", "zzz-none"):
        hits = search_all(model, text)
        for kind, size in sizes.items():
            rows = hits.rows_of(kind)
            if not len(rows):
                assert kind not in hits.masks, (text, kind)
                continue
            mask = hits.masks[kind]
            assert mask.dtype == np.bool_ and len(mask) == size
            np.testing.assert_array_equal(np.flatnonzero(mask), rows)
            seen.add(kind)
        assert "counter" not in hits.masks
    assert seen == set(sizes)  # (every kind's mask was checked)


def test_hits_without_arguments_completed_equal_the_full_search(testdata: Path) -> None:
    """The window's second search, once the argument index is built (``without_arguments``: the first search's
    hits): the same hits, masks and order as one full search, for texts that match names only, argument names
    or values only, both, categories, and nothing; when the arguments add no slice, the first hits come back
    as they were (their columns, not searched again), complete."""
    from fxscope.core.synthetic_trace import generate_trace
    from fxscope.formats.fxt.reader import read_fxt_bytes

    generated = TraceModel(read_fxt_bytes(generate_trace(20_000, seed=5)))  # arguments named "count", "ptr"
    real = TraceModel(read_fxt(str(testdata / "fxt" / "richiesams_fxt-python_trace.fxt")))
    demo = TraceModel(read_fxt(str(DEMO_TRACE)))
    kept = searched = 0
    for model, texts in ((generated, ["cou", "ptr", "e", "zzz-none"]), (real, ["msr", "pt_", "jane", "e", "zzz"]),
                         (demo, ["fetch", "render", "frames queued", "zzz-none"])):  # fmt: skip
        for text in texts:
            first = search_all(model, text, arguments=False)
            assert not first.complete
            got = search_all(model, text, without_arguments=first)
            full = search_all(model, text)
            assert got.complete
            for f in ("kind", "row", "ts"):
                assert np.array_equal(getattr(got, f), getattr(full, f)), (text, f)
            assert got.masks.keys() == full.masks.keys()
            for kind, mask in got.masks.items():
                assert np.array_equal(mask, full.masks[kind]), (text, kind)
            if got.row is first.row:
                kept += 1
            else:
                searched += 1
    assert kept >= 5 and searched >= 2  # (both ways taken: "cou" adds argument matches, "zzz-none" nothing)
