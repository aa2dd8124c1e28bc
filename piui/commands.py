"""Every edit as an undoable command on the document's undo stack.

A slider drag pushes a command per step with the same ``merge_key``; the stack merges
them into one, so the whole drag is one undo step and undo restores the value from
before the drag began.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from PySide6.QtGui import QUndoCommand

from parasol_core.edit import Slot
from parasol_core.model import Processor

_ABSENT = object()  # a dict entry that does not exist (setting it adds it)


def _slot_id(s: Slot) -> tuple:
    return (id(s.obj), s.attr, s.key)


def _read(s: Slot) -> Any:
    if s.key is None:
        return getattr(s.obj, s.attr)
    return getattr(s.obj, s.attr).get(s.key, _ABSENT)


def _write(s: Slot, value: Any) -> None:
    if s.key is None:
        setattr(s.obj, s.attr, value)
    elif value is _ABSENT or value is None:
        getattr(s.obj, s.attr).pop(s.key, None)
    else:
        getattr(s.obj, s.attr)[s.key] = value


class SetValues(QUndoCommand):
    """Set one or more stored values. Mergeable when ``merge_key`` is given."""

    MERGE_ID = 1001

    def __init__(self, document: Any, changes: list[tuple[Slot, Any]], text: str,
                 merge_key: Any = None) -> None:  # fmt: skip
        super().__init__(text)
        self.document = document
        self.merge_key = merge_key
        self.changes = [(s, _read(s), new) for s, new in changes]
        self.extra_redo: list[Callable[[], None]] = []
        self.extra_undo: list[Callable[[], None]] = []

    def id(self) -> int:
        return self.MERGE_ID if self.merge_key is not None else -1

    def mergeWith(self, other: QUndoCommand) -> bool:
        if not isinstance(other, SetValues) or other.merge_key != self.merge_key:
            return False
        index = {_slot_id(s): i for i, (s, _, _) in enumerate(self.changes)}
        for s, old, new in other.changes:
            i = index.get(_slot_id(s))
            if i is None:
                self.changes.append((s, old, new))
            else:
                s0, old0, _ = self.changes[i]
                self.changes[i] = (s0, old0, new)
        self.extra_redo = other.extra_redo or self.extra_redo
        self.setText(other.text())  # "Scale global ×1.8", not the drag's first step
        return True

    def redo(self) -> None:
        for s, _, new in self.changes:
            _write(s, new)
        for f in self.extra_redo:
            f()
        self.document.slots_changed([s for s, _, _ in self.changes])

    def undo(self) -> None:
        for s, old, _ in reversed(self.changes):
            _write(s, old)
        for f in self.extra_undo:
            f()
        self.document.slots_changed([s for s, _, _ in self.changes])


class Structural(QUndoCommand):
    """An edit that adds, removes or moves sections: given as do/undo functions."""

    def __init__(self, document: Any, text: str, do: Callable[[], None],
                 undo: Callable[[], None]) -> None:  # fmt: skip
        super().__init__(text)
        self.document = document
        self._do = do
        self._undo = undo

    def redo(self) -> None:
        self._do()
        self.document.structure_changed()

    def undo(self) -> None:
        self._undo()
        self.document.structure_changed()


# --------------------------------------------------------------------------- processors


def add_processor(document: Any, proc: Processor, text: str = "Add processor type") -> None:
    machine = document.machine
    old_count = machine.processor_count

    def do() -> None:
        machine.processors.append(proc)
        machine.processor_count = len(machine.processors)
        document.set_current_processor(proc.id)

    def undo() -> None:
        machine.processors.remove(proc)
        machine.processor_count = old_count

    document.push(Structural(document, text, do, undo))


def remove_processor(document: Any, proc: Processor) -> None:
    machine = document.machine
    index = machine.processors.index(proc)
    old_count = machine.processor_count

    def do() -> None:
        machine.processors.remove(proc)
        machine.processor_count = len(machine.processors)

    def undo() -> None:
        machine.processors.insert(index, proc)
        machine.processor_count = old_count
        document.set_current_processor(proc.id)

    document.push(Structural(document, f"Remove processor type {proc.id}", do, undo))


def next_processor_id(document: Any) -> int:
    return max((p.id or 0 for p in document.machine.processors), default=0) + 1
