"""Details panel: what a click on a slice tells the user (name, times, self time, arguments)."""

from __future__ import annotations

import html
import math

from PySide6.QtCore import Signal
from PySide6.QtWidgets import QTextBrowser, QWidget

from fxscope.core.trace.details import async_details, counter_details, instant_details
from fxscope.core.trace.model import TraceModel
from fxscope.core.trace.slices import FLAG_UNCLOSED, FLAG_UNMATCHED_END
from fxscope.core.units import format_duration_ns, format_quantity


def format_ns(ns: int) -> str:
    """A duration in the unit a reader wants: 1.234 ms rather than 1234000 ns (see core/units.py)."""
    return format_duration_ns(ns)


def _short(value: float) -> str:
    """A counter value in six digits when small, else in engineering units (never ``8.38861e+06``)."""
    return f"{value:g}" if abs(value) < 1e4 or not math.isfinite(value) else format_quantity(value)


def _exact(value: float) -> str:
    """A counter value: small ones as they are (six digits), large ones in engineering units with the
    exact number after them."""
    if abs(value) < 1e4 or not math.isfinite(value):
        return f"{value:g}"
    short = format_quantity(value)
    exact = f"{int(value)}" if float(value).is_integer() and abs(value) < 2**63 else repr(float(value))
    return short if short == exact else f"{short}  ({exact})"


class DetailsPanel(QTextBrowser):
    #: a flow link was clicked: the slice at its other end
    sliceRequested = Signal(object)  # a slice row (object: Qt's int is 32 bits)
    #: a link to another row was clicked (a CPU slice's thread state, ...): (kind, row)
    itemRequested = Signal(str, object)

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
        elif text.startswith("item:"):
            _item, kind, row = text.split(":", 2)
            self.itemRequested.emit(kind, int(row))

    def show_item(self, kind: str, row: int) -> None:
        """Details of a selected box of any kind (see ``TimelineWidget.itemSelected``)."""
        if kind == "async" and row >= 0:
            self._show_async(row)
        elif kind == "instant" and row >= 0:
            self._show_instant(row)
        elif kind == "counter" and row >= 0:
            self._show_counter(row)
        elif kind in ("cpu", "state") and row >= 0:
            self._show_sched(kind, row)
        else:
            self.show_row(row if kind == "slice" else -1)

    def show_values(self, title: str, values: dict[str, object]) -> None:
        """A row of a query result (a debug track's box): its columns and values, under the track's title;
        ``ts`` and ``dur`` read as times."""
        rows = []
        for column, value in values.items():
            if column == "ts" and isinstance(value, int):
                value = self._time(value)
            elif column == "dur" and isinstance(value, int) and value >= 0:
                value = f"{format_ns(value)}  ({value} ns)"
            rows.append((column, "NULL" if value is None else value))
        self.setHtml(f"<h3 style='margin:2px'>{html.escape(title)} <span style='color:#777'>(debug track)</span>"
                     f"</h3><table>{self._table(rows)}</table>")  # fmt: skip

    @staticmethod
    def _table(rows: list[tuple[str, object]]) -> str:
        return "".join(
            f"<tr><td style='color:#555;padding-right:12px'>{html.escape(str(k))}</td>"
            f"<td>{html.escape(repr(v) if isinstance(v, bytes) else str(v))}</td></tr>"
            for k, v in rows
        )

    def _time(self, ns: int) -> str:
        return format_ns(ns - self.model.start_ns) + f"  ({ns} ns)"

    def _show_async(self, row: int) -> None:
        d = async_details(self.model, row)
        rows = [
            ("Name", d["name"]),
            ("Category", d["category"]),
            ("Process", d["process"]),
            ("Async id", d["id"]),
            ("Start", self._time(int(d["start_ns"]))),
            ("Duration", format_ns(int(d["duration_ns"]))),
        ]
        if d["notes"]:
            rows.append(("Note", "; ".join(d["notes"])))  # type: ignore[arg-type]
        instants = [(name, self._time(ts)) for name, ts in d["instants"]]  # type: ignore[union-attr]
        self.setHtml(
            f"<h3 style='margin:2px'>{html.escape(str(d['name']))} <span style='color:#777'>(async)</span></h3>"
            f"<table>{self._table(rows)}</table>"
            + (f"<h4 style='margin:6px 2px 2px'>Arguments</h4><table>{self._table(d['args'])}</table>" if d["args"] else "")
            + (f"<h4 style='margin:6px 2px 2px'>Async instants</h4><table>{self._table(instants)}</table>" if instants else "")
        )

    def _show_counter(self, row: int) -> None:
        d = counter_details(self.model, row)
        delta = d["delta"]
        rows = [("Series", d["series"]), ("Process", d["process"]), ("Time", self._time(int(d["ts_ns"]))),
                ("Value", _exact(d["value"])),
                ("Delta", "first sample" if delta is None else ("+" if delta >= 0 else "") + _short(delta)),
                ("Duration", format_ns(int(d["duration_ns"]))),
                ("Series range", f"{_short(d['min'])} .. {_short(d['max'])} over {d['samples']} samples")]  # fmt: skip
        self.setHtml(
            f"<h3 style='margin:2px'>{html.escape(str(d['series']))} <span style='color:#777'>(counter)</span></h3>"
            f"<table>{self._table(rows)}</table>"
        )

    def _show_instant(self, row: int) -> None:
        d = instant_details(self.model, row)
        rows = [("Name", d["name"]), ("Category", d["category"]), ("Scope", d["scope"]), ("Thread", d["thread"]),
                ("Process", d["process"]), ("Time", self._time(int(d["ts_ns"])))]  # fmt: skip
        self.setHtml(
            f"<h3 style='margin:2px'>{html.escape(str(d['name']))} <span style='color:#777'>(instant)</span></h3>"
            f"<table>{self._table(rows)}</table>"
            + (f"<h4 style='margin:6px 2px 2px'>Arguments</h4><table>{self._table(d['args'])}</table>" if d["args"] else "")
        )

    def _show_sched(self, kind: str, row: int) -> None:
        """A CPU slice or a thread-state interval: who ran, how it ended, and the wakeup before it (when,
        where, by whom, the latency), with links to the matching row of the other view."""
        from fxscope.core.trace.sched import cpu_slice_details, thread_state_details

        d = cpu_slice_details(self.model, row) if kind == "cpu" else thread_state_details(self.model, row)
        rows: list[tuple[str, object]] = []
        if kind == "cpu":
            title = f"{d['thread']} on CPU {d['cpu']}"
            rows += [("Thread", d["thread"]), ("Process", d["process"] or "unknown"), ("CPU", d["cpu"])]
        else:
            title = f"{d['state']}: {d['thread']}"
            rows += [("Thread", d["thread"]), ("Process", d["process"] or "unknown"), ("State", d["state"]),
                     ("CPU", d["cpu"])]  # fmt: skip
        rows += [("Start", self._time(int(d["start_ns"]))), ("Duration", format_ns(int(d["duration_ns"])))]
        if kind == "cpu":
            rows.append(("End state", d["end_state"] or "still running at the end of the trace"))
        if d["wakeup_row"] is not None and int(d["wakeup_row"]) >= 0:
            rows.append(("Woken", f"{self._time(int(d['wakeup_ns']))} on CPU {d['wakeup_cpu']}"))
            rows.append(("Waker", d["waker"] or "not recorded"))
            if d.get("latency_ns") is not None:
                rows.append(("Scheduling latency", format_ns(int(d["latency_ns"]))))
        links = []
        other = ("state", int(d["state_row"]), "its thread state") if kind == "cpu" else ("cpu", int(d["cpu_slice"]), "its CPU slice")
        if other[1] >= 0:
            links.append(f"<a href='item:{other[0]}:{other[1]}'>{html.escape(other[2])}</a>")
        self.setHtml(
            f"<h3 style='margin:2px'>{html.escape(title)}</h3><table>{self._table(rows)}</table>"
            + (f"<p style='margin:6px 2px'>Go to {' · '.join(links)}</p>" if links else "")
        )

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
