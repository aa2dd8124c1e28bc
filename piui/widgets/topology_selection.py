"""The processors and links selected in the grid view, shared with the windows that act
on a selection (link groups, topology editor) without them importing each other.

The selection itself is the session's (:mod:`parasol_core.session.selection`): it is
pruned to what exists after every structural edit and emptied for another model. This
object is its Qt face: ``changed`` when the session's selection changes, ``set`` to
choose, and ``showRequested`` for asking the grid view to show something."""

from __future__ import annotations

import weakref

from PySide6.QtCore import QObject, Signal

from parasol_core.session.selection import Selection


class TopologySelection(QObject):
    """The selected processors and link ids of one document's hardware topology."""

    changed = Signal()
    #: something asked the grid view to show a link, a processor or a virtual topology
    showRequested = Signal(str, object)  # ("link" | "processor" | "virtual", id)

    def __init__(self, document: QObject) -> None:
        super().__init__(document)
        self._document = document
        document.selectionChanged.connect(self.changed)

    @property
    def _now(self) -> Selection:
        return self._document.session.selection

    @property
    def topology_id(self) -> int | None:
        return self._now.topology_id

    @property
    def processors(self) -> tuple[int, ...]:
        return self._now.processors

    @property
    def links(self) -> tuple[int, ...]:
        return self._now.links

    @property
    def virtual_id(self) -> int | None:
        """The virtual topology the grid view and the mapping editor look at."""
        return self._now.virtual_id

    def set(self, topology_id: int | None, processors: list[int] | tuple[int, ...],
            links: list[int] | tuple[int, ...]) -> None:  # fmt: skip
        """Select; SessionError when the model lacks one of them (nothing changes)."""
        self._document.session.select(topology_id, processors, links)

    def clear(self) -> None:
        self.set(self.topology_id, (), ())


_selections: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def selection_of(document: QObject) -> TopologySelection:
    """The one selection of a document (made on first use)."""
    found = _selections.get(document)
    if found is None:
        found = _selections[document] = TopologySelection(document)
    return found
