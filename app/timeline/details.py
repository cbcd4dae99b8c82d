"""Details panel: what a click on a slice tells the user (name, times, self time, arguments)."""

from __future__ import annotations

import html

from PySide6.QtCore import Signal
from PySide6.QtWidgets import QTextBrowser, QWidget

from core.trace.model import TraceModel
from core.trace.slices import FLAG_UNCLOSED, FLAG_UNMATCHED_END


def format_ns(ns: int) -> str:
    """A duration in the unit a reader wants: 1.234 ms rather than 1234000 ns."""
    value = float(ns)
    for unit, scale in (("s", 1e9), ("ms", 1e6), ("us", 1e3)):
        if abs(value) >= scale:
            return f"{value / scale:.3f} {unit}"
    return f"{ns} ns"


class DetailsPanel(QTextBrowser):
    #: a flow link was clicked: the slice at its other end
    sliceRequested = Signal(int)

    def __init__(self, model: TraceModel, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.model = model
        self.setOpenLinks(False)
        self.anchorClicked.connect(self._anchor)
        self.show_row(-1)

    def _anchor(self, url) -> None:
        text = url.toString()
        if text.startswith("slice:"):
            self.sliceRequested.emit(int(text.split(":", 1)[1]))

    def show_row(self, row: int) -> None:
        if row < 0:
            self.setHtml("<p style='color:#666'>Click a slice to see its details. "
                         "W/S zoom, A/D pan, F fits the selection.</p>")
            return
        d = self.model.slice_details(row)
        flags = []
        if int(d["flags"]) & FLAG_UNMATCHED_END:
            flags.append("began before the trace started (unmatched end)")
        if int(d["flags"]) & FLAG_UNCLOSED:
            flags.append("never ended in the trace (unclosed begin)")
        rows = [
            ("Name", d["name"]),
            ("Category", d["category"]),
            ("Thread", d["thread"]),
            ("Process", d["process"]),
            ("Start", format_ns(int(d["start_ns"]) - self.model.start_ns) + f"  ({d['start_ns']} ns)"),
            ("Duration", format_ns(int(d["duration_ns"]))),
            ("Self time", format_ns(int(d["self_ns"]))),
            ("Depth", d["depth"]),
        ]
        if flags:
            rows.append(("Note", "; ".join(flags)))
        body = "".join(
            f"<tr><td style='color:#555;padding-right:12px'>{html.escape(k)}</td><td>{html.escape(str(v))}</td></tr>"
            for k, v in rows
        )
        args = "".join(
            f"<tr><td style='color:#555;padding-right:12px'>{html.escape(str(k))}</td>"
            f"<td>{html.escape(repr(v) if isinstance(v, bytes) else str(v))}</td></tr>"
            for k, v in d["args"]  # type: ignore[union-attr]
        )
        flows = self._flows_html(row)
        self.setHtml(
            f"<h3 style='margin:2px'>{html.escape(str(d['name']))}</h3><table>{body}</table>"
            + (f"<h4 style='margin:6px 2px 2px'>Arguments</h4><table>{args}</table>" if args else "")
            + flows
        )

    def _flows_html(self, row: int) -> str:
        """Incoming and outgoing flows, each a link to the slice at its other end ([ and ] follow them)."""
        flows = self.model.flows
        parts = []
        for title, links, other in (("Incoming flows  [", flows.incoming(row), flows.src_slice),
                                     ("Outgoing flows  ]", flows.outgoing(row), flows.dst_slice)):  # fmt: skip
            items = []
            for link in links.tolist():
                r = int(other[link])
                label = f"{self.model.name_of(r)} on {self.model.thread_name(int(self.model.slices.thread[r]))}"
                items.append(f"<tr><td><a href='slice:{r}'>{html.escape(label)}</a></td>"
                             f"<td style='color:#555'>flow {int(flows.id[link])}</td></tr>")  # fmt: skip
            if items:
                parts.append(f"<h4 style='margin:6px 2px 2px'>{title}</h4><table>{''.join(items)}</table>")
        return "".join(parts)
