"""A splitter that puts its two panes side by side while it is wide enough for both, and
one above the other when it is not, so the window holding it can be narrowed to the
width of its widest pane rather than the sum of both (the Program window's breakdown
and timeline in a narrow dock)."""

from __future__ import annotations

from PySide6.QtCore import QSize, Qt
from PySide6.QtWidgets import QSplitter, QWidget

SLACK = 80
"""Pixels beyond the panes' minimum widths before they go side by side: a pane at its
bare minimum is hardly readable."""


class TurningSplitter(QSplitter):
    """Side by side (``Horizontal``) at or above :meth:`side_by_side_width`, stacked
    (``Vertical``) below it; its minimum width is its widest pane's. The sizes a
    stacked splitter takes are ``stacked`` (their ratio)."""

    def __init__(self, parent: QWidget | None = None, stacked: tuple[int, int] = (1, 2)) -> None:
        super().__init__(Qt.Orientation.Horizontal, parent)
        self._stacked = stacked

    def side_by_side_width(self) -> int:
        panes = [self.widget(i) for i in range(self.count())]
        need = sum(max(w.minimumWidth(), w.minimumSizeHint().width()) for w in panes)
        return need + self.handleWidth() * max(0, len(panes) - 1) + SLACK

    def minimumSizeHint(self) -> QSize:
        hint = super().minimumSizeHint()
        panes = [self.widget(i) for i in range(self.count())]
        widest = max((max(w.minimumWidth(), w.minimumSizeHint().width()) for w in panes),
                     default=0)  # fmt: skip
        return QSize(widest, hint.height())

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
