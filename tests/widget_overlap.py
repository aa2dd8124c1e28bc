"""What is seen of each control of a window, to find controls drawn over one another
(tests/gui/test_gui_no_overlap.py, the Program window's narrow layout)."""

from __future__ import annotations

import itertools

from PySide6.QtCore import QRect
from PySide6.QtWidgets import (
    QAbstractButton,
    QAbstractItemView,
    QAbstractSpinBox,
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


def overlapping(panel: QWidget) -> list[tuple[QWidget, QWidget]]:
    """The pairs of controls of ``panel`` whose seen parts overlap (by more than 2 px)."""
    out = []
    for (a, ra), (b, rb) in itertools.combinations(seen(panel), 2):
        both = ra.intersected(rb)
        if both.width() > 2 and both.height() > 2:
            out.append((a, b))
    return out
