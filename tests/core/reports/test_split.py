"""Report splitting on real logs: the crash demo, LLVM's lit inputs, concatenated logs, interleaved processes
in a trace, and logs cut mid-report."""

from __future__ import annotations

from pathlib import Path

import pytest

from fxscope.core.reports.crash_log import CrashLog
from fxscope.core.reports.summary import summarize
from fxscope.core.trace.logs import LogTable
from fxscope.formats.fxt.reader import read_fxt
from fxscope.formats.fxt.writer import FxtWriter


@pytest.fixture
def demo_lines(testdata: Path) -> list[str]:
    return (testdata / "markup" / "crash-demo" / "input.log").read_text().splitlines(keepends=True)


def _banner(lines: list[str]) -> int:
    return next(i for i, line in enumerate(lines) if "fatal signal 11" in line)


def test_the_demo_report_runs_from_its_banner_to_its_closing_line(demo_lines: list[str]) -> None:
    log = CrashLog.from_text("".join(demo_lines))
    assert len(log.reports) == 1
    span = log.reports[0]
    assert span.start == _banner(demo_lines)  # the banner before {{{reset}}} is the report's
    assert demo_lines[span.context] == "{{{reset}}}\n"
    assert span.end == len(demo_lines) and "end of crash report" in demo_lines[-1]
    assert not any("INFO" in line or "WARN" in line for line in log.report_lines(0))
    assert span.has_context and span.has_backtrace and span.warnings == ()


def test_concatenated_logs_are_one_report_each(demo_lines: list[str]) -> None:
    between = ["[  0.100000] INFO crashdemo: restarted\n", "[  0.100001] INFO crashdemo: job 8\n"]
    log = CrashLog.from_text("".join(demo_lines + between + demo_lines + demo_lines))
    one = CrashLog.from_text("".join(demo_lines)).report_text(0)
    assert len(log.reports) == 3
    assert [log.report_text(i) for i in range(3)] == [one] * 3
    inside = {i for s in log.reports for i in range(s.start, s.end)}
    assert not any(log.lines[i] in between for i in inside)  # ordinary lines between reports belong to neither


def test_a_context_after_a_backtrace_starts_a_new_report_without_reset(demo_lines: list[str]) -> None:
    no_reset = [line for line in demo_lines if line != "{{{reset}}}\n"]
    log = CrashLog.from_text("".join(no_reset * 2))
    assert len(log.reports) == 2
    assert all(log.lines[s.start] == no_reset[_banner(no_reset)] for s in log.reports)


def test_llvm_lit_inputs(testdata: Path) -> None:
    """Every markup line of LLVM's filter tests lies in exactly one report; each {{{reset}}} starts one."""
    inputs = sorted((testdata / "markup" / "llvm-lit").glob("*/input.txt"))
    assert len(inputs) == 13
    for path in inputs:
        log = CrashLog.from_path(path)
        covered = [i for s in log.reports for i in range(s.start, s.end)]
        assert covered == sorted(set(covered)), path  # in order, no overlap
        assert {i for i, line in enumerate(log.lines) if "{{{" in line} <= set(covered), path
    reset = CrashLog.from_path(testdata / "markup" / "llvm-lit" / "reset" / "input.txt")
    assert [reset.lines[s.context].strip() for s in reset.reports] == ["{{{reset}}}", "{{{reset}}}", "{{{reset:}}}"]
    # the filter's colour test: ordinary coloured text first, the markup after it
    color = CrashLog.from_path(testdata / "markup" / "llvm-lit" / "color" / "input.txt")
    assert len(color.reports) == 1 and "{{{" in color.lines[color.reports[0].context]


def test_logs_cut_mid_report(demo_lines: list[str]) -> None:
    hexdict = next(i for i, line in enumerate(demo_lines) if line.startswith("{{{hexdict"))
    cut = CrashLog.from_text("".join(demo_lines[: hexdict + 2]))  # inside the register dump
    assert len(cut.reports) == 1 and "cut" in cut.reports[0].warnings[0]
    assert cut.reports[0].end == hexdict + 2
    modules = next(i for i, line in enumerate(demo_lines) if line.startswith("registers:"))
    before_bt = CrashLog.from_text("".join(demo_lines[:modules]))
    assert "before this report's backtrace" in before_bt.reports[0].warnings[0]
    first_bt = next(i for i, line in enumerate(demo_lines) if line.startswith("{{{bt:"))
    tail = CrashLog.from_text("".join(demo_lines[first_bt + 3 :]))  # a log that starts mid-report
    assert len(tail.reports) == 1 and not tail.reports[0].has_context
    assert "starts in the middle" in tail.reports[0].warnings[0]
    assert CrashLog.from_text("").reports == [] and CrashLog.from_text("no markup\n").reports == []


def test_interleaved_processes_in_a_trace(demo_lines: list[str], tmp_path: Path) -> None:
    """Two processes crash at the same time, their records interleaved; a third logs between them."""
    w = FxtWriter()
    w.initialization(1_000_000_000)
    for i, line in enumerate(demo_lines):
        w.log(1000 + 10 * i, (100, 101), line.rstrip("\n"))
        w.log(1005 + 10 * i, (200, 201), line.rstrip("\n"))
        w.log(1007 + 10 * i, (300, 301), f"ordinary {i}")
    path = tmp_path / "two.fxt"
    path.write_bytes(w.getvalue())
    logs = LogTable(read_fxt(path))
    assert len(logs.reports) == 2
    one = CrashLog.from_text("".join(demo_lines)).report_text(0)
    for report in logs.reports:
        assert len(set(logs.pid[report.rows].tolist())) == 1
        assert "".join(logs.text(int(r)) + "\n" for r in report.rows) == one
    bt0 = next(r for r in range(len(logs)) if logs.text(r).startswith("{{{bt:0:"))
    assert logs.report_text(bt0) == one


def test_summary_of_the_demo_report(demo_lines: list[str], testdata: Path) -> None:
    from fxscope.app.crash.view import default_resolver

    log = CrashLog.from_text("".join(demo_lines))
    raw = summarize(log.report_lines(0))
    assert (raw.signal, raw.fault_address, raw.frames) == ("11 (SEGV)", "(nil)", 10)
    assert (raw.top_frame, raw.module) == ("0x55bc37e493ff", "crashdemo+0x13ff")
    resolver = default_resolver(testdata / "markup" / "crash-demo" / "input.log")
    named = log.summary(0, resolver)
    assert (named.top_frame, named.module) == ("payload_weight", "crashdemo+0x13ff")  # innermost, as #0.1
    assert log.report_time(0) == "0.000422 s"


def _sane(log: CrashLog) -> None:
    previous_end = 0
    for span in log.reports:
        assert previous_end <= span.start <= span.context < span.end <= log.line_count
        previous_end = span.end


def test_every_cut_of_the_demo_log_splits_without_error(demo_lines: list[str]) -> None:
    """Bad input is normal input: the log cut at every byte (mid-line, mid-element, mid-UTF-8 sequence)."""
    data = "".join(demo_lines).encode()
    for end in range(0, len(data) + 1, 7):
        log = CrashLog.from_bytes(data[:end])
        _sane(log)
        for i in range(len(log.reports)):
            summarize(log.report_lines(i))
    whole = CrashLog.from_bytes(data)
    assert len(whole.reports) == 1


def test_hostile_logs(demo_lines: list[str]) -> None:
    import random

    rng = random.Random(14)
    pieces = ["{{{", "}}}", "{{{reset}}}", "{{{module:0:x:elf:zz}}}", "{{{bt:0:0x1}}}", "{{{hexdict:", "\n", "\r",
              "\x00", "\xff", "*** fatal signal 11 ***", "end of crash report", "{{{mmap:0x1:0x1:load:0:rx:0x0}}}"]
    for _ in range(200):
        text = "".join(rng.choice(pieces) for _ in range(rng.randrange(1, 60)))
        log = CrashLog.from_text(text)
        _sane(log)
        for i in range(len(log.reports)):
            log.summary(i)
            log.report_time(i)
    lone = CrashLog.from_text("\ud800 {{{bt:0:0x1}}}\n")  # a lone surrogate in a str
    assert len(lone.reports) == 1 and "\ufffd" in lone.report_text(0)
    binary = CrashLog.from_bytes(bytes(range(256)) * 64 + "".join(demo_lines).encode())
    assert len(binary.reports) == 1
