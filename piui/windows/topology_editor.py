"""The topology editor: the hardware topology's id, name, routing (every technique,
plug-ins included, with its description), setup time, and the processor type of the
processors selected in the grid view; generating a standard topology over the link
list; adding and removing single links. Every change is one undoable session operation.

Generating: Preview asks the session for the replacement (the new topology and every
consequence: links, processor types added or changed, switches kept or dropped,
mappings that no longer fit and what happens to them), shows all of it, offers the
choices it leaves (each a combo box: answering plans again), and says what Apply would
leave wrong. Apply hands that same replacement to the session: what the preview says is
what Apply does.
"""

from __future__ import annotations

from PySide6.QtWidgets import (
    QComboBox,
    QFormLayout,
    QGroupBox,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QMenu,
    QPlainTextEdit,
    QPushButton,
    QSpinBox,
    QVBoxLayout,
    QWidget,
)

from parasol_core.base.numeric import parse_number, parse_whole
from parasol_core.base.words import counted, plural
from parasol_core.model import Link, Machine, Timing, Topology, VirtualTopology
from parasol_core.session import REDO, UNDO, Change, SessionError
from parasol_core.topology.compare import TopologyChange
from parasol_core.topology.generators import GENERATORS, defaults_for
from parasol_core.topology.names import labelled
from parasol_core.topology.replacement import Choices, Replacement, with_choices
from parasol_core.topology.shape import processor_count
from parasol_core.topology.switches import count_text
from piui.document import Document
from piui.widgets.number_controls import MantissaExponentEdit, ValueField
from piui.widgets.processor_box import ProcessorBox
from piui.widgets.routing_box import RoutingBox
from piui.widgets.scrolling import bring_into_view
from piui.widgets.shortcuts import on_return
from piui.widgets.status_messages import forget_on_change, message_label, show_refusal
from piui.widgets.sweep_menu import offer_sweep, sweep_menu
from piui.widgets.topology_selection import selection_of

SIZES_HELP = {
    "grid": "sizes W [H [D ...]], 1 to 6 of them",
    "torus": "sizes W [H [D ...]], 1 to 6 of them",
    "ring": "processor count",
    "hypercube": "dimension d (2**d processors)",
    "bus": "processor count",
    "clique": "processor count",
    "fattree": "K N: a k-ary n-tree (K**N compute processors, N levels of switches)",
    "fattree2": "D1 U1 D2: leaf switch ports down and up, spine ports down",
    "fattree3": "D1 U1 D2 U2 D3: switch ports down and up, level by level",
    "dragonfly": "G A P H: groups, routers a group, terminals and global links a router",
}


class TopologyEditorWindow(QWidget):
    def __init__(self, document: Document, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.document = document
        self.selection = selection_of(document)
        self.id_edit = QSpinBox()
        self.id_edit.setRange(1, 2**31 - 1)
        self.name_edit = ValueField()
        self.routing = RoutingBox()
        self.setup = MantissaExponentEdit(exponent_range=(-12, 0))
        self.type_box = QComboBox()
        self.set_type = QPushButton("Set for the selected processors")
        self.type_note = QLabel()
        self.type_note.setWordWrap(True)
        self.count_label = QLabel()

        self.kind = QComboBox()
        self.kind.addItems(list(GENERATORS))
        self.sizes = QLineEdit()
        self.gen_latency = QLineEdit()
        self.gen_speed = QLineEdit()
        self.preview_button, self.apply_button = QPushButton("Preview"), QPushButton("Apply")
        self.preview_text = QPlainTextEdit()
        self.preview_text.setReadOnly(True)
        self.preview_text.setMinimumHeight(90)
        self.preview_text.setMaximumHeight(190)
        self.preview_text.setLineWrapMode(QPlainTextEdit.LineWrapMode.WidgetWidth)
        # the choices the previewed replacement leaves, one combo box each
        self.options = QWidget()
        self.options_form = QFormLayout(self.options)
        self.options_form.setContentsMargins(0, 0, 0, 0)
        self.option_boxes: dict[str, QComboBox] = {}
        self.warning = QLabel()
        self.warning.setWordWrap(True)
        self.warning.setStyleSheet("color: #a00000")
        self.warning.hide()
        # the two ends of a new link: numbers, or the topology's processors' names
        self.link_a = ProcessorBox(lambda: self.hardware, what="link end")
        self.link_b = ProcessorBox(lambda: self.hardware, what="link end")
        add_link, self.remove_links = QPushButton("Add link"), QPushButton("Remove selected links")
        self.message = message_label()
        # a name the topology lacks, a name the format cannot hold: why, here
        for field in (self.link_a, self.link_b, self.name_edit):
            field.rejected.connect(lambda text: show_refusal(self.message, text))

        box = QGroupBox("Hardware topology")
        form = QFormLayout(box)
        form.addRow("Id:", self.id_edit)
        form.addRow("Name:", self.name_edit)
        form.addRow("Routing:", self.routing)
        form.addRow("Setup time (s):", self.setup)
        form.addRow("Processors:", self.count_label)
        type_row = QHBoxLayout()
        type_row.addWidget(self.type_box, 1)
        type_row.addWidget(self.set_type)
        form.addRow("Processor type:", type_row)
        form.addRow(self.type_note)

        gen = QGroupBox("Generate a standard topology over the link list")
        gform = QFormLayout(gen)
        gform.addRow("Kind:", self.kind)
        gform.addRow("Sizes:", self.sizes)
        gform.addRow("Link latency (s):", self.gen_latency)
        gform.addRow("Link speed (s/byte):", self.gen_speed)
        for what, field in (
            ("topology", self.kind),
            ("topology", self.sizes),
            ("latency", self.gen_latency),
            ("speed", self.gen_speed),
        ):
            offer_sweep(gform.labelForField(field), lambda w=what: self.sweep_menu(w))
        buttons = QHBoxLayout()
        buttons.addStretch(1)
        buttons.addWidget(self.preview_button)
        buttons.addWidget(self.apply_button)
        gform.addRow(buttons)
        gform.addRow(self.preview_text)
        gform.addRow(self.options)
        gform.addRow(self.warning)

        links = QGroupBox("Single links")
        lrow = QHBoxLayout(links)
        lrow.addWidget(QLabel("between"))
        lrow.addWidget(self.link_a)
        lrow.addWidget(QLabel("and"))
        lrow.addWidget(self.link_b)
        lrow.addWidget(add_link)
        lrow.addStretch(1)
        lrow.addWidget(self.remove_links)

        layout = QVBoxLayout(self)
        layout.setContentsMargins(8, 8, 8, 8)
        layout.addWidget(box)
        layout.addWidget(gen)
        layout.addWidget(links)
        layout.addWidget(self.message)
        layout.addStretch(1)
        self._pending: Replacement | None = None
        self._pending_of: tuple = ()
        self._choices = Choices()

        self.id_edit.editingFinished.connect(self._set_id)
        self.name_edit.editingFinished.connect(self._set_name)
        self.routing.routingChosen.connect(
            lambda name: self._set("routing", name, "Routing of the hardware topology")
        )
        self.setup.valueEdited.connect(
            lambda v, key: self._set("setup", Timing(v), "Setup time", merge=key)
        )
        self.set_type.clicked.connect(self.set_selected_type)
        self.kind.currentIndexChanged.connect(self._kind_changed)
        self.preview_button.clicked.connect(self.preview)
        on_return(self.preview_button, self.sizes, self.gen_latency, self.gen_speed)
        self.apply_button.clicked.connect(self.apply)
        add_link.clicked.connect(lambda: self.add_link(self.link_a.value(), self.link_b.value()))
        self.remove_links.clicked.connect(self.remove_selected_links)
        self.selection.changed.connect(self._show_selection)
        document.modelReset.connect(self.reset)
        document.structureChanged.connect(self.refresh)
        document.valuesChanged.connect(self._values_changed)
        document.changed.connect(self._forget_stale)
        forget_on_change(document, self, self.message)
        self.reset()

    @property
    def hardware(self) -> Topology | None:
        return self.document.machine.hardware()

    def sweep_menu(self, what: str) -> QMenu:
        """The context menu of the generator's rows: sweep the hardware topology's kind and
        sizes (``topology T``) or its links' latency or speed (File > Sweep…)."""
        hw = self.hardware
        change = None
        if hw is not None:
            change = f"topology {hw.id}" if what == "topology" else f"tl({hw.id})(*).{what}"
        return sweep_menu(self, self.document, change)

    # ------------------------------------------------------------------ showing

    def reset(self) -> None:
        """Another model: the generator starts from its hardware topology (kind, sizes,
        link timings), with no preview pending."""
        hw = self.hardware
        if hw is not None:
            d = defaults_for(hw)
            self.kind.blockSignals(True)
            self.kind.setCurrentText(d.kind)
            self.kind.blockSignals(False)
            self.sizes.setText(" ".join(map(str, d.sizes)))
            self.gen_latency.setText(f"{d.latency:g}" if d.latency is not None else "")
            self.gen_speed.setText(f"{d.speed:g}" if d.speed is not None else "")
        self._kind_changed()
        self._choices = Choices()
        self.preview_text.clear()
        self._show_options(None)
        self.refresh()

    def refresh(self, *_: object) -> None:
        """Show the hardware topology as it is now; a preview made of it before a change
        of its structure no longer applies."""
        hw = self.hardware
        self.setEnabled(hw is not None)
        if self._pending is not None and self._pending_of != self._basis():
            self._pending = None
            self.apply_button.setEnabled(False)
            self.preview_text.setPlainText("The topology changed since the preview: "
                                           "Preview again.")  # fmt: skip
            self._show_options(None)
        if hw is None:
            return
        self.id_edit.blockSignals(True)
        self.id_edit.setValue(hw.id or 1)
        self.id_edit.blockSignals(False)
        if not self.name_edit.hasFocus():
            self.name_edit.setText(hw.name or "")
        self.routing.set_routing(hw.routing)
        setup = hw.setup.mean if hw.setup is not None else None
        if self.setup.value() != setup:
            self.setup.setValue(setup)
        self.type_box.clear()
        for proc in self.document.machine.processors:
            self.type_box.addItem(f"{proc.id}: {proc.name or ''}", proc.id)
        n = processor_count(hw)
        self.count_label.setText(count_text(self.document.machine, hw))
        for box in (self.link_a, self.link_b):
            box.setRange(1, max(n, 1))
            box.refresh()  # this model's names, or numbers
        self.link_b.setValue(min(2, n))
        self._show_selection()

    def _basis(self) -> tuple:
        """The version of what a preview is made of (the session's rule: the hardware
        topology, its links, id, setup time, types, routing and shape, the switch
        types, and the virtual topologies; not its name)."""
        hw = self.hardware
        return self.document.session.replacement_version(hw) if hw is not None else ()

    def _values_changed(self, change: Change) -> None:
        if (change.touches(Topology) or change.touches(Machine) or change.touches(Link)
                or change.touches(VirtualTopology)):  # fmt: skip
            self.refresh()

    def _forget_stale(self, change: Change) -> None:
        """What the preview box says of a replacement done ("applied") speaks of the model
        as it was: an undo or redo takes it away (a pending preview has its own rule,
        :meth:`refresh`)."""
        if change.reason in (UNDO, REDO) and self._pending is None:
            self.preview_text.clear()

    def _show_selection(self) -> None:
        procs, links = self.selection.processors, self.selection.links
        self.set_type.setEnabled(bool(procs))
        self.remove_links.setEnabled(bool(links))
        hw = self.hardware
        if hw is not None and procs:
            types = sorted({hw.types.get(p) for p in procs}, key=str)
            self.type_note.setText(f"{counted(len(procs), 'processor')} selected in the grid view, "
                                   f"of {plural('type', len(types))} {', '.join(map(str, types))}.")  # fmt: skip
        else:
            self.type_note.setText("Select processors in the grid view to set their type.")

    def _kind_changed(self, *_: object) -> None:
        self.sizes.setToolTip(SIZES_HELP.get(self.kind.currentText(), ""))
        self.sizes.setPlaceholderText(SIZES_HELP.get(self.kind.currentText(), ""))
        self._pending = None
        self.apply_button.setEnabled(False)

    # ------------------------------------------------------------------ edits

    def _set(self, attr: str, value: object, label: str, merge: object = None) -> None:
        hw = self.hardware
        if hw is None:
            return
        try:
            self.document.session.set_value(f"to({hw.id}).{attr}", value, label=label,
                                            merge=merge)  # fmt: skip
            self.message.clear()
        except (SessionError, ValueError) as e:
            self.refresh()
            show_refusal(self.message, f"{label} not changed: {e}")

    def _set_id(self) -> None:
        hw = self.hardware
        if hw is not None and self.id_edit.value() != hw.id:
            self._set("id", self.id_edit.value(), "Topology id")

    def _set_name(self) -> None:
        hw = self.hardware
        if hw is None or self.name_edit.text() == (hw.name or ""):
            return
        try:
            self.document.session.set_value(f"to({hw.id}).name", self.name_edit.text(),
                                            label="Topology name")  # fmt: skip
            self.message.clear()
        except (SessionError, ValueError) as e:  # the field marked, the model's name back
            self.name_edit.reject_input(f"Topology name not changed: {e}", hw.name or "")

    def set_selected_type(self) -> None:
        hw, t = self.hardware, self.type_box.currentData()
        procs = self.selection.processors
        if hw is None or t is None or not procs:
            return
        with self.document.session.group(
            f"Processor type {t} for {counted(len(procs), 'processor')}"
        ):
            for p in procs:
                if hw.types.get(p) != t:
                    self.document.session.set_value(f"tp({hw.id})({p})", t)

    def planned(self) -> Replacement:
        """The replacement the generate fields describe, with the choices made so far
        (ValueError when the fields do not describe one)."""
        sizes = [
            parse_whole(s, 1, what="a size") for s in self.sizes.text().replace("x", " ").split()
        ]
        latency = parse_number(self.gen_latency.text(), "a link latency in seconds")
        speed = parse_number(self.gen_speed.text(), "a link speed in seconds per byte")
        return self.document.session.plan_generation(
            self.hardware.id, self.kind.currentText(), sizes, latency, speed, self._choices
        )

    def generated(self) -> Topology:
        """The topology the generate fields describe (ValueError when they do not)."""
        return self.planned().new

    @property
    def plan(self) -> Replacement | None:
        """The replacement previewed and not yet applied (what Apply will do)."""
        return self._pending

    def preview(self) -> TopologyChange | None:
        """Plan the replacement and show every consequence of it, the choices it leaves
        and what it would leave wrong; returns what it does to the links."""
        hw = self.hardware
        if hw is None:
            return None
        bring_into_view(self.preview_text)  # the answer below, once laid out
        try:
            plan = self.planned()
        except (ValueError, TypeError, SessionError) as e:
            self.preview_text.setPlainText(f"cannot generate: {e}")
            self._pending = None
            self.apply_button.setEnabled(False)
            self._show_options(None)
            return None
        self._pending, self._pending_of = plan, plan.basis
        self.apply_button.setEnabled(not plan.is_empty)
        self.preview_text.setPlainText("\n".join(plan.summary()))
        self._show_options(plan)
        return plan.links

    def _show_options(self, plan: Replacement | None) -> None:
        """A combo box for each choice the plan leaves (answering plans again), and what
        Apply would leave wrong."""
        while self.options_form.rowCount():  # taken, then deleted later: a box being
            row = self.options_form.takeRow(0)  # answered may be the one asking
            for item in (row.labelItem, row.fieldItem):
                if item is not None and item.widget() is not None:
                    item.widget().hide()
                    item.widget().deleteLater()
        self.option_boxes = {}
        for option in plan.options if plan is not None else []:
            box = QComboBox()
            box.setObjectName(f"option-{option.key}")
            for value, words in option.answers:
                box.addItem(words, value)
            box.setCurrentIndex(box.findData(option.chosen))
            box.activated.connect(lambda _i, key=option.key, b=box: self._choose(key, b))
            question = QLabel(option.question[:1].upper() + option.question[1:] + ":")
            question.setWordWrap(True)
            self.options_form.addRow(question)
            self.options_form.addRow(box)
            self.option_boxes[option.key] = box
        self.options.setVisible(bool(self.option_boxes))
        problems = plan.problems() if plan is not None else []
        self.warning.setText(
            "Apply would leave the model with errors: " + "; ".join(problems)
            + (" (choose otherwise above to avoid them)" if plan and plan.options else "")
            if problems else ""
        )  # fmt: skip
        self.warning.setVisible(bool(problems))

    def _choose(self, key: str, box: QComboBox) -> None:
        """An answer to one of the preview's choices: plan again with it."""
        if self._pending is None:
            return
        self._choices = with_choices(self._pending, **{key: box.currentData()})
        self.preview()

    def apply(self) -> None:
        """Do what the preview said (the session refuses it if the model changed)."""
        hw = self.hardware
        if hw is None or self._pending is None:
            return
        plan, self._pending = self._pending, None  # (not a change "since the preview")
        self.apply_button.setEnabled(False)
        self._show_options(None)
        try:
            self.document.session.apply_replacement(plan)
        except SessionError as e:
            self.preview_text.setPlainText(f"not applied: {e}")
            return
        self.preview_text.appendPlainText("\napplied (Edit > Undo takes it back)")

    def add_link(self, a: int, b: int) -> Link | None:
        hw = self.hardware
        if hw is None:
            return None
        try:
            link = self.document.session.new_link(hw.id, a, b)
        except SessionError as e:
            show_refusal(self.message, f"link not added: {e}")
            return None
        ends = labelled(hw, (a, b))  # with their names, where the topology keeps them
        self.message.setText(f"link {link.id} added between {ends[0]} and {ends[1]}")
        return link

    def remove_selected_links(self) -> None:
        hw = self.hardware
        links = self.selection.links
        if hw is None or not links:
            return
        with self.document.session.group(f"Remove {counted(len(links), 'link')}"):
            for lid in links:
                self.document.session.remove_link(hw.id, lid)
        self.selection.set(hw.id, self.selection.processors, ())
