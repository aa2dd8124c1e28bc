"""Ctrl+Z and Ctrl+Shift+Z / Ctrl+Y reach the model's undo unless the text field with the
keyboard focus has typing of its own to undo.

A QLineEdit (spin boxes hold one) or a text edit claims the undo and redo keys whenever it
has focus, even with nothing to undo, so the model's Undo never ran while the cursor sat
in a field, which is most of the time in a form. :class:`UndoKeysFallThrough` lets the keys
through to the application-wide Undo and Redo actions when the field has nothing of its
own to undo or redo. It watches only the text field that has the focus (it follows the
application's focus changes), not every event of the application: a filter in Python
on every event would slow every paint and slider step.
"""

from __future__ import annotations

from PySide6.QtCore import QEvent, QObject
from PySide6.QtGui import QKeyEvent, QKeySequence
from PySide6.QtWidgets import QApplication, QLineEdit, QPlainTextEdit, QTextEdit, QWidget

_UNDO = QKeySequence.StandardKey.Undo
_REDO = QKeySequence.StandardKey.Redo
# Redo's shortcuts in the main window's Edit menu beyond the platform's own
_MORE_REDO = (QKeySequence("Ctrl+Shift+Z"), QKeySequence("Ctrl+Y"))


def _own_history(widget: QObject) -> tuple[bool, bool] | None:
    """(undo available, redo available) of a text field's own typing; None for other
    widgets."""
    if isinstance(widget, QLineEdit):
        return widget.isUndoAvailable() and not widget.isReadOnly(), (
            widget.isRedoAvailable() and not widget.isReadOnly()
        )
    if isinstance(widget, (QPlainTextEdit, QTextEdit)):
        doc = widget.document()
        return doc.isUndoAvailable() and not widget.isReadOnly(), (
            doc.isRedoAvailable() and not widget.isReadOnly()
        )
    return None


class UndoKeysFallThrough(QObject):
    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._watched: QWidget | None = None
        app = QApplication.instance()
        app.focusChanged.connect(self._follow_focus)
        self._follow_focus(None, app.focusWidget())

    def _follow_focus(self, old: QWidget | None, new: QWidget | None) -> None:
        if self._watched is not None:
            try:
                self._watched.removeEventFilter(self)
            except RuntimeError:  # the widget is already gone
                pass
            self._watched = None
        if new is not None and _own_history(new) is not None:
            new.installEventFilter(self)
            self._watched = new

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if event.type() != QEvent.Type.ShortcutOverride or not isinstance(event, QKeyEvent):
            return False
        history = _own_history(watched)
        if history is None:
            return False
        can_undo, can_redo = history
        if event.matches(_UNDO):
            return not can_undo  # True: the field never claims the key; the action runs
        if event.matches(_REDO) or QKeySequence(event.keyCombination()) in _MORE_REDO:
            return not can_redo
        return False
