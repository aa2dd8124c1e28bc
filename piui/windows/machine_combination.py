"""The machine combination window (the report's "fifth section", which the original
PIUI never built): ``maxtotalspd``, live, explained as what the machine can move per
second. Its expression is edited in the Combinations window; this one explains it.
"""

from __future__ import annotations

from operator import attrgetter

import numpy as np
from PySide6.QtCore import Qt
from PySide6.QtGui import QShowEvent
from PySide6.QtWidgets import QLabel, QVBoxLayout, QWidget

from parasol_core.base.words import counted
from parasol_core.model import Link, Topology
from parasol_core.session import Change
from piui.document import Document
from piui.widgets.deferred import on_screen
from piui.widgets.labels import value_text

KEY = "mc.maxtotalspd"


_SPEED = attrgetter("speed")


def _rate(value: float) -> str:
    for unit, size in (("GB/s", 1e9), ("MB/s", 1e6), ("kB/s", 1e3)):
        if abs(value) >= size:
            return f"{value / size:.3g} {unit}"
    return f"{value:.3g} bytes/s"


class MachineCombinationWindow(QWidget):
    def __init__(self, document: Document, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.document = document
        heading = QLabel("Maximum total transfer speed (maxtotalspd)")
        heading.setStyleSheet("font-weight: bold;")
        self.value = QLabel()
        self.value.setStyleSheet("font-size: 20px;")
        self.value.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.expression = QLabel()
        self.expression.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.explanation = QLabel()
        self.explanation.setWordWrap(True)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(8, 8, 8, 8)
        layout.addWidget(heading)
        layout.addWidget(self.value)
        layout.addWidget(self.expression)
        layout.addWidget(self.explanation)
        layout.addStretch(1)
        self._stale = True
        document.modelReset.connect(self.refresh)
        document.structureChanged.connect(self.refresh)
        document.derivedChanged.connect(lambda _v: self.refresh())
        document.valuesChanged.connect(self._values_changed)
        self.refresh()

    def showEvent(self, event: QShowEvent) -> None:
        super().showEvent(event)
        self.dock_shown()

    def dock_shown(self) -> None:
        """Its tab was chosen (or it was shown): catch up with what it missed."""
        if self._stale:
            self.refresh()

    def _values_changed(self, change: Change) -> None:
        if change.touches(Link) or change.touches(Topology) or KEY in change.derived:
            self.refresh()

    def refresh(self, *_: object) -> None:
        """Show the machine combination (later, if the window is hidden or behind another
        tab: the sum over every link of a large model is not worth making for a tab
        nobody looks at)."""
        if not on_screen(self):
            self._stale = True
            return
        self._stale = False
        m = self.document.machine
        combos = m.combinations
        expr = combos.entries.get("maxtotalspd") if combos is not None else None
        if expr is None:
            self.value.setText("—")
            self.expression.setText("The model has no machinecombinations section with a "
                                    "maxtotalspd expression.")  # fmt: skip
            self.explanation.setText("")
            return
        value = self.document.engine.value(KEY)
        self.expression.setText(f"maxtotalspd = {expr.text}")
        if not isinstance(value, (int, float)) or isinstance(value, bool):
            self.value.setText(value_text(value))
            self.explanation.setText("")
            return
        self.value.setText(f"{value:.6g} bytes/s  ({_rate(value)})")
        hw = m.hardware()
        lines = [
            "What the whole machine can move per second when every link carries a message "
            "at once: the report's aggregate of the link bandwidths (each link moves "
            "1 / speed bytes per second).",
        ]
        if value > 0:
            lines.append(f"At that rate one megabyte spread over the machine takes "
                         f"{1e6 / value * 1e3:.3g} ms; one gigabyte {1e9 / value:.3g} s.")  # fmt: skip
        if hw is not None and hw.links:
            # from the link store's speed column, in bulk (a million links are three
            # million rows); the first link's speed is "one link"
            spd = hw.links.means("speed")
            usable = spd[np.isfinite(spd) & (spd > 0)]
            if usable.shape[0]:
                total = float(np.sum(1.0 / usable))
                lines.append(f"For comparison, the "
                             f"{counted(usable.shape[0], 'hardware link', grouped=False)} of "
                             f"topology {hw.id} summed: {_rate(total)} (one link: "
                             f"{_rate(1 / float(usable[0]))}).")  # fmt: skip
        self.explanation.setText("\n\n".join(lines))
