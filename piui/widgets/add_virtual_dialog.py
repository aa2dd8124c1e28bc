"""The dialog of the mapping editor's Add…: what a new virtual topology is, with
defaults that make a valid one at once (the session checks it again)."""

from __future__ import annotations

from PySide6.QtWidgets import (
    QDialog,
    QDialogButtonBox,
    QFormLayout,
    QLineEdit,
    QSpinBox,
    QWidget,
)

from parasol_core.base.limits import MAX_ID
from piui.widgets.routing_box import RoutingBox


class AddVirtualDialog(QDialog):
    def __init__(self, hardware_count: int, routing: str | None = None,
                 parent: QWidget | None = None) -> None:  # fmt: skip
        super().__init__(parent)
        self.setWindowTitle("Add a virtual topology")
        self.routing = RoutingBox()
        if routing:
            self.routing.set_routing(routing)
        self.count = QSpinBox()
        self.count.setRange(1, MAX_ID)
        self.count.setValue(max(hardware_count, 1))
        self.count.setToolTip(f"the hardware has {hardware_count} compute processors; more virtual "
                              "ones share hardware processors")  # fmt: skip
        self.name = QLineEdit()
        self._named = False  # the user typed a name: stop following routing and count
        form = QFormLayout(self)
        form.addRow("Routing (its virtual links):", self.routing)
        form.addRow("Processors:", self.count)
        form.addRow("Name:", self.name)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Ok
                                   | QDialogButtonBox.StandardButton.Cancel)  # fmt: skip
        buttons.accepted.connect(self.accept)
        buttons.rejected.connect(self.reject)
        form.addRow(buttons)
        self.routing.currentIndexChanged.connect(self._default_name)
        self.count.valueChanged.connect(self._default_name)
        self.name.textEdited.connect(lambda _text: setattr(self, "_named", True))
        self._default_name()

    def _default_name(self, *_: object) -> None:
        if not self._named:
            self.name.setText(f"{self.routing.routing()} on {self.count.value()}")

    def values(self) -> tuple[str, int, str]:
        """(routing, processor count, name) as chosen."""
        return self.routing.routing() or "", self.count.value(), self.name.text()
