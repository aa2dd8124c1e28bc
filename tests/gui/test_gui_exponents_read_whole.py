"""A timing's power of ten is read whole in a narrow dock.

At 300 pixels the link groups' and topology editor's '×10^-7' was cut to '×10^-' plus
half a digit: the label beside the exponent slider had a fixed minimum of 44 pixels and
was squeezed to it. The rule: a number on screen is never cut; the label of every
MantissaExponentEdit is at least as wide as the widest power its slider reaches, and
still is when a typed value takes the slider further (1e-300)."""

from __future__ import annotations

import importlib

import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QApplication

from piui.document import Document
from piui.widgets.number_controls import MantissaExponentEdit

WINDOWS = [
    ("piui.windows.link_groups", "LinkGroupsWindow"),
    ("piui.windows.topology_editor", "TopologyEditorWindow"),
    ("piui.windows.cache", "CacheWindow"),
]


def whole(edit: MantissaExponentEdit) -> bool:
    label = edit.exponent_label
    return label.width() >= label.fontMetrics().horizontalAdvance(label.text())


@pytest.mark.parametrize(("module", "name"), WINDOWS, ids=[n for _, n in WINDOWS])
def test_every_power_of_ten_is_whole_in_a_narrow_window(qtbot, sample_copy, module, name):
    document = Document()
    document.open(sample_copy("grid4x4.machine"))
    window = getattr(importlib.import_module(module), name)(document)
    qtbot.addWidget(window)
    window.resize(300, 700)  # a narrow dock
    window.show()
    window.activateWindow()
    qtbot.waitUntil(window.isActiveWindow)
    edits = [e for e in window.findChildren(MantissaExponentEdit) if e.isVisible()]
    assert edits
    for edit in edits:
        assert whole(edit), (edit.exponent_label.text(), edit.exponent_label.width())
    edit = edits[0]  # a value past the slider's range: the label grows with it
    edit.field.setFocus()
    edit.field.selectAll()
    qtbot.keyClicks(edit.field, "1e-300")
    qtbot.keyClick(edit.field, Qt.Key.Key_Return)
    QApplication.processEvents()
    assert edit.exponent_label.text() == "×10^-300"
    assert whole(edit), edit.exponent_label.width()
