"""Return in a form's fields does the form's main action, as a dialog's default button
does: the generator's Preview, the Estimate panel's Route and Transfer time."""

from __future__ import annotations

from PySide6.QtWidgets import QAbstractButton, QAbstractSpinBox, QLineEdit, QWidget


def on_return(button: QAbstractButton, *fields: QWidget) -> None:
    """Return (or Enter) in any of ``fields`` (line edits or spin boxes) clicks
    ``button`` while it is enabled, after the field has taken what was typed (a spin
    box interprets its text first). A field that has just refused what was typed (a
    name the topology lacks) asks nothing: its refusal stays in view, not replaced by
    the answer to a question about the value put back."""
    for field in fields:
        edit = field if isinstance(field, QLineEdit) else None
        if isinstance(field, QAbstractSpinBox):
            edit = field.findChild(QLineEdit)
        if edit is None:
            raise TypeError(f"{type(field).__name__}: not a field with a Return key")
        edit.returnPressed.connect(lambda b=button, e=edit: _press(b, e))


def _press(button: QAbstractButton, edit: QLineEdit) -> None:
    refused = getattr(edit, "is_refused", None)  # the house's ValueField
    if button.isEnabled() and not (refused is not None and refused()):
        button.click()
