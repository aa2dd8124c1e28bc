"""A one-line editor for a model expression that checks the text as it is typed.

The text is parsed (:func:`parasol_core.syntax.expression.parse_expression`) and every reference resolved against the
document's machine on each keystroke. A problem — a syntax error, a reference that names
nothing, a reference back to the expression being edited — turns the field red, and its
message (with the column) goes to the tooltip and to ``problemChanged``, for a message
line under the editor. Enter or leaving the field hands a valid text to the owner
(``committed``); Escape, or leaving the field with invalid text, puts the model's text
back. An invalid expression never leaves this widget.

The widget does not change the model itself: its owner turns ``committed`` into an
undoable command, and tells the widget the model's text with :meth:`set_model_text`.
"""

from __future__ import annotations

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QFocusEvent, QFont, QKeyEvent
from PySide6.QtWidgets import QLineEdit, QWidget

from parasol_core.analysis.check import Check, check_expression

INVALID_STYLE = "QLineEdit { background: #ffd6d6; border: 1px solid #d04040; }"


class ExpressionEdit(QLineEdit):
    """The editor; see the module docstring. ``document`` supplies machine and engine."""

    committed = Signal(object)  # Expression, or None for an emptied field
    problemChanged = Signal(str)  # "" once the text is valid again
    checked = Signal(object)  # the Check of the current text, on every change
    focusReceived = Signal()

    def __init__(
        self,
        document,  # noqa: ANN001 - piui.document.Document
        *,
        runtime: bool = False,
        own_key: str | None = None,
        allow_empty: bool = True,
        parent: QWidget | None = None,
    ) -> None:
        super().__init__(parent)
        self.document = document
        self.runtime = runtime
        self.own_key = own_key
        self.allow_empty = allow_empty
        self._model_text = ""
        self._check = Check()
        self._problem = ""
        font = QFont("monospace")
        font.setStyleHint(QFont.StyleHint.TypeWriter)
        self.setFont(font)
        self.textEdited.connect(self._recheck)
        self.returnPressed.connect(self.commit)

    # ---- the model's side

    def model_text(self) -> str:
        return self._model_text

    def set_model_text(self, text: str, keep_edit: bool = True) -> None:
        """The text the model holds now. Shown unless the user is in the middle of an edit
        and ``keep_edit`` (pass False when the field now stands for another expression)."""
        editing = keep_edit and self.hasFocus() and self.text().strip() not in (
            self._model_text.strip(), text.strip())  # fmt: skip
        self._model_text = text
        if not editing:
            self.setText(text)
            self.setCursorPosition(0)
            self._recheck()

    def revert(self) -> None:
        """Show the model's text again, dropping the edit."""
        self.setText(self._model_text)
        self._recheck()

    # ---- checking

    def current_check(self) -> Check:
        return self._check

    def problem(self) -> str:
        return self._problem

    def is_valid(self) -> bool:
        return not self._problem

    def _recheck(self) -> None:
        text = self.text()
        if not text.strip() and not self.allow_empty:
            check = Check(message="an expression is required here")
        else:
            check = check_expression(text, self.document.machine, self.document.engine,
                                     self.runtime, self.own_key)  # fmt: skip
        self._check = check
        self._show_problem(check.describe())
        self.checked.emit(check)

    def _show_problem(self, problem: str) -> None:
        self.setStyleSheet(INVALID_STYLE if problem else "")
        # valid: the whole text, which a narrow field may cut off
        self.setToolTip(problem or self.text().strip())
        if problem != self._problem:
            self._problem = problem
            self.problemChanged.emit(problem)

    # ---- applying

    def commit(self) -> bool:
        """Hand a valid, changed text to the owner. Returns whether the text is valid."""
        self._recheck()
        if not self._check.ok:
            return False
        if self.text().strip() != self._model_text.strip():
            self.committed.emit(self._check.expression)
        return True

    def keyPressEvent(self, event: QKeyEvent) -> None:
        if event.key() == Qt.Key.Key_Escape and self.text() != self._model_text:
            self.revert()
            event.accept()
            return
        super().keyPressEvent(event)

    def focusInEvent(self, event: QFocusEvent) -> None:
        super().focusInEvent(event)
        self.focusReceived.emit()

    def focusOutEvent(self, event: QFocusEvent) -> None:
        super().focusOutEvent(event)
        # a popup (the context menu, a completer) takes focus without ending the edit
        if event.reason() == Qt.FocusReason.PopupFocusReason:
            return
        if not self.commit():
            self.revert()
