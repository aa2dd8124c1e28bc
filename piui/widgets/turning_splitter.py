"""A splitter that puts its two panes side by side while it is wide enough for both, and
one above the other when it is not, so the window holding it can be narrowed to the
width of its widest pane rather than the sum of both (the Program window's breakdown
and timeline in a narrow dock)."""

from __future__ import annotations

from collections.abc import Sequence

from PySide6.QtCore import QSize, Qt
from PySide6.QtWidgets import QBoxLayout, QSplitter, QWidget

SLACK = 80
"""Pixels beyond the panes' minimum widths before they go side by side: a pane at its
bare minimum is hardly readable."""


def least_width(widget: QWidget) -> int:
    """The narrowest ``widget`` is laid out: its minimum width, or its minimum hint."""
    return max(widget.minimumWidth(), widget.minimumSizeHint().width())


def side_by_side_width(panes: Sequence[QWidget], gap: int, slack: int) -> int:
    """The width ``panes`` need side by side: their least widths, ``gap`` between each
    two, and ``slack`` more (a splitter here; the Estimate panel's question boxes)."""
    return sum(least_width(w) for w in panes) + gap * max(0, len(panes) - 1) + slack


def turn_layout(layout: QBoxLayout, width: int, needed: int) -> bool:
    """Lay ``layout`` out left to right at ``width`` of at least ``needed``, top to
    bottom below it; True when that changed its direction."""
    wanted = (QBoxLayout.Direction.LeftToRight if width >= needed
              else QBoxLayout.Direction.TopToBottom)  # fmt: skip
    if layout.direction() == wanted:
        return False
    layout.setDirection(wanted)
    return True


class TurningSplitter(QSplitter):
    """Side by side (``Horizontal``) at or above :meth:`side_by_side_width`, stacked
    (``Vertical``) below it; its minimum width is its widest pane's. The sizes a
    stacked splitter takes are ``stacked`` (their ratio)."""

    def __init__(self, parent: QWidget | None = None, stacked: tuple[int, int] = (1, 2)) -> None:
        super().__init__(Qt.Orientation.Horizontal, parent)
        self._stacked = stacked

    def panes(self) -> list[QWidget]:
        return [self.widget(i) for i in range(self.count())]

    def side_by_side_width(self) -> int:
        return side_by_side_width(self.panes(), self.handleWidth(), SLACK)

    def minimumSizeHint(self) -> QSize:
        widest = max((least_width(w) for w in self.panes()), default=0)
        return QSize(widest, super().minimumSizeHint().height())

    def resizeEvent(self, event) -> None:  # noqa: ANN001
        self.turn(event.size().width())
        super().resizeEvent(event)

    def turn(self, width: int) -> None:
        """The orientation for ``width``: the panes side by side when both fit."""
        wanted = (Qt.Orientation.Horizontal if width >= self.side_by_side_width()
                  else Qt.Orientation.Vertical)  # fmt: skip
        if wanted == self.orientation():
            return
        self.setOrientation(wanted)
        if wanted == Qt.Orientation.Vertical:
            total = max(1, self.height())
            a, b = self._stacked
            self.setSizes([total * a // (a + b), total * b // (a + b)])
