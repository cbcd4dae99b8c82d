"""The source pane's text: line numbers in a gutter, the frame's line and column marked, and the other
frames of the same backtrace entry (the inline call sites) marked where they fall in the same file; C-like
syntax highlighted; recorded source paths (``/build/...``) mapped to local files."""

from __future__ import annotations

import re
from pathlib import Path

from PySide6.QtCore import QRect, QSize, Qt
from PySide6.QtGui import (
    QColor,
    QFont,
    QPainter,
    QSyntaxHighlighter,
    QTextCharFormat,
    QTextCursor,
    QTextFormat,
)
from PySide6.QtWidgets import QPlainTextEdit, QTextEdit, QWidget

LINE_COLOUR = QColor("#ffe08a")  # the frame's line
COLUMN_COLOUR = QColor("#f08c00")  # the character at the frame's column
CALL_SITE_COLOUR = QColor("#dbe9ff")  # other frames of the entry in this file
GUTTER_TEXT = QColor("#8a8a8a")


class _Gutter(QWidget):
    def __init__(self, edit: SourceEdit) -> None:
        super().__init__(edit)
        self.edit = edit

    def sizeHint(self) -> QSize:
        return QSize(self.edit.gutter_width(), 0)

    def paintEvent(self, event) -> None:
        self.edit.paint_gutter(event)


class SourceEdit(QPlainTextEdit):
    """A read-only source text with line numbers; :meth:`mark` highlights a location."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setReadOnly(True)
        self.setLineWrapMode(QPlainTextEdit.LineWrapMode.NoWrap)
        self.gutter = _Gutter(self)
        self.marked_line = 0
        self.marked_column = 0
        self.call_site_lines: list[int] = []
        self.blockCountChanged.connect(lambda _n: self.setViewportMargins(self.gutter_width(), 0, 0, 0))
        self.updateRequest.connect(self._scroll_gutter)
        self.setViewportMargins(self.gutter_width(), 0, 0, 0)

    def gutter_width(self) -> int:
        digits = len(str(max(1, self.blockCount())))
        return 10 + self.fontMetrics().horizontalAdvance("9") * max(digits, 3)

    def _scroll_gutter(self, rect: QRect, dy: int) -> None:
        if dy:
            self.gutter.scroll(0, dy)
        else:
            self.gutter.update(0, rect.y(), self.gutter.width(), rect.height())

    def resizeEvent(self, event) -> None:
        super().resizeEvent(event)
        cr = self.contentsRect()
        self.gutter.setGeometry(QRect(cr.left(), cr.top(), self.gutter_width(), cr.height()))

    def paint_gutter(self, event) -> None:
        painter = QPainter(self.gutter)
        painter.fillRect(event.rect(), QColor("#f3f3f3"))
        block = self.firstVisibleBlock()
        top = round(self.blockBoundingGeometry(block).translated(self.contentOffset()).top())
        height = self.fontMetrics().height()
        while block.isValid() and top <= event.rect().bottom():
            number = block.blockNumber() + 1
            bottom = top + round(self.blockBoundingRect(block).height())
            if block.isVisible() and bottom >= event.rect().top():
                bold = number == self.marked_line
                font = painter.font()
                font.setBold(bold)
                painter.setFont(font)
                painter.setPen(QColor("#000000") if bold else GUTTER_TEXT)
                painter.drawText(0, top, self.gutter.width() - 5, height, Qt.AlignmentFlag.AlignRight, str(number))
            block = block.next()
            top = bottom
        painter.end()

    def unmark(self) -> None:
        self.marked_line, self.marked_column, self.call_site_lines = 0, 0, []
        self.setExtraSelections([])
        self.gutter.update()

    def mark(self, line: int, column: int = 0, call_sites: list[int] | None = None) -> None:
        """Mark ``line`` (1-based) and, when known, ``column``; ``call_sites``: other lines to tint."""
        self.marked_line, self.marked_column = line, column
        self.call_site_lines = [n for n in call_sites or [] if n != line]
        selections = []
        for n in self.call_site_lines:
            block = self.document().findBlockByLineNumber(n - 1)
            if block.isValid():
                sel = QTextEdit.ExtraSelection()
                sel.format.setBackground(CALL_SITE_COLOUR)
                sel.format.setProperty(QTextFormat.Property.FullWidthSelection, True)
                sel.cursor = QTextCursor(block)
                selections.append(sel)
        block = self.document().findBlockByLineNumber(max(line - 1, 0))
        cursor = QTextCursor(block)
        sel = QTextEdit.ExtraSelection()
        sel.format.setBackground(LINE_COLOUR)
        sel.format.setProperty(QTextFormat.Property.FullWidthSelection, True)
        sel.cursor = cursor
        selections.append(sel)
        if column > 0 and column <= len(block.text()):
            char = QTextCursor(block)
            char.movePosition(QTextCursor.MoveOperation.Right, QTextCursor.MoveMode.MoveAnchor, column - 1)
            char.movePosition(QTextCursor.MoveOperation.Right, QTextCursor.MoveMode.KeepAnchor, 1)
            col = QTextEdit.ExtraSelection()
            fmt = QTextCharFormat()
            fmt.setBackground(COLUMN_COLOUR)
            fmt.setForeground(QColor("#ffffff"))
            col.format = fmt
            col.cursor = char
            selections.append(col)
            cursor = QTextCursor(block)
            cursor.movePosition(QTextCursor.MoveOperation.Right, QTextCursor.MoveMode.MoveAnchor, column - 1)
        self.setTextCursor(cursor)
        self.setExtraSelections(selections)
        self.centerCursor()
        self.gutter.update()


_C_KEYWORDS = ["auto", "break", "case", "char", "const", "continue", "default", "do", "double", "else", "enum", "extern", "float", "for", "goto", "if", "inline", "int", "long", "register", "restrict", "return", "short", "signed", "sizeof", "static", "struct", "switch", "typedef", "union", "unsigned", "void", "volatile", "while", "bool", "true", "false", "nullptr", "class", "namespace", "template", "typename", "public", "private", "protected", "virtual"]


class CHighlighter(QSyntaxHighlighter):
    """Keywords, comments, strings and preprocessor lines: enough to read C, C++ and Rust at a glance."""

    def __init__(self, document) -> None:
        super().__init__(document)

        def fmt(colour: str, bold: bool = False) -> QTextCharFormat:
            f = QTextCharFormat()
            f.setForeground(QColor(colour))
            if bold:
                f.setFontWeight(QFont.Weight.Bold)
            return f

        self.rules = [
            (re.compile(r"\b(" + "|".join(_C_KEYWORDS) + r")\b"), fmt("#1f4e9c", True)),
            (re.compile(r'"([^"\\]|\\.)*"'), fmt("#a0522d")),
            (re.compile(r"^\s*#\s*\w+"), fmt("#7b3294")),
            (re.compile(r"//.*$"), fmt("#6a737d")),
            (re.compile(r"/\*.*?\*/"), fmt("#6a737d")),
        ]

    def highlightBlock(self, text: str) -> None:
        for pattern, f in self.rules:
            for m in pattern.finditer(text):
                self.setFormat(m.start(), m.end() - m.start(), f)


def map_source(path: str, roots: list[tuple[str, str]], log_dir: Path) -> Path | None:
    """A local file for a recorded source path: explicit prefix mappings first, then guesses near the log
    (the log's own directory and its parents, so a checkout next to the log just works)."""
    for prefix, local in roots:
        if path.startswith(prefix):
            candidate = Path(local) / path[len(prefix):].lstrip("/")
            if candidate.is_file():
                return candidate
    if Path(path).is_file():
        return Path(path)
    parts = Path(path).parts
    for base in [log_dir, *log_dir.parents][:4]:
        for i in range(1, len(parts)):
            candidate = base.joinpath(*parts[i:])
            if candidate.is_file():
                return candidate
    return None


def source_line(path: str, line: int, roots: list[tuple[str, str]], log_dir: Path) -> str | None:
    """Line ``line`` (1-based) of the local file for recorded ``path``, stripped; None when there is none."""
    local = map_source(path, roots, log_dir)
    if local is None:
        return None
    try:
        lines = local.read_text(encoding="utf-8", errors="replace").splitlines()
    except OSError:
        return None
    return lines[line - 1].strip() if 0 < line <= len(lines) else None
