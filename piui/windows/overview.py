"""The "Machine Model" overview: the machine's id and name, its processor types and its
topologies at a glance. It is the main window's central widget."""

from __future__ import annotations

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QAbstractItemView,
    QFormLayout,
    QGroupBox,
    QHeaderView,
    QLabel,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from parasol_core.edit import EditError, parse_value
from parasol_core.engine import Engine
from parasol_core.expr.tree import format_number
from parasol_core.model import INT, STR, Cache, Machine, Processor
from parasol_core.session import Change, SessionError
from piui.document import Document
from piui.widgets.labels import value_text
from piui.widgets.number_controls import ValueField


class MachineOverview(QWidget):
    processorActivated = Signal(int)
    topologyActivated = Signal(str, int)

    def __init__(self, document: Document, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.document = document
        self.id_field = ValueField()
        self.name_field = ValueField()
        self.maxtotalspd = QLabel()
        self.maxtotalspd.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        form = QFormLayout()
        form.addRow("Machine id:", self.id_field)
        form.addRow("Name:", self.name_field)
        form.addRow("Max. total transfer speed:", self.maxtotalspd)

        self.processors = self._table(["Id", "Name", "Timings", "Cache size", "Small loop speedup"])
        self.topologies = self._table(
            ["Kind", "Id", "Name", "Routing", "Processors", "Links", "Shape"]
        )
        procs_box = QGroupBox("Processor types")
        QVBoxLayout(procs_box).addWidget(self.processors)
        topo_box = QGroupBox("Topologies")
        QVBoxLayout(topo_box).addWidget(self.topologies)
        layout = QVBoxLayout(self)
        layout.addLayout(form)
        layout.addWidget(procs_box, 1)
        layout.addWidget(topo_box, 1)

        self.id_field.editingFinished.connect(lambda: self._edit("ma.id", self.id_field, INT))
        self.name_field.editingFinished.connect(lambda: self._edit("ma.name", self.name_field, STR))
        self.processors.cellDoubleClicked.connect(self._processor_clicked)
        self.processors.itemSelectionChanged.connect(self._processor_selected)
        self.topologies.cellDoubleClicked.connect(self._topology_clicked)
        document.modelReset.connect(self.refresh)
        document.structureChanged.connect(self.refresh)
        document.valuesChanged.connect(self._values_changed)
        document.derivedChanged.connect(self._derived_changed)
        document.currentProcessorChanged.connect(self._select_current)
        self.refresh()

    @staticmethod
    def _table(headers: list[str]) -> QTableWidget:
        table = QTableWidget(0, len(headers))
        table.setHorizontalHeaderLabels(headers)
        table.verticalHeader().hide()
        table.setTabKeyNavigation(False)  # Tab moves on to the next control, not cell by cell
        table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        table.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        table.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
        table.horizontalHeader().setStretchLastSection(True)
        return table

    def refresh(self) -> None:
        m = self.document.machine
        self.id_field.setText("" if m.id is None else str(m.id))
        self.name_field.setText(m.name or "")
        self.id_field.accept_input()
        self.name_field.accept_input()
        self._fill_processors()
        rows = [("hardware", t.id, t.name, t.routing, t.processor_count, len(t.links), t.shape)
                for t in m.topologies]  # fmt: skip
        rows += [("virtual", v.id, v.name, v.routing, v.processor_count, None, v.shape)
                 for v in m.virtuals]  # fmt: skip
        self.topologies.setRowCount(len(rows))
        for r, row in enumerate(rows):
            kind, ident, name, routing, procs, links, shape = row
            cells = [kind, ident, name or "", routing or "", procs, links,
                     " × ".join(map(str, shape)) if shape else ""]  # fmt: skip
            for c, value in enumerate(cells):
                item = QTableWidgetItem("" if value is None else str(value))
                item.setData(Qt.ItemDataRole.UserRole, (kind, ident))
                self.topologies.setItem(r, c, item)
        self._show_maxtotalspd()
        self._select_current(self.document.current_processor_id)

    def _fill_processors(self) -> None:
        procs = self.document.machine.processors
        self.processors.setRowCount(len(procs))
        for r, p in enumerate(procs):
            cache = p.cache
            sls = cache.smallloopspeedup.mean if cache and cache.smallloopspeedup else None
            cells = [p.id, p.name or "", len(p.timings), cache.size if cache else None, sls]
            for c, value in enumerate(cells):
                text = "" if value is None else (format_number(value) if c == 4 else str(value))
                item = QTableWidgetItem(text)
                item.setData(Qt.ItemDataRole.UserRole, p.id)
                self.processors.setItem(r, c, item)

    def _show_maxtotalspd(self) -> None:
        engine: Engine = self.document.engine
        if self.document.machine.combinations is None:
            self.maxtotalspd.setText("— (no machine combinations)")
            return
        value = engine.value("mc.maxtotalspd")
        text = value_text(value)
        self.maxtotalspd.setText(text + (" bytes/s" if isinstance(value, (int, float)) else ""))

    def _values_changed(self, change: Change) -> None:
        # A slider step changes one value: redraw only what it can change.
        if (
            change.touches(Machine)
            or change.touches(Processor, "id")
            or change.touches(Processor, "name")
        ):
            self.refresh()
        elif change.touches(Cache) or change.touches(Processor, "cache"):
            self._fill_processors()
        elif change.touches(Processor, "timings"):
            self._update_timing_counts()

    def _update_timing_counts(self) -> None:
        """A timing added or removed changes a processor's count; a changed one, nothing."""
        for r, p in enumerate(self.document.machine.processors):
            item = self.processors.item(r, 2)
            if item is not None and item.text() != str(len(p.timings)):
                item.setText(str(len(p.timings)))

    def _derived_changed(self, values: dict) -> None:
        if "mc.maxtotalspd" in values:
            self._show_maxtotalspd()

    def _edit(self, ref: str, field: ValueField, kind: str) -> None:
        current = getattr(self.document.machine, ref.removeprefix("ma."))
        text = field.text()
        if text == ("" if current is None else str(current)):
            return
        try:
            value = parse_value(kind, text, ref)
            self.document.session.set_value(ref, value, label=f"Set {ref}")
        except (EditError, SessionError) as e:
            field.reject_input(str(e), "" if current is None else str(current))
            return
        field.accept_input()

    def _processor_selected(self) -> None:
        rows = self.processors.selectionModel().selectedRows()
        if rows:
            item = self.processors.item(rows[0].row(), 0)
            self.document.set_current_processor(item.data(Qt.ItemDataRole.UserRole))

    def _select_current(self, proc_id: object) -> None:
        for r in range(self.processors.rowCount()):
            item = self.processors.item(r, 0)
            if item is not None and item.data(Qt.ItemDataRole.UserRole) == proc_id:
                self.processors.blockSignals(True)
                self.processors.selectRow(r)
                self.processors.blockSignals(False)
                return

    def _processor_clicked(self, row: int, _col: int) -> None:
        self.processorActivated.emit(self.processors.item(row, 0).data(Qt.ItemDataRole.UserRole))

    def _topology_clicked(self, row: int, _col: int) -> None:
        kind, ident = self.topologies.item(row, 0).data(Qt.ItemDataRole.UserRole)
        self.topologyActivated.emit(kind, ident)
