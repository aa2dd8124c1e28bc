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
