"""The main window: a tab per opened trace (:class:`~fxscope.app.trace_tab.TraceTab`) or crash log, the menus,
recent files, background loading, preferences and themes."""

from __future__ import annotations

import gc
from pathlib import Path

import shiboken6
from PySide6.QtCore import QEvent, QTimer
from PySide6.QtGui import QAction, QActionGroup, QKeySequence
from PySide6.QtWidgets import (
    QFileDialog,
    QMainWindow,
    QMessageBox,
    QProgressBar,
    QPushButton,
    QTabWidget,
    QVBoxLayout,
    QWidget,
)

from fxscope.app.analysis.notes_panel import apply_link
from fxscope.app.file_change_notice import FileChangeBar, TraceFileWatch
from fxscope.app.trace_tab import TraceTab
from fxscope.core.analysis.notes import ViewLink, parse_link
from fxscope.core.trace.model import TraceModel


def _collect_garbage() -> None:
    """One full collection (after a tab closed), with the frozen objects included, then freeze again."""
    gc.unfreeze()
    gc.collect()
    gc.freeze()


def _with_ctrl_w(keys: list) -> list:
    """The platform's Close keys with Ctrl+W among them (once: a key bound twice is ambiguous to Qt)."""
    ctrl_w = QKeySequence("Ctrl+W")
    return keys if ctrl_w in keys else [ctrl_w, *keys]


def _file_key(path: str) -> tuple:
    """What makes two paths the same file: device and inode when it exists (links, ``..``), else the
    resolved path."""
    try:
        st = Path(path).stat()
        return ("inode", st.st_dev, st.st_ino)
    except OSError:
        return ("path", str(Path(path).resolve()))


#: text files without symbolizer markup that still open in the crash view (a log the user chose)
LOG_SUFFIXES = (".log", ".txt")


def is_crash_log(path: str) -> bool:
    """Opens in the crash view: by content (:mod:`fxscope.core.filetype`), a log with symbolizer markup (plain
    or compressed), or an uncompressed text file named ``*.log`` / ``*.txt``. Traces (either byte order,
    compressed or not) and other files are not crash logs, whatever their names."""
    from fxscope.core.filetype import Kind, detect

    found = detect(path)
    if found.compression is not None:
        return found.kind == Kind.MARKUP_LOG
    return found.kind == Kind.MARKUP_LOG or (found.kind == Kind.TEXT and Path(path).suffix.lower() in LOG_SUFFIXES)


def load_model(path: str) -> TraceModel:
    """The model of the trace at ``path`` (plain, compressed or without its magic record); a file that is
    not a trace raises :class:`~fxscope.core.filetype.NotATraceOrLog` with a one-line message."""
    from fxscope.core.trace.reading import read_trace

    return TraceModel(read_trace(path))


class MainWindow(QMainWindow):
    def __init__(self) -> None:
        super().__init__()
        self.setWindowTitle("fxscope")
        self.tabs = QTabWidget()
        self.tabs.setTabsClosable(True)
        self.tabs.setDocumentMode(True)
        self.tabs.tabCloseRequested.connect(self.close_tab)
        # the bar that says the file of the trace in front changed on disk (app/file_change_notice.py)
        self.file_change_bar = FileChangeBar()
        self.file_change_bar.reloadRequested.connect(self.reload_current)
        self.file_change_bar.dismiss_button.clicked.connect(self._change_dismissed)
        central = QWidget()
        column = QVBoxLayout(central)
        column.setContentsMargins(0, 0, 0, 0)
        column.setSpacing(0)
        column.addWidget(self.file_change_bar)
        column.addWidget(self.tabs, 1)
        self.setCentralWidget(central)
        self.setAcceptDrops(True)
        from fxscope.app.preferences import load_settings

        self.prefs = load_settings()
        menu = self.menuBar().addMenu("&File")
        open_action = QAction("&Open…", self)
        open_action.setShortcut(QKeySequence.StandardKey.Open)
        open_action.triggered.connect(self._open_dialog)
        menu.addAction(open_action)
        close_action = QAction("&Close Tab", self)
        # Ctrl+W everywhere (the platform's Close key is Ctrl+F4 on some desktops), and that one too
        close_action.setShortcuts(_with_ctrl_w(QKeySequence.keyBindings(QKeySequence.StandardKey.Close)))
        close_action.triggered.connect(lambda: self.close_tab(self.tabs.currentIndex()))
        menu.addAction(close_action)
        self.addAction(close_action)  # also when the menu bar is hidden
        prefs_action = QAction("&Preferences…", self)
        prefs_action.setShortcut(QKeySequence.StandardKey.Preferences)
        prefs_action.triggered.connect(self.edit_preferences)
        menu.addAction(prefs_action)
        self.recent_menu = menu.addMenu("Open &Recent")
        self.recent_menu.aboutToShow.connect(self._fill_recent)
        quit_action = QAction("&Quit", self)
        quit_action.setShortcut(QKeySequence.StandardKey.Quit)
        quit_action.triggered.connect(self.close)
        menu.addAction(quit_action)
        self._build_view_menu()
        self._build_help_menu()
        self.tabs.currentChanged.connect(self._tab_changed)
        self.tab_messages: dict[int, str] = {}  # id(tab) -> its status-bar note (warnings while reading)
        # background loads: a progress bar and a Cancel button in the status bar while any is running
        self.loaders: list = []
        self.links: dict = {}  # trace path -> the ViewLink it was opened with (applied when its tab opens)
        self.reload_places: dict[str, int] = {}  # trace path -> the tab index its reload opens at
        self._stopping: list = []  # cancelled loads whose threads have not ended yet
        # a window deleted without closing (its owner gone) cancels its loads: what they would still
        # deliver is dropped (their signals check the cancel first), their threads unwind at their next block
        self.destroyed.connect(lambda *_, loads=self.loaders: [loader.cancel() for loader in loads])
        self.progress = QProgressBar()
        self.progress.setRange(0, 1000)
        self.progress.setMaximumWidth(240)
        self.cancel_button = QPushButton("Cancel")
        self.cancel_button.clicked.connect(self.cancel_loads)
        self.statusBar().addPermanentWidget(self.progress)
        self.statusBar().addPermanentWidget(self.cancel_button)
        self.progress.hide()
        self.cancel_button.hide()

    # ------------------------------------------------------------------ View and Help menus
    def _build_view_menu(self) -> None:
        from fxscope.app.settings_store import settings
        from fxscope.app.theme import THEMES

        view = self.menuBar().addMenu("&View")
        theme_menu = view.addMenu("&Theme")
        self.theme_actions: dict[str, QAction] = {}
        group = QActionGroup(self)
        for name in THEMES:
            action = QAction(name.capitalize(), self, checkable=True)
            action.triggered.connect(lambda _checked=False, n=name: self.set_theme(n))
            group.addAction(action)
            theme_menu.addAction(action)
            self.theme_actions[name] = action
        view.addSeparator()
        for text, shortcut, slot in (
            ("&Collapse all processes", "Ctrl+Shift+C", lambda: self._on_timeline(lambda t: t.set_collapsed(True))),
            ("&Expand all processes", "Ctrl+Shift+E", lambda: self._on_timeline(lambda t: t.set_collapsed(False))),
            ("&Reset zoom", "Ctrl+0", lambda: self._on_timeline(lambda t: t.reset_zoom())),
            ("&Filter tracks…", "Ctrl+Shift+F", lambda: self._on_timeline(lambda t: t.filter_box.setFocus())),
        ):  # fmt: skip
            action = QAction(text, self)
            action.setShortcut(QKeySequence(shortcut))
            action.triggered.connect(slot)
            view.addAction(action)
        name = str(settings().value("theme", "light"))
        self.set_theme(name if name in THEMES else "light", remember=False)

    def _build_help_menu(self) -> None:
        help_menu = self.menuBar().addMenu("&Help")
        keys = QAction("&Keys and mouse", self)
        keys.setShortcut(QKeySequence("F1"))
        keys.triggered.connect(self.show_keys)
        help_menu.addAction(keys)
        about = QAction("&About fxscope", self)
        about.triggered.connect(self.show_about)
        help_menu.addAction(about)

    def _on_timeline(self, action) -> None:
        tab = self.current_tab()
        if tab is not None:
            action(tab.timeline)

    def set_theme(self, name: str, remember: bool = True) -> None:
        """Light or dark: the window's palette and every open timeline's colours; kept in the settings."""
        from fxscope.app.settings_store import settings
        from fxscope.app.theme import THEMES, apply_theme

        theme = THEMES[name]
        self.theme = theme
        apply_theme(theme)
        self.theme_actions[name].setChecked(True)
        for i in range(self.tabs.count()):
            tab = self.tabs.widget(i)
            if isinstance(tab, TraceTab):
                tab.timeline.set_theme(theme)
        if remember:
            store = settings()
            store.setValue("theme", name)
            store.sync()

    def show_keys(self):
        """Help > Keys and mouse: the timeline's list (also ``?`` on the timeline)."""
        from fxscope.app.timeline.shortcuts import ShortcutsDialog

        if getattr(self, "_keys_dialog", None) is None:
            self._keys_dialog = ShortcutsDialog(self)
        self._keys_dialog.show()
        self._keys_dialog.raise_()
        return self._keys_dialog

    def show_about(self) -> QMessageBox:
        from fxscope.app import version

        box = QMessageBox(QMessageBox.Icon.Information, "About fxscope",
                          f"fxscope {version()}\n\nA viewer of Fuchsia traces (FXT) and crash reports "
                          "(symbolizer markup), with the symbol tooling around them.", parent=self)  # fmt: skip
        box.setModal(False)
        box.open()
        return box

    def _tab_changed(self, index: int) -> None:
        """The status bar speaks of the tab in front: its own note (warnings while reading), else nothing
        (a note about another tab would be stale)."""
        if self.loaders:
            return  # "Loading ..." stays while a load runs
        tab = self.tabs.widget(index)
        self._show_file_change(tab)
        message = self.tab_messages.get(id(tab), "") if tab is not None else ""
        if message:
            self.statusBar().showMessage(message)
        else:
            self.statusBar().clearMessage()

    # ------------------------------------------------------------------ recent files
    RECENT_MAX = 10

    def recent_files(self) -> list[str]:
        from fxscope.app.settings_store import settings

        value = settings().value("recent_files", [])
        if isinstance(value, str):  # QSettings gives a lone string for a one-element list
            value = [value]
        return [str(v) for v in value or []]

    def _remember(self, path: str) -> None:
        from fxscope.app.settings_store import settings

        path = str(Path(path).resolve())
        recent = [path] + [p for p in self.recent_files() if p != path]
        store = settings()
        store.setValue("recent_files", recent[: self.RECENT_MAX])
        store.sync()

    def _fill_recent(self) -> None:
        self.recent_menu.clear()
        recent = self.recent_files()
        for path in recent:
            action = self.recent_menu.addAction(path)
            action.triggered.connect(lambda _checked=False, p=path: self.open_path(p, background=True))
        if not recent:
            self.recent_menu.addAction("(none)").setEnabled(False)

    # ------------------------------------------------------------------ background loading
    def load_in_background(self, path: str):
        """Read and model a trace in a thread; the tab appears when it is ready. Returns the loader."""
        from fxscope.app.loading import TraceLoader
        from fxscope.app.worker_threads import start_worker

        # no parent: a QThread that is the window's child would be destroyed with it while it runs, which
        # aborts the process; start_worker keeps it alive until it ends (and stops it when the app quits)
        loader = TraceLoader(path)
        self.loaders.append(loader)
        loader.progressed.connect(lambda f, ld=loader: None if ld.cancel_requested() else self._show_progress(f))
        loader.loaded.connect(lambda model, p=path, ld=loader: None if ld.cancel_requested() else self._model_loaded(p, model))
        loader.failed.connect(lambda message, p=path, ld=loader: None if ld.cancel_requested() else self._load_failed(p, message))
        loader.finished.connect(lambda ld=loader: self._load_done(ld) if shiboken6.isValid(self) else None)
        self.progress.setValue(0)
        self.progress.show()
        self.cancel_button.show()
        self.statusBar().showMessage(f"Loading {path}…")
        start_worker(loader)
        return loader

    def closeEvent(self, event) -> None:
        """Closing the window ends its loads: they are cancelled and their threads, which unwind at their
        next block, waited for (a QThread destroyed while it runs aborts the process). The notes of every
        open trace are saved."""
        for i in range(self.tabs.count()):
            page = self.tabs.widget(i)
            if isinstance(page, TraceTab) and getattr(page, "notes", None) is not None:
                page.notes.save()
        self.cancel_loads()
        for loader in list(self._stopping):
            loader.wait()
        super().closeEvent(event)

    def close_tab(self, index: int) -> None:
        """Close tab ``index`` and free what it held. ``removeTab`` alone keeps the page (and a trace's
        model, hundreds of MB for a big one) alive as a hidden child: the page is deleted, and the objects
        a load froze for the collector are unfrozen and collected once, so that cycles through the closed
        tab go too."""
        page = self.tabs.widget(index)
        if page is None:
            return
        if isinstance(page, TraceTab) and getattr(page, "notes", None) is not None:
            page.notes.save()
        self.tabs.removeTab(index)
        page.close()
        # once the page is gone (deleteLater runs in the event loop), collect in a turn of its own
        page.destroyed.connect(lambda *_: QTimer.singleShot(0, _collect_garbage))
        page.deleteLater()

    def _model_loaded(self, path: str, model: TraceModel) -> None:
        """A background load finished. Its objects are long-lived: ``gc.freeze`` keeps the collector's full
        passes from walking them again (such a pass over a big model's objects stalled the UI ~50 ms), and
        the tab is built in a later turn of the event loop than this signal's."""
        gc.freeze()
        QTimer.singleShot(1, self, lambda: self._add_trace_tab(path, model, deferred=True))

    def _show_progress(self, fraction: float) -> None:
        self.progress.setValue(int(fraction * 1000))

    def cancel_loads(self) -> None:
        """Cancel acts at once: the loads are detached (progress and Cancel go, whatever they would still
        deliver is dropped) and their threads unwind at their next block, kept referenced until they end."""
        for loader in self.loaders:
            loader.cancel()
            self._stopping.append(loader)
        self.loaders.clear()
        self._load_done(None)
        self.statusBar().showMessage("Loading cancelled", 5000)

    def _load_done(self, loader) -> None:
        if loader in self.loaders:
            self.loaders.remove(loader)
        if loader in self._stopping:
            self._stopping.remove(loader)
        if not self.loaders:
            self.progress.hide()
            self.cancel_button.hide()
            if self.statusBar().currentMessage().startswith("Loading "):
                self.statusBar().clearMessage()

    def _load_failed(self, path: str, message: str) -> None:
        self.reload_places.pop(path, None)  # (a later open of it goes last, as any other)
        self.statusBar().showMessage(f"Cannot open {path}", 10000)
        box = QMessageBox(QMessageBox.Icon.Warning, "fxscope", f"Cannot open {path}:\n{message}", parent=self)
        box.setModal(False)
        box.open()  # never a nested event loop: the window keeps running

    def tab_of(self, path: str) -> int:
        """Index of the tab showing the file at ``path`` (-1: none): the same file is one tab."""
        key = _file_key(path)
        for i in range(self.tabs.count()):
            if getattr(self.tabs.widget(i), "source_key", None) == key:
                return i
        return -1

    def loading(self, path: str) -> bool:
        """Whether the file at ``path`` is being loaded in the background."""
        key = _file_key(path)
        return any(_file_key(loader.path) == key for loader in self.loaders)

    def open_path(self, path: str, background: bool = False) -> bool:
        """Open a trace or a crash log in a new tab; a file that fails shows a message, the window stays.
        With ``background``, a trace loads in a thread (progress and Cancel in the status bar). A file
        already open is not opened again: its tab comes to the front (as does a load in progress).
        ``TRACE#range=...&select=...`` opens (or shows) TRACE at that view."""
        try:
            path = self._take_link(path)
        except ValueError as exc:
            self._load_failed(path, str(exc))
            return False
        index = self.tab_of(path)
        if index >= 0:
            self.tabs.setCurrentIndex(index)
            apply_link(self.tabs.widget(index), self.links.pop(path, None))
            return True
        if self.loading(path):
            return True
        try:
            if is_crash_log(path):
                view = self.new_crash_view()
                view.open_log(path, background=background)  # split and symbolized in threads
                view.source_key = _file_key(path)
                index = self.tabs.addTab(view, Path(path).name)
                self.tabs.setCurrentIndex(index)
                self._remember(path)
                return True
            if background:
                self.load_in_background(path)
                return True
            model = load_model(path)
        except Exception as exc:  # noqa: BLE001 - any reader failure is a message, never a crashed window
            self._load_failed(path, str(exc))
            return False
        self._add_trace_tab(path, model)
        return True

    def _take_link(self, arg: str) -> str:
        """``TRACE#range=...&select=...``: the trace's path; the view is applied when its tab opens."""
        link = parse_link(arg)
        if link.range or link.select:
            self.links[link.path] = link
        return link.path

    def _add_trace_tab(self, path: str, model: TraceModel, deferred: bool = False) -> None:
        """Open ``model`` in a new tab. ``deferred`` (a background load finished): the tab is built in this
        turn of the event loop and shown in the next, so that building it and painting its first frame
        are two short stalls of the UI thread rather than one long one (and the file joins the recent files,
        a settings write of ~25 ms, a moment after both)."""
        if deferred:
            QTimer.singleShot(250, self, lambda: self._remember(path))
        else:
            self._remember(path)
        p = self.prefs
        trace_dir = Path(path).resolve().parent

        def resolver():
            from fxscope.app.crash.view import default_resolver

            return default_resolver(trace_dir / "log", p.debug_dirs, p.debuginfod_urls, p.cache_dir)

        tab = TraceTab(model, resolver=resolver)
        tab.source_key = _file_key(path)
        tab.source_path = path
        tab.file_watch = TraceFileWatch(model.cols, tab)
        tab.file_watch.changed.connect(lambda _change, t=tab: self._show_file_change(t) if t is self.current_tab() else None)
        tab.reportRequested.connect(lambda index: self.open_trace_report(tab, index, trace_dir, Path(path).name))
        tab.timeline.set_theme(self.theme)
        self._note_warnings(tab, Path(path).name, tab.info.warning_count)
        # (a large trace's are counted after its first frame, with its flows: app/deferred_tables.py)
        tab.warningsCounted.connect(lambda n: self._note_warnings(tab, Path(path).name, n))

        def note(text: str) -> None:  # the notes' messages join the tab's status-bar note
            old = self.tab_messages.get(id(tab))
            self.tab_messages[id(tab)] = f"{old}; {text}" if old else text
            self.statusBar().showMessage(self.tab_messages[id(tab)])

        tab.attach_notes(path, note)
        apply_link(tab, self.links.pop(path, None))
        place = self.reload_places.pop(path, None)
        if deferred:
            # a 1 ms timer, not 0: Qt runs a zero-delay single shot as a posted event, ahead of the timers
            # and input already due, which would join the two stalls again
            QTimer.singleShot(1, self, lambda: self._show_tab(tab, Path(path).name, place))
        else:
            self._show_tab(tab, Path(path).name, place)

    def _note_warnings(self, tab: TraceTab, name: str, n: int) -> None:
        """The status bar says how many warnings reading trace ``name`` of ``tab`` gave (when any)."""
        if not n:
            return
        text = f"{n} warning{'s' * (n != 1)} while reading {name} — see the Info tab"
        old = self.tab_messages.get(id(tab))  # (the notes' messages, when the count comes after the tab opened)
        self.tab_messages[id(tab)] = f"{text}; {old}" if old else text
        if self.tabs.indexOf(tab) < 0 or self.tabs.currentWidget() is tab:
            self.statusBar().showMessage(self.tab_messages[id(tab)])

    def _show_tab(self, tab: TraceTab, title: str, place: int | None = None) -> None:
        """Show ``tab`` in front, at tab index ``place`` (a reloaded trace's, where its old tab was) or last."""
        index = self.tabs.addTab(tab, title) if place is None else self.tabs.insertTab(place, tab, title)
        self.tabs.setCurrentIndex(index)
        tab.timeline.setFocus()

    # ------------------------------------------------------------------ the trace file changed on disk
    def _show_file_change(self, tab) -> None:
        """The bar shows the change of ``tab``'s file (the tab in front), unless it was dismissed."""
        watch = getattr(tab, "file_watch", None)
        change = watch.last if watch is not None else None
        self.file_change_bar.show_change(None if change is getattr(tab, "dismissed_change", None) else change)

    def _change_dismissed(self) -> None:
        tab = self.current_tab()
        if tab is not None and getattr(tab, "file_watch", None) is not None:
            tab.dismissed_change = tab.file_watch.last

    def check_trace_files(self) -> None:
        """Ask whether the file of the trace in front changed (the window was activated: a watcher may not
        have said so, e.g. on a network filesystem)."""
        tab = self.current_tab()
        if tab is not None and getattr(tab, "file_watch", None) is not None:
            tab.file_watch.check()

    def changeEvent(self, event) -> None:
        if event.type() == QEvent.Type.ActivationChange and self.isActiveWindow():
            self.check_trace_files()
        super().changeEvent(event)

    def reload_current(self) -> None:
        """Close the tab in front and open its file again (in the background; a file that grew at the same time
        range)."""
        tab = self.current_tab()
        if tab is None or getattr(tab, "source_path", None) is None:
            return
        path = tab.source_path
        change = tab.file_watch.last
        if change is not None and change.kind == "grew":  # (appended to: the same times, and more)
            self.links[path] = ViewLink(path, range=tab.timeline.visible_range_ns())
        self.file_change_bar.hide()
        self.reload_places[path] = self.tabs.indexOf(tab)  # (the new tab takes the old one's place)
        self.close_tab(self.tabs.indexOf(tab))
        self.open_path(path, background=True)

    def new_crash_view(self):
        """A crash view with the symbol settings; a dump that is a trace opens here as a new tab."""
        from fxscope.app.crash.view import CrashView

        p = self.prefs
        view = CrashView(source_roots=p.source_roots, debug_dirs=p.debug_dirs, dump_dirs=p.dump_dirs,
                         debuginfod_urls=p.debuginfod_urls, cache_dir=p.cache_dir)  # fmt: skip
        view.openTrace.connect(self.open_path)
        view.editor = p.editor
        return view

    def open_trace_report(self, tab: TraceTab, index: int, base_dir: Path, source: str) -> None:
        """Crash report ``index`` of a trace tab in a crash tab of its own, linked back to the timeline."""
        view = self.new_crash_view()
        view.open_text(tab.model.logs.report_text_at(index), base_dir, background=True)
        view.timeline_button.show()
        view.showOnTimeline.connect(lambda: (self.tabs.setCurrentWidget(tab), tab.show_report(index)))
        self.tabs.setCurrentIndex(self.tabs.addTab(view, f"crash {index + 1} in {source}"))

    def edit_preferences(self) -> None:
        from fxscope.app.preferences import PreferencesDialog

        dialog = PreferencesDialog(self.prefs, self)
        if dialog.exec():
            self.apply_preferences(dialog.settings())

    def apply_preferences(self, prefs) -> None:
        """Save ``prefs``; open crash views take the new source roots at once, symbols on their next log."""
        from fxscope.app.crash.view import CrashView
        from fxscope.app.preferences import save_settings

        self.prefs = prefs
        save_settings(prefs)
        for i in range(self.tabs.count()):
            view = self.tabs.widget(i)
            if isinstance(view, CrashView):
                view.source_roots = list(prefs.source_roots)
                view.debug_dirs, view.dump_dirs = list(prefs.debug_dirs), list(prefs.dump_dirs)
                view.debuginfod_urls, view.cache_dir = prefs.debuginfod_urls, prefs.cache_dir
                view.editor = prefs.editor
                view.refresh_source()

    def current_tab(self) -> TraceTab | None:
        tab = self.tabs.currentWidget()
        return tab if isinstance(tab, TraceTab) else None

    def _open_dialog(self) -> None:
        path, _ = QFileDialog.getOpenFileName(
            self, "Open trace or crash log", "", "Fuchsia traces (*.fxt);;Crash logs (*.log *.txt);;All files (*)"
        )
        if path:
            self.open_path(path, background=True)

    def dragEnterEvent(self, event) -> None:
        if event.mimeData().hasUrls():
            event.acceptProposedAction()

    def dropEvent(self, event) -> None:
        for url in event.mimeData().urls():
            if url.isLocalFile():
                self.open_path(url.toLocalFile(), background=True)
