"""The dialog of the mapping editor's Add…: what a new virtual topology is, with
defaults that make a valid one at once (the session checks it again).

Its shape (the grid its routing lays the virtual processors on) follows the routing and
the processor count (the core's default: the hardware's when the counts agree, else the
most square one) until the user types one; what is wrong with the shape is said under
it, and OK waits until it is right."""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtWidgets import (
    QDialog,
    QDialogButtonBox,
    QFormLayout,
    QLabel,
    QLineEdit,
    QSpinBox,
    QWidget,
)

from parasol_core.base.limits import MAX_ID, blank_name
from parasol_core.base.words import counted
from parasol_core.topology.shape import parse_shape
from parasol_core.topology.virtual import default_shape, virtual_problem
from piui.widgets.routing_box import RoutingBox

ShapeFor = Callable[[str, int], tuple[int, ...]]


def shape_text(shape: tuple[int, ...] | None) -> str:
    return " ".join(map(str, shape)) if shape else ""


class AddVirtualDialog(QDialog):
    def __init__(self, hardware_count: int, routing: str | None = None,
                 parent: QWidget | None = None, shape_for: ShapeFor | None = None,
                 ) -> None:  # fmt: skip
        super().__init__(parent)
        self.setWindowTitle("Add a virtual topology")
        self.shape_for: ShapeFor = shape_for or (lambda r, n: default_shape(n, r))
        self.routing = RoutingBox()
        if routing:
            self.routing.set_routing(routing)
        self.count = QSpinBox()
        self.count.setRange(1, MAX_ID)
        self.count.setValue(max(hardware_count, 1))
        self.count.setToolTip(f"the hardware has "
                              f"{counted(hardware_count, 'compute processor', grouped=False)}; "
                              f"more virtual ones share hardware processors")  # fmt: skip
        self.shape = QLineEdit()
        self.shape.setToolTip("the grid the routing lays the virtual processors on: 1 to 6 "
                              "sizes whose product is the processor count ('9 8', '6 4 3')")  # fmt: skip
        self.note = QLabel()
        self.note.setWordWrap(True)
        self.note.setMinimumWidth(360)
        self.name = QLineEdit()
        self._named = False  # the user typed a name: stop following routing and count
        self._shaped = False  # the user typed a shape: the same
        form = QFormLayout(self)
        form.addRow("Routing (its virtual links):", self.routing)
        form.addRow("Processors:", self.count)
        form.addRow("Shape:", self.shape)
        form.addRow(self.note)
        form.addRow("Name:", self.name)
        self.buttons = buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Ok
                                                  | QDialogButtonBox.StandardButton.Cancel)  # fmt: skip
        buttons.accepted.connect(self.accept)
        buttons.rejected.connect(self.reject)
        form.addRow(buttons)
        for signal in (self.routing.currentIndexChanged, self.count.valueChanged):
            signal.connect(self._defaults)
        self.name.textEdited.connect(lambda _text: setattr(self, "_named", True))
        self.name.textChanged.connect(lambda _text: self._check())  # a blank name refused
        self.shape.textEdited.connect(self._shape_typed)
        self._defaults()

    def _defaults(self, *_: object) -> None:
        if not self._named:
            self.name.setText(f"{self.routing.routing()} on {self.count.value()}")
        if not self._shaped:
            self.shape.setText(shape_text(self.shape_for(self.routing.routing() or "",
                                                         self.count.value())))  # fmt: skip
        self._check()

    def _shape_typed(self, text: str) -> None:
        self._shaped = bool(text.strip())  # emptied: the default again
        if not self._shaped:
            self._defaults()
        self._check()

    def problem(self) -> str | None:
        """What is wrong with the routing, count and shape as they stand (the core's
        rule, which the session applies again); None when nothing."""
        try:
            shape = parse_shape(self.shape.text())
        except ValueError as e:
            return str(e)
        blank = blank_name(self.name.text(), "Name")
        if blank is not None:
            return blank
        return virtual_problem(self.routing.routing(), self.count.value(), shape,
                               "the virtual topology")  # fmt: skip

    def _check(self) -> None:
        problem = self.problem()
        self.note.setText(problem or "")
        self.note.setVisible(problem is not None)
        self.buttons.button(QDialogButtonBox.StandardButton.Ok).setEnabled(problem is None)
        if self.isVisible():  # room for the note's lines (a wrapped label does not ask)
            self.layout().activate()
            self.resize(self.width(), max(self.height(), self.sizeHint().height()))

    def values(self) -> tuple[str, int, str, tuple[int, ...] | None]:
        """(routing, processor count, name, shape) as chosen (shape None: unreadable)."""
        try:
            shape: tuple[int, ...] | None = parse_shape(self.shape.text())
        except ValueError:
            shape = None
        return self.routing.routing() or "", self.count.value(), self.name.text(), shape
