"""Edit > History: the session's undo history as a list, with the steps' own names.

The first row is the model as it was opened; each further row is one undo step (a drag
is one). The current position is selected and written in bold; the steps after it
(undone, still to redo) are grey. Clicking a row undoes or redoes to just after that
step (:meth:`parasol_core.session.Session.go_to`). The list follows every change of the
document and starts afresh when another model is opened.
"""

from __future__ import annotations

from PySide6.QtCore import QTimer
from PySide6.QtGui import QBrush, QPalette
from PySide6.QtWidgets import QListWidget, QListWidgetItem, QVBoxLayout, QWidget

from parasol_core.base.words import counted
from parasol_core.session import SessionError
from piui.document import Document
from piui.widgets.shortcuts import with_key
from piui.widgets.status_messages import message_label, show_refusal

OPENED = "The model as opened"
NOTE_STYLE = "color: palette(dark);"


class HistoryPanel(QWidget):
    def __init__(self, document: Document, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.document = document
        self.list = QListWidget()
        self.list.setToolTip(with_key("Click a step (or choose it with the arrow keys and "
                                      "press Return) to undo or redo to just after it; "
                                      "Edit > History", "Ctrl+H"))  # fmt: skip
        self.list.itemClicked.connect(self._clicked)
        self.list.itemActivated.connect(self._clicked)
        self.note = message_label()  # where the history stands, or why a step was refused
        layout = QVBoxLayout(self)
        layout.setContentsMargins(4, 4, 4, 4)
        layout.addWidget(self.list, 1)
        layout.addWidget(self.note)
        self.setFocusProxy(self.list)
        self._shown: list[str] = []
        self._timer = QTimer(self)  # one refresh for a burst of changes (a drag)
        self._timer.setSingleShot(True)
        self._timer.setInterval(0)
        self._timer.timeout.connect(self.refresh)
        document.changed.connect(lambda _change: self._timer.start())
        document.modelReset.connect(self.refresh)
        self.refresh()

    def refresh(self) -> None:
        """Show the history's steps and position."""
        history = self.document.session.history
        labels = [OPENED] + [step.label for step in history.steps]
        if labels != self._shown:
            self.list.blockSignals(True)
            self.list.clear()
            for label in labels:
                self.list.addItem(QListWidgetItem(label))
            self.list.blockSignals(False)
            self._shown = labels
        grey = self.palette().brush(QPalette.ColorGroup.Disabled, QPalette.ColorRole.Text)
        normal = QBrush()
        for row in range(self.list.count()):
            item = self.list.item(row)
            font = item.font()
            font.setBold(row == history.index)
            item.setFont(font)
            item.setForeground(grey if row > history.index else normal)
            saved = history.saved is not None and row == history.saved
            item.setToolTip("saved here" if saved else "")
        self.list.setCurrentRow(history.index)
        self.list.scrollToItem(self.list.item(history.index))
        steps = len(history.steps)
        self.note.setStyleSheet(NOTE_STYLE)  # (a refusal's red gone)
        self.note.setText(f"{history.index} of {counted(steps, 'step')} done"
                          + (f"; {steps - history.index} to redo" if history.index < steps
                             else ""))  # fmt: skip

    def position_row(self) -> int:
        """The row of the current position (0: the model as opened)."""
        return self.document.session.history.index

    def _clicked(self, item: QListWidgetItem) -> None:
        row = self.list.row(item)
        try:
            self.document.commit_pending()
            self.document.session.go_to(row)
        except SessionError as e:
            self.refresh()
            show_refusal(self.note, f"cannot go to step {row}: {e}")
            return
        self.refresh()
