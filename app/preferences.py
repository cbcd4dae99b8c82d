"""Preferences: the symbol settings (directories, debuginfod servers, cache, source roots, dump directories,
the editor that opens sources) in a dialog, persisted in the app's one QSettings store."""

from __future__ import annotations

from PySide6.QtWidgets import (
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QFileDialog,
    QFormLayout,
    QHBoxLayout,
    QLineEdit,
    QPlainTextEdit,
    QPushButton,
    QWidget,
)

from fxscope.core.symbols.settings import SymbolSettings, format_source_roots, parse_source_roots


def _lines(text: str) -> list[str]:
    return [line.strip() for line in text.splitlines() if line.strip()]


def load_settings(store=None) -> SymbolSettings:
    """The saved settings (defaults for what was never saved)."""
    from fxscope.app.settings_store import settings

    s = store if store is not None else settings()
    urls = s.value("symbols/debuginfod_urls", None)
    return SymbolSettings(
        debug_dirs=_lines(str(s.value("symbols/debug_dirs", "") or "")),
        debuginfod_urls=None if urls is None or s.value("symbols/debuginfod_from_env", "true") == "true"
        else _lines(str(urls)),
        cache_dir=str(s.value("symbols/cache_dir", "") or ""),
        source_roots=parse_source_roots(str(s.value("symbols/source_roots", "") or "")),
        dump_dirs=_lines(str(s.value("symbols/dump_dirs", "") or "")),
        editor=str(s.value("sources/editor", "") or ""),
    )  # fmt: skip


def save_settings(prefs: SymbolSettings, store=None) -> None:
    from fxscope.app.settings_store import settings

    s = store if store is not None else settings()
    s.setValue("symbols/debug_dirs", "\n".join(prefs.debug_dirs))
    s.setValue("symbols/debuginfod_from_env", "true" if prefs.debuginfod_urls is None else "false")
    s.setValue("symbols/debuginfod_urls", "\n".join(prefs.debuginfod_urls or []))
    s.setValue("symbols/cache_dir", prefs.cache_dir)
    s.setValue("symbols/source_roots", format_source_roots(prefs.source_roots))
    s.setValue("symbols/dump_dirs", "\n".join(prefs.dump_dirs))
    s.setValue("sources/editor", prefs.editor)
    s.sync()


class PreferencesDialog(QDialog):
    """Edits a :class:`SymbolSettings`; ``settings()`` gives the edited value after ``accept``."""

    def __init__(self, prefs: SymbolSettings, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle("fxscope preferences")
        self.debug_dirs = QPlainTextEdit("\n".join(prefs.debug_dirs))
        self.debug_dirs.setPlaceholderText("one directory per line (.build-id trees, binaries, .gsym files)")
        self.urls = QPlainTextEdit("\n".join(prefs.debuginfod_urls or []))
        self.urls.setPlaceholderText("one URL per line; empty: $DEBUGINFOD_URLS")
        self.cache_dir = QLineEdit(prefs.cache_dir)
        self.cache_dir.setPlaceholderText("default: $XDG_CACHE_HOME/fxscope")
        browse = QPushButton("Browse…")
        browse.clicked.connect(self._browse_cache)
        cache_row = QHBoxLayout()
        cache_row.addWidget(self.cache_dir, 1)
        cache_row.addWidget(browse)
        self.source_roots = QPlainTextEdit(format_source_roots(prefs.source_roots))
        self.source_roots.setPlaceholderText("/build/prefix = /local/checkout   (one mapping per line)")
        self.dump_dirs = QPlainTextEdit("\n".join(prefs.dump_dirs))
        self.dump_dirs.setPlaceholderText("directories where dumpfile triggers' files are looked for")
        from fxscope.app.crash.editor import EXAMPLES

        self.editor = QComboBox()
        self.editor.setEditable(True)
        self.editor.addItems(["", *EXAMPLES])
        self.editor.setCurrentText(prefs.editor)
        self.editor.lineEdit().setPlaceholderText("empty: $VISUAL / $EDITOR; {file} {line} {column} are replaced")
        for edit in (self.debug_dirs, self.urls, self.source_roots, self.dump_dirs):
            edit.setTabChangesFocus(True)
            edit.setFixedHeight(70)
        form = QFormLayout(self)
        form.addRow("Symbol directories", self.debug_dirs)
        form.addRow("debuginfod servers", self.urls)
        form.addRow("Symbol cache", cache_row)
        form.addRow("Source roots", self.source_roots)
        form.addRow("Dump directories", self.dump_dirs)
        form.addRow("Editor", self.editor)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Ok | QDialogButtonBox.StandardButton.Cancel)
        buttons.accepted.connect(self.accept)
        buttons.rejected.connect(self.reject)
        form.addRow(buttons)
        self.resize(640, 460)

    def _browse_cache(self) -> None:
        path = QFileDialog.getExistingDirectory(self, "Symbol cache directory", self.cache_dir.text())
        if path:
            self.cache_dir.setText(path)

    def settings(self) -> SymbolSettings:
        urls = _lines(self.urls.toPlainText())
        return SymbolSettings(
            debug_dirs=_lines(self.debug_dirs.toPlainText()),
            debuginfod_urls=urls or None,
            cache_dir=self.cache_dir.text().strip(),
            source_roots=parse_source_roots(self.source_roots.toPlainText()),
            dump_dirs=_lines(self.dump_dirs.toPlainText()),
            editor=self.editor.currentText().strip(),
        )
