"""A processor chosen by number or by name: a spin box that shows ``3 (Fafard)`` where
the topology keeps its processors' names (a SimGrid platform's hosts, ``# piui:
names``) and takes a name typed in, by the core's one rule of names and numbers
(:func:`parasol_core.topology.names.processor_number`)."""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtGui import QValidator
from PySide6.QtWidgets import QSpinBox, QWidget

from parasol_core.model import Topology
from parasol_core.topology.errors import RoutingError
from parasol_core.topology.names import labelled, processor_number, table_of


class ProcessorBox(QSpinBox):
    """``topology()`` is asked each time (the model on screen, never a copy): the
    topology whose names are shown, or None for plain numbers (virtual processors)."""

    def __init__(self, topology: Callable[[], Topology | None],
                 parent: QWidget | None = None) -> None:  # fmt: skip
        super().__init__(parent)
        self._topology = topology

    def _named(self) -> Topology | None:
        topo = self._topology()
        return topo if topo is not None and len(table_of(topo)) else None

    def textFromValue(self, value: int) -> str:
        topo = self._named()
        return labelled(topo, (value,))[0] if topo is not None else str(value)

    def _resolve(self, text: str) -> int | None:
        word = text.strip()
        if word.endswith(")") and " (" in word:  # "3 (Fafard)", as shown
            word = word[: word.index(" (")]
        try:
            p = processor_number(self._named(), word)
        except RoutingError:
            return None
        return p if self.minimum() <= p <= self.maximum() else None

    def valueFromText(self, text: str) -> int:
        p = self._resolve(text)
        return p if p is not None else self.value()

    def validate(self, text: str, pos: int) -> object:
        state = (QValidator.State.Acceptable if self._resolve(text) is not None
                 else QValidator.State.Intermediate)  # fmt: skip
        return (state, text, pos)

    def refresh(self) -> None:
        """The text again (the names may have changed with the model)."""
        self.lineEdit().setText(self.textFromValue(self.value()))
