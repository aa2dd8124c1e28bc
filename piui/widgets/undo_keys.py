"""Ctrl+Z and Ctrl+Shift+Z / Ctrl+Y reach the model's undo unless the text field with the
keyboard focus has typing of its own to undo.

A QLineEdit (spin boxes hold one) or a text edit claims the undo and redo keys whenever it
has focus, even with nothing to undo, so the model's Undo never ran while the cursor sat
in a field, which is most of the time in a form. :class:`UndoKeysFallThrough`, installed
on the application, lets the keys through to the application-wide Undo and Redo actions
when the field has nothing of its own to undo or redo.
"""

from __future__ import annotations

from PySide6.QtCore import QEvent, QObject
from PySide6.QtGui import QKeyEvent, QKeySequence
from PySide6.QtWidgets import QLineEdit, QPlainTextEdit, QTextEdit

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
