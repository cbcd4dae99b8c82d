"""The source pane's text: line numbers in a gutter, the frame's line and column marked, and the other
frames of the same backtrace entry (the inline call sites) marked where they fall in the same file; C-like
syntax highlighted; recorded source paths (``/build/...``) mapped to local files."""

from __future__ import annotations

import re
from pathlib import Path

from PySide6.QtCore import QEvent, QRect, QSize, Qt
from PySide6.QtGui import (
    QColor,
    QFont,
    QPainter,
    QPalette,
    QSyntaxHighlighter,
    QTextCharFormat,
    QTextCursor,
    QTextFormat,
)
from PySide6.QtWidgets import QPlainTextEdit, QTextEdit, QWidget

from fxscope.app.theme import is_dark

LINE_COLOUR = QColor("#ffe08a")  # the frame's line
COLUMN_COLOUR = QColor("#f08c00")  # the character at the frame's column
CALL_SITE_COLOUR = QColor("#dbe9ff")  # other frames of the entry in this file
GUTTER_TEXT = QColor("#8a8a8a")
#: the same marks on a dark theme's text (light text: a light tint under it left the line unreadable)
DARK_LINE_COLOUR = QColor("#453610")
DARK_CALL_SITE_COLOUR = QColor("#203456")


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
        #: the syntax colours, which follow the theme with the marks
        self.highlighter: CHighlighter | None = None
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
        pal = self.palette()
        painter.fillRect(event.rect(), pal.color(QPalette.ColorRole.AlternateBase) if is_dark(self.palette()) else QColor("#f3f3f3"))
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
                painter.setPen(pal.color(QPalette.ColorRole.Text) if bold else GUTTER_TEXT)
                painter.drawText(0, top, self.gutter.width() - 5, height, Qt.AlignmentFlag.AlignRight, str(number))
            block = block.next()
            top = bottom
        painter.end()

    def changeEvent(self, event) -> None:
        """A theme switched while a line is marked: the marks take the new theme's colours (the view stays)."""
        super().changeEvent(event)
        if event.type() == QEvent.Type.PaletteChange:
            if self.highlighter is not None:
                self.highlighter.set_dark(is_dark(self.palette()))
            if self.marked_line:
                self._show_marks()

    def unmark(self) -> None:
        self.marked_line, self.marked_column, self.call_site_lines = 0, 0, []
        self.setExtraSelections([])
        self.gutter.update()

    def mark(self, line: int, column: int = 0, call_sites: list[int] | None = None) -> None:
        """Mark ``line`` (1-based) and, when known, ``column``; ``call_sites``: other lines to tint."""
        self.marked_line, self.marked_column = line, column
        self.call_site_lines = [n for n in call_sites or [] if n != line]
        block = self.document().findBlockByLineNumber(max(line - 1, 0))
        cursor = QTextCursor(block)
        if 0 < column <= len(block.text()):
            cursor.movePosition(QTextCursor.MoveOperation.Right, QTextCursor.MoveMode.MoveAnchor, column - 1)
        self.setTextCursor(cursor)
        self._show_marks()
        self.centerCursor()

    def _show_marks(self) -> None:
        """The extra selections of the marked line, its column and the call sites, in the theme's colours."""
        selections = []
        dark = is_dark(self.palette())
        for n in self.call_site_lines:
            block = self.document().findBlockByLineNumber(n - 1)
            if block.isValid():
                sel = QTextEdit.ExtraSelection()
                sel.format.setBackground(DARK_CALL_SITE_COLOUR if dark else CALL_SITE_COLOUR)
                sel.format.setProperty(QTextFormat.Property.FullWidthSelection, True)
                sel.cursor = QTextCursor(block)
                selections.append(sel)
        line, column = self.marked_line, self.marked_column
        block = self.document().findBlockByLineNumber(max(line - 1, 0))
        sel = QTextEdit.ExtraSelection()
        sel.format.setBackground(DARK_LINE_COLOUR if dark else LINE_COLOUR)
        sel.format.setProperty(QTextFormat.Property.FullWidthSelection, True)
        sel.cursor = QTextCursor(block)
        selections.append(sel)
        if 0 < column <= len(block.text()):
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
        self.setExtraSelections(selections)
        self.gutter.update()


_C_KEYWORDS = ["auto", "break", "case", "char", "const", "continue", "default", "do", "double", "else", "enum", "extern", "float", "for", "goto", "if", "inline", "int", "long", "register", "restrict", "return", "short", "signed", "sizeof", "static", "struct", "switch", "typedef", "union", "unsigned", "void", "volatile", "while", "bool", "true", "false", "nullptr", "class", "namespace", "template", "typename", "public", "private", "protected", "virtual"]


#: the highlighter's colours (keywords, strings, preprocessor lines, comments) on light and on dark text; each
#: at least 4.5:1 against its theme's background and its marked line's (tests/app/test_crash_view.py)
SYNTAX_COLOURS = {
    False: ("#1f4e9c", "#8e4424", "#7b3294", "#575e66"),
    True: ("#8ab4f8", "#f0b27a", "#d7a6f0", "#a0a7b0"),
}


class CHighlighter(QSyntaxHighlighter):
    """Keywords, comments, strings and preprocessor lines: enough to read C, C++ and Rust at a glance; in
    colours for light or dark text (:meth:`set_dark`)."""

    def __init__(self, document, dark: bool = False) -> None:
        super().__init__(document)
        self.dark: bool | None = None  # (no colours yet)
        self.set_dark(dark)

    def set_dark(self, dark: bool) -> None:
        """Colours for a dark theme (True) or a light one; the text is highlighted again when they change."""
        if dark is self.dark:
            return
        self.dark = dark

        def fmt(colour: str, bold: bool = False) -> QTextCharFormat:
            f = QTextCharFormat()
            f.setForeground(QColor(colour))
            if bold:
                f.setFontWeight(QFont.Weight.Bold)
            return f

        keyword, string, preprocessor, comment = SYNTAX_COLOURS[dark]
        self.rules = [
            (re.compile(r"\b(" + "|".join(_C_KEYWORDS) + r")\b"), fmt(keyword, True)),
            (re.compile(r'"([^"\\]|\\.)*"'), fmt(string)),
            (re.compile(r"^\s*#\s*\w+"), fmt(preprocessor)),
            (re.compile(r"//.*$"), fmt(comment)),
        ]
        self.comment = fmt(comment)
        self.rehighlight()

    def highlightBlock(self, text: str) -> None:
        for pattern, f in self.rules:
            for m in pattern.finditer(text):
                self.setFormat(m.start(), m.end() - m.start(), f)
        self._block_comments(text)

    def _block_comments(self, text: str) -> None:
        """``/* ... */`` comments over the rules' colours, also those spanning lines (block state 1: the line
        ends inside one), as a file's header comment does."""
        inside, pos = self.previousBlockState() == 1, 0
        self.setCurrentBlockState(0)
        while True:
            if not inside:
                start = text.find("/*", pos)
                line_comment = text.find("//", pos)
                if start < 0 or 0 <= line_comment < start:  # (none, or the rest of the line is a // comment)
                    return
                pos, inside = start, True
                end = text.find("*/", start + 2)
            else:
                end = text.find("*/", pos)
            stop = len(text) if end < 0 else end + 2
            self.setFormat(pos, stop - pos, self.comment)
            if end < 0:
                self.setCurrentBlockState(1)
                return
            pos, inside = stop, False


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
