"""A table's column that takes the width left over, but never less than its contents:
a narrow dock scrolls the table sideways instead of squeezing the names to "…"."""

from __future__ import annotations

from PySide6.QtCore import QEvent, QObject
from PySide6.QtWidgets import QHeaderView, QTableView


class _StretchNotBelowContents(QObject):
    def __init__(self, table: QTableView, column: int) -> None:
        super().__init__(table)
        self.table, self.column = table, column
        table.viewport().installEventFilter(self)
        model = table.model()
        for signal in (model.modelReset, model.dataChanged, model.rowsInserted,
                       model.rowsRemoved, model.layoutChanged):  # fmt: skip
            signal.connect(self.fit)
        self.fit()

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if event.type() == QEvent.Type.Resize:
            self.fit()
        return False

    def fit(self, *_: object) -> None:
        """Stretch the column while the table has room for every column's contents;
        past that, the column keeps its contents' width and the table scrolls."""
        table, header = self.table, self.table.horizontalHeader()
        need = sum(max(table.sizeHintForColumn(c), header.sectionSizeHint(c))
                   for c in range(header.count()) if not header.isSectionHidden(c))  # fmt: skip
        mode = (QHeaderView.ResizeMode.Stretch if table.viewport().width() >= need
                else QHeaderView.ResizeMode.ResizeToContents)  # fmt: skip
        if header.sectionResizeMode(self.column) != mode:
            header.setSectionResizeMode(self.column, mode)


def stretch_not_below_contents(table: QTableView, column: int) -> None:
    """``column`` of ``table`` takes the width the other columns leave, and never less
    than its own contents' width (its header's, or its widest cell's)."""
    _StretchNotBelowContents(table, column)
