"""What an edit changed: the typed record a session publishes after every operation.

A front end never decodes strings to find out what moved. It asks the record:
``change.touches(Processor, "name")``, ``"pt(1).iga" in change.keys``,
``change.derived`` for the expressions whose value moved, ``change.structure`` when
sections, links or expressions were added, removed or re-identified.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

from parasol_core.expr.evaluate import Value
from parasol_core.model import VirtualTopology

# Why a record was published.
EDIT = "edit"  # an operation was done
UNDO = "undo"
REDO = "redo"
OPEN = "open"  # another model was opened: redraw everything
SAVED = "saved"  # the file name or the saved state changed; the model did not
VALIDATED = "validated"  # the diagnostics were recomputed
SELECTED = "selected"  # the selection changed (chosen, or pruned after an edit)


@dataclass(frozen=True)
class FieldRef:
    """One stored place that changed: ``obj.attr`` or the entry ``key`` of the dict
    ``obj.attr``. For a list of child sections (``Machine.processors``,
    ``Topology.links``) ``key`` is None and the whole list counts as changed.

    A bulk edit (the same attribute of many links set to one value: the speed of every
    link of a torus) is one FieldRef: ``obj`` is the first link's view and ``objs``
    all of them, as a :class:`~parasol_core.model.linkstore.LinkSet` (a store and uids, no
    view per link; empty for a single place); :meth:`covers` asks about one."""

    obj: Any = field(compare=False)
    attr: str
    key: Any = None
    obj_id: int = field(default=0, repr=False)
    objs: Any = field(default=(), compare=False, repr=False)

    @staticmethod
    def of(obj: Any, attr: str, key: Any = None, objs: Any = ()) -> FieldRef:
        return FieldRef(obj, attr, key, id(obj), objs)

    def covers(self, obj: Any) -> bool:
        """Whether ``obj`` is (one of) the object(s) written."""
        return self.obj is obj or (bool(self.objs) and obj in self.objs)

    @property
    def cls(self) -> type:
        return type(self.obj)


_EMPTY: Mapping[str, Value] = MappingProxyType({})


@dataclass(frozen=True)
class Change:
    """One published change.

    - ``fields``: every stored place the operation wrote (model objects only);
    - ``keys``: the engine keys of the stored values that changed (``pt(1).iga``); of
      a bulk edit of links, those of the links that expressions read (a key per link of
      a 98,304-link torus would cost more than the edit);
    - ``derived``: expression key -> new value, for exactly the expressions whose value
      moved;
    - ``structure``: sections, links or expressions were added, removed or re-identified;
      a view that lists such things redraws;
    - ``scalers``: the group-scaler factors of some processor type changed;
    - ``diagnostics``: the session's diagnostics were recomputed.
    """

    reason: str
    label: str = ""
    fields: tuple[FieldRef, ...] = ()
    keys: frozenset[str] = frozenset()
    derived: Mapping[str, Value] = field(default_factory=lambda: _EMPTY)
    structure: bool = False
    scalers: bool = False
    diagnostics: bool = False

    @property
    def is_edit(self) -> bool:
        """The model's values changed (an edit, an undo, a redo or another model)."""
        return self.reason in (EDIT, UNDO, REDO, OPEN)

    @property
    def mapping_only(self) -> bool:
        """Whether the operation changed nothing but virtual topologies' mappings (a
        swap, a scheme applied, or their undo): the virtual links and the hardware stay,
        so a view of them need only move the virtual processors."""
        return (
            self.reason != OPEN
            and not self.structure
            and bool(self.fields)
            and all(isinstance(f.obj, VirtualTopology) and f.attr == "mapping" for f in self.fields)
        )

    def touches(self, what: type | object, attr: str | None = None) -> bool:
        """Whether a field of ``what`` (a model class, or one object) changed; with
        ``attr``, only that attribute."""
        if self.reason == OPEN:
            return True
        for f in self.fields:
            hit = isinstance(f.obj, what) if isinstance(what, type) else f.covers(what)
            if hit and (attr is None or f.attr == attr):
                return True
        return False

    def entries(self, obj: object, attr: str) -> set[Any]:
        """The keys of the dict ``obj.attr`` that changed (say, the timing names of one
        processor)."""
        return {f.key for f in self.fields if f.obj is obj and f.attr == attr}
