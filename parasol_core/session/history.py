"""The undo history of a session: steps made of reversible mutations.

Every operation of a :class:`~parasol_core.session.Session` is recorded as a list of
mutations, each of which knows how to apply and revert itself and which stored place it
writes. A step is what one Undo takes back: one operation, several grouped together, or
a run of merged ones (a slider drag).
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any

from parasol_core.model.linkstore import ColumnValues, LinkSet
from parasol_core.session.changes import FieldRef

ABSENT: Any = type("Absent", (), {"__repr__": lambda self: "ABSENT"})()
"""The value of a dict entry that does not exist: setting an entry from ABSENT adds it,
setting it to ABSENT removes it."""


class Mutation:
    """One reversible write to the model (or to the session's own state)."""

    structural = False

    def apply(self) -> None:
        raise NotImplementedError

    def revert(self) -> None:
        raise NotImplementedError

    def field(self) -> FieldRef | None:
        """The model field written, or None for session state (scaler factors)."""
        return None


@dataclass
class SetField(Mutation):
    """``obj.attr = new`` or, with ``key``, ``obj.attr[key] = new`` (ABSENT deletes)."""

    obj: Any
    attr: str
    key: Any
    old: Any
    new: Any
    structural: bool = False

    @staticmethod
    def read(obj: Any, attr: str, key: Any = None) -> Any:
        if key is None:
            return getattr(obj, attr)
        return getattr(obj, attr).get(key, ABSENT)

    def _write(self, value: Any) -> None:
        if self.key is None:
            setattr(self.obj, self.attr, value)
        elif value is ABSENT:
            getattr(self.obj, self.attr).pop(self.key, None)
        else:
            getattr(self.obj, self.attr)[self.key] = value

    def apply(self) -> None:
        self._write(self.new)

    def revert(self) -> None:
        self._write(self.old)

    def field(self) -> FieldRef:
        return FieldRef.of(self.obj, self.attr, self.key)

    def same_place(self, other: SetField) -> bool:
        return self.obj is other.obj and self.attr == other.attr and self.key == other.key


@dataclass(eq=False)
class SetMany(Mutation):
    """The latency or speed (``attr``) of many links of one store set to ``new``, say
    the speed of all 3,000,000 links of a million-processor torus: recorded, applied,
    merged and published as one thing, held as the store and the links' uids
    (:class:`~parasol_core.model.linkstore.LinkSet`), never one view per link. ``olds`` is
    what the columns held (:meth:`LinkStore.snapshot`); both ways write the columns in
    bulk. ``owner`` is the links' topology, for the engine keys."""

    links: LinkSet
    attr: str
    olds: ColumnValues
    new: Any
    owner: Any = None

    def apply(self) -> None:
        self.links.store.set_many(self.links.rows(), self.attr, self.new)

    def revert(self) -> None:
        self.links.store.restore(self.attr, self.olds)

    def field(self) -> FieldRef:
        first = self.links.store.view(int(self.links.rows()[0]))
        return FieldRef.of(first, self.attr, objs=self.links)

    def same_objects(self, other: SetMany) -> bool:
        return self.links.same(other.links)


@dataclass
class ListEdit(Mutation):
    """Insert ``item`` into the list ``obj.attr`` at ``index`` (or, with ``remove``,
    take it out from there)."""

    obj: Any
    attr: str
    index: int
    item: Any
    remove: bool = False
    structural = True

    def _insert(self) -> None:
        getattr(self.obj, self.attr).insert(self.index, self.item)

    def _take(self) -> None:
        items = getattr(self.obj, self.attr)
        if self.index < len(items) and items[self.index] is self.item:
            del items[self.index]
        else:  # found by identity: objects compare by content
            for i, it in enumerate(items):
                if it is self.item:
                    del items[i]
                    break

    def apply(self) -> None:
        self._take() if self.remove else self._insert()

    def revert(self) -> None:
        self._insert() if self.remove else self._take()

    def field(self) -> FieldRef:
        return FieldRef.of(self.obj, self.attr)


@dataclass
class SetState(Mutation):
    """A value of the session's own, kept with the history (the scaler factors)."""

    table: dict
    key: Any
    old: Any
    new: Any

    def _write(self, value: Any) -> None:
        if value is ABSENT:
            self.table.pop(self.key, None)
        else:
            self.table[self.key] = value

    def apply(self) -> None:
        self._write(self.new)

    def revert(self) -> None:
        self._write(self.old)


@dataclass
class Step:
    """What one Undo takes back."""

    label: str
    mutations: list[Mutation] = field(default_factory=list)
    merge_key: Any = None
    last_time: float = field(default_factory=lambda: time.monotonic())
    _index: dict | None = field(default=None, repr=False, compare=False)

    def apply(self) -> None:
        for m in self.mutations:
            m.apply()

    def revert(self) -> None:
        for m in reversed(self.mutations):
            m.revert()

    def absorb(self, other: Step) -> None:
        """Merge a later step into this one: a place written by both keeps this step's
        old value and takes the other's new one, so undo returns to before the first."""
        index = self._index
        if index is None:
            index = self._index = {}
            for m in self.mutations:
                place = _place(m)
                if place is not None:
                    index[place] = m
        for m in other.mutations:
            place = _place(m)
            mine = index.get(place) if place is not None else None
            if mine is not None and (not isinstance(m, SetMany) or mine.same_objects(m)):
                mine.new = m.new  # a bulk edit of the same objects: the olds stay mine
                continue
            self.mutations.append(m)
            if place is not None:
                index[place] = m
        self.label = other.label
        self.last_time = other.last_time

    @property
    def empty(self) -> bool:
        return not self.mutations


def _place(m: Mutation) -> tuple | None:
    """Where a mergeable mutation writes (None: not mergeable, kept as it is)."""
    if isinstance(m, SetField):
        return ("field", id(m.obj), m.attr, m.key)
    if isinstance(m, SetState):
        return ("state", id(m.table), m.key)
    if isinstance(m, SetMany):  # the same links: checked by absorb
        uids = m.links.uids
        return ("many", id(m.links.store), m.attr, len(uids), int(uids[0]), int(uids[-1]))
    return None


class History:
    """A list of steps and the position in it; the saved position marks the file."""

    def __init__(self, limit: int = 1000) -> None:
        self.steps: list[Step] = []
        self.index = 0  # steps[:index] are done
        self.saved: int | None = 0  # index at the last save; None: unreachable
        self.limit = limit

    @property
    def can_undo(self) -> bool:
        return self.index > 0

    @property
    def can_redo(self) -> bool:
        return self.index < len(self.steps)

    @property
    def undo_label(self) -> str:
        return self.steps[self.index - 1].label if self.can_undo else ""

    @property
    def redo_label(self) -> str:
        return self.steps[self.index].label if self.can_redo else ""

    @property
    def at_saved(self) -> bool:
        return self.saved == self.index

    def top(self) -> Step | None:
        return self.steps[self.index - 1] if self.index > 0 else None

    def mergeable(self, merge_key: Any, window: float | None) -> Step | None:
        """The step a new operation with ``merge_key`` merges into, if any: the last
        step done, with the same key, not the saved state, and (with ``window``) made
        less than ``window`` seconds ago."""
        top = self.top()
        if merge_key is None or top is None or top.merge_key != merge_key:
            return None
        if self.index != len(self.steps) or self.at_saved:
            return None
        if window is not None and time.monotonic() - top.last_time > window:
            return None
        return top

    def seal(self) -> None:
        """The last step done takes no later operation into it: the user set a boundary
        after it (OK on the scalers), and an operation after that is a step of its own,
        whatever its merge key and however soon it comes."""
        top = self.top()
        if top is not None:
            top.merge_key = None

    def push(self, step: Step) -> None:
        del self.steps[self.index :]
        if self.saved is not None and self.saved > self.index:
            self.saved = None
        self.steps.append(step)
        self.index += 1
        overflow = len(self.steps) - self.limit
        if overflow > 0:
            del self.steps[:overflow]
            self.index -= overflow
            if self.saved is not None:
                self.saved = self.saved - overflow if self.saved >= overflow else None

    def undo(self) -> Step | None:
        if not self.can_undo:
            return None
        self.index -= 1
        step = self.steps[self.index]
        step.revert()
        return step

    def redo(self) -> Step | None:
        if not self.can_redo:
            return None
        step = self.steps[self.index]
        step.apply()
        self.index += 1
        return step

    def drop_redo(self) -> None:
        """Forget the steps undone (they cannot be redone any more)."""
        del self.steps[self.index :]
        if self.saved is not None and self.saved > self.index:
            self.saved = None

    def clear(self) -> None:
        self.steps.clear()
        self.index = 0
        self.saved = 0
