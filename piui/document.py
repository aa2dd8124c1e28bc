"""The open model: one owner, an undo stack, change signals.

Windows never keep their own copy of a value. They read from ``Document.machine``,
change it only by pushing a command (see :mod:`piui.commands`), and redraw when the
document says what changed:

* ``valuesChanged(set[str])``: stored values changed; the set holds engine keys
  (``pt(1).iga``) and, for values no expression can reference, ``obj-attr`` markers;
* ``derivedChanged(dict)``: expression key -> new value, only those that changed;
* ``structureChanged()``: processors, sections or expressions were added, removed or
  renamed; redraw everything;
* ``modelReset()``: another model was opened.
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

from PySide6.QtCore import QObject, QTimer, Signal
from PySide6.QtGui import QUndoStack

from parasol_core.edit import Slot, stored_key
from parasol_core.engine import Engine
from parasol_core.model import Machine, Processor
from parasol_core.syntax.parser import load
from parasol_core.syntax.writer import save
from parasol_core.validate import validate

log = logging.getLogger("piui")


class Document(QObject):
    modelReset = Signal()
    valuesChanged = Signal(object)  # set[str]
    derivedChanged = Signal(object)  # dict[str, Value]
    structureChanged = Signal()
    pathChanged = Signal(str)
    diagnosticsChanged = Signal(object)  # list[Diagnostic]
    currentProcessorChanged = Signal(object)  # processor id or None

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.machine: Machine = Machine()
        self.path: Path | None = None
        self.undo_stack = QUndoStack(self)
        self.engine = Engine(self.machine)
        self.diagnostics: list = []
        self._current_processor: int | None = None
        self._validate_timer = QTimer(self)
        self._validate_timer.setSingleShot(True)
        self._validate_timer.setInterval(250)
        self._validate_timer.timeout.connect(self.revalidate)

    # ---- opening and saving

    def open(self, path: str | Path) -> None:
        """Load a file. Raises ModelSyntaxError or OSError and keeps the current model."""
        machine = load(path)
        self._adopt(machine, Path(path))
        log.info("opened %s", path)

    def open_copy(self, path: str | Path) -> None:
        """A new, unnamed model with the contents of ``path`` (File > New from sample)."""
        machine = load(path)
        self._adopt(machine, None)
        self.undo_stack.resetClean()
        # a model that was never saved counts as modified only once it is edited
        log.info("new model from %s", path)

    def _adopt(self, machine: Machine, path: Path | None) -> None:
        self.machine = machine
        self.path = path
        self.undo_stack.clear()
        self.engine = Engine(machine)
        procs = [p.id for p in machine.processors]
        self._current_processor = procs[0] if procs else None
        self.revalidate()
        self.modelReset.emit()
        self.pathChanged.emit(str(path) if path else "")
        self.currentProcessorChanged.emit(self._current_processor)

    def save(self, path: str | Path | None = None) -> None:
        """Save (atomically). Raises OSError/ValueError; the document stays unsaved then."""
        target = Path(path) if path is not None else self.path
        if target is None:
            raise ValueError("the model has no file name yet: use Save As")
        save(self.machine, target)
        self.path = target
        self.undo_stack.setClean()
        self.pathChanged.emit(str(target))
        log.info("saved %s", target)

    @property
    def is_modified(self) -> bool:
        return not self.undo_stack.isClean()

    def title(self) -> str:
        if self.path is not None:
            return self.path.name
        return self.machine.name or "untitled"

    # ---- the current processor, which the processor windows follow

    @property
    def current_processor_id(self) -> int | None:
        return self._current_processor

    def current_processor(self) -> Processor | None:
        if self._current_processor is None:
            return None
        return self.machine.processor(self._current_processor)

    def set_current_processor(self, proc_id: int | None) -> None:
        if proc_id != self._current_processor:
            self._current_processor = proc_id
            self.currentProcessorChanged.emit(proc_id)

    # ---- edits: commands call these after changing the model

    def push(self, command: Any) -> None:
        self.undo_stack.push(command)

    def slots_changed(self, slots: list[Slot]) -> None:
        """Values in these slots changed: re-evaluate what depends on them, tell windows."""
        keys: set[str] = set()
        structural = False
        for s in slots:
            key = stored_key(self.machine, s)
            if key is None:
                structural = True
                keys.add(f"{type(s.obj).__name__}.{s.attr}")
            else:
                keys.add(key)
        if structural:
            self.structure_changed()
            self.valuesChanged.emit(keys)
            return
        derived = self.engine.update(keys)
        self.valuesChanged.emit(keys)
        if derived:
            self.derivedChanged.emit(derived)
        self._validate_timer.start()

    def structure_changed(self) -> None:
        """Something was added, removed or re-identified: rebuild and redraw everything."""
        self.engine.rebuild()
        ids = [p.id for p in self.machine.processors]
        if self._current_processor not in ids:
            self.set_current_processor(ids[0] if ids else None)
        self.structureChanged.emit()
        self.derivedChanged.emit(dict(self.engine.values()))
        self._validate_timer.start()

    def revalidate(self) -> None:
        self.diagnostics = validate(self.machine)
        self.diagnosticsChanged.emit(self.diagnostics)
