"""A unified difference between the file on disk and the model as PIUI would save it."""

from __future__ import annotations

from PySide6.QtGui import QColor, QFont, QFontDatabase, QSyntaxHighlighter, QTextCharFormat
from PySide6.QtWidgets import (
    QDialog,
    QDialogButtonBox,
    QLabel,
    QPlainTextEdit,
    QVBoxLayout,
    QWidget,
)


class _DiffColours(QSyntaxHighlighter):
    def __init__(self, document) -> None:  # noqa: ANN001 - a QTextDocument
        super().__init__(document)
        self.formats = {}
        for first, colour in (("-", "#b00020"), ("+", "#1b7a1b"), ("@", "#5a5aa0")):
            f = QTextCharFormat()
            f.setForeground(QColor(colour))
            self.formats[first] = f

    def highlightBlock(self, text: str) -> None:
        f = self.formats.get(text[:1])
        if f is not None:
            self.setFormat(0, len(text), f)


class DiffDialog(QDialog):
    def __init__(self, diff: str, name: str, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle(f"{name}: on disk and in PIUI")
        self.resize(820, 560)
        layout = QVBoxLayout(self)
        layout.addWidget(QLabel(
            "Lines starting with <b style='color:#b00020'>-</b> are the file on disk; with "
            "<b style='color:#1b7a1b'>+</b>, the model as PIUI would save it."))  # fmt: skip
        self.text = QPlainTextEdit()
        self.text.setReadOnly(True)
        self.text.setLineWrapMode(QPlainTextEdit.LineWrapMode.NoWrap)
        font = QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont)
        font.setStyleHint(QFont.StyleHint.Monospace)
        self.text.setFont(font)
        self.text.setPlainText(diff or "The two are the same.")
        self._colours = _DiffColours(self.text.document())
        layout.addWidget(self.text)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close)
        buttons.rejected.connect(self.reject)
        layout.addWidget(buttons)
