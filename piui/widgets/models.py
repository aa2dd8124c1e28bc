"""Item models over the session's model: views read each cell when they draw it, so no
value is copied and a table of any length costs only the rows on screen."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from PySide6.QtCore import QAbstractTableModel, QModelIndex, QPersistentModelIndex, Qt

from parasol_core.model import Machine, Processor
from parasol_core.model.tree import format_number

Index = QModelIndex | QPersistentModelIndex
ROW_KEY = Qt.ItemDataRole.UserRole  # what a row stands for (a processor id, a topology)


class ColumnsModel(QAbstractTableModel):
    """A read-only table: ``rows()`` gives the objects, each column a function of one."""

    def __init__(self, headers: Sequence[str], columns: Sequence[Callable[[Any], Any]],
                 key: Callable[[Any], Any]) -> None:  # fmt: skip
        super().__init__()
        self.headers = list(headers)
        self.columns = list(columns)
        self.key = key
        self.source: Callable[[], Sequence[Any]] = list

    def rows(self) -> Sequence[Any]:
        return self.source()

    def rowCount(self, parent: Index = QModelIndex()) -> int:  # noqa: B008 - Qt's API
        return 0 if parent.isValid() else len(self.rows())

    def columnCount(self, parent: Index = QModelIndex()) -> int:  # noqa: B008
        return 0 if parent.isValid() else len(self.columns)

    def data(self, index: Index, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        rows = self.rows()
        if not index.isValid() or index.row() >= len(rows):
            return None
        obj = rows[index.row()]
        if role == Qt.ItemDataRole.DisplayRole:
            value = self.columns[index.column()](obj)
            return "" if value is None else str(value)
        if role == ROW_KEY:
            return self.key(obj)
        return None

    def headerData(self, section: int, orientation: Qt.Orientation,
                   role: int = Qt.ItemDataRole.DisplayRole) -> Any:  # fmt: skip
        if role == Qt.ItemDataRole.DisplayRole and orientation == Qt.Orientation.Horizontal:
            return self.headers[section]
        return None

    def reset(self) -> None:
        """The rows themselves changed (added, removed, another model)."""
        self.beginResetModel()
        self.endResetModel()

    def rows_changed(self, rows: Sequence[int] | None = None, columns: Sequence[int] | None = None,
                     ) -> None:  # fmt: skip
        """Values in these rows (default all) and columns (default all) changed."""
        n = len(self.rows())
        if n == 0:
            return
        rows = range(n) if rows is None else [r for r in rows if 0 <= r < n]
        if not rows:
            return
        cols = columns or range(len(self.columns))
        self.dataChanged.emit(self.index(min(rows), min(cols)), self.index(max(rows), max(cols)))

    def row_of(self, key: Any) -> int | None:
        for r, obj in enumerate(self.rows()):
            if self.key(obj) == key:
                return r
        return None


def processor_types_model(machine: Callable[[], Machine]) -> ColumnsModel:
    def speedup(p: Processor) -> str | None:
        sls = p.cache.smallloopspeedup if p.cache else None
        return None if sls is None else format_number(sls.mean)

    model = ColumnsModel(
        ["Id", "Name", "Timings", "Cache size", "Small loop speedup"],
        [lambda p: p.id, lambda p: p.name or "", lambda p: len(p.timings),
         lambda p: p.cache.size if p.cache else None, speedup],
        key=lambda p: p.id,
    )  # fmt: skip
    model.source = lambda: machine().processors
    return model


def _count(machine: Machine, row: tuple[str, Any]) -> Any:
    """The processors column: a hardware topology with switches says how many compute."""
    kind, topo = row
    if kind == "hardware" and topo.types:
        from parasol_core.topology.switches import count_text, has_switches

        if has_switches(machine, topo):
            return count_text(machine, topo)
    return topo.processor_count


def topologies_model(machine: Callable[[], Machine]) -> ColumnsModel:
    def rows() -> list[tuple[str, Any]]:
        m = machine()
        return [("hardware", t) for t in m.topologies] + [("virtual", v) for v in m.virtuals]

    model = ColumnsModel(
        ["Kind", "Id", "Name", "Routing", "Processors", "Links", "Shape"],
        [lambda r: r[0], lambda r: r[1].id, lambda r: r[1].name or "",
         lambda r: r[1].routing or "", lambda r: _count(machine(), r),
         lambda r: len(r[1].links) if r[0] == "hardware" else None,
         lambda r: " × ".join(map(str, r[1].shape)) if r[1].shape else ""],
        key=lambda r: (r[0], r[1].id),
    )  # fmt: skip
    model.source = rows
    return model
