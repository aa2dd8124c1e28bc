"""The mapping editor: a virtual topology's routing, the mapping schemes, and the
hardware grid on which a virtual processor is dragged onto another hardware processor
to swap them (so that a 2D torus can be drawn onto a 4 x 4 grid by hand).

Each processor shows the virtual processor mapped onto it; the virtual links are dotted;
the hardware links carrying the most virtual links are highlighted. Dilation (max,
mean) and congestion come from the core, for the mapping under the cursor while
dragging and for the stored one after every edit: kept up to date move by move
(:class:`MappingMetrics`, equal to :func:`mapping_quality` at every step), so that a
swap reroutes only the virtual links of the two processors moved. The virtual links
and the metrics are rebuilt when anything but the mapping changes.
"""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtGui import QResizeEvent
from PySide6.QtWidgets import (
    QComboBox,
    QDialog,
    QFormLayout,
    QHBoxLayout,
    QLabel,
    QListWidget,
    QPushButton,
    QScrollArea,
    QSizePolicy,
    QSpinBox,
    QSplitter,
    QVBoxLayout,
    QWidget,
)

from parasol_core.base.limits import MAX_ID
from parasol_core.base.words import counted
from parasol_core.model import Link, Topology, VirtualTopology
from parasol_core.session import Change, SessionError
from parasol_core.topology.errors import RoutingError
from parasol_core.topology.mapping import (
    MappingMetrics,
    MappingQuality,
    forwarding_figures,
    make_mapping,
    mapping_quality,
    mapping_schemes,
    mapping_text,
    parse_mapping,
    scheme_mappings,
    scheme_of,
    swap,
)
from parasol_core.topology.names import labelled
from parasol_core.topology.shape import parse_shape, processor_count
from parasol_core.topology.switches import compute_count, switch_mask
from parasol_core.topology.virtual import (
    default_shape,
    default_virtual_shape,
    virtual_links,
    virtual_problem,
    virtual_shape,
)
from piui.document import Document
from piui.widgets.add_virtual_dialog import AddVirtualDialog, shape_text
from piui.widgets.number_controls import ValueField
from piui.widgets.routing_box import RoutingBox
from piui.widgets.status_messages import forget_on_change, message_label, show_refusal
from piui.widgets.topology_canvas import TopologyCanvas
from piui.widgets.topology_selection import selection_of

#: the least the mapping picture is given, in pixels (a small network)
MIN_PICTURE = (320, 320)
#: the most its minimum grows to with the processor count (see picture_minimum)
MAX_PICTURE_MINIMUM = (480, 480)


def picture_minimum(count: int) -> tuple[int, int]:
    """The least size of the mapping picture of ``count`` hardware processors: enough
    that processors drawn side by side are a drag target apart (about 13 px on the 108
    of the dragonfly sample, which was a 9 px thumbnail before), up to
    :data:`MAX_PICTURE_MINIMUM`; the picture takes whatever more the window gives it."""
    side = max(MIN_PICTURE[1], min(MAX_PICTURE_MINIMUM[1], round(46 * max(count, 1) ** 0.5)))
    return side, side


SCHEME_HELP = {
    "identity": "virtual v on hardware v",
    "row-major": "virtual coordinates kept, in the corner of the hardware grid",
    "snake": "along the grid back and forth: consecutive numbers are neighbours",
    "ring": "a closed tour of the grid: every ring link one hop where possible",
    "random": "a random placement from the seed",
    "gray": "reflected Gray code: a hypercube's rings and grids land one hop apart",
}


class MappingEditorWindow(QWidget):
    def __init__(self, document: Document, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.document = document
        self.virtual_box = QComboBox()
        add, remove = QPushButton("Add…"), QPushButton("Remove")
        self.add_button, self.remove_button = add, remove
        remove.setToolTip("remove the virtual topology shown, and its mapping")
        add.setToolTip("add a virtual topology: its routing, processor count and name")
        self.routing = RoutingBox()
        self.routing.setToolTip("which virtual links the virtual topology has")
        self.name_edit = ValueField()
        self.id_edit = QSpinBox()
        self.id_edit.setRange(1, MAX_ID)
        self.count_edit = QSpinBox()
        self.count_edit.setRange(1, MAX_ID)
        self.count_edit.setToolTip("virtual processors: the mapping keeps those that stay")
        self.shape_edit = ValueField()
        self.shape_edit.setToolTip(
            "the grid the routing lays the virtual processors on: 1 to 6 sizes whose product "
            "is the processor count ('9 8', '6 4 3'); press Enter"
        )
        self.mapping_edit = ValueField()
        self.mapping_edit.setToolTip(
            "the hardware processor of virtual processor 1, 2, … in order (a number, or a "
            "name of the topology's processors); type or paste a permutation and press "
            "Enter ('-' leaves one as it is)"
        )
        # an error says where (the field marked, its name in the message) and why, in
        # the message line's red, as every editor says one
        self.message = message_label()
        for field in (self.name_edit, self.shape_edit, self.mapping_edit):
            field.rejected.connect(lambda text: show_refusal(self.message, text))
        self.schemes = QListWidget()
        for name in mapping_schemes():
            self.schemes.addItem(f"{name} — {SCHEME_HELP.get(name, '')}")
            self.schemes.item(self.schemes.count() - 1).setData(Qt.ItemDataRole.UserRole, name)
        self.schemes.setCurrentRow(0)
        self.schemes.setMaximumHeight(112)
        self.seed = QSpinBox()
        self.seed.setRange(0, 2**31 - 1)
        self.seed.setValue(1)
        self.seed.setToolTip("seed of the random mapping")
        self.apply_scheme_button = apply_scheme = QPushButton("Apply scheme")
        self.metrics = QLabel()
        self.metrics.setWordWrap(True)
        self.metrics.setTextFormat(Qt.TextFormat.RichText)
        self.preview = QLabel()
        self.preview.setWordWrap(True)
        self.preview.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Preferred)
        # the hardware processor under the cursor: its number, its name where the
        # topology keeps one (a SimGrid platform's host), and who is mapped there
        self.hover_info = QLabel()
        self.hover_info.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Preferred)
        self.canvas = TopologyCanvas()
        self.canvas.swap_mode = True
        # large enough to drag a virtual processor onto another (picture_minimum); it
        # takes every pixel the window gives it beyond that
        self.canvas.setMinimumSize(*MIN_PICTURE)
        self.canvas.setToolTip("drag a virtual processor onto another hardware processor to "
                               "swap them")  # fmt: skip

        top = QHBoxLayout()
        top.addWidget(QLabel("Virtual topology:"))
        top.addWidget(self.virtual_box, 1)
        top.addWidget(add)
        top.addWidget(remove)
        form = QFormLayout()
        form.addRow("Name:", self.name_edit)
        ident = QHBoxLayout()
        ident.addWidget(self.id_edit)
        ident.addWidget(QLabel("processors:"))
        ident.addWidget(self.count_edit)
        ident.addStretch(1)
        form.addRow("Id:", ident)
        form.addRow("Shape:", self.shape_edit)
        form.addRow("Routing (virtual links):", self.routing)
        form.addRow("Mapping:", self.mapping_edit)
        seed_row = QHBoxLayout()
        seed_row.addWidget(QLabel("seed"))
        seed_row.addWidget(self.seed)
        seed_row.addStretch(1)
        seed_row.addWidget(apply_scheme)
        side = QWidget()
        side_layout = QVBoxLayout(side)
        side_layout.setContentsMargins(0, 0, 0, 0)
        side_layout.addLayout(form)
        side_layout.addWidget(QLabel("Mapping schemes:"))
        side_layout.addWidget(self.schemes)
        side_layout.addLayout(seed_row)
        side_layout.addWidget(self.message)
        side_layout.addWidget(self.metrics)
        side_layout.addWidget(self.preview)
        side_layout.addWidget(self.hover_info)
        side_layout.addStretch(1)
        # side by side when the window is wide, the picture under the fields when it is
        # tall (resizeEvent); the picture gets what the window grows by
        self.split = split = QSplitter(Qt.Orientation.Vertical)
        split.addWidget(side)
        split.addWidget(self.canvas)
        split.setStretchFactor(0, 0)
        split.setStretchFactor(1, 1)
        split.setCollapsible(1, False)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(6, 6, 6, 6)
        layout.addLayout(top)
        layout.addWidget(split, 1)
        self.quality: MappingQuality | None = None
        # the virtual links and the metrics of the virtual topology `_state_for`
        self._state_for: VirtualTopology | None = None
        self._pairs: list[tuple[int, int]] = []
        self._metrics: MappingMetrics | None = None
        self._metrics_error: RoutingError | None = None
        # each scheme's mapping of (virtual topology `_state_for`, seed)
        self._schemes_for: tuple = ()
        self._schemes: dict[str, dict[int, int]] = {}

        self.virtual_box.currentIndexChanged.connect(self._virtual_chosen)
        self.canvas.hovered.connect(self._hovered)
        self.routing.routingChosen.connect(self._set_routing)
        self.name_edit.editingFinished.connect(self._set_name)
        self.id_edit.editingFinished.connect(self._set_id)
        self.count_edit.editingFinished.connect(self._set_count)
        self.shape_edit.editingFinished.connect(self._set_shape)
        self.mapping_edit.returnPressed.connect(self.type_mapping)
        self.seed.valueChanged.connect(
            lambda _seed: self.virtual() and self._show_scheme(self.virtual())
        )
        apply_scheme.clicked.connect(lambda: self.apply_scheme())
        self.schemes.itemDoubleClicked.connect(lambda _i: self.apply_scheme())
        self.schemes.currentItemChanged.connect(
            lambda *_: self.apply_scheme_button.setEnabled(self.schemes.currentItem() is not None)
        )
        add.clicked.connect(lambda: self.add_virtual())
        remove.clicked.connect(lambda: self.remove_virtual())
        self.canvas.swapRequested.connect(self.swap)
        self.canvas.dragMoved.connect(self._drag_preview)
        self.selection = selection_of(document)
        self.selection.showRequested.connect(
            lambda kind, ident: self.select_virtual(ident) if kind == "virtual" else None
        )
        self.selection.changed.connect(self._follow_choice)
        forget_on_change(document, self, self.message)
        document.modelReset.connect(self.rebuild)
        document.structureChanged.connect(self.rebuild)
        document.valuesChanged.connect(self._values_changed)
        self.rebuild()

    def resizeEvent(self, event: QResizeEvent) -> None:
        """The picture beside the fields or under them, whichever gives it more room
        (its smaller side), and beside them only when both fit across."""
        super().resizeEvent(event)
        width, height = self._room()
        side = self.split.widget(0).minimumSizeHint()
        across = width - side.width() - self.split.handleWidth() - 12
        beside = min(across, height)
        under = min(width, height - side.height() - self.split.handleWidth() - 40)
        wide = across >= self.canvas.minimumWidth() and beside > under
        want = Qt.Orientation.Horizontal if wide else Qt.Orientation.Vertical
        if self.split.orientation() != want:
            self.split.setOrientation(want)

    def _room(self) -> tuple[int, int]:
        """The size the window is shown in: a scroll area's viewport when it is in one
        (its own size is then at least its minimum, which the orientation changes)."""
        viewport = self.parentWidget()
        if viewport is not None and isinstance(viewport.parentWidget(), QScrollArea):
            return viewport.width(), viewport.height()
        return self.width(), self.height()

    # ------------------------------------------------------------------ model

    def virtual(self) -> VirtualTopology | None:
        vid = self.virtual_box.currentData()
        return self.document.machine.virtual(vid) if vid is not None else None

    def select_virtual(self, virt_id: int) -> None:
        """Look at virtual topology ``virt_id`` (the grid view follows)."""
        if self.document.machine.virtual(virt_id) is not None:
            self.document.session.choose_virtual(virt_id)

    def _virtual_chosen(self) -> None:
        vid = self.virtual_box.currentData()
        if vid is not None and vid != self.selection.virtual_id:
            self.document.session.choose_virtual(vid)
        self.refresh()

    def _follow_choice(self) -> None:
        at = self.virtual_box.findData(self.selection.virtual_id)
        if at >= 0 and at != self.virtual_box.currentIndex():
            self.virtual_box.setCurrentIndex(at)

    def rebuild(self) -> None:
        """The virtual topologies as the model has them, the shared one chosen."""
        self.virtual_box.blockSignals(True)
        self.virtual_box.clear()
        for v in self.document.machine.virtuals:
            self.virtual_box.addItem(f"{v.id}: {v.name or ''} ({v.routing}, "
                                     f"{counted(v.processor_count, 'processor')})", v.id)  # fmt: skip
        at = self.virtual_box.findData(self.selection.virtual_id)
        self.virtual_box.setCurrentIndex(at if at >= 0 else 0)
        self.virtual_box.blockSignals(False)
        self._draw_hardware()
        self._state_for = None
        self.refresh()

    def _draw_hardware(self) -> None:
        """The hardware topology, its switches drawn apart (they take no mapping)."""
        hw = self.document.machine.hardware()
        self.canvas.set_topology(hw, switch_mask(self.document.machine, hw) if hw else None)
        self.canvas.setMinimumSize(*picture_minimum(processor_count(hw) if hw else 0))

    def _values_changed(self, change: Change) -> None:
        if change.touches(Topology) or change.touches(Link):
            self._draw_hardware()
            self._state_for = None
            self.refresh()
        elif change.touches(VirtualTopology):
            if not change.mapping_only:
                self._state_for = None
            self.refresh()

    def _follow(self, v: VirtualTopology) -> None:
        """Bring the virtual links and the metrics up to date with ``v``: rebuilt for
        another virtual topology or after a change to more than the mapping, else moved
        along with the mapping's changed entries only."""
        if self._state_for is not v:
            self._state_for = v
            try:
                self._pairs = virtual_links(self.document.machine, v, directed=False)
            except RoutingError:
                self._pairs = []
            self._metrics = None
        if self._metrics is not None:
            try:
                self._metrics.sync(v.mapping)
                return
            except RoutingError as e:
                self._metrics, self._metrics_error = None, e
                return
        try:
            self._metrics, self._metrics_error = MappingMetrics(self.document.machine, v), None
        except RoutingError as e:
            self._metrics, self._metrics_error = None, e

    def refresh(self, *_: object) -> None:
        v = self.virtual()
        self.preview.clear()
        self.hover_info.clear()
        for w in (self.name_edit, self.id_edit, self.count_edit, self.shape_edit,
                  self.mapping_edit, self.remove_button):  # fmt: skip
            w.setEnabled(v is not None)
        if v is None:  # nothing of another model's virtual topology stays in sight
            self.name_edit.clear()
            self.mapping_edit.clear()
            self.shape_edit.clear()
            self.id_edit.clear()
            self.count_edit.clear()
            self.schemes.setCurrentRow(-1)
            self.routing.setEnabled(False)
            self.canvas.set_virtual([], {})
            self.canvas.set_labels(None)
            self.canvas.set_hot_links(())
            self.metrics.setText("No virtual topology: add one.")
            self.quality = None
            self._state_for = None
            return
        self.routing.setEnabled(True)
        self.routing.set_routing(v.routing)
        if not self.name_edit.hasFocus():
            self.name_edit.setText(v.name or "")
        for box, value in (
            (self.id_edit, v.id or 1),
            (self.count_edit, v.processor_count or len(v.mapping) or 1),
        ):
            box.blockSignals(True)
            box.setValue(value)
            box.lineEdit().setText(box.textFromValue(value))  # also after a clear()
            box.blockSignals(False)
        if not self.shape_edit.hasFocus():
            self.shape_edit.setText(shape_text(self._shape_of(v)))
        if not self.mapping_edit.hasFocus():
            self.mapping_edit.setText(mapping_text(v))
        count = self.canvas.place.count
        labels = ["·"] * count
        for vp, h in v.mapping.items():
            if 1 <= h <= count:
                labels[h - 1] = str(vp) if labels[h - 1] == "·" else labels[h - 1] + "," + str(vp)
        self.canvas.set_labels(labels)
        self._follow(v)
        self._show_scheme(v)
        self.canvas.set_virtual(self._pairs, v.mapping)
        self.quality = self._show_quality(self._current_quality(), self.metrics, "")

    def _show_scheme(self, v: VirtualTopology) -> None:
        """Highlight the scheme the mapping is now (none after a swap that made it no
        scheme): derived from the model, never left from the last Apply."""
        key = (self._state_for, self.seed.value())
        if self._schemes_for != key:  # made again for another virtual topology or seed
            self._schemes_for = key
            try:
                self._schemes = scheme_mappings(self.document.machine, v, self.seed.value())
            except RoutingError:
                self._schemes = {}
        scheme = scheme_of(v.mapping, self._schemes)
        row = next((r for r in range(self.schemes.count())
                    if self.schemes.item(r).data(Qt.ItemDataRole.UserRole) == scheme), -1)  # fmt: skip
        self.schemes.blockSignals(True)
        self.schemes.setCurrentRow(row)
        self.schemes.blockSignals(False)
        self.apply_scheme_button.setEnabled(row >= 0)

    def _forwarding_text(self, q: MappingQuality) -> str:
        """The forwarding figures, on hardware with a forwarding cost (else nothing)."""
        try:
            f = forwarding_figures(self.document.machine, q)
        except RoutingError:
            return ""
        if f is None:
            return ""
        return (f"<br><b>forwarding</b> {counted(f.forwarded_hops, 'hop')} forwarded; slowest "
                f"virtual link alone {f.worst_per_byte:.4g} s/byte")  # fmt: skip

    def _current_quality(self) -> MappingQuality | RoutingError:
        if self._metrics is not None:
            return self._metrics.quality()
        return self._metrics_error or RoutingError("no metrics")

    def _show_quality(self, q: MappingQuality | RoutingError, label: QLabel, prefix: str,
                      ) -> MappingQuality | None:  # fmt: skip
        if isinstance(q, RoutingError):
            label.setText(f"{prefix}cannot route the mapping: {q}")
            self.canvas.set_hot_links(())
            return None
        busiest = ", ".join(map(str, q.congested_links[:12]))
        if len(q.congested_links) > 12:
            busiest += ", …"
        label.setText(
            f"{prefix}<b>dilation</b> max {q.dilation_max}, mean {q.dilation_mean:.3g} "
            f"&nbsp; <b>congestion</b> {q.congestion} "
            f"({counted(q.virtual_links, 'virtual link', grouped=False)}; "
            + (
                f"busiest hardware link(s), highlighted: {busiest})"
                if q.congestion > 1
                else "no hardware link carries two)"
            )
            + self._forwarding_text(q)
        )
        self.canvas.set_hot_links(q.congested_links if q.congestion > 1 else ())
        return q

    # ------------------------------------------------------------------ edits

    def _shape_of(self, v: VirtualTopology) -> tuple[int, ...] | None:
        """The shape the virtual topology is routed on: its own, else the hardware's."""
        try:
            shape = virtual_shape(self.document.machine, v)
        except RoutingError:
            return None
        return shape.dims if shape is not None else None

    def _set_routing(self, name: str) -> None:
        v = self.virtual()
        if v is not None and name and name != v.routing:
            try:  # the shape follows when the new routing cannot use it
                self.document.session.set_virtual_routing(v.id, name)
            except SessionError as e:
                self.refresh()
                show_refusal(self.message, f"routing not changed: {e}")

    def _set_shape(self) -> None:
        v = self.virtual()
        if v is None or self.shape_edit.text().split() == shape_text(self._shape_of(v)).split():
            return
        try:
            self.document.session.set_virtual_shape(v.id, parse_shape(self.shape_edit.text()))
        except (ValueError, SessionError) as e:
            self.shape_edit.reject_input(f"shape not changed: {e}", shape_text(self._shape_of(v)))

    def _drag_preview(self, src: int, target: int) -> None:
        v = self.virtual()
        if v is None:
            return
        if not target:
            self.preview.setText("")
            self.refresh_quality_only()
            return
        moves = swap(v.mapping, src, target)
        self._follow(v)
        q: MappingQuality | RoutingError
        try:
            if self._metrics is not None:
                q = self._metrics.preview(moves)
            else:
                q = mapping_quality(self.document.machine, v, {**v.mapping, **moves})
        except RoutingError as e:
            q = e
        # the canvas numbers boxes by virtual processor: name both numbers of the target
        there = sorted(vp for vp, hw in moves.items() if hw == src)
        held = f" (virtual {', '.join(map(str, there))})" if there else " (free)"
        shown = self._labelled(target)
        self._show_quality(q, self.preview, f"if dropped on hardware {shown}{held}: ")

    def _labelled(self, p: int) -> str:
        """A hardware processor as the windows name one: ``3 (Fafard)``, or ``3``."""
        return labelled(self.document.machine.hardware(), (p,))[0]

    def _hovered(self, kind: str, what: object) -> None:
        v = self.virtual()
        if kind != "processor" or v is None:
            self.hover_info.clear()
            return
        p = int(what)  # type: ignore[call-overload]
        on = sorted(k for k, h in v.mapping.items() if h == p)
        mapped = f"virtual {', '.join(map(str, on))}" if on else "no virtual processor"
        self.hover_info.setText(f"hardware {self._labelled(p)}: {mapped}")

    def refresh_quality_only(self) -> None:
        v = self.virtual()
        if v is not None:
            self._follow(v)
            self.quality = self._show_quality(self._current_quality(), self.metrics, "")

    def swap(self, a: int, b: int) -> None:
        """Swap the virtual processors on hardware processors a and b (one undo step)."""
        v = self.virtual()
        if v is None:
            return
        moves = swap(v.mapping, a, b)
        self.preview.clear()
        if moves:
            try:
                self.document.session.set_mapping(
                    v.id,
                    moves,
                    label=f"Swap hardware processors {self._labelled(a)} and "
                    f"{self._labelled(b)} in virtual topology {v.id}",
                )
            except SessionError as e:  # onto a switch: refused by the session
                show_refusal(self.message, f"processors not swapped: {e}")

    def apply_scheme(self, scheme: str | None = None) -> None:
        v = self.virtual()
        item = self.schemes.currentItem()
        scheme = scheme or (item.data(Qt.ItemDataRole.UserRole) if item is not None else None)
        if v is None or scheme is None:
            return
        for row in range(self.schemes.count()):
            if self.schemes.item(row).data(Qt.ItemDataRole.UserRole) == scheme:
                self.schemes.setCurrentRow(row)
        try:
            mapping = make_mapping(self.document.machine, v, scheme, seed=self.seed.value())
        except RoutingError as e:
            show_refusal(self.message, f"scheme {scheme} not applied: {e}")
            return
        self.document.session.set_mapping(
            v.id, mapping, label=f"Map virtual topology {v.id}: {scheme}"
        )

    def add_virtual(self) -> VirtualTopology | None:
        """Ask what the new virtual topology is (routing, processors, name; defaults:
        the hardware's routing and processor count), add it and look at it."""
        hw = self.document.machine.hardware()
        if hw is None:
            show_refusal(
                self.message,
                "virtual topology not added: there is no hardware "
                "topology to map a virtual one onto",
            )
            return None
        count = compute_count(self.document.machine, hw)
        # the hardware's routing, unless it defines no virtual links on that count (a
        # switched network's updown or dragonfly routing, shortest): a ring
        routing = hw.routing
        if virtual_problem(routing, count, default_shape(count, routing)) is not None:
            routing = "1Dtorus"
        dialog = self.add_dialog(count, routing)
        if dialog.exec() != QDialog.DialogCode.Accepted:
            return None
        routing, count, name, shape = dialog.values()
        try:
            if shape is None:
                raise SessionError(dialog.problem() or "the shape cannot be read")
            virt = self.document.session.new_virtual(routing, count, name or None, shape)
        except SessionError as e:
            show_refusal(self.message, f"virtual topology not added: {e}")
            return None
        self.select_virtual(virt.id)
        return virt

    def add_dialog(self, hardware_count: int, routing: str | None) -> AddVirtualDialog:
        machine = self.document.machine
        return AddVirtualDialog(hardware_count, routing, self,
                                lambda r, n: default_virtual_shape(machine, r, n))  # fmt: skip

    def _edit(self, ref: str, value: object, label: str, what: str) -> bool:
        """Set ``ref``; refused, say so naming ``what`` was not changed, and show the
        model's value again. True when set."""
        try:
            self.document.session.set_value(ref, value, label=label)
        except (SessionError, ValueError) as e:
            self.refresh()
            show_refusal(self.message, f"{what} not changed: {e}")
            return False
        return True

    def _set_name(self) -> None:
        v = self.virtual()
        if v is None or self.name_edit.text() == (v.name or ""):
            return
        try:
            self.document.session.set_value(f"vt({v.id}).name", self.name_edit.text(),
                                            label=f"Name of virtual topology {v.id}")  # fmt: skip
        except (SessionError, ValueError) as e:
            self.name_edit.reject_input(f"name not changed: {e}", v.name or "")

    def _set_id(self) -> None:
        v = self.virtual()
        new = self.id_edit.value()
        if v is None or new == v.id:
            return
        try:
            self.document.session.check_new_id(new, self.document.machine.virtuals,
                                               "virtual topology")  # fmt: skip
        except SessionError as e:
            self.id_edit.setValue(v.id or 1)
            show_refusal(self.message, f"id not changed: {e}")
            return
        if self._edit(f"vt({v.id}).id", new, f"Virtual topology {v.id}: id {new}", "id"):
            self.select_virtual(new)

    def _set_count(self) -> None:
        v = self.virtual()
        if v is None or self.count_edit.value() == v.processor_count:
            return
        try:
            self.document.session.resize_virtual(v.id, self.count_edit.value())
        except SessionError as e:
            self.refresh()
            show_refusal(self.message, f"processor count not changed: {e}")

    def type_mapping(self) -> bool:
        """Apply the mapping typed or pasted into the mapping field (one undo step)."""
        v, hw = self.virtual(), self.document.machine.hardware()
        if v is None or hw is None:
            return False
        try:
            mapping = parse_mapping(self.mapping_edit.text(), v, processor_count(hw),
                                    switch_mask(self.document.machine, hw), hw)  # fmt: skip
            changed = {k: h for k, h in mapping.items() if v.mapping.get(k) != h}
            if changed:
                self.document.session.set_mapping(v.id, changed,
                                                  label=f"Type the mapping of virtual topology {v.id}")  # fmt: skip
        except (ValueError, SessionError) as e:
            # what was typed stays, to be corrected where the message says (a pasted
            # permutation of hundreds of numbers is not lost to one wrong number)
            self.mapping_edit.reject_input(f"mapping not applied: {e}", self.mapping_edit.text())
            return False
        self.mapping_edit.setText(mapping_text(v))
        return True

    def remove_virtual(self) -> None:
        v = self.virtual()
        if v is not None:
            self.document.session.remove_virtual(v.id)
