"""One opened trace in the main window: the timeline over the panels (details, logs, crash reports,
aggregate, analysis, compare, scheduling, query, notes, info), and the wiring between them."""

from __future__ import annotations

import gc
from pathlib import Path
from typing import ClassVar

from PySide6.QtCore import QEvent, QObject, Qt, QTimer, Signal
from PySide6.QtGui import QIcon
from PySide6.QtWidgets import QLineEdit, QSplitter, QTabWidget, QWidget

from fxscope.app.analysis.compare_panel import ComparePanel
from fxscope.app.analysis.notes_panel import NotesPanel
from fxscope.app.analysis.panel import AnalysisPanel
from fxscope.app.analysis.sched_panel import SchedPanel
from fxscope.app.deferred_tables import START_DELAY_MS as DEFERRED_START_MS
from fxscope.app.deferred_tables import DeferredTables
from fxscope.app.timeline.aggregate import AggregatePanel
from fxscope.app.timeline.details import DetailsPanel
from fxscope.app.timeline.info import InfoPanel
from fxscope.app.timeline.logs import LogPanel, LogsTab
from fxscope.app.timeline.query_panel import QueryPanel
from fxscope.app.timeline.widget import TimelineWidget
from fxscope.core.trace.model import TraceModel


class TraceTab(QSplitter):
    """A timeline over a details panel, the log panel, the aggregate table and the Info tab for one trace.
    ``reportRequested(index)``: a crash report of the trace's logs is to be opened (its mark, a log mark or
    record of it, or its row in the crash reports list)."""

    reportRequested = Signal(int)
    #: the Info tab's warnings were counted after the tab opened (a large trace's, built in the background):
    #: their number
    warningsCounted = Signal(int)

    def __init__(self, model: TraceModel, parent: QWidget | None = None, resolver=None) -> None:
        """``resolver``: a factory of the symbol resolver for crash reports in the trace's log records."""
        super().__init__(Qt.Orientation.Vertical, parent)
        self.model = model
        self.timeline = TimelineWidget(model)
        self.details = DetailsPanel(model)
        self.logs = LogPanel(model, resolver or (lambda: _default_resolver(model.cols.path)))
        self.logs_tab = LogsTab(self.logs)
        self.bottom = QTabWidget()
        self.bottom.setDocumentMode(True)
        self.bottom.addTab(self.details, "Details")
        self.bottom.addTab(self.logs_tab, f"Logs ({len(self.logs.logs)})")
        self.aggregate = AggregatePanel(model)
        self.bottom.addTab(self.aggregate, "Aggregate")
        self.analysis = AnalysisPanel(model)
        self.bottom.addTab(self.analysis, "Analysis")
        self.compare = ComparePanel(model)
        self.bottom.addTab(self.compare, "Compare")
        self.sched = SchedPanel(model) if len(model.cols.sched_ts) else None
        if self.sched is not None:
            self.bottom.addTab(self.sched, "Scheduling")
        self.query = QueryPanel(model)
        self.bottom.addTab(self.query, "Query")
        # a large trace's flows and statistics are built in the background after the first frame
        self.deferred: DeferredTables | None = None
        if DeferredTables.wanted(model):
            self.deferred = DeferredTables(model, self)
            self.deferred.done.connect(self._later_tables_built)
            self.deferred.failed.connect(self._later_tables_failed)
            self.deferred.tablesBuilt.connect(self.timeline.tables_built)
            QTimer.singleShot(DEFERRED_START_MS, self.deferred, self.deferred.start)
            self.timeline.search_indexing.hold()  # the search index after these (one build's temporaries at a time)
            self.timeline.search_indexing.awaited.connect(self._arguments_awaited)
        self.info = InfoPanel(model, pending=self.deferred is not None)
        self.bottom.addTab(self.info, "Info")
        self._title_info()
        self.reports = None
        self._showing_report = False
        if model.logs.reports:  # crash reports in the log records: listed, and marked on their threads
            from fxscope.app.crash.trace_reports import TraceReportsPanel

            self.reports = TraceReportsPanel(model, resolver or (lambda: _default_resolver(model.cols.path)))
            self.bottom.insertTab(2, self.reports, f"Crash reports ({len(model.logs.reports)})")
            self.reports.reportChosen.connect(self.reportRequested.emit)
            self.info.reportRequested.connect(self.reportRequested.emit)
        self.logs.crashRequested.connect(self._crash_text)
        self.addWidget(self.timeline)
        self.addWidget(self.bottom)
        # the panels' own minimum heights (Analysis, Compare: 300+ px) must not squeeze the timeline: the panel
        # may be made small; its pages scroll or clip
        self.bottom.setMinimumHeight(self.BOTTOM_MIN_HEIGHT)
        self.setStretchFactor(0, 4)
        self.setStretchFactor(1, 1)
        self.setChildrenCollapsible(False)
        self._restore_split()
        self.splitterMoved.connect(self._remember_split)
        self.timeline.itemSelected.connect(self._item_selected)
        self.logs.timeSelected.connect(self.timeline.show_time)  # logs in sync with the timeline
        self.logs.recordSelected.connect(self._log_clicked)
        self.details.sliceRequested.connect(self.timeline.go_to_slice)
        self.details.itemRequested.connect(self.timeline.go_to_item)
        self.timeline.areaSelected.connect(self._area)
        self._from_analysis = False
        self.analysis.sliceRequested.connect(self._analysis_slice)
        self.analysis.slicesHighlighted.connect(self.timeline.highlight_slices)
        self.timeline.analyseRequested.connect(self._analyse)
        self.query.sliceRequested.connect(self.timeline.go_to_slice)
        self.query.rangeRequested.connect(self.timeline.set_range_ns)
        self.query.itemRequested.connect(self.timeline.go_to_item)
        self.query.debugTrackRequested.connect(self.timeline.add_debug_track)
        # the timeline's keys work while the panels below have the focus (a click on a log row or in the
        # details must not take W/A/S/D away); text fields keep their letters
        self._keys = TimelineKeys(self.timeline)
        for widget in (self.details, self.logs, self.aggregate, self.info, self.bottom):
            widget.installEventFilter(self._keys)
        for table in (self.aggregate.table, self.aggregate.async_table, self.aggregate.cpu_thread_table,
                      self.aggregate.cpu_process_table, self.aggregate.state_table):  # fmt: skip
            table.installEventFilter(self._keys)

    def _title_info(self) -> None:
        """The Info tab's title: its warning count (with an icon), or "Info (…)" while its statistics are
        built in the background."""
        index = self.bottom.indexOf(self.info)
        n = self.info.warning_count
        pending = self.info.pending
        self.bottom.setTabText(index, "Info (…)" if pending else f"Info ({n} warning{'s' * (n != 1)})" if n else "Info")
        self.bottom.setTabIcon(index, self.info.warning_icon if n else QIcon())

    def _later_tables_built(self) -> None:
        """The background build of the flows and statistics is done: the Info tab shows them. Its objects
        are long-lived, as the load's (frozen then): frozen too, so that a collection during a frame does
        not walk them (a generation-1 pass of the thousands it leaves took 2 ms of CPU, and tens of ms of
        wall time on a busy machine)."""
        gc.freeze()
        self.info.show_stats()
        self._title_info()
        self.warningsCounted.emit(self.info.warning_count)
        self.timeline.search_indexing.release()

    def _arguments_awaited(self, awaited: bool) -> None:
        """A search typed while the later tables are built shows its hits without the argument matches, which
        wait for the argument index's build: the later tables' build is held until that index is in (the
        search is what the user waits for; the two builds side by side on 2 cores gave a search's every match
        at 100M events after 1.95 s). A paused build keeps its temporaries (the two builds' temporaries are
        held together either way)."""
        worker = self.deferred.worker if self.deferred is not None else None
        if worker is None:
            return
        if awaited:
            worker.hold()
        else:
            worker.release()

    def _later_tables_failed(self, message: str) -> None:
        self.info.show_failure(message)
        self._title_info()
        self.timeline.search_indexing.release()

    #: the panel's smallest height (the tab bar and a few rows)
    BOTTOM_MIN_HEIGHT = 100
    #: the details panel's share of the height when nothing is remembered (at 1280x720: ~190 px)
    DEFAULT_BOTTOM_FRACTION = 0.3

    def _restore_split(self) -> None:
        """The timeline/panel split as the user left it (kept in the settings), else a third for the panel."""
        from fxscope.app.settings_store import settings

        state = settings().value("trace_tab/split")
        if state is not None and self.restoreState(state):
            return
        total = 1000
        bottom = int(total * self.DEFAULT_BOTTOM_FRACTION)
        self.setSizes([total - bottom, bottom])

    def _remember_split(self, *_args) -> None:
        from fxscope.app.settings_store import settings

        store = settings()
        store.setValue("trace_tab/split", self.saveState())

    def _log_clicked(self, row: int) -> None:
        """A log row was clicked: its mark selected on the timeline and scrolled into view (its process
        expanded); the keys stay with the log table (they reach the timeline through the key filter)."""
        self.timeline.reveal("log", row)
        self.timeline.select_item("log", row)

    def attach_notes(self, path: str, show_message) -> None:
        """The Notes tab with the sidecar of ``path`` restored (``show_message(text)`` for its messages)."""
        self.notes = NotesPanel(self.timeline, path)
        self.notes.message.connect(show_message)
        self.bottom.insertTab(self.bottom.indexOf(self.info), self.notes, "Notes")
        self.notes.restore()

    def _item_selected(self, kind: str, row: int) -> None:
        """A click on the timeline: a log record is shown in the log panel (and a record of a crash report,
        or a report's mark, opens the report), anything else in the details."""
        if kind == "crash":
            if not self._showing_report:
                self.reportRequested.emit(row)
            return
        if kind == "log":
            self.logs.show_row(row)
            self.bottom.setCurrentWidget(self.logs_tab)
            report = self.model.logs.report_of_row(row)
            if report >= 0:
                self.reportRequested.emit(report)
            return
        if kind == "debug":  # a box of a query result's track: the result row it came from
            found = self.timeline.debug_tracks.row_values(row)
            if found is not None:
                self.details.show_values(*found)
        else:
            self.details.show_item(kind, row)
        if self.bottom.currentWidget() is not self.query and not self._from_analysis:  # stepping through
            self.bottom.setCurrentWidget(self.details)  # query results or a frame's slices keeps that tab

    def _crash_text(self, text: str) -> None:
        """The log panel asks for the report of an activated record (by its text): which report it is."""
        logs = self.model.logs
        index = next((i for i in range(len(logs.reports)) if logs.report_text_at(i) == text), -1)
        if index >= 0:
            self.reportRequested.emit(index)

    def show_report(self, index: int) -> None:
        """Select crash report ``index`` on its thread's track, its time centred and its track scrolled into view."""
        self._showing_report = True  # selecting the mark here must not open the report again
        try:
            self.timeline.go_to_item("crash", index)
        finally:
            self._showing_report = False
        self.timeline.show_time(int(self.model.logs.report_marks()[0][index]))
        y = self.timeline.selection_y()
        if y is not None:
            _, (y0, y1) = self.timeline.plot.getViewBox().viewRange()
            if not y0 <= y < y1 - 1:
                self.timeline.scroll_rows(y - (y0 + y1) / 2)
        if self.reports is not None:
            self.reports.select_report(index)

    def _analysis_slice(self, row: int) -> None:
        """A slice of a clicked frame, histogram bar or list line: shown on the timeline, the Analysis tab
        kept (its list is what the user steps through)."""
        self._from_analysis = True
        try:
            self.timeline.go_to_slice(row)
        finally:
            self._from_analysis = False

    def _analyse(self, kind: str, key: int) -> None:
        """"Analyse thread/process" on a track: the Analysis tab shows that scope."""
        self.analysis.analyse(kind, key)
        self.bottom.setCurrentWidget(self.analysis)

    def _area(self, t0: int, t1: int, threads: list) -> None:
        self.aggregate.show_area(t0, t1, threads, self.timeline.area_keys)
        self.analysis.set_area(t0, t1, threads)
        if self.sched is not None:
            self.sched.set_area(t0, t1, threads)
        self.bottom.setCurrentWidget(self.aggregate)


class TimelineKeys(QObject):
    """An event filter for the panels under the timeline: the timeline's single keys (W/A/S/D, F, M,
    [ and ], ?) pressed there act on the timeline, as Perfetto's keys work wherever a text field does not
    have the focus."""

    KEYS: ClassVar[set] = {Qt.Key.Key_W, Qt.Key.Key_A, Qt.Key.Key_S, Qt.Key.Key_D, Qt.Key.Key_F, Qt.Key.Key_M,
            Qt.Key.Key_BracketLeft, Qt.Key.Key_BracketRight, Qt.Key.Key_Question}  # fmt: skip

    def __init__(self, timeline) -> None:
        super().__init__(timeline)
        self.timeline = timeline

    def eventFilter(self, obj, event) -> bool:
        if event.type() != QEvent.Type.KeyPress or isinstance(obj, QLineEdit):
            return False
        mods = event.modifiers() & ~(Qt.KeyboardModifier.ShiftModifier | Qt.KeyboardModifier.KeypadModifier)
        if event.key() in self.KEYS and mods == Qt.KeyboardModifier.NoModifier:
            self.timeline.keyPressEvent(event)
            return True
        return False



def _default_resolver(trace_path: str):
    from fxscope.app.crash.view import default_resolver

    return default_resolver(Path(trace_path).resolve().parent / "log")
