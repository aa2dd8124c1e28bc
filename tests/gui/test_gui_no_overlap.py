"""No window draws one control over another at a narrow width of its dock.

The Run-time systems window at 300 pixels drew its message line's second line over the
last row of its table: a splitter, a tab or a dock gives a widget its minimum height,
not the height its width asks for, and a wrapped line needs more as its dock narrows.
The rule, for every window: at a narrow width, what is seen of each control is seen of
no other (controls scrolled out of view are not seen)."""

from __future__ import annotations

import itertools

import pytest
from PySide6.QtCore import QRect
from PySide6.QtWidgets import (
    QAbstractButton,
    QAbstractItemView,
    QAbstractSpinBox,
    QApplication,
    QComboBox,
    QLabel,
    QLineEdit,
    QSlider,
    QWidget,
)

LEAVES = (QLabel, QAbstractButton, QLineEdit, QAbstractSpinBox, QComboBox, QSlider,
          QAbstractItemView)  # fmt: skip


def seen(panel: QWidget) -> list[tuple[QWidget, QRect]]:
    """The controls of ``panel`` on show, each with the part of it seen, in the panel's
    coordinates (not the inner parts of a control: a spin box's line edit)."""
    out = []
    for w in panel.findChildren(QWidget):
        if not isinstance(w, LEAVES) or not w.isVisible():
            continue
        parent = w.parentWidget()
        while parent is not None and parent is not panel and not isinstance(parent, LEAVES):
            parent = parent.parentWidget()
        if parent is not panel and parent is not None:
            continue  # part of another control
        part = w.visibleRegion().boundingRect()
        if part.isEmpty():
            continue
        out.append((w, QRect(w.mapTo(panel, part.topLeft()), part.size())))
    return out


def _name(w: QWidget) -> str:
    text = w.text() if hasattr(w, "text") and callable(w.text) else ""
    return f"{type(w).__name__} {str(text)[:40]!r}"


@pytest.mark.parametrize("width", [240, 300])
def test_no_control_is_drawn_over_another_at_a_narrow_width(main_window, qtbot, width):
    from conftest import SAMPLES

    assert main_window.open_file(SAMPLES / "grid4x4.machine")
    main_window.resize(1600, 1000)
    found = []
    for key in main_window.docks:
        main_window.show_panel(key)
        dock = main_window.docks[key]
        dock.setFloating(True)
        dock.resize(max(width, dock.minimumSizeHint().width()), 700)
        for _ in range(4):
            QApplication.processEvents()
        panel = main_window.panels[key]
        for (a, ra), (b, rb) in itertools.combinations(seen(panel), 2):
            both = ra.intersected(rb)
            if both.width() > 2 and both.height() > 2:
                found.append(f"{key}: {_name(a)} and {_name(b)}")
        dock.setFloating(False)
    assert not found, found
