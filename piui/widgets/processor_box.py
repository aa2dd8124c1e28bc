"""A processor chosen by number or by name: a spin box that shows ``3 (Fafard)`` where
the topology keeps its processors' names (a SimGrid platform's hosts, ``# piui:
names``) and takes a name typed in, by the core's one rule of names and numbers
(:func:`parasol_core.topology.names.processor_number`).

What it cannot take (a name the topology does not have, a number out of range) it
refuses as every field of PIUI does (:class:`~piui.widgets.number_controls.ValueField`):
pink, a tooltip and the ``rejected`` signal with the core's words (the unknown name and
some names the topology has) for the window's message line, and the last good value
kept."""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import Signal
from PySide6.QtGui import QValidator
from PySide6.QtWidgets import QSpinBox, QWidget

from parasol_core.model import Topology
from parasol_core.topology.errors import RoutingError
from parasol_core.topology.names import labelled, processor_number, table_of
from piui.widgets.number_controls import ValueField


class ProcessorBox(QSpinBox):
    """``topology()`` is asked each time (the model on screen, never a copy): the
    topology whose names are shown, or None for plain numbers (virtual processors).
    ``what`` begins a refusal's message ("from 'Fafardd' is no processor number ...")."""

    rejected = Signal(str)

    def __init__(self, topology: Callable[[], Topology | None],
                 parent: QWidget | None = None, what: str = "processor") -> None:  # fmt: skip
        super().__init__(parent)
        self._topology = topology
        self.what = what
        # the house's refusing field as the box's editor: its pink, tooltip and clearing
        # (on coming back to it, or by forget_on_change when the model changes)
        self.field = ValueField()
        self.setLineEdit(self.field)
        self.field.rejected.connect(self.rejected)

    def _named(self) -> Topology | None:
        topo = self._topology()
        return topo if topo is not None and len(table_of(topo)) else None

    def textFromValue(self, value: int) -> str:
        topo = self._named()
        return labelled(topo, (value,))[0] if topo is not None else str(value)

    def _resolve(self, text: str) -> int | None:
        try:
            return self._processor(text)
        except RoutingError:
            return None

    def _processor(self, text: str) -> int:
        """The processor ``text`` names, within the box's range; RoutingError saying why
        not (the core's words: :func:`~parasol_core.topology.names.processor_number`)."""
        word = text.strip()
        if word.endswith(")") and " (" in word:  # "3 (Fafard)", as shown
            word = word[: word.index(" (")]
        p = processor_number(self._named(), word, self.what)
        if not self.minimum() <= p <= self.maximum():
            low, high = self.minimum(), self.maximum()
            raise RoutingError(f"{self.what} {p} is out of range: the topology has "
                               f"processors {low}..{high}")  # fmt: skip
        return p

    def valueFromText(self, text: str) -> int:
        p = self._resolve(text)
        return p if p is not None else self.value()

    def fixup(self, text: str) -> str:
        """Qt asks this when the box is left (or stepped, or Enter pressed) with text it
        cannot take, just before it puts the last good value back: say why."""
        try:
            self._processor(text)
        except RoutingError as e:
            self.field.reject_input(str(e), self.textFromValue(self.value()))
        return text

    def validate(self, text: str, pos: int) -> object:
        state = (QValidator.State.Acceptable if self._resolve(text) is not None
                 else QValidator.State.Intermediate)  # fmt: skip
        return (state, text, pos)

    def refresh(self) -> None:
        """The text again (the names may have changed with the model)."""
        self.lineEdit().setText(self.textFromValue(self.value()))
