"""A widget in a scroll area, the one way every window makes one: frameless, the widget
resized with the area (a panel taller than its dock, a plot of names longer than its
room: :func:`piui.widgets.plot_axes.show_categories`)."""

from __future__ import annotations

from PySide6.QtWidgets import QFrame, QScrollArea, QWidget


def in_scroll_area(widget: QWidget) -> QScrollArea:
    """``widget`` in a frameless scroll area that resizes it."""
    area = QScrollArea()
    area.setWidgetResizable(True)
    area.setFrameShape(QFrame.Shape.NoFrame)
    area.setWidget(widget)
    return area
