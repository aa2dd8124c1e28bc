"""A list of the routing techniques (plug-ins included), each with its one-line
description, for the topology and mapping editors."""

from __future__ import annotations

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import QComboBox, QWidget

from parasol_core.topology.routing import available_routings, get_routing


class RoutingBox(QComboBox):
    """Emits ``routingChosen(name)`` only when the user picks one."""

    routingChosen = Signal(str)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon)
        self.setMinimumContentsLength(24)
        for name in available_routings():
            try:
                description = get_routing(name).description
            except Exception:
                description = ""
            self.addItem(f"{name} — {description}" if description else name, name)
            self.setItemData(self.count() - 1, description, Qt.ItemDataRole.ToolTipRole)
        self.activated.connect(lambda i: self.routingChosen.emit(self.itemData(i)))

    def set_routing(self, name: str | None) -> None:
        self.blockSignals(True)
        at = self.findData(name)
        if at < 0 and name:
            self.addItem(f"{name} — (unknown technique)", name)
            at = self.count() - 1
        self.setCurrentIndex(at)
        self.blockSignals(False)

    def routing(self) -> str | None:
        return self.currentData()
