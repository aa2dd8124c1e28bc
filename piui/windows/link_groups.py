"""Link groups: the latency and speed of a group of hardware links at once — all links,
the links of one dimension (X, Y, Z, wrap-around; :func:`link_groups`), or the links
selected in the grid view — with mantissa/exponent controls. When four or fewer links
are selected each also gets its own controls (the report's advice). ``maxtotalspd``
moves live.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from PySide6.QtWidgets import (
    QComboBox,
    QFormLayout,
    QGroupBox,
    QLabel,
    QMenu,
    QVBoxLayout,
    QWidget,
)

from parasol_core.base.arrays import unique
from parasol_core.base.words import counted
from parasol_core.model import Link, Machine, MachineCombinations, Timing, Topology
from parasol_core.session import Change, SessionError
from parasol_core.topology.layout import link_groups
from piui.document import Document
from piui.widgets.labels import value_text
from piui.widgets.number_controls import MantissaExponentEdit
from piui.widgets.status_messages import forget_on_change, message_label, show_refusal
from piui.widgets.sweep_menu import offer_sweep, sweep_menu
from piui.widgets.topology_selection import selection_of

SINGLE_LIMIT = 4
SELECTED = "selected"


def _common(hw: Topology | None, rows: np.ndarray, attr: str) -> tuple[float | None, bool]:
    """The value the links of these store rows share (or the first one's; None for no
    such timing), and whether they all share it, from the store's mean column."""
    if hw is None or not rows.shape[0]:
        return None, True
    values = hw.links.means(attr)[rows]
    first = float(values[0])
    if first != first:  # NaN: the first has none
        return None, bool(np.isnan(values).all())
    return first, bool((values == first).all())


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
        self.note = message_label()
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
        for attr, edit in (("latency", self.latency), ("speed", self.speed)):  # File > Sweep…
            offer_sweep(form.labelForField(edit), lambda a=attr: self.sweep_menu(a))
        self.singles_box = QGroupBox("Selected links, one by one")
        self.singles = QFormLayout(self.singles_box)
        self.singles.setRowWrapPolicy(QFormLayout.RowWrapPolicy.WrapAllRows)
        self.single_edits: dict[int, tuple[MantissaExponentEdit, MantissaExponentEdit]] = {}
        self._same = {"latency": True, "speed": True}  # the group's links share the value
        self._group_size = 0
        self._echo: str | None = None  # the attribute of the group edit under way
        layout = QVBoxLayout(self)
        layout.setContentsMargins(8, 8, 8, 8)
        layout.addWidget(self.title)
        layout.addWidget(box)
        layout.addWidget(self.singles_box)
        layout.addWidget(QLabel("Machine combination:"))
        layout.addWidget(self.maxtotalspd)
        layout.addStretch(1)

        self.group_box.currentIndexChanged.connect(self._show_group)
        self.latency.valueEdited.connect(lambda v, key: self._edit(self._group_tuple(), "latency",
                                                                   v, key))  # fmt: skip
        self.speed.valueEdited.connect(lambda v, key: self._edit(self._group_tuple(), "speed",
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
        return list(self._group_tuple())

    def _group_tuple(self) -> tuple[int, ...]:
        """The current group's link ids, the same tuple until the groups are rebuilt."""
        return self._groups.get(self.group_box.currentData(), ())

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
        # tuples: the session knows the links of a tuple it was given before
        self._groups = {key: tuple(ids) for key, ids in self.groups().items()}
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

    def _links(self, ids: Sequence[int]) -> list[Link]:
        """The links of these ids, in link-list order (looked up by id: a few views)."""
        hw = self.hardware
        if not ids or hw is None:
            return []
        rows = unique(hw.links.rows_of_ids(list(ids)))
        return [hw.links[int(r)] for r in rows[rows >= 0]]

    def _show_group(self, *_: object) -> None:
        hw = self.hardware
        ids = self._group_tuple()
        # the group's rows of the link store, and its timings from the columns (a group
        # of a million-link model is millions of rows: no view per link)
        rows = unique(np.asarray(hw.links.rows_of_ids(ids) if hw is not None and ids else [],
                                 dtype=np.int64))  # fmt: skip
        rows = rows[rows >= 0]
        self._group_size = int(rows.shape[0])
        lat, self._same["latency"] = _common(hw, rows, "latency")
        spd, self._same["speed"] = _common(hw, rows, "speed")
        for edit, value in ((self.latency, lat), (self.speed, spd)):
            if edit.value() != value:
                edit.setValue(value)
            edit.setEnabled(bool(rows.shape[0]))
        self._show_note()

    def _show_note(self) -> None:
        differ = [w for w, attr in (("latencies", "latency"), ("speeds", "speed"))
                  if not self._same[attr]]  # fmt: skip
        self.note.setStyleSheet("")  # (a refusal's red gone)
        self.note.setText(
            f"{counted(self._group_size, 'link')}. "
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
            for attr, edit in (("latency", lat), ("speed", spd)):
                offer_sweep(self.singles.labelForField(edit),
                            lambda a=attr, lid=lid: self.sweep_menu(a, lid))  # fmt: skip
            self.single_edits[lid] = (lat, spd)

    def sweep_menu(self, attr: str, link: int | None = None) -> QMenu:
        """The context menu of a latency or speed: sweep it (File > Sweep…), every link of
        the hardware topology (a sweep's link axis is all of them) or one link."""
        hw = self.hardware
        which = "*" if link is None else link
        return sweep_menu(self, self.document,
                          f"tl({hw.id})({which}).{attr}" if hw is not None else None)  # fmt: skip

    def _values_changed(self, change: Change) -> None:
        if change.touches(Link):
            if self._echo is not None:  # the group's own edit: all its links hold the value
                self._same[self._echo] = True
                self._show_note()
            else:
                self._show_group()
            singles = {lk.id: lk for lk in self._links(list(self.single_edits))
                       } if self.single_edits else {}  # fmt: skip
            for lid, (lat, spd) in self.single_edits.items():
                link = singles.get(lid)
                if link is not None:
                    for edit, t in ((lat, link.latency), (spd, link.speed)):
                        value = t.mean if t is not None else None
                        if edit.value() != value:
                            edit.setValue(value)
        elif change.touches(Topology) or change.touches(Machine):
            self.rebuild()
        if change.touches(MachineCombinations):
            self._show_maxtotalspd()

    def _edit(self, ids: Sequence[int], what: str, value: float, merge: object) -> None:
        """Set the latency or speed of links, the whole group in one bulk operation of the
        session (one undo step; a drag merges into one): a step of the slider on all
        98,304 links of a 32 x 32 x 32 torus stays within a frame."""
        hw = self.hardware
        if hw is None or not ids:
            return
        # the group's own edit: its links need not be read again to show it
        self._echo = what if ids is self._group_tuple() else None
        try:
            self.document.session.set_links(
                hw.id, ids, **{what: Timing(value)}, merge=merge,
                label=f"Set the {what} of {counted(len(ids), 'link')}",
            )  # fmt: skip
        except SessionError as e:
            show_refusal(self.note, f"{what} not set: {e}")
        finally:
            self._echo = None

    def _show_maxtotalspd(self) -> None:
        if self.document.machine.combinations is None:
            self.maxtotalspd.setText("maxtotalspd: — (no machine combinations)")
            return
        value = self.document.engine.value("mc.maxtotalspd")
        self.maxtotalspd.setText(
            f"maxtotalspd = {value_text(value)}"
            + (" bytes/s" if isinstance(value, (int, float)) else "")
        )
