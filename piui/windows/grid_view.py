"""The grid view (report section 3.2.1, figure 2.1): the hardware topology drawn by its
shape, processors numbered and coloured by type, hardware links solid (width by speed,
latency or load), the virtual links of a chosen virtual topology dotted.

Hover a processor for its id, type and virtual processors; hover a virtual link for its
hardware route (highlighted); click two processors for the route between them. The
selection (click, Ctrl+click, rubber band) is shared with the link groups and the
topology editor through :mod:`piui.widgets.topology_selection`.
"""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import QPointF
from PySide6.QtWidgets import (
    QComboBox,
    QHBoxLayout,
    QLabel,
    QPushButton,
    QSizePolicy,
    QVBoxLayout,
    QWidget,
)

from parasol_core.base.words import counted, plural
from parasol_core.model import Link, Topology, VirtualTopology
from parasol_core.session import Change
from parasol_core.topology.errors import RoutingError
from parasol_core.topology.index import index_of
from parasol_core.topology.mapping import link_load
from parasol_core.topology.names import labelled
from parasol_core.topology.switches import switch_mask, switch_types
from parasol_core.topology.virtual import virtual_links, virtual_route
from piui.document import Document
from piui.widgets.topology_canvas import TopologyCanvas, type_colour
from piui.widgets.topology_selection import selection_of

WIDTH_BY = ("uniform", "speed", "latency", "load")


class GridViewWindow(QWidget):
    ZOOMS = True  # a view that zooms: shrunk with its dock, never scrolled as a whole

    def __init__(self, document: Document, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.document = document
        self.selection = selection_of(document)
        self.canvas = TopologyCanvas()
        self.virtual_box = QComboBox()
        self.virtual_box.setMinimumContentsLength(10)
        self.virtual_box.setToolTip("draw the virtual links of this virtual topology, dotted")
        self.width_box = QComboBox()
        self.width_box.addItems([f"width: {w}" for w in WIDTH_BY])
        self.width_box.setToolTip("what the width of a hardware link shows")
        fit = QPushButton("Fit")
        fit.setToolTip("show the whole topology (Ctrl+0)")
        zoom_in, zoom_out = QPushButton("+"), QPushButton("−")
        for b in (zoom_in, zoom_out):
            b.setFixedWidth(28)
        export = QPushButton("Export…")
        export.setToolTip(
            "save the drawing as PNG or SVG, at a size of your choice "
            "(also on the drawing's right-click menu)"
        )
        self.info = QLabel()
        self.info.setWordWrap(True)
        self.info.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Preferred)
        self.info.setMinimumHeight(34)
        self.legend = QLabel()
        self.title = QLabel()
        self.title.setStyleSheet("font-weight: bold;")
        self.title.setWordWrap(True)  # a long name must not widen the dock past its edge
        self.title.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Preferred)

        # two rows, so that the view fits a narrow dock
        bar = QHBoxLayout()
        bar.addWidget(QLabel("Virtual links:"))
        bar.addWidget(self.virtual_box, 1)
        bar.addWidget(self.width_box)
        tools = QHBoxLayout()
        tools.addWidget(fit)
        tools.addWidget(zoom_in)
        tools.addWidget(zoom_out)
        tools.addStretch(1)
        tools.addWidget(export)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(6, 6, 6, 6)
        layout.addWidget(self.title)
        layout.addLayout(bar)
        layout.addLayout(tools)
        layout.addWidget(self.canvas, 1)
        layout.addWidget(self.legend)
        layout.addWidget(self.info)

        self.clicked: list[int] = []
        self._hide_virtual = False  # "none" chosen: the shared choice stays, undrawn
        self.hover_route: tuple[tuple[int, ...], tuple[int, ...]] | None = None
        self.click_route: tuple[tuple[int, ...], tuple[int, ...]] = ((), ())
        # the virtual links of the virtual topology `_pairs_for` (kept across mapping edits)
        self._pairs_for: VirtualTopology | None = None
        self._pairs: list[tuple[int, int]] = []

        fit.clicked.connect(self.canvas.fit)
        zoom_in.clicked.connect(lambda: self.canvas.zoom(1.25))
        zoom_out.clicked.connect(lambda: self.canvas.zoom(0.8))
        export.clicked.connect(self.export_drawing)
        self.canvas.exportRequested.connect(self.export_drawing)
        self.virtual_box.currentIndexChanged.connect(self._virtual_chosen)
        self.width_box.currentIndexChanged.connect(self._show_widths)
        self.canvas.hovered.connect(self._hovered)
        self.canvas.processorClicked.connect(self._clicked)
        self.canvas.selectionChanged.connect(self._selection_changed)
        self.selection.showRequested.connect(self.show_item)
        self.selection.changed.connect(self._follow_selection)
        document.modelReset.connect(self.reset)
        document.routeShown.connect(self._route_asked)
        document.structureChanged.connect(self.rebuild)
        document.valuesChanged.connect(self._values_changed)
        self.rebuild()
        if document.route_asked is not None:  # asked before this view was built
            self._route_asked(document.route_asked)

    # ------------------------------------------------------------------ model

    @property
    def hardware(self) -> Topology | None:
        return self.document.machine.hardware()

    def virtual(self) -> VirtualTopology | None:
        vid = self.virtual_box.currentData()
        return self.document.machine.virtual(vid) if vid is not None else None

    def reset(self) -> None:
        """Another model: nothing clicked, hovered or said about the last one; its
        chosen virtual topology's links drawn (its first: the report's figure 2.1)."""
        self._hide_virtual = False
        self.clicked = []
        self.click_route = ((), ())
        self.hover_route = None
        self.info.clear()
        self.rebuild()

    def rebuild(self) -> None:
        self._pairs_for = None
        hw = self.hardware
        machine = self.document.machine
        self.canvas.set_topology(hw, switch_mask(machine, hw) if hw is not None else None)
        self._follow_selection()
        self._reroute()
        if hw is None:
            self.title.setText("No hardware topology")
        else:
            place = self.canvas.place
            shape = " × ".join(map(str, place.shape.dims)) if place.shape else {
                "fattree": "fat tree", "dragonfly": "dragonfly",
                "levels": "switches by level", "bus": "bus",
                "force": "no shape, drawn force-directed"}.get(place.kind, "no shape")  # fmt: skip
            switches = int(self.canvas.switches.sum())
            count = (f"{counted(place.count - switches, 'processor')} and {counted(switches, 'switch')}"
                     if switches else counted(place.count, "processor"))  # fmt: skip
            self.title.setText(f"Topology {hw.id}: {hw.name or '(no name)'} — {shape}, "
                               f"{count}, {counted(len(hw.links), 'link')}, "
                               f"{hw.routing or 'no'} routing")  # fmt: skip
        self.virtual_box.blockSignals(True)
        self.virtual_box.clear()
        self.virtual_box.addItem("none", None)
        for v in self.document.machine.virtuals:
            self.virtual_box.addItem(f"{v.id}: {v.name or ''} ({v.routing})", v.id)
        self.virtual_box.blockSignals(False)
        self._show_legend()
        self._show_chosen_virtual()
        self._show_widths()

    def _values_changed(self, change: Change) -> None:
        if change.mapping_only:  # a swap: the drawn virtual links move their ends only
            v = self.virtual()
            if v is not None and change.touches(v):
                self._show_virtual()
            return
        if change.touches(Topology) or change.touches(VirtualTopology):
            self.rebuild()
        elif change.touches(Link, "connect") or change.touches(Link, "id"):
            self.canvas.refresh_links()  # what is drawn where changed
            self._show_widths()
            self._reroute()
        elif change.touches(Link) and WIDTH_BY[self.width_box.currentIndex()] in (
                "speed", "latency"):  # a timing moves only widths that show timings  # fmt: skip
            self._show_widths()

    def _show_legend(self) -> None:
        hw = self.hardware
        if hw is None:
            self.legend.clear()
            return
        parts, switch_parts = [], []
        kinds = switch_types(self.document.machine)
        for t in sorted(set(hw.types.values()), key=str):
            proc = self.document.machine.processor(t) if isinstance(t, int) else None
            name = proc.name if proc is not None and proc.name else f"type {t}"
            switch = t in kinds
            colour = type_colour(t if isinstance(t, int) else None, switch).name()
            mark = "●" if switch else "■"  # the disc and the box the canvas draws
            (switch_parts if switch else parts).append(
                f"<span style='color:{colour}; font-size:large'>{mark}</span> {t}: {name}"
            )
        text = "Processor types: " + (" &nbsp; ".join(parts) or "none")
        if switch_parts:
            text += " &nbsp; — switches: " + " &nbsp; ".join(switch_parts)
        links = " — solid: hardware links, dotted: virtual links"
        if self.canvas.seg_bow.any():
            links += ", blue curves: links between blocks (dimensions 3 and up)"
        if self.canvas.seg_wrap.any():
            links += ", hooks: wrap-around links"
        if self.canvas.bus_ids.size:
            links += ", bars: buses (their processors hang off them)"
        note = self.canvas.place.note
        if note:
            links += f" — {note}"
        self.legend.setText(text + links)
        self.legend.setWordWrap(True)

    def _show_virtual(self) -> None:
        v = self.virtual()
        if v is None or self.hardware is None:
            self.canvas.set_virtual([], {})
            return
        if self._pairs_for is not v:
            self._pairs_for = v
            try:
                self._pairs = virtual_links(self.document.machine, v, directed=False)
            except RoutingError as e:
                self.info.setText(f"virtual topology {v.id}: {e}")
                self._pairs = []
        self.canvas.set_virtual(self._pairs, v.mapping)
        if self.width_box.currentIndex() == WIDTH_BY.index("load"):
            self._show_widths()

    def _show_widths(self) -> None:
        hw = self.hardware
        what = WIDTH_BY[self.width_box.currentIndex()]
        if hw is None or what == "uniform":
            self.canvas.set_link_widths(None)
            return
        if what == "load":
            v = self.virtual()
            try:
                loads = link_load(self.document.machine, v) if v is not None else {}
            except (RoutingError, KeyError):
                loads = {}
            ids = hw.links.resolved()[0].tolist()
            self.canvas.set_link_widths({i: loads.get(i, 0) for i in ids} if loads else None)
            return
        # the store's columns, in bulk (NaN: no such timing)
        ids, has_id, _, _ = hw.links.resolved()
        means = hw.links.means("speed" if what == "speed" else "latency")
        values = {i: (None if m != m else m)
                  for i, m in zip(ids[has_id].tolist(), means[has_id].tolist())}  # fmt: skip
        self.canvas.set_link_widths(values)

    # ------------------------------------------------------------------ interaction

    def _hovered(self, kind: str, what: object) -> None:
        hw = self.hardware
        if kind == "processor" and hw is not None:
            p = int(what)
            t = hw.types.get(p)
            proc = self.document.machine.processor(t) if isinstance(t, int) else None
            tname = f"type {t}" + (f" ({proc.name})" if proc is not None and proc.name else "")
            virt = []
            for v in self.document.machine.virtuals:
                on = [str(k) for k, h in sorted(v.mapping.items()) if h == p]
                if on:
                    virt.append(f"virtual topology {v.id}: {', '.join(on)}")
            links = index_of(hw).links_of(p)
            switches = self.canvas.switches
            what = "Switch" if 1 <= p <= switches.shape[0] and switches[p - 1] else "Processor"
            shown = labelled(hw, (p,))[0]  # with its name, where the topology keeps one
            self.info.setText(f"{what} {shown} — {tname if t is not None else 'no type'} — "
                              f"links {', '.join(map(str, links)) or 'none'} — "
                              f"virtual processors: {'; '.join(virt) or 'none'}")  # fmt: skip
            self.hover_route = None
        elif kind == "virtual":
            self.show_virtual_route(*what)
            return
        elif kind == "link" and hw is not None:
            link = hw.links.link_by_id(int(what))  # type: ignore[call-overload]
            if link is not None:
                lat = link.latency.mean if link.latency else None
                spd = link.speed.mean if link.speed else None
                self.info.setText(f"Link {link.id}: connects {', '.join(labelled(hw, link.connect or []))}"
                                  f" — latency {lat:g} s, {spd:g} s per byte"
                                  if lat is not None and spd is not None else
                                  f"Link {link.id}")  # fmt: skip
            self.hover_route = None
        else:
            self.hover_route = None
        self._show_route()

    def show_virtual_route(self, v: int, w: int) -> tuple[int, ...]:
        """Highlight the hardware route of virtual link v-w; returns its hardware links."""
        virt = self.virtual()
        if virt is None:
            return ()
        try:
            r = virtual_route(self.document.machine, virt, v, w)
        except RoutingError as e:
            self.info.setText(str(e))
            return ()
        self.hover_route = (r.processors, r.links)
        self.info.setText(f"Virtual link {v}–{w} of virtual topology {virt.id}: hardware route "
                          f"{' → '.join(labelled(self.hardware, r.processors))} over "
                          f"{plural('link', len(r.links))} "
                          f"{', '.join(map(str, r.links)) or 'none'} ({counted(r.hops, 'hop')})")  # fmt: skip
        self._show_route()
        return r.links

    def _route_asked(self, asked: tuple[int, int, int | None]) -> None:
        """A route asked about elsewhere (the Estimate panel): drawn as if its two ends
        had been clicked; between virtual processors, over the virtual topology's
        mapping (which the view then shows)."""
        src, dst, virtual = asked
        self.hover_route = None
        if virtual is None:
            self.clicked = [src, dst]
            self._reroute()
            return
        if self.selection.virtual_id != virtual:
            self.document.session.choose_virtual(virtual)
        virt = self.document.machine.virtual(virtual)
        self.clicked = []
        try:
            r = virtual_route(self.document.machine, virt, src, dst)
        except RoutingError as e:
            self.click_route = ((), ())
            self.info.setText(str(e))
        else:
            self.click_route = (r.processors, r.links)
            self.info.setText(f"Route between virtual processors {src} → {dst} of virtual "
                              f"topology {virtual}: hardware route "
                              f"{' → '.join(labelled(self.hardware, r.processors))} "
                              f"({counted(r.hops, 'hop')})")  # fmt: skip
        self._show_route()

    def _show_route(self) -> None:
        procs, links = self.hover_route if self.hover_route is not None else self.click_route
        self.canvas.set_route(procs, links)

    def _clicked(self, p: int, modifiers: object) -> None:
        self.clicked = (self.clicked + [p])[-2:]
        self.hover_route = None
        self._reroute()

    def _reroute(self) -> None:
        """The route between the last two processors clicked, as the model routes it
        now (after an edit of a link or the routing, another route or none): a drawn
        route is derived from the model, never kept from before."""
        hw = self.hardware
        n = self.canvas.place.count
        self.clicked = [p for p in self.clicked if 1 <= p <= n]
        if len(self.clicked) == 2 and hw is not None and self.clicked[0] != self.clicked[1]:
            a, b = self.clicked
            try:
                r = index_of(hw).route(a, b)
                self.click_route = (r.processors, r.links)
                ends = labelled(hw, (a, b))  # with their names, where the topology keeps them
                self.info.setText(f"Route {ends[0]} → {ends[1]} ({hw.routing}): "
                                  f"{' → '.join(labelled(hw, r.processors))}, {counted(r.hops, 'hop')}, "
                                  f"{plural('link', len(r.links))} {', '.join(map(str, r.links))}")  # fmt: skip
            except RoutingError as e:
                self.click_route = ((), ())
                self.info.setText(str(e))
        elif self.clicked:
            self.click_route = ((self.clicked[-1],), ())
        else:
            self.click_route = ((), ())
        self._show_route()

    def _virtual_chosen(self) -> None:
        vid = self.virtual_box.currentData()
        self._hide_virtual = vid is None
        if vid is not None and vid != self.selection.virtual_id:
            self.document.session.choose_virtual(vid)  # the mapping editor follows
        self._show_virtual()

    def _show_chosen_virtual(self) -> None:
        """The box shows the virtual topology the windows share (or "none")."""
        vid = None if self._hide_virtual else self.selection.virtual_id
        at = max(self.virtual_box.findData(vid), 0)
        if at != self.virtual_box.currentIndex():
            self.virtual_box.blockSignals(True)
            self.virtual_box.setCurrentIndex(at)
            self.virtual_box.blockSignals(False)
        self._show_virtual()

    def _follow_selection(self) -> None:
        """Show the session's selection (pruned after an edit, empty for a new model)."""
        sel = self.selection
        shown = (
            tuple(self.canvas.selected_processors()),
            tuple(sorted(self.canvas.selected_links)),
        )
        if shown != (sel.processors, sel.links):
            self.canvas.select(sel.processors, sel.links)
        if not self._hide_virtual and self.virtual_box.currentData() != sel.virtual_id:
            self._show_chosen_virtual()

    def _selection_changed(self) -> None:
        hw = self.hardware
        self.selection.set(
            hw.id if hw is not None else None,
            self.canvas.selected_processors(),
            sorted(self.canvas.selected_links),
        )

    def show_item(self, kind: str, ident: object) -> None:
        """Select and centre a link or a processor, or show a virtual topology's links."""
        if kind == "virtual":
            if self.document.machine.virtual(ident) is not None:
                self._hide_virtual = False
                self.document.session.choose_virtual(ident)
                self._show_chosen_virtual()
            return
        drawn = set(self.canvas.seg_ids.tolist()) | set(self.canvas.bus_ids.tolist())
        if kind == "link" and ident in drawn:
            self.canvas.select([], [int(ident)])
            centre = self.canvas.link_midpoint(int(ident))
        elif kind == "processor" and 1 <= int(ident) <= self.canvas.place.count:
            self.canvas.select([int(ident)])
            centre = self.canvas.screen_point(int(ident))
        else:
            return
        self.canvas.pan(self.canvas.width() / 2 - centre.x(), self.canvas.height() / 2 - centre.y())

    def export_drawing(self) -> str | None:
        """Ask for a format, a size and a file, and save the drawing there (the
        model's folder first); the path written, or None."""
        from piui.widgets.drawing_export import export_drawing
        from piui.widgets.file_dialogs import start_file

        # the model's folder, as every file dialog (file_dialogs.start_folder)
        start = Path(start_file(self.document, "", "-topology"))
        return export_drawing(self.canvas, self, start)

    def centre_of(self, p: int) -> QPointF:
        return self.canvas.screen_point(p)
