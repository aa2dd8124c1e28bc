"""The "Processor master": the processor types (add, duplicate, remove, id and name) and,
for the selected one, the way into its sections: Instructions, Cache, Combinations and
Other (report section 3.2.1)."""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QCheckBox,
    QFormLayout,
    QGroupBox,
    QHBoxLayout,
    QListWidget,
    QListWidgetItem,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from parasol_core.model import INT, STR, Cache, Processor, Timing
from parasol_core.session import Change, SessionError
from parasol_core.session.edit import EditError, parse_value
from piui.document import Document
from piui.widgets.number_controls import ValueField
from piui.widgets.status_messages import confirm, forget_on_change, message_label, show_refusal

SECTIONS = [
    ("groups", "Instruction groups…"),
    ("instructions", "Individual instructions…"),
    ("cache", "Cache…"),
    ("combinations", "Combinations…"),
]


class ProcessorMaster(QWidget):
    openRequested = Signal(str)  # one of the SECTIONS keys

    def __init__(self, document: Document, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.document = document
        self.list = QListWidget()
        self.add_button = QPushButton("Add")
        self.duplicate_button = QPushButton("Duplicate")
        self.remove_button = QPushButton("Remove")
        buttons = QHBoxLayout()
        for b in (self.add_button, self.duplicate_button, self.remove_button):
            buttons.addWidget(b)
        self.id_field = ValueField()
        self.name_field = ValueField()
        other = QGroupBox("Other")
        form = QFormLayout(other)
        form.addRow("Id:", self.id_field)
        form.addRow("Name:", self.name_field)
        # docs/decisions.md, "Switches": a type whose processors only forward messages
        self.switch_box = QCheckBox("Switch (forwards only)")
        self.switch_box.setToolTip(
            "Processors of this type are switches or routers: routes pass through them; "
            "communication patterns, mappings and compute-processor counts leave them out "
            "(written as '# piui: role = switch' in the processor section)"
        )
        form.addRow(self.switch_box)
        self.message = message_label()
        form.addRow(self.message)
        for field in (self.id_field, self.name_field):
            field.rejected.connect(lambda text: show_refusal(self.message, text))
        # asked before an edit that breaks something; replaceable so tests can answer
        self.confirm: Callable[[str, str, list[str]], bool] = lambda title, text, details: confirm(
            self, title, text, details
        )
        sections = QGroupBox("Sections")
        section_layout = QVBoxLayout(sections)
        self.section_buttons: dict[str, QPushButton] = {}
        for key, label in SECTIONS:
            b = QPushButton(label)
            b.clicked.connect(lambda _=False, k=key: self.openRequested.emit(k))
            section_layout.addWidget(b)
            self.section_buttons[key] = b
        layout = QVBoxLayout(self)
        layout.addWidget(self.list, 1)
        layout.addLayout(buttons)
        layout.addWidget(other)
        layout.addWidget(sections)

        self.list.currentItemChanged.connect(self._selected)
        self.add_button.clicked.connect(self.add)
        self.duplicate_button.clicked.connect(self.duplicate)
        self.remove_button.clicked.connect(self.remove)
        self.id_field.editingFinished.connect(lambda: self._edit("id", self.id_field, INT))
        self.name_field.editingFinished.connect(lambda: self._edit("name", self.name_field, STR))
        self.switch_box.toggled.connect(self._set_switch)
        document.modelReset.connect(self.refresh)
        document.structureChanged.connect(self.refresh)
        document.valuesChanged.connect(self._values_changed)
        document.currentProcessorChanged.connect(self._follow)
        forget_on_change(document, self, self.message)
        self.refresh()

    def refresh(self) -> None:
        self.list.blockSignals(True)
        self.list.clear()
        for p in self.document.machine.processors:
            kind = " (switch)" if p.is_switch else ""
            item = QListWidgetItem(f"{p.id}: {p.name or '(no name)'}{kind}")
            item.setData(Qt.ItemDataRole.UserRole, p.id)
            self.list.addItem(item)
        self.list.blockSignals(False)
        self._follow(self.document.current_processor_id)

    def _follow(self, proc_id: object) -> None:
        for i in range(self.list.count()):
            if self.list.item(i).data(Qt.ItemDataRole.UserRole) == proc_id:
                self.list.blockSignals(True)
                self.list.setCurrentRow(i)
                self.list.blockSignals(False)
        proc = self.document.current_processor()
        has = proc is not None
        for w in (self.id_field, self.name_field, self.switch_box, self.duplicate_button,
                  self.remove_button, *self.section_buttons.values()):  # fmt: skip
            w.setEnabled(has)
        self.switch_box.blockSignals(True)
        self.switch_box.setChecked(has and proc.is_switch)
        self.switch_box.blockSignals(False)
        self.id_field.setText("" if not has or proc.id is None else str(proc.id))
        self.name_field.setText("" if not has else proc.name or "")
        self.id_field.accept_input()
        self.name_field.accept_input()

    def _values_changed(self, change: Change) -> None:
        if any(change.touches(Processor, f) for f in ("id", "name", "role")):
            self.refresh()

    def _selected(self, current: QListWidgetItem | None, _previous: object) -> None:
        if current is not None:
            self.document.set_current_processor(current.data(Qt.ItemDataRole.UserRole))

    def add(self) -> None:
        session = self.document.session
        new_id = session.next_processor_id()
        session.add_processor(Processor(new_id, f"processor {new_id}", {},
                                        Cache(1, None, Timing(1.0))))  # fmt: skip

    def duplicate(self) -> None:
        proc = self.document.current_processor()
        if proc is not None:
            self.document.session.duplicate_processor(proc.id)

    def remove(self) -> None:
        proc = self.document.current_processor()
        if proc is None:
            return
        users = self.document.session.processor_users(proc.id)
        if users and not self.confirm(
            "Remove processor type",
            f"Processor type {proc.id} is used; removing it breaks these:",
            users,
        ):
            return
        self.document.session.remove_processor(proc.id)

    def _set_switch(self, on: bool) -> None:
        """Mark the selected type as a switch, or as a processor that runs programs."""
        proc = self.document.current_processor()
        if proc is None or proc.is_switch == on:
            return
        label = "Mark processor type as a switch" if on else "Mark processor type as compute"
        try:
            self.document.session.set_value(f"pr({proc.id}).role", "switch" if on else None,
                                            label=label)  # fmt: skip
        except (EditError, SessionError) as e:
            show_refusal(self.message, str(e))
            self._follow(proc.id)

    def _edit(self, field: str, widget: ValueField, kind: str) -> None:
        proc = self.document.current_processor()
        if proc is None:
            return
        current = getattr(proc, field)
        current_text = "" if current is None else str(current)
        if widget.text() == current_text:
            return
        session = self.document.session
        try:
            value = parse_value(kind, widget.text(), f"processor {field}")
            if field == "id":
                session.renumber_processor(proc.id, value)
            else:
                session.set_value(f"pr({proc.id}).{field}", value, label=f"Set processor {field}")
        except (EditError, SessionError) as e:
            widget.reject_input(str(e), current_text)
            return
