"""The symbolized report as the crash view's log pane shows it: HTML with the log's own ANSI colours, each
backtrace line a ``frame:<label>`` link (selecting that exact frame, inline ones included) and each
dumpfile line a ``dump:<n>`` link. No Qt: text in, text out."""

from __future__ import annotations

import html
import re

ANSI = re.compile(r"\x1b\[[0-9;]*m")
#: SGR colour numbers 30-37 as shown on a light background (the terminal's dark yellow, not pure yellow)
_SGR_COLOURS = ["#000000", "#c0392b", "#2e8b57", "#b8860b", "#1f4e9c", "#8e44ad", "#138d90", "#7f7f7f"]


def strip_ansi(text: str) -> str:
    return ANSI.sub("", text)


def sgr_to_html(line: str) -> str:
    """A log line with ANSI SGR sequences (reset, bold, colours 30-37) as escaped HTML with spans."""
    out: list[str] = []
    colour: str | None = None
    bold = False
    pos = 0
    for m in ANSI.finditer(line + "\x1b[0m"):
        if m.start() > pos:
            text = html.escape(line[pos : m.start()])
            style = (f"color:{colour};" if colour else "") + ("font-weight:bold;" if bold else "")
            out.append(f'<span style="{style}">{text}</span>' if style else text)
        pos = m.end()
        for code in (m.group()[2:-1] or "0").split(";"):
            if code in ("", "0"):
                colour, bold = None, False
            elif code == "1":
                bold = True
            elif code.isdigit() and 30 <= int(code) <= 37:
                colour = _SGR_COLOURS[int(code) - 30]
    return "".join(out)


def report_html(text: str) -> str:
    """The symbolized report ``text`` (with colour codes) as the log pane's HTML."""
    lines = []
    dump_index = 0
    for line in text.splitlines():
        plain = strip_ansi(line)
        escaped = sgr_to_html(line)  # the log's own colours and the filter's highlights
        stripped = plain.strip()
        if stripped.startswith("#") and "(" in stripped:
            label = stripped[1:].split()[0]  # "0.1": the exact frame, inline ones included
            escaped = f'<a href="frame:{label}" style="color:#1f4e9c;text-decoration:none">{escaped}</a>'
        elif "{{{dumpfile:" in plain:
            escaped = f'<a href="dump:{dump_index}" style="color:#7b3294">{escaped}</a>'
            dump_index += 1
        lines.append(escaped)
    return "<pre style='margin:4px'>" + "\n".join(lines) + "</pre>"
