"""What the user has selected in a model's hardware topology: processors and links.

The selection is model state, not a window's: it belongs to the session, refers to
things by their numbers in the model, and holds nothing that is not there. Selecting
something the model lacks is refused (as napari's selectable lists refuse an item not
in the list); after every structural edit, undo and redo the selection is pruned to
what still exists, and another model starts with none. A window that acts on "the
selected processors" (the topology editor, the link groups) can then never apply one
model's selection to another.

It also holds the virtual topology being looked at (``virtual_id``), one choice that
the grid view (which draws its links) and the mapping editor (which edits it) share;
another model starts with its first virtual topology.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from parasol_core.model import Machine, Topology
from parasol_core.topology.shape import processor_count


@dataclass(frozen=True)
class Selection:
    topology_id: int | None = None
    processors: tuple[int, ...] = ()
    links: tuple[int, ...] = ()
    virtual_id: int | None = None

    @property
    def empty(self) -> bool:
        return not self.processors and not self.links


NOTHING = Selection()


class SelectionError(ValueError):
    """A selection of things the model does not have."""


def _hardware(machine: Machine, topology_id: int | None) -> Topology | None:
    hw = machine.hardware()
    return hw if hw is not None and hw.id == topology_id else None


def choosing(selection: Selection, virtual_id: int | None) -> Selection:
    return replace(selection, virtual_id=virtual_id)


def initial(machine: Machine) -> Selection:
    """What a model starts with: nothing selected, its first virtual topology chosen."""
    first = next((v.id for v in machine.virtuals if v.id is not None), None)
    hw = machine.hardware()
    return Selection(hw.id if hw is not None else None, virtual_id=first)


def make(machine: Machine, topology_id: int | None, processors: object, links: object,
         virtual_id: int | None = None) -> Selection:  # fmt: skip
    """A selection of the hardware topology ``topology_id``, sorted and without repeats;
    SelectionError naming the first processor or link the model lacks."""
    if virtual_id is not None and machine.virtual(virtual_id) is None:
        raise SelectionError(f"the model has no virtual topology {virtual_id}")
    procs = tuple(sorted(set(processors)))  # type: ignore[call-overload]
    ids = tuple(sorted(set(links)))  # type: ignore[call-overload]
    if not procs and not ids:
        return Selection(topology_id, virtual_id=virtual_id)
    hw = _hardware(machine, topology_id)
    if hw is None:
        raise SelectionError(f"the model has no hardware topology {topology_id}")
    n = processor_count(hw)
    bad = next((p for p in procs if isinstance(p, bool) or not isinstance(p, int)
                or not 1 <= p <= n), None)  # fmt: skip
    if bad is not None:
        raise SelectionError(f"topology {topology_id} has processors 1..{n}, not {bad!r}")
    if ids:
        known = {lk.id for lk in hw.links}
        missing = next((i for i in ids if i not in known), None)
        if missing is not None:
            raise SelectionError(f"topology {topology_id} has no link {missing!r}")
    return Selection(topology_id, procs, ids, virtual_id)


def pruned(machine: Machine, selection: Selection) -> Selection:
    """``selection`` less what ``machine`` no longer has (all of it when its topology
    is gone); a virtual topology removed gives way to the first one left."""
    virtual_id = selection.virtual_id
    if virtual_id is None or machine.virtual(virtual_id) is None:
        virtual_id = initial(machine).virtual_id
    hw = _hardware(machine, selection.topology_id)
    if hw is None:
        return replace(initial(machine), virtual_id=virtual_id)
    if selection.empty:
        return replace(selection, virtual_id=virtual_id)
    n = processor_count(hw)
    procs = tuple(p for p in selection.processors if 1 <= p <= n)
    links = selection.links
    if links:
        known = {lk.id for lk in hw.links}
        links = tuple(i for i in links if i in known)
    return Selection(selection.topology_id, procs, links, virtual_id)
