"""The Terminal: log messages and errors (report section 3.2.1), with a level filter.
It follows new messages (the newest in view) unless the user has scrolled up to read.

Everything PIUI logs (the "piui" and "parasol_core" loggers) and every exception raised
inside a Qt slot ends up here, so nothing fails silently.
"""

from __future__ import annotations

import logging
import time

from PySide6.QtCore import QEvent, QObject, QTimer, Signal
from PySide6.QtGui import QFontDatabase
from PySide6.QtWidgets import (
    QComboBox,
    QHBoxLayout,
    QLabel,
    QPlainTextEdit,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

LEVELS = [("Debug", logging.DEBUG), ("Info", logging.INFO), ("Warnings", logging.WARNING),
          ("Errors", logging.ERROR)]  # fmt: skip
MAX_RECORDS = 5000


class _Bridge(QObject):
    record = Signal(object)


class TerminalHandler(logging.Handler):
    """A logging handler that hands records to the Terminal on the GUI thread."""

    def __init__(self) -> None:
        super().__init__(logging.DEBUG)
        self.bridge = _Bridge()

    def emit(self, record: logging.LogRecord) -> None:
        try:
            self.bridge.record.emit(record)
        except RuntimeError:  # the window is gone at shutdown
            pass


class TerminalWindow(QWidget):
    def __init__(self, handler: TerminalHandler, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.records: list[logging.LogRecord] = []
        self.text = QPlainTextEdit(readOnly=True)
        self.text.setFont(QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont))
        self.text.setMaximumBlockCount(MAX_RECORDS)
        self.level = QComboBox()
        for name, value in LEVELS:
            self.level.addItem(name, value)
        self.level.setCurrentIndex(1)
        clear = QPushButton("Clear")
        clear.clicked.connect(self.clear)
        bar = QHBoxLayout()
        bar.addWidget(QLabel("Show:"))
        bar.addWidget(self.level)
        bar.addStretch(1)
        bar.addWidget(clear)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(4, 4, 4, 4)
        layout.addLayout(bar)
        layout.addWidget(self.text)
        self.level.currentIndexChanged.connect(self._refilter)
        handler.bridge.record.connect(self.add_record)
        # Following: the newest message in view, unless the user scrolled up to read
        # (until they scroll back to the bottom). Decided by what the user does (the
        # scroll bar, the wheel, the keys), not by where the bar happens to be: the text
        # edit moves it itself as it lays the text out (a dock shown from behind a tab
        # had its bar set short of the end, which read as "scrolled up").
        self.following = True
        bar = self.text.verticalScrollBar()
        # (the action has moved the slider, not yet the value)
        bar.actionTriggered.connect(
            lambda _action: setattr(self, "following", bar.sliderPosition() >= bar.maximum())
        )
        # the range grows as the text is laid out (QPlainTextEdit sets it with the bar's
        # signals blocked, at times): after every layout of the text or of the viewport
        bar.rangeChanged.connect(lambda _low, _high: self._follow())
        self.text.document().documentLayout().documentSizeChanged.connect(
            lambda _size: QTimer.singleShot(0, self, self._follow)
        )
        self.text.installEventFilter(self)  # the keys
        self.text.viewport().installEventFilter(self)  # the wheel; laid out

    def threshold(self) -> int:
        return int(self.level.currentData())

    def set_threshold(self, level: int) -> None:
        self.level.setCurrentIndex([v for _, v in LEVELS].index(level))

    def add_record(self, record: logging.LogRecord) -> None:
        self.records.append(record)
        del self.records[:-MAX_RECORDS]
        if record.levelno >= self.threshold():
            self._append(self._format(record))

    def _append(self, text: str) -> None:
        self.text.appendPlainText(text)
        self._follow()

    def _follow(self) -> None:
        """Show the newest message, if the terminal follows."""
        if self.following:
            bar = self.text.verticalScrollBar()
            bar.setValue(bar.maximum())

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        kind = event.type()
        if kind in (QEvent.Type.Wheel, QEvent.Type.KeyPress):
            self._after_the_user()
        elif kind in (QEvent.Type.Resize, QEvent.Type.Show):  # the viewport, laid out
            QTimer.singleShot(0, self, self._follow)
        return False

    def _after_the_user(self) -> None:
        """The user scrolls (the wheel, a key): the terminal stops following while the
        event is handled, then follows again if it left the view at the bottom."""
        self.following = False

        def decide() -> None:
            bar = self.text.verticalScrollBar()
            self.following = bar.value() >= bar.maximum()

        QTimer.singleShot(0, self, decide)

    def clear(self) -> None:
        self.records.clear()
        self.text.clear()
        self.following = True

    def lines(self) -> list[str]:
        return self.text.toPlainText().splitlines()

    def _refilter(self) -> None:
        self.text.clear()
        level = self.threshold()
        self.following = True  # another filter: the newest of what it shows
        self._append("\n".join(self._format(r) for r in self.records if r.levelno >= level))

    @staticmethod
    def _format(record: logging.LogRecord) -> str:
        stamp = time.strftime("%H:%M:%S", time.localtime(record.created))
        text = f"{stamp} {record.levelname.lower():8} {record.getMessage()}"
        if record.exc_info and record.exc_info[1] is not None:
            text += f"\n    {type(record.exc_info[1]).__name__}: {record.exc_info[1]}"
        return text
