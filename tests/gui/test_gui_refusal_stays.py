"""A refused value's pink stays until the user comes back to the field.

Tried on a real display: the Program window's flop expression, refused by the
prediction, lost its pink as soon as the File menu was opened and closed (the menu gives
the focus back to the field: Qt calls that a popup's reason), though the message line
still said why and the text was still the refused one."""

from __future__ import annotations

import pytest
from PySide6.QtCore import QEvent, Qt
from PySide6.QtGui import QFocusEvent
from PySide6.QtWidgets import QApplication, QMenu

from piui.widgets.number_controls import ValueField


def _focus_in(field: ValueField, reason: Qt.FocusReason) -> None:
    QApplication.sendEvent(field, QFocusEvent(QEvent.Type.FocusIn, reason))


@pytest.fixture
def refused(qtbot) -> ValueField:
    field = ValueField("pt(T).dga *")
    qtbot.addWidget(field)
    field.show()
    field.mark_refused("syntax error: the text ends too early")
    assert field.is_refused()
    return field


@pytest.mark.parametrize("reason", [Qt.FocusReason.PopupFocusReason,
                                    Qt.FocusReason.ActiveWindowFocusReason])  # fmt: skip
def test_a_menu_or_a_window_switch_leaves_the_refusal(refused, reason):
    _focus_in(refused, reason)
    assert refused.is_refused() and refused.toolTip().startswith("syntax error")


@pytest.mark.parametrize("reason", [Qt.FocusReason.MouseFocusReason,
                                    Qt.FocusReason.TabFocusReason,
                                    Qt.FocusReason.ShortcutFocusReason])  # fmt: skip
def test_coming_back_to_the_field_takes_the_pink_away(refused, reason):
    _focus_in(refused, reason)
    assert not refused.is_refused()


def test_a_context_menu_opened_and_closed_leaves_it(refused, qtbot):
    refused.setFocus()
    refused.mark_refused("refused again")  # focused, then refused (Return, then the answer)
    menu = QMenu(refused)
    menu.addAction("Copy")
    menu.popup(refused.mapToGlobal(refused.rect().center()))
    qtbot.waitUntil(menu.isVisible)
    menu.close()
    qtbot.waitUntil(lambda: not menu.isVisible())
    QApplication.processEvents()
    assert refused.is_refused()


# ---------------------------------------------------------------------- Esc


def _dialog_with_field(qtbot, text: str):
    from PySide6.QtWidgets import QDialog, QVBoxLayout

    dialog = QDialog()
    qtbot.addWidget(dialog)
    field = ValueField(text)
    QVBoxLayout(dialog).addWidget(field)
    dialog.show()
    qtbot.waitExposed(dialog)
    field.setFocus()
    return dialog, field


def test_esc_backs_out_of_typing_then_closes_the_dialog(qtbot):
    """Esc in any field puts back the text last taken and stays (the Instructions
    window did this alone; a dialog closed at once, and the other windows kept the typed
    text); a second Esc closes the dialog as it does with nothing typed."""
    dialog, field = _dialog_with_field(qtbot, "4096")
    backed: list[bool] = []
    field.reverted.connect(lambda: backed.append(True))
    field.selectAll()
    qtbot.keyClicks(field, "12x")
    qtbot.keyClick(field, Qt.Key.Key_Escape)
    assert dialog.isVisible() and field.text() == "4096" and backed == [True]
    qtbot.keyClick(field, Qt.Key.Key_Escape)
    assert not dialog.isVisible()


def test_esc_after_return_leaves_what_was_entered(qtbot):
    dialog, field = _dialog_with_field(qtbot, "4096")
    field.selectAll()
    qtbot.keyClicks(field, "8192")
    qtbot.keyClick(field, Qt.Key.Key_Return)  # taken
    qtbot.keyClick(field, Qt.Key.Key_Escape)
    assert field.text() == "8192" and not dialog.isVisible()


def test_esc_backs_out_of_typing_over_a_refusal_and_the_pink_goes(qtbot):
    dialog, field = _dialog_with_field(qtbot, "4096")
    field.reject_input("not a number", "4096")  # typed, refused, put back
    qtbot.keyClicks(field, "7")  # typing again takes the pink away
    qtbot.keyClick(field, Qt.Key.Key_Escape)
    assert field.text() == "4096" and not field.is_refused() and dialog.isVisible()
