"""What GUI tests do as a user does, shared: show a window at a size, type into a field."""

from __future__ import annotations

from PySide6.QtCore import Qt


def shown(qtbot, widget, size=(700, 700)):
    """``widget`` shown at ``size`` and exposed (closed by qtbot after the test)."""
    qtbot.addWidget(widget)
    widget.resize(*size)
    widget.show()
    qtbot.waitExposed(widget)
    return widget


def type_into(qtbot, edit, text):
    """Select what ``edit`` holds, type ``text`` over it and press Return."""
    edit.setFocus()
    edit.selectAll()
    qtbot.keyClicks(edit, text)
    qtbot.keyClick(edit, Qt.Key.Key_Return)
