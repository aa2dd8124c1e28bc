"""The open model as Qt sees it: a thin relay of a :class:`parasol_core.session.Session`.

The session owns the model, its engine, its diagnostics, the group-scaler factors and
the undo history; every edit is one of its operations. This class only turns the
session's change records into Qt signals and gives the Edit menu a view of the history.
Windows never keep their own copy of a value: they read from ``document.machine``, edit
through ``document.session``, and redraw from these signals:

* ``changed(Change)``: every record the session publishes;
* ``valuesChanged(Change)``: stored values changed (``change.keys``, ``change.fields``);
* ``derivedChanged(dict)``: expression key -> new value, only those that changed;
* ``structureChanged()``: sections, links or expressions were added, removed or
  re-identified; redraw lists;
* ``scalersChanged()``: group-scaler factors changed;
* ``modelReset()``: another model was opened;
* ``selectionChanged()``: the session's selection changed (chosen, pruned after an
  edit, or emptied for another model).
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from pathlib import Path

from PySide6.QtCore import QObject, QTimer, Signal, SignalInstance
from PySide6.QtGui import QAction

from parasol_core.expr.engine import Engine
from parasol_core.model import Machine, Processor
from parasol_core.session import (
    EDIT,
    OPEN,
    REDO,
    SAVED,
    SELECTED,
    UNDO,
    VALIDATED,
    Change,
    Session,
)
from parasol_core.session.history import History
from parasol_core.session.session import read_model
from parasol_core.syntax.loader import loads

log = logging.getLogger("piui")


class UndoHistory(QObject):
    """The session's history as the Edit menu and the tests see it (the parts of
    ``QUndoStack``'s interface PIUI uses)."""

    indexChanged = Signal(int)
    cleanChanged = Signal(bool)
    canUndoChanged = Signal(bool)
    canRedoChanged = Signal(bool)
    undoTextChanged = Signal(str)
    redoTextChanged = Signal(str)

    def __init__(self, document: Document) -> None:
        super().__init__(document)
        self._document = document
        self._seen: tuple = ()
        self.sync()

    @property
    def _history(self) -> History:
        return self._document.session.history

    def count(self) -> int:
        return len(self._history.steps)

    def index(self) -> int:
        return self._history.index

    def canUndo(self) -> bool:
        return self._history.can_undo

    def canRedo(self) -> bool:
        return self._history.can_redo

    def undoText(self) -> str:
        return self._history.undo_label

    def redoText(self) -> str:
        return self._history.redo_label

    def isClean(self) -> bool:
        return self._history.at_saved

    def undo(self) -> None:
        self._document.session.undo()

    def redo(self) -> None:
        self._document.session.redo()

    def setClean(self) -> None:
        self._document.session.mark_saved()

    def createUndoAction(self, parent: QObject, prefix: str = "&Undo") -> QAction:
        return self._action(parent, prefix, self.undo, self.canUndo, self.undoText,
                            self.canUndoChanged, self.undoTextChanged)  # fmt: skip

    def createRedoAction(self, parent: QObject, prefix: str = "&Redo") -> QAction:
        return self._action(parent, prefix, self.redo, self.canRedo, self.redoText,
                            self.canRedoChanged, self.redoTextChanged)  # fmt: skip

    def _action(
        self,
        parent: QObject,
        prefix: str,
        trigger: Callable[[], None],
        can: Callable[[], bool],
        text: Callable[[], str],
        can_changed: SignalInstance,
        text_changed: SignalInstance,
    ) -> QAction:
        action = QAction(prefix, parent)

        def show(*_: object) -> None:
            action.setEnabled(can())
            label = text()
            action.setText(f"{prefix} {label}" if label else prefix)

        action.triggered.connect(lambda _=False: trigger())
        can_changed.connect(show)
        text_changed.connect(show)
        show()
        return action

    def sync(self) -> None:
        """Emit what changed in the history since the last call."""
        h = self._history
        now = (h.index, h.at_saved, h.can_undo, h.can_redo, h.undo_label, h.redo_label)
        before = self._seen or (None,) * 6
        self._seen = now
        if now[0] != before[0]:
            self.indexChanged.emit(now[0])
        if now[1] != before[1]:
            self.cleanChanged.emit(now[1])
        if now[2] != before[2]:
            self.canUndoChanged.emit(now[2])
        if now[3] != before[3]:
            self.canRedoChanged.emit(now[3])
        if now[4] != before[4]:
            self.undoTextChanged.emit(now[4])
        if now[5] != before[5]:
            self.redoTextChanged.emit(now[5])


class Document(QObject):
    changed = Signal(object)  # Change
    modelReset = Signal()
    valuesChanged = Signal(object)  # Change
    derivedChanged = Signal(object)  # dict[str, Value]
    structureChanged = Signal()
    scalersChanged = Signal()
    pathChanged = Signal(str)
    diagnosticsChanged = Signal(object)  # list[Diagnostic]
    currentProcessorChanged = Signal(object)  # processor id or None
    selectionChanged = Signal()  # the session's selection (chosen, pruned, or a new model)
    sweepRequested = Signal(str)  # what a window's menu asks to sweep (File > Sweep… axis)
    # a route asked about in one window, for the grid view to draw: (src, dst, virtual
    # topology id or None for hardware processors)
    routeShown = Signal(object)

    # Keyboard steps on one control less than this many seconds apart are one undo
    # step, as a drag is.
    KEY_MERGE_WINDOW = 1.0

    def __init__(self, parent: QObject | None = None, session: Session | None = None) -> None:
        super().__init__(parent)
        self.session = session if session is not None else Session()
        self._unsubscribe = self.session.subscribe(self._relay)
        self._current_processor: int | None = None
        self.origin: Path | None = None  # the sample a new model was copied from
        # the last route asked about (show_route), for a view built after: of this model
        self.route_asked: tuple[int, int, int | None] | None = None
        # Which model and which state of it is on screen: ``generation`` counts models
        # opened, ``revision`` every change of the model (an answer about another model or
        # state can be told apart by them).
        self.generation = 0
        self.revision = 0
        self.push_name: str | None = None  # the name given for pushing this model, if any
        self.undo_stack = UndoHistory(self)
        self._validate_timer = QTimer(self)
        self._validate_timer.setSingleShot(True)
        self._validate_timer.setInterval(250)
        self._validate_timer.timeout.connect(self.revalidate)
        self._adopt_current()

    # ---- the session's state, read through

    @property
    def machine(self) -> Machine:
        return self.session.machine

    @property
    def engine(self) -> Engine:
        return self.session.engine

    @property
    def path(self) -> Path | None:
        return self.session.path

    @property
    def diagnostics(self) -> list:
        return self.session.diagnostics

    # ---- opening and saving

    def open(self, path: str | Path) -> None:
        """Load a file. Raises ModelSyntaxError or OSError and keeps the current model."""
        machine, stamp = read_model(path)
        self.origin = None
        self.session.replace(machine, Path(path), stamp)
        log.info("opened %s", path)

    def restore(self, copy: Path, original: Path | None) -> None:
        """The unsaved edits kept in ``copy`` as unsaved changes of ``original`` (or of a
        model never saved): Save writes them there and removes the copy
        (``Session.restore``). Raises ModelSyntaxError or OSError and keeps the current
        model then."""
        origin, self.origin = self.origin, None  # before the model is shown: its title
        try:
            self.session.restore(copy, original)
        except BaseException:
            self.origin = origin
            raise
        log.info("restored the unsaved edits kept in %s", copy)

    def reload(self) -> None:
        """Read the file again (another program changed it), dropping unsaved edits;
        the current processor stays where it still exists. Raises ModelSyntaxError or
        OSError and keeps the current model then."""
        current = self._current_processor
        self.session.reload()
        if current is not None and self.machine.processor(current) is not None:
            self.set_current_processor(current)
        log.info("reloaded %s", self.path)

    def open_copy(self, path: str | Path) -> None:
        """A new, unnamed model with the contents of ``path`` (File > New from sample);
        not modified until it is edited."""
        # read as a model of no file yet: its diagnostics must not name the sample
        machine = loads(Path(path).read_bytes(), None)
        self.origin = Path(path)
        self.session.replace(machine, None, only_in_memory=False)  # the file has it
        log.info("new model from %s", path)

    def new_from_text(self, text: str) -> None:
        """A new, unnamed model read from ``text`` (a measured model); it exists only
        here, so it counts as unsaved until saved. Raises ModelSyntaxError and keeps the
        current model then."""
        machine = loads(text, None)
        self.origin = None
        self.session.replace(machine, None)
        log.info("new model: %s", machine.name)

    def new_from_machine(self, machine: Machine, what: str) -> None:
        """A new, unnamed model (an imported SimGrid platform); it exists only here, so
        it counts as unsaved until saved."""
        self.origin = None
        self.session.replace(machine, None)
        log.info("new model from %s", what)

    def new_blank(self) -> None:
        """A new, unnamed, valid model of one processor type on a one-processor topology
        (File > New blank model; :func:`parasol_core.session.blank.blank_machine`)."""
        from parasol_core.session.blank import blank_machine

        self.origin = None
        self.session.replace(blank_machine(), None, only_in_memory=False)  # made anew at will
        log.info("new blank model")

    def save(self, path: str | Path | None = None, overwrite: bool = False) -> None:
        """Save (atomically). Raises OSError/ValueError (FileChangedOnDisk when another
        program changed the file since it was read, unless ``overwrite``); the document
        stays unsaved then."""
        self.commit_pending()
        target = self.session.save(path, overwrite=overwrite)
        log.info("saved %s", target)

    @property
    def is_modified(self) -> bool:
        return self.session.is_modified

    def title(self) -> str:
        """The file's name; for a model not saved yet, its name, and the sample it was
        copied from."""
        if self.path is not None:
            return self.path.name
        name = self.machine.name or "untitled"
        return f"{name} (copy of {self.origin.name})" if self.origin is not None else name

    # ---- fields being typed in: committed before save, undo and export

    def commit_pending(self) -> None:
        """Apply what is being typed in the focused field, as Enter would (before a
        save or an export: the report's "Ok is assumed")."""
        from PySide6.QtWidgets import QApplication, QLineEdit

        widget = QApplication.focusWidget()
        if isinstance(widget, QLineEdit) and widget.isModified():
            widget.setModified(False)
            commit = getattr(widget, "commit", None)  # an expression editor
            if callable(commit):
                commit()
            else:
                widget.editingFinished.emit()

    # ---- the current processor, which the processor windows follow

    @property
    def current_processor_id(self) -> int | None:
        return self._current_processor

    def current_processor(self) -> Processor | None:
        if self._current_processor is None:
            return None
        return self.machine.processor(self._current_processor)

    def show_route(self, src: int, dst: int, virtual: int | None = None) -> None:
        """Ask the windows that draw the topology to show the route ``src`` -> ``dst``
        (virtual processors of ``virtual`` when given), as the model routes it."""
        self.route_asked = (src, dst, virtual)  # for a view built later
        self.routeShown.emit(self.route_asked)

    def set_current_processor(self, proc_id: int | None) -> None:
        if proc_id != self._current_processor:
            self._current_processor = proc_id
            self.currentProcessorChanged.emit(proc_id)

    def _adopt_current(self) -> None:
        self._known_processors = {id(p) for p in self.machine.processors}
        ids = [p.id for p in self.machine.processors]
        self._current_processor = ids[0] if ids else None

    # ---- the relay

    def _relay(self, change: Change) -> None:
        if change.is_edit:
            self.revision += 1
        if change.reason == OPEN:
            self.generation += 1
            self.push_name = None
            self.route_asked = None
        self.changed.emit(change)
        if change.reason == OPEN:
            self._adopt_current()
            self._validate_timer.stop()
            self.modelReset.emit()
            self.pathChanged.emit(str(self.path) if self.path else "")
            self.currentProcessorChanged.emit(self._current_processor)
            self.diagnosticsChanged.emit(self.diagnostics)
            self.selectionChanged.emit()
        elif change.reason == SELECTED:
            self.selectionChanged.emit()
        elif change.reason == SAVED:
            self.pathChanged.emit(str(self.path) if self.path else "")
        elif change.reason == VALIDATED:
            self.diagnosticsChanged.emit(self.diagnostics)
        elif change.reason in (EDIT, UNDO, REDO):
            if change.structure:
                self._follow_processors(change)
                self.structureChanged.emit()
            if change.fields:
                self.valuesChanged.emit(change)
            if change.derived:
                self.derivedChanged.emit(dict(change.derived))
            if change.scalers:
                self.scalersChanged.emit()
            if change.fields:
                self._validate_timer.start()
        self.undo_stack.sync()

    def _follow_processors(self, change: Change) -> None:
        """Keep a current processor: follow one that appears (added, or brought back by
        undo) or is renumbered; else keep it, or take the first."""
        before = self._known_processors
        procs = self.machine.processors
        self._known_processors = {id(p) for p in procs}
        ids = [p.id for p in procs]
        appeared = [p.id for p in procs if id(p) not in before]
        if appeared:
            self.set_current_processor(appeared[-1])
            return
        if self._current_processor in ids:
            return
        for f in change.fields:
            if isinstance(f.obj, Processor) and f.attr == "id" and f.obj.id in ids:
                self.set_current_processor(f.obj.id)
                return
        self.set_current_processor(ids[0] if ids else None)

    def revalidate(self) -> None:
        self.session.revalidate()
