"""The processors and links selected in the grid view, shared with the windows that act
on a selection (link groups, topology editor) without them importing each other."""

from __future__ import annotations

import weakref

from PySide6.QtCore import QObject, Signal


class TopologySelection(QObject):
    """Selected processors and link ids of one hardware topology of one document."""

    changed = Signal()
    #: something asked the grid view to show a link, a processor or a virtual topology
    showRequested = Signal(str, object)  # ("link" | "processor" | "virtual", id)

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.topology_id: int | None = None
        self.processors: tuple[int, ...] = ()
        self.links: tuple[int, ...] = ()

    def set(self, topology_id: int | None, processors: list[int] | tuple[int, ...],
            links: list[int] | tuple[int, ...]) -> None:  # fmt: skip
        new = (topology_id, tuple(sorted(set(processors))), tuple(sorted(set(links))))
        if new == (self.topology_id, self.processors, self.links):
            return
        self.topology_id, self.processors, self.links = new
        self.changed.emit()

    def clear(self) -> None:
        self.set(self.topology_id, (), ())


_selections: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def selection_of(document: QObject) -> TopologySelection:
    """The one selection of a document (made on first use)."""
    found = _selections.get(document)
    if found is None:
        found = _selections[document] = TopologySelection(document)
    return found
