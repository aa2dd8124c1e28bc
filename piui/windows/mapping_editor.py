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
from PySide6.QtWidgets import (
    QComboBox,
    QFormLayout,
    QHBoxLayout,
    QInputDialog,
    QLabel,
    QListWidget,
    QPushButton,
    QSizePolicy,
    QSpinBox,
    QSplitter,
    QVBoxLayout,
    QWidget,
)

from parasol_core.model import Link, Topology, VirtualTopology
from parasol_core.session import Change
from parasol_core.topology.errors import RoutingError
from parasol_core.topology.mapping import (
    MappingMetrics,
    MappingQuality,
    forwarding_figures,
    make_mapping,
    mapping_quality,
    mapping_schemes,
    swap,
)
from parasol_core.topology.shape import processor_count
from parasol_core.topology.virtual import virtual_links
from piui.document import Document
from piui.widgets.routing_box import RoutingBox
from piui.widgets.topology_canvas import TopologyCanvas
from piui.widgets.topology_selection import selection_of

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
        add.setToolTip("add a virtual topology mapped 1 to 1 onto the hardware")
        self.routing = RoutingBox()
        self.routing.setToolTip("which virtual links the virtual topology has")
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
        apply_scheme = QPushButton("Apply scheme")
        self.metrics = QLabel()
        self.metrics.setWordWrap(True)
        self.metrics.setTextFormat(Qt.TextFormat.RichText)
        self.preview = QLabel()
        self.preview.setWordWrap(True)
        self.preview.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Preferred)
        self.canvas = TopologyCanvas()
        self.canvas.swap_mode = True
        self.canvas.setToolTip("drag a virtual processor onto another hardware processor to "
                               "swap them")  # fmt: skip

        top = QHBoxLayout()
        top.addWidget(QLabel("Virtual topology:"))
        top.addWidget(self.virtual_box, 1)
        top.addWidget(add)
        top.addWidget(remove)
        form = QFormLayout()
        form.addRow("Routing (virtual links):", self.routing)
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
        side_layout.addWidget(self.metrics)
        side_layout.addWidget(self.preview)
        side_layout.addStretch(1)
        split = QSplitter(Qt.Orientation.Vertical)
        split.addWidget(side)
        split.addWidget(self.canvas)
        split.setStretchFactor(1, 1)
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

        self.virtual_box.currentIndexChanged.connect(self.refresh)
        self.routing.routingChosen.connect(self._set_routing)
        apply_scheme.clicked.connect(self.apply_scheme)
        self.schemes.itemDoubleClicked.connect(lambda _i: self.apply_scheme())
        add.clicked.connect(self.add_virtual)
        remove.clicked.connect(self.remove_virtual)
        self.canvas.swapRequested.connect(self.swap)
        self.canvas.dragMoved.connect(self._drag_preview)
        selection_of(document).showRequested.connect(
            lambda kind, ident: self.select_virtual(ident) if kind == "virtual" else None
        )
        document.modelReset.connect(self.rebuild)
        document.structureChanged.connect(self.rebuild)
        document.valuesChanged.connect(self._values_changed)
        self.rebuild()

    # ------------------------------------------------------------------ model

    def virtual(self) -> VirtualTopology | None:
        vid = self.virtual_box.currentData()
        return self.document.machine.virtual(vid) if vid is not None else None

    def select_virtual(self, virt_id: int) -> None:
        at = self.virtual_box.findData(virt_id)
        if at >= 0:
            self.virtual_box.setCurrentIndex(at)

    def rebuild(self) -> None:
        current = self.virtual_box.currentData()
        self.virtual_box.blockSignals(True)
        self.virtual_box.clear()
        for v in self.document.machine.virtuals:
            self.virtual_box.addItem(f"{v.id}: {v.name or ''} ({v.routing}, "
                                     f"{v.processor_count} processors)", v.id)  # fmt: skip
        at = self.virtual_box.findData(current)
        self.virtual_box.setCurrentIndex(at if at >= 0 else 0)
        self.virtual_box.blockSignals(False)
        self.canvas.set_topology(self.document.machine.hardware())
        self._state_for = None
        self.refresh()

    def _values_changed(self, change: Change) -> None:
        if change.touches(Topology) or change.touches(Link):
            self.canvas.set_topology(self.document.machine.hardware())
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
        if v is None:
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
        count = self.canvas.place.count
        labels = ["·"] * count
        for vp, h in v.mapping.items():
            if 1 <= h <= count:
                labels[h - 1] = str(vp) if labels[h - 1] == "·" else labels[h - 1] + "," + str(vp)
        self.canvas.set_labels(labels)
        self._follow(v)
        self.canvas.set_virtual(self._pairs, v.mapping)
        self.quality = self._show_quality(self._current_quality(), self.metrics, "")

    def _forwarding_text(self, q: MappingQuality) -> str:
        """The forwarding figures, on hardware with a forwarding cost (else nothing)."""
        try:
            f = forwarding_figures(self.document.machine, q)
        except RoutingError:
            return ""
        if f is None:
            return ""
        return (f"<br><b>forwarding</b> {f.forwarded_hops} hop(s) forwarded; slowest "
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
            f"&nbsp; <b>congestion</b> {q.congestion} ({q.virtual_links} virtual links; "
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

    def _set_routing(self, name: str) -> None:
        v = self.virtual()
        if v is not None and name and name != v.routing:
            self.document.session.set_value(
                f"vt({v.id}).routing", name, label=f"Routing of virtual topology {v.id}"
            )

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
        self._show_quality(q, self.preview, f"if dropped on hardware {target}{held}: ")

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
            self.document.session.set_mapping(
                v.id,
                moves,
                label=f"Swap hardware processors {a} and {b} in virtual topology {v.id}",
            )

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
            self.preview.setText(f"{scheme}: {e}")
            return
        self.document.session.set_mapping(
            v.id, mapping, label=f"Map virtual topology {v.id}: {scheme}"
        )

    def add_virtual(self, routing: str | None = None) -> VirtualTopology | None:
        hw = self.document.machine.hardware()
        if hw is None:
            return None
        if routing is None:
            names = [self.routing.itemData(i) for i in range(self.routing.count())]
            routing, ok = QInputDialog.getItem(self, "Add a virtual topology", "Routing:",
                                               names, 0, False)  # fmt: skip
            if not ok:
                return None
        m = self.document.machine
        ids = [t.id for t in m.topologies] + [v.id for v in m.virtuals]
        new_id = max([i for i in ids if isinstance(i, int)], default=0) + 1
        n = processor_count(hw)
        virt = VirtualTopology(shape=tuple(hw.shape) if hw.shape else None, id=new_id,
                               name=f"{routing} on {n}", setup=hw.setup, routing=routing,
                               processor_count=n, mapping={p: p for p in range(1, n + 1)})  # fmt: skip
        self.document.session.add_virtual(virt)
        self.select_virtual(new_id)
        return virt

    def remove_virtual(self) -> None:
        v = self.virtual()
        if v is not None:
            self.document.session.remove_virtual(v.id)
