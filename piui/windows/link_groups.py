"""Link groups: the latency and speed of a group of hardware links at once — all links,
the links of one dimension (X, Y, Z, wrap-around; :func:`link_groups`), or the links
selected in the grid view — with mantissa/exponent controls. When four or fewer links
are selected each also gets its own controls (the report's advice). ``maxtotalspd``
moves live.
"""

from __future__ import annotations

from PySide6.QtWidgets import (
    QComboBox,
    QFormLayout,
    QGroupBox,
    QLabel,
    QVBoxLayout,
    QWidget,
)

from parasol_core.model import Link, Machine, MachineCombinations, Timing, Topology
from parasol_core.session import Change, SessionError
from parasol_core.topology.layout import link_groups
from piui.document import Document
from piui.widgets.labels import value_text
from piui.widgets.messages import forget_on_change
from piui.widgets.number_controls import MantissaExponentEdit
from piui.widgets.topology_selection import selection_of

SINGLE_LIMIT = 4
SELECTED = "selected"


def _common(links: list[Link], attr: str) -> tuple[float | None, bool]:
    """The value the links share (or the first one's), and whether they all share it."""
    values = [getattr(lk, attr).mean if getattr(lk, attr) is not None else None for lk in links]
    if not values:
        return None, True
    return values[0], all(v == values[0] for v in values)


class LinkGroupsWindow(QWidget):
    def __init__(self, document: Document, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.document = document
        self.selection = selection_of(document)
        self.group_box = QComboBox()
        self.latency = MantissaExponentEdit(exponent_range=(-12, 0))
        self.latency.setToolTip("latency of every link of the group, in seconds")
        self.speed = MantissaExponentEdit(exponent_range=(-12, 0))
        self.speed.setToolTip("time per byte of every link of the group, in seconds")
        self.note = QLabel()
        self.note.setWordWrap(True)
        self.maxtotalspd = QLabel()
        self.maxtotalspd.setStyleSheet("font-weight: bold;")
        self.title = QLabel()
        self.title.setStyleSheet("font-weight: bold;")

        box = QGroupBox("Group")
        form = QFormLayout(box)
        form.setRowWrapPolicy(QFormLayout.RowWrapPolicy.WrapAllRows)
        form.addRow("Links:", self.group_box)
        form.addRow("Latency (seconds):", self.latency)
        form.addRow("Speed (seconds per byte):", self.speed)
        form.addRow(self.note)
        self.singles_box = QGroupBox("Selected links, one by one")
        self.singles = QFormLayout(self.singles_box)
        self.singles.setRowWrapPolicy(QFormLayout.RowWrapPolicy.WrapAllRows)
        self.single_edits: dict[int, tuple[MantissaExponentEdit, MantissaExponentEdit]] = {}
        layout = QVBoxLayout(self)
        layout.setContentsMargins(8, 8, 8, 8)
        layout.addWidget(self.title)
        layout.addWidget(box)
        layout.addWidget(self.singles_box)
        layout.addWidget(QLabel("Machine combination:"))
        layout.addWidget(self.maxtotalspd)
        layout.addStretch(1)

        self.group_box.currentIndexChanged.connect(self._show_group)
        self.latency.valueEdited.connect(lambda v, key: self._edit(self.group_ids(), "latency",
                                                                   v, key))  # fmt: skip
        self.speed.valueEdited.connect(lambda v, key: self._edit(self.group_ids(), "speed",
                                                                 v, key))  # fmt: skip
        self.selection.changed.connect(self._selection_changed)
        document.modelReset.connect(self.reset)
        forget_on_change(document, self, None)
        document.structureChanged.connect(self.rebuild)
        document.valuesChanged.connect(self._values_changed)
        document.derivedChanged.connect(lambda _v: self._show_maxtotalspd())
        self.rebuild()

    @property
    def hardware(self) -> Topology | None:
        return self.document.machine.hardware()

    def groups(self) -> dict[str, list[int]]:
        hw = self.hardware
        groups = link_groups(hw) if hw is not None else {}
        if self.selection.links and hw is not None and self.selection.topology_id == hw.id:
            groups[SELECTED] = list(self.selection.links)
        return groups

    def group_ids(self) -> list[int]:
        return self._groups.get(self.group_box.currentData(), [])

    def set_group(self, name: str) -> None:
        at = self.group_box.findData(name)
        if at >= 0:
            self.group_box.setCurrentIndex(at)

    def reset(self) -> None:
        """Another model: its first group (all links), not the last model's choice."""
        self.group_box.blockSignals(True)
        self.group_box.clear()
        self.group_box.blockSignals(False)
        self.rebuild()

    def rebuild(self) -> None:
        hw = self.hardware
        self.title.setText(f"Links of topology {hw.id}: {hw.name or ''}" if hw is not None
                           else "No hardware topology")  # fmt: skip
        self._groups = self.groups()
        current = self.group_box.currentData()
        self.group_box.blockSignals(True)
        self.group_box.clear()
        names = {"all": "all links", "X": "X dimension", "Y": "Y dimension",
                 "Z": "Z dimension", "wrap-around": "wrap-around links",
                 "other": "other links", SELECTED: "selected in the grid view"}  # fmt: skip
        for key, ids in self._groups.items():
            self.group_box.addItem(f"{names.get(key, key)} ({len(ids)})", key)
        at = self.group_box.findData(current)
        self.group_box.setCurrentIndex(max(at, 0))
        self.group_box.blockSignals(False)
        self._show_group()
        self._show_singles()
        self._show_maxtotalspd()

    def _selection_changed(self) -> None:
        self.rebuild()
        if self.selection.links:
            self.set_group(SELECTED)

    def _links(self, ids: list[int]) -> list[Link]:
        hw = self.hardware
        wanted = set(ids)
        return [lk for lk in hw.links if lk.id in wanted] if hw is not None else []

    def _show_group(self, *_: object) -> None:
        links = self._links(self.group_ids())
        lat, lat_same = _common(links, "latency")
        spd, spd_same = _common(links, "speed")
        for edit, value in ((self.latency, lat), (self.speed, spd)):
            if edit.value() != value:
                edit.setValue(value)
            edit.setEnabled(bool(links))
        differ = [w for w, same in (("latencies", lat_same), ("speeds", spd_same)) if not same]
        self.note.setText(
            f"{len(links)} link(s). "
            + (f"Their {' and '.join(differ)} differ; the first link's is shown, and moving a "
               "control sets all of them." if differ else "")
        )  # fmt: skip

    def _show_singles(self) -> None:
        while self.singles.rowCount():
            self.singles.removeRow(0)
        self.single_edits = {}
        hw = self.hardware
        ids = list(self.selection.links) if hw is not None and (
            self.selection.topology_id == hw.id) else []  # fmt: skip
        show = 0 < len(ids) <= SINGLE_LIMIT
        self.singles_box.setVisible(show)
        if not show:
            return
        for link in self._links(ids):
            lat, spd = MantissaExponentEdit((-12, 0)), MantissaExponentEdit((-12, 0))
            lat.setValue(link.latency.mean if link.latency else None)
            spd.setValue(link.speed.mean if link.speed else None)
            lid = link.id
            lat.valueEdited.connect(lambda v, key, lid=lid: self._edit([lid], "latency", v, key))
            spd.valueEdited.connect(lambda v, key, lid=lid: self._edit([lid], "speed", v, key))
            connect = " – ".join(map(str, link.connect or []))
            self.singles.addRow(f"Link {lid} ({connect}) latency:", lat)
            self.singles.addRow(f"Link {lid} speed (s/byte):", spd)
            self.single_edits[lid] = (lat, spd)

    def _values_changed(self, change: Change) -> None:
        if change.touches(Link):
            self._show_group()
            for lid, (lat, spd) in self.single_edits.items():
                link = next((lk for lk in self._links([lid])), None)
                if link is not None:
                    for edit, t in ((lat, link.latency), (spd, link.speed)):
                        value = t.mean if t is not None else None
                        if edit.value() != value:
                            edit.setValue(value)
        elif change.touches(Topology) or change.touches(Machine):
            self.rebuild()
        if change.touches(MachineCombinations):
            self._show_maxtotalspd()

    def _edit(self, ids: list[int], what: str, value: float, merge: object) -> None:
        hw = self.hardware
        if hw is None or not ids:
            return
        try:
            self.document.session.set_links(
                hw.id, ids, **{what: Timing(value)}, merge=merge,
                label=f"Set the {what} of {len(ids)} link(s)",
            )  # fmt: skip
        except SessionError as e:
            self.note.setText(str(e))

    def _show_maxtotalspd(self) -> None:
        if self.document.machine.combinations is None:
            self.maxtotalspd.setText("maxtotalspd: — (no machine combinations)")
            return
        value = self.document.engine.value("mc.maxtotalspd")
        self.maxtotalspd.setText(
            f"maxtotalspd = {value_text(value)}"
            + (" bytes/s" if isinstance(value, (int, float)) else "")
        )
