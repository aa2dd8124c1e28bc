"""The "Machine Model" overview: the machine's id and name, its processor types and its
topologies at a glance. It is the main window's central widget."""

from __future__ import annotations

from PySide6.QtCore import QModelIndex, Qt, Signal
from PySide6.QtWidgets import (
    QAbstractItemView,
    QFormLayout,
    QGroupBox,
    QHeaderView,
    QLabel,
    QTableView,
    QVBoxLayout,
    QWidget,
)

from parasol_core.expr.engine import Engine
from parasol_core.model import INT, STR, Cache, Machine, Processor
from parasol_core.session import Change, SessionError
from parasol_core.session.edit import EditError, parse_value
from piui.document import Document
from piui.widgets.labels import value_text
from piui.widgets.models import ROW_KEY, ColumnsModel, processor_types_model, topologies_model
from piui.widgets.number_controls import ValueField
from piui.widgets.status_messages import forget_on_change
from piui.widgets.table_columns import stretch_not_below_contents


class MachineOverview(QWidget):
    processorActivated = Signal(int)
    topologyActivated = Signal(str, int)

    def __init__(self, document: Document, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.document = document
        self._timing_counts: dict[int | None, int] = {}
        self.id_field = ValueField()
        self.name_field = ValueField()
        self.maxtotalspd = QLabel()
        self.maxtotalspd.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        form = QFormLayout()
        form.addRow("Machine id:", self.id_field)
        form.addRow("Name:", self.name_field)
        form.addRow("Max. total transfer speed:", self.maxtotalspd)

        self.processor_model = processor_types_model(lambda: self.document.machine)
        self.topology_model = topologies_model(lambda: self.document.machine)
        self.processors = self._table(self.processor_model, "Name")
        self.topologies = self._table(self.topology_model, "Name")
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
        self.processors.doubleClicked.connect(self._processor_clicked)
        self.processors.selectionModel().selectionChanged.connect(self._processor_selected)
        self.topologies.doubleClicked.connect(self._topology_clicked)
        document.modelReset.connect(self.refresh)
        forget_on_change(document, self, None)
        document.structureChanged.connect(self.refresh)
        document.valuesChanged.connect(self._values_changed)
        document.derivedChanged.connect(self._derived_changed)
        document.currentProcessorChanged.connect(self._select_current)
        self.refresh()

    @staticmethod
    def _table(model: ColumnsModel, stretch: str) -> QTableView:
        """A read-only table of ``model``, its columns as wide as their contents; the
        column headed ``stretch`` (the names) takes the width left over, never less than
        its names' (a narrow dock scrolls the table instead of cutting them). Stretching the
        last section gave a wide window's width to "Small loop speedup" and "Shape"
        (the Program layout widens this dock), far from the values in the row."""
        table = QTableView()
        table.setModel(model)
        table.verticalHeader().hide()
        table.setTabKeyNavigation(False)  # Tab moves on to the next control, not cell by cell
        table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        table.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        header = table.horizontalHeader()
        header.setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
        header.setStretchLastSection(False)
        stretch_not_below_contents(table, model.headers.index(stretch))
        return table

    def refresh(self) -> None:
        m = self.document.machine
        self.id_field.setText("" if m.id is None else str(m.id))
        self.name_field.setText(m.name or "")
        self.id_field.accept_input()
        self.name_field.accept_input()
        self.processor_model.reset()
        self._timing_counts = {p.id: len(p.timings) for p in m.processors}
        self.topology_model.reset()
        self._show_maxtotalspd()
        self._select_current(self.document.current_processor_id)

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
            self.processor_model.rows_changed(columns=[3, 4])
        elif change.touches(Processor, "timings"):
            # the column counts timings: only a timing added or removed changes it, not
            # the value steps of a slider drag (each would repaint the table)
            counts = {p.id: len(p.timings) for p in self.document.machine.processors}
            if counts != self._timing_counts:
                self._timing_counts = counts
                self.processor_model.rows_changed(columns=[2])

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

    def _processor_selected(self, *_: object) -> None:
        rows = self.processors.selectionModel().selectedRows()
        if rows:
            self.document.set_current_processor(rows[0].data(ROW_KEY))

    def _select_current(self, proc_id: object) -> None:
        row = self.processor_model.row_of(proc_id)
        if row is not None:
            self.processors.selectionModel().blockSignals(True)
            self.processors.selectRow(row)
            self.processors.selectionModel().blockSignals(False)

    def _processor_clicked(self, index: QModelIndex) -> None:
        self.processorActivated.emit(index.data(ROW_KEY))

    def _topology_clicked(self, index: QModelIndex) -> None:
        kind, ident = index.data(ROW_KEY)
        self.topologyActivated.emit(kind, ident)

    def select_topology(self, kind: str, ident: int | None) -> bool:
        """Select a topology's row (``kind`` is hardware or virtual); False if absent."""
        for r, obj in enumerate(self.topology_model.rows()):
            if obj[0] == kind and (ident is None or obj[1].id == ident):
                self.topologies.setFocus()
                self.topologies.selectRow(r)
                return True
        return False
