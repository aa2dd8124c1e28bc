"""A widget in a scroll area, the one way every window makes one: frameless, the widget
resized with the area (a panel taller than its dock, a plot of names longer than its
room: :func:`piui.widgets.plot_axes.show_categories`)."""

from __future__ import annotations

from PySide6.QtCore import QPoint, QTimer
from PySide6.QtWidgets import QFrame, QScrollArea, QWidget


def in_scroll_area(widget: QWidget) -> QScrollArea:
    """``widget`` in a frameless scroll area that resizes it."""
    area = QScrollArea()
    area.setWidgetResizable(True)
    area.setFrameShape(QFrame.Shape.NoFrame)
    area.setWidget(widget)
    return area


def scroll_areas(widget: QWidget) -> list[QScrollArea]:
    """The scroll areas ``widget`` is shown in, innermost first."""
    areas = []
    parent = widget.parentWidget()
    while parent is not None:
        if isinstance(parent, QScrollArea) and parent.widget() is not None:
            areas.append(parent)
        parent = parent.parentWidget()
    return areas


def bring_into_view(widget: QWidget, margin: int = 8) -> None:
    """Scroll the scroll area ``widget`` is in (if any) so that it shows ``widget``, once
    the text just given it is laid out: the answer to a button lands where the user
    looks (the topology editor's Preview answered below the fold of its panel)."""

    def scroll() -> None:
        areas = scroll_areas(widget)
        if not areas:
            return
        area, inner = areas[0], areas[0].widget()
        if inner.layout() is not None:  # the places as they are now, not before
            inner.layout().activate()
        # its whole rectangle (ensureWidgetVisible would show a text box's cursor line only)
        at = widget.mapTo(inner, QPoint(0, 0))
        half_w, half_h = widget.width() // 2, widget.height() // 2
        area.ensureVisible(at.x() + half_w, at.y() + half_h, half_w + margin, half_h + margin)

    QTimer.singleShot(0, widget, scroll)  # not called once the widget is gone
