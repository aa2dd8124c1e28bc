"""A window's own keys, given alike everywhere: Run is Ctrl+Return (and the keypad's
Ctrl+Enter), Close is Ctrl+W (the platform's Close) where the thing is a window, Esc
cancels a run under way before it closes the window (:class:`CancelsItsRunFirst`),
Return in a form's field does the form's main action (:func:`on_return`); each key is
named in the tooltip of what it does, as the main window's menus show theirs."""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import Qt
from PySide6.QtGui import QKeySequence, QShortcut
from PySide6.QtWidgets import QAbstractButton, QAbstractSpinBox, QLineEdit, QWidget

RUN = ("Ctrl+Return", "Ctrl+Enter")
CLOSE = ("Ctrl+W", "Ctrl+F4")  # the platforms' Close, Ctrl+W first wherever it runs


def key_text(keys: str | QKeySequence.StandardKey) -> str:
    """A key as the platform writes it ("Ctrl+Return", "Ctrl+W")."""
    return QKeySequence(keys).toString(QKeySequence.SequenceFormat.NativeText)


def with_key(text: str, keys: str | QKeySequence.StandardKey) -> str:
    """A tooltip naming its key: "Run the sweep (Ctrl+Return)"."""
    return f"{text} ({key_text(keys)})"


def bind(owner: QWidget, keys: str | QKeySequence.StandardKey | tuple[str, ...],
         slot: Callable[[], object]) -> list[QShortcut]:  # fmt: skip
    """``keys`` do ``slot`` while the keyboard is anywhere in ``owner``."""
    made = []
    for key in keys if isinstance(keys, tuple) else (keys,):
        shortcut = QShortcut(QKeySequence(key), owner)
        shortcut.setContext(Qt.ShortcutContext.WidgetWithChildrenShortcut)
        shortcut.activated.connect(slot)
        made.append(shortcut)
    return made


def key_for(button: QAbstractButton, owner: QWidget,
            keys: str | QKeySequence.StandardKey | tuple[str, ...], purpose: str) -> None:  # fmt: skip
    """``keys`` click ``button`` (when it is enabled) anywhere in ``owner``; its tooltip
    says ``purpose`` and the first key."""
    bind(owner, keys, lambda: _press(button))
    button.setToolTip(with_key(purpose, keys[0] if isinstance(keys, tuple) else keys))


def on_return(button: QAbstractButton, *fields: QWidget) -> None:
    """Return (or Enter) in any of ``fields`` (line edits or spin boxes) clicks
    ``button`` while it is enabled, after the field has taken what was typed (a spin
    box interprets its text first), as a dialog's default button does: the topology
    generator's Preview, the Estimate panel's Route and Transfer time. A field that has
    just refused what was typed (a name the topology lacks) asks nothing: its refusal
    stays in view, not replaced by the answer to a question about the value put back."""
    for field in fields:
        edit = field if isinstance(field, QLineEdit) else None
        if isinstance(field, QAbstractSpinBox):
            edit = field.findChild(QLineEdit)
        if edit is None:
            raise TypeError(f"{type(field).__name__}: not a field with a Return key")
        edit.returnPressed.connect(lambda b=button, e=edit: _press(b, e))


def _press(button: QAbstractButton, edit: QLineEdit | None = None) -> None:
    """Click ``button`` if it is enabled, unless ``edit`` has just refused its input."""
    refused = getattr(edit, "is_refused", None)  # the house's ValueField
    if button.isEnabled() and not (refused is not None and refused()):
        button.click()


class CancelsItsRunFirst:
    """Mixed into a dialog that runs work in the background (``running``, ``cancel``,
    ``run_under_way()``: what runs and how far it is, in words): Esc cancels a run under
    way, the dialog staying on screen to say so, and closes it once nothing runs
    (QDialog's Esc hid the dialog and let the run go on unseen). Closing it while a run
    is under way (its title bar, Ctrl+W, or the main window quitting: :meth:`may_close`)
    asks first: Stop stops the run and closes, Keep running keeps both. The asking is
    ``ask_stop_run`` (tests answer it). Put before QDialog."""

    def ask_stop_run(self, what: str) -> bool:
        from PySide6.QtWidgets import QMessageBox

        box = QMessageBox(
            QMessageBox.Icon.Question,
            "A run is under way",
            f"{what}. Stop it and close?",
            parent=self,
        )  # type: ignore[arg-type]
        stop = box.addButton("&Stop and close", QMessageBox.ButtonRole.DestructiveRole)
        keep = box.addButton("&Keep running", QMessageBox.ButtonRole.RejectRole)
        box.setDefaultButton(keep)
        box.setEscapeButton(keep)
        box.exec()
        return box.clickedButton() is stop

    def may_close(self) -> bool:
        """Whether this dialog may close now: nothing runs, or the user agreed to stop
        what does (asked here; the run is not stopped yet)."""
        if not self.running:  # type: ignore[attr-defined]
            return True
        return self.ask_stop_run(self.run_under_way())  # type: ignore[attr-defined]

    _closing = False  # a close the user agreed to: the run is stopped, the dialog goes

    def reject(self) -> None:
        if self.running and not self._closing:  # type: ignore[attr-defined]
            self.cancel()  # type: ignore[attr-defined]
            return
        super().reject()  # type: ignore[misc]

    def closeEvent(self, event: object) -> None:
        if not self.may_close():
            event.ignore()  # type: ignore[attr-defined]
            return
        self.cancel()  # type: ignore[attr-defined]
        self._closing = True  # QDialog's closeEvent rejects: here, it hides
        try:
            super().closeEvent(event)  # type: ignore[misc]
        finally:
            self._closing = False
