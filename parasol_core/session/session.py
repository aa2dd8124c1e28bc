"""One open model, edited by operations, with undo and typed change records.

Every front end edits a model through a :class:`Session`: the windows of PIUI (through a
thin Qt relay), the command line's ``set`` and ``scale``, and the estimator. An
operation changes the model, is recorded as one undo step (or merged into the last one:
a slider drag is one step), lets the engine re-evaluate exactly what depends on it, and
publishes one :class:`~parasol_core.session.changes.Change` to every subscriber.

    session = Session.open("gcel.machine")
    session.subscribe(lambda change: print(change.label, dict(change.derived)))
    session.set("pt(1).iga", "2e-6")
    session.undo()
    session.save()
"""

from __future__ import annotations

import math
import os
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import numpy as np

from parasol_core.base import filelock, limits, params
from parasol_core.base.arrays import difference, union
from parasol_core.base.limits import MAX_ID
from parasol_core.base.numeric import is_whole
from parasol_core.base.words import counted
from parasol_core.expr.engine import Engine
from parasol_core.model import (
    EXPR,
    EXPRESSION_SECTIONS,
    INT,
    STR,
    Block,
    ExprSection,
    Link,
    Machine,
    Processor,
    Timing,
    Topology,
    VirtualTopology,
)
from parasol_core.model.linkstore import LinkSet, LinkStore
from parasol_core.model.tree import Expression
from parasol_core.session import disk, edit, selection
from parasol_core.session.changes import (
    EDIT,
    OPEN,
    REDO,
    SAVED,
    SELECTED,
    UNDO,
    VALIDATED,
    Change,
    FieldRef,
)
from parasol_core.session.disk import Stamp
from parasol_core.session.history import (
    ABSENT,
    History,
    ListEdit,
    Mutation,
    SetField,
    SetMany,
    SetState,
    Step,
)
from parasol_core.session.scalers import ScalerState, move_factor, reset_factors
from parasol_core.session.selection import Selection
from parasol_core.topology.replacement import Choices, Replacement
from parasol_core.topology.shape import processor_count

Observer = Callable[[Change], None]


# A link added to a topology with no timed link to copy (seconds, seconds per byte).
DEFAULT_LINK_LATENCY = 1e-5
DEFAULT_LINK_SPEED = 1e-6

# Fields no expression can read: changing them needs no re-evaluation.
_UNREFERENCED = frozenset({"name", "routing", "shape"})


class SessionError(ValueError):
    """An operation that cannot be done; the message says why. Nothing was changed."""


class FileChangedOnDisk(SessionError):
    """The file to be saved over was changed by another program since it was read."""

    def __init__(self, path: Path) -> None:
        super().__init__(f"{path} was changed by another program since it was read; "
                         "not saved over it")  # fmt: skip
        self.path = path


def read_model(path: str | Path) -> tuple[Machine, Stamp]:
    """Load a model file and the stamp of the very bytes parsed. Raises
    ModelSyntaxError or OSError."""
    from parasol_core.syntax.loader import decode, loads

    data, st = disk.read_with_stat(path)
    text = decode(data, path)
    stamp = disk.stamp_read(data, st, text)
    del data  # not held through the reading (loader.loads)
    return loads(text, str(path)), stamp


# The fields of a hardware topology that a replacement of it is computed from or that its
# preview shows (Session.topology_version): its name is not one of them.
REPLACEMENT_BASIS = frozenset(
    {"id", "setup", "types", "routing", "shape", "processor_count", "link_count", "links"}
)


class Session:
    """One open model: the machine, its engine and diagnostics, its file and saved
    state, the group-scaler factors of each processor type, and the undo history."""

    def __init__(self, machine: Machine | None = None, path: str | Path | None = None) -> None:
        self.machine: Machine = machine if machine is not None else Machine()
        self.path: Path | None = Path(path) if path is not None else None
        self.engine = Engine(self.machine)
        self.history = History()
        self._observers: list[Observer] = []
        self._diagnostics: list | None = None
        self._scalers: dict[int, tuple[Processor, ScalerState]] = {}
        self._open: Step | None = None
        self._drag: tuple[Any, str, Processor, dict[str, Timing], ScalerState] | None = None
        self._structure = 0  # counts structural changes (ids, lists, models)
        # id(topology) -> edits of what a replacement of it is computed from
        # (REPLACEMENT_BASIS; see topology_version)
        self._topology_edits: dict[int, int] = {}
        self._virtual_edits = 0  # edits of virtual topologies (see replacement_version)
        self._picked: tuple | None = None  # the last links picked by id (_pick_links)
        self.disk_stamp: Stamp | None = None  # the file as read or last written
        self.selection: Selection = selection.initial(self.machine)
        # a model that differs from every file on disk (measured, imported, recovered)
        # counts as modified, edited or not, until it is saved (see ``replace``)
        self.only_in_memory = False
        # the copy of unsaved edits this model was restored from (recovery.py): removed
        # when the model is saved, or by discard_recovered when its edits are dropped
        self.recovered_from: Path | None = None

    # ------------------------------------------------------------------ files

    @classmethod
    def open(cls, path: str | Path) -> Session:
        """A session on a model file. Raises ModelSyntaxError or OSError."""
        machine, stamp = read_model(path)
        session = cls(machine, path)
        session.disk_stamp = stamp
        return session

    @classmethod
    def from_text(cls, text: str | bytes, path: str | Path | None = None) -> Session:
        from parasol_core.syntax.loader import loads

        return cls(loads(text, str(path) if path is not None else None), path)

    def replace(self, machine: Machine, path: str | Path | None, stamp: Stamp | None = None,
                *, only_in_memory: bool | None = None) -> None:  # fmt: skip
        """Put another model in this session (File > Open): history and scalers start
        afresh; subscribers get one ``open`` record. ``stamp`` is what was read of the
        file (see :func:`read_model`), so that its later changes on disk are noticed.

        ``only_in_memory``: the model exists nowhere else (a measurement, an imported
        platform), so it counts as modified until it is saved, edited or not; by default,
        when it has no file. Pass False for a model with no file that is no loss to drop
        (an unedited copy of a file, the blank model)."""
        self.only_in_memory = path is None if only_in_memory is None else only_in_memory
        self.recovered_from = None  # left on disk: another model is no reason to drop it
        self.machine = machine
        self.path = Path(path) if path is not None else None
        self.disk_stamp = stamp
        self.selection = selection.initial(machine)
        self.engine = Engine(machine)
        self.history.clear()
        self._scalers.clear()
        self._drag = None
        self._structure += 1
        self._diagnostics = None
        self._publish(Change(OPEN, "open", structure=True, scalers=True, diagnostics=True,
                             derived=dict(self.engine.values())))  # fmt: skip

    def restore(self, copy: str | Path, original: str | Path | None) -> None:
        """Put the model kept in ``copy`` (unsaved edits of ``original``, or of a model
        never saved: :mod:`parasol_core.session.recovery`) in this session, as unsaved
        changes of ``original``: it counts as modified until saved, and Save writes it
        to ``original``, over the file as it is now. The copy is removed when the model
        is saved (or by :meth:`discard_recovered`). Raises ModelSyntaxError (naming the
        copy, its line and column) or OSError, and keeps the current model then."""
        machine, _ = read_model(copy)
        stamp = None
        if original is not None:
            try:  # the file as it is now: saving over it is what restoring asks for
                _, stamp = disk.read_stamped(original)
            except FileNotFoundError:
                stamp = None  # gone since: Save writes it anew
        self.replace(machine, original, stamp, only_in_memory=True)
        self.recovered_from = Path(copy)

    def discard_recovered(self) -> None:
        """The restored edits are dropped: delete the copy they were restored from."""
        if self.recovered_from is not None:
            from parasol_core.session import recovery

            recovery.discard(self.recovered_from)
            self.recovered_from = None

    def reload(self) -> None:
        """Read the session's file again (it changed on disk), dropping unsaved edits
        and the history. Raises ModelSyntaxError or OSError and keeps the model then."""
        if self.path is None:
            raise SessionError("the model has no file to reload")
        machine, stamp = read_model(self.path)
        kept = self.selection
        self.replace(machine, self.path, stamp)
        self._prune(kept)  # the same file: what still exists stays selected

    def disk_status(self) -> str:
        """How the session's file on disk stands against what the session read or last
        wrote: ``unchanged``, ``changed`` (another program wrote it), ``missing``
        (deleted or moved away) or ``unknown`` (no file, or one not read here)."""
        status = disk.status(self.path, self.disk_stamp)
        if status == disk.UNCHANGED and self.path is not None and self.disk_stamp is not None:
            try:  # touched only: remember the new time, so the next look is a stat
                self.disk_stamp = disk.refreshed(self.path, self.disk_stamp)
            except OSError:
                pass
        return status

    def disk_text(self) -> str:
        """The text of the session's file as it is on disk now."""
        if self.path is None:
            raise SessionError("the model has no file")
        data, _ = disk.read_stamped(self.path)
        return data.decode("utf-8", errors="replace")

    def save(self, path: str | Path | None = None, overwrite: bool = False,
             lock_timeout: float = filelock.DEFAULT_TIMEOUT) -> Path:  # fmt: skip
        """Write the model (atomically, changing only what was edited), holding the
        file's lock (:mod:`parasol_core.base.filelock`) from the check to the replace.

        Saving onto the session's own file after another program changed it raises
        :class:`FileChangedOnDisk` and writes nothing, unless ``overwrite``. Raises
        OSError (LockTimeout among them) or ValueError; the session stays unsaved then."""
        from parasol_core.syntax.writer import save

        target = Path(path) if path is not None else self.path
        if target is None:
            raise SessionError("the model has no file name yet: save it under a name")
        with filelock.locked(target, lock_timeout):
            if not overwrite and self._is_own_file(target) and self.disk_status() == disk.CHANGED:
                raise FileChangedOnDisk(target)
            text = save(self.machine, target)
            self.disk_stamp = disk.stamp_written(target, text)
        self.path = target
        self.history.saved = self.history.index
        self.only_in_memory = False
        if self.recovered_from is not None:  # saved: the copy holds nothing more
            from parasol_core.session import recovery

            try:
                recovery.discard(self.recovered_from)
            except OSError:  # left behind (a copy beside the file is older now: not offered)
                pass
            self.recovered_from = None
        self._publish(Change(SAVED, f"saved {target}"))
        return target

    def _is_own_file(self, target: Path) -> bool:
        if self.path is None:
            return False
        return os.path.realpath(target) == os.path.realpath(self.path)

    def text(self) -> str:
        """The model as it would be saved."""
        from parasol_core.syntax.writer import dumps

        return dumps(self.machine)

    @property
    def is_modified(self) -> bool:
        """Whether dropping the model would lose work: it was edited since it was read
        or saved, or it exists only in memory (``replace``)."""
        return self.only_in_memory or not self.history.at_saved

    def mark_saved(self) -> None:
        """Take the present state as the saved one (say, after writing it elsewhere)."""
        self.history.saved = self.history.index
        self.only_in_memory = False
        self._publish(Change(SAVED, "marked saved"))

    # ------------------------------------------------------------------ observers

    def subscribe(self, observer: Observer) -> Callable[[], None]:
        """Call ``observer(change)`` after every operation; returns the unsubscriber."""
        self._observers.append(observer)
        return lambda: self._observers.remove(observer) if observer in self._observers else None

    def _publish(self, change: Change) -> None:
        for observer in list(self._observers):
            observer(change)

    # ------------------------------------------------------------------ diagnostics

    @property
    def diagnostics(self) -> list:
        """Every diagnostic of the model as it is now (computed when first asked after
        a change, with the session's own engine)."""
        if self._diagnostics is None:
            from parasol_core.analysis.validate import validate

            self._diagnostics = validate(self.machine, self.engine)
        return self._diagnostics

    @property
    def diagnostics_stale(self) -> bool:
        return self._diagnostics is None

    def revalidate(self) -> list:
        """Recompute the diagnostics now and publish a ``validated`` record."""
        self._diagnostics = None
        out = self.diagnostics
        self._publish(Change(VALIDATED, "validated", diagnostics=True))
        return out

    # ------------------------------------------------------------------ undo

    @property
    def can_undo(self) -> bool:
        return self.history.can_undo

    @property
    def can_redo(self) -> bool:
        return self.history.can_redo

    def undo(self) -> Change | None:
        if self._open is not None:
            raise SessionError("cannot undo inside a group of operations")
        self._drag = None
        step = self.history.undo()
        return None if step is None else self._after(UNDO, step.label, step.mutations)

    def redo(self) -> Change | None:
        if self._open is not None:
            raise SessionError("cannot redo inside a group of operations")
        self._drag = None
        step = self.history.redo()
        return None if step is None else self._after(REDO, step.label, step.mutations)

    def go_to(self, index: int) -> None:
        """Undo or redo to a position in the history (``index`` steps done: 0 is the
        model as opened), one step at a time, each published as usual."""
        if not 0 <= index <= len(self.history.steps):
            raise SessionError(f"no history position {index} "
                               f"(0 to {len(self.history.steps)})")  # fmt: skip
        while self.history.index > index:
            self.undo()
        while self.history.index < index:
            self.redo()

    @contextmanager
    def group(self, label: str) -> Iterator[None]:
        """Operations inside the block make one undo step and one change record. If the
        block raises, everything it did is reverted."""
        with self._operation(label):
            yield

    @contextmanager
    def _operation(
        self, label: str, merge: Any = None, window: float | None = None
    ) -> Iterator[Step]:
        if self._open is not None:  # inside a group: join it
            yield self._open
            return
        if window is None:  # a merge key may carry its own window (key presses)
            window = getattr(merge, "merge_window", None)
        step = Step(label, merge_key=merge)
        self._open = step
        try:
            yield step
        except BaseException:
            step.revert()
            self._open = None
            raise
        self._open = None
        self._commit(step, window)

    def _commit(self, step: Step, window: float | None) -> None:
        if step.empty:
            return
        if self._drag is not None and self._drag[0] != step.merge_key:
            self._drag = None
        target = self.history.mergeable(step.merge_key, window)
        if target is not None:
            target.absorb(step)
        else:
            self.history.push(step)
        self._after(EDIT, step.label, step.mutations)

    def _record(self, mutation: Mutation) -> None:
        """Apply a mutation as part of the operation under way."""
        if self._open is None:
            raise RuntimeError("a mutation outside an operation")
        mutation.apply()
        self._open.mutations.append(mutation)

    def _set(
        self, obj: Any, attr: str, new: Any, key: Any = None, structural: bool = False
    ) -> None:
        old = SetField.read(obj, attr, key)
        if old is new or (old == new and type(old) is type(new)
                          and getattr(old, "comment", None) == getattr(new, "comment", None)):  # fmt: skip
            return
        self._record(SetField(obj, attr, key, old, new, structural))

    def _after(self, reason: str, label: str, mutations: list[Mutation]) -> Change:
        """Re-evaluate what the mutations touched and publish the change."""
        fields: list[FieldRef] = []
        keys: set[str] = set()
        rebuild = False
        scalers = False
        for m in mutations:
            f = m.field()
            if f is None:
                scalers = True
                continue
            fields.append(f)
            if isinstance(f.obj, Topology) and f.attr in REPLACEMENT_BASIS:
                self._topology_edits[id(f.obj)] = self._topology_edits.get(id(f.obj), 0) + 1
            if isinstance(f.obj, VirtualTopology) or (
                    isinstance(f.obj, Machine) and f.attr == "virtuals"):  # fmt: skip
                self._virtual_edits += 1
            if isinstance(m, SetMany):  # a bulk edit: the keys of what is read of it
                bulk = self._bulk_keys(m)
                if bulk is None:
                    rebuild = True
                else:
                    keys |= bulk
                continue
            if m.structural:
                rebuild = True
                continue
            if f.attr in _UNREFERENCED:
                continue
            # a link's topology is the one holding its store (no pass over the links)
            key = edit.stored_key(self.machine, f.obj, f.attr, f.key)
            if key is None:
                rebuild = True
            else:
                keys.add(key)
        if rebuild:
            self._structure += 1
            derived = self.engine.rebuild_and_compare()
        elif keys:
            derived = self.engine.update(keys)
        else:
            derived = {}
        self._diagnostics = None
        change = Change(reason, label, tuple(fields), frozenset(keys), derived, rebuild,
                        scalers, diagnostics=False)  # fmt: skip
        self._publish(change)
        if rebuild or change.touches(Topology):
            self._prune(self.selection)
        return change

    def topology_version(self, topology: Topology) -> tuple:
        """A version of what a replacement of ``topology`` is computed from (the topology
        editor's preview of a generated topology: ``generate_over`` reads its id, setup
        time and processor types, ``compare_topologies`` its links, routing and shape,
        and the switch type to add reads the model's switch types). Two are equal
        (``==``) unless, between them, the topology was replaced, a link of it was added,
        removed or changed (its link store's version: every write to the store changes
        it), one of :data:`REPLACEMENT_BASIS` was set (an undo or redo counts), or the
        model's switch types changed. Renaming the topology changes nothing of it."""
        return (
            id(topology),
            id(topology.links),
            topology.links.version,
            self._topology_edits.get(id(topology), 0),
            tuple(p.id for p in self.machine.processors if p.is_switch),
        )

    # ------------------------------------------------------------------ selection

    def select(self, topology_id: int | None, processors: object = (), links: object = (),
               ) -> Selection:  # fmt: skip
        """Select processors and links of the hardware topology ``topology_id``.
        Raises SelectionError (a SessionError) naming what the model lacks, and keeps
        the selection then."""
        try:
            new = selection.make(self.machine, topology_id, processors, links,
                                 self.selection.virtual_id)  # fmt: skip
        except selection.SelectionError as e:
            raise SessionError(str(e)) from None
        self._selected(new)
        return new

    def choose_virtual(self, virt_id: int | None) -> None:
        """The virtual topology the windows look at (the grid view draws its links, the
        mapping editor edits it). SessionError when the model has no such one."""
        if virt_id is not None and self.machine.virtual(virt_id) is None:
            raise SessionError(f"the model has no virtual topology {virt_id}")
        self._selected(selection.choosing(self.selection, virt_id))

    def _prune(self, kept: Selection) -> None:
        self._selected(selection.pruned(self.machine, kept))

    def _selected(self, new: Selection) -> None:
        if new != self.selection:
            self.selection = new
            self._publish(Change(SELECTED, "selection"))

    # ------------------------------------------------------------------ values

    def set(self, ref: str, text: str, *, label: str | None = None, merge: Any = None,
            window: float | None = None) -> edit.Slot:  # fmt: skip
        """Set the value a reference names from text read as the file format reads it
        (``session.set("pt(1).iga", "7.4e-7 1e-9")``). Raises EditError."""
        with self._operation(label or f"Set {ref}", merge, window):
            s = self.slot(ref)
            if (
                isinstance(s.obj, VirtualTopology)
                and s.attr == "mapping"
                and not is_whole(text.strip())
            ):  # a hardware processor, by the name the topology keeps for it
                value: Any = self._processor_by_name(text, s.label)
            else:
                value = edit.parse_value(s.kind, text, s.label)
            self._set_slot(s, value)
        return s

    def _processor_by_name(self, text: str, label: str) -> int:
        """The hardware processor a name of its ``# piui: names`` line means (issue 36:
        every command takes a name where it takes a processor); EditError otherwise."""
        from parasol_core.topology.errors import RoutingError
        from parasol_core.topology.names import processor_number

        try:
            return processor_number(self.machine.hardware(), text, label)
        except RoutingError as e:
            raise edit.EditError(str(e)) from None

    def set_value(self, target: str | edit.Slot, value: Any, *, label: str | None = None,
                  merge: Any = None, window: float | None = None) -> None:  # fmt: skip
        """Set a value (already of the slot's kind; None or ABSENT removes a table entry)."""
        if label is None:
            label = f"Set {target if isinstance(target, str) else target.label}"
        self.set_values([(target, value)], label=label, merge=merge, window=window)

    def set_values(self, changes: list[tuple[str | edit.Slot, Any]], *, label: str,
                   merge: Any = None, window: float | None = None) -> None:  # fmt: skip
        """Set several values as one step."""
        with self._operation(label, merge, window):
            for target, value in changes:
                s = self.slot(target) if isinstance(target, str) else target
                self._set_slot(s, value)

    def slot(self, ref: str) -> edit.Slot:
        """The stored place ``ref`` names; a missing cache or section it needs is created
        as part of the operation under way (so undo removes it)."""
        if self._open is None:
            return edit.slot(self.machine, ref, create=False)
        created: list[tuple[Any, str, Any]] = []
        s = edit.slot(self.machine, ref, create=True, created=created)
        for obj, attr, value in created:  # already set by edit.slot: record it
            self._open.mutations.append(SetField(obj, attr, None, None, value, structural=True))
        return s

    def _set_slot(self, s: edit.Slot, value: Any) -> None:
        if value is None and s.key is not None:
            value = ABSENT
        if s.kind == INT and value is not ABSENT and value is not None:
            edit.check_int(s.attr, value, s.label)
        if s.kind == STR and value is not ABSENT and value is not None:
            edit.check_name(value, s.label)  # refused now, not when the file is saved
            blank = limits.blank_name(value, s.label) if s.attr == "name" else None
            if blank is not None:
                raise edit.EditError(blank)
        if s.attr == "id" and isinstance(s.obj, Processor) and value != s.obj.id:
            self._renumber(s.obj, value)
            return
        structural = s.attr == "id" or s.kind == EXPR
        self._set(s.obj, s.attr, value, s.key, structural)

    # ------------------------------------------------------------------ expressions

    def set_expression(self, ref: str, expression: str | Expression | None, *,
                       label: str | None = None, comment: str | None = None) -> None:  # fmt: skip
        """Set (or with None remove) the expression a reference names, creating the
        section it belongs in if needed. ``comment`` (a fit says how it was fitted) goes
        after the expression on its line when saved, replacing the comment the line had,
        which was about the value before. Raises EditError for a reference that names no
        expression, for text that does not parse and for a comment a line cannot hold."""
        if isinstance(expression, str):
            expression = edit.parse_value(EXPR, expression, ref)
        if comment is not None and expression is not None:
            from dataclasses import replace

            from parasol_core.syntax.writer import comment_text

            try:
                expression = replace(expression, comment=comment_text(comment))
            except ValueError as e:
                raise edit.EditError(f"{ref}: {e}") from None
        verb = "Remove" if expression is None else "Set"
        with self._operation(label or f"{verb} {ref}"):
            s = self.slot(ref)
            if s.kind != EXPR:
                raise edit.EditError(f"'{ref}' is not an expression")
            self._set(s.obj, s.attr, ABSENT if expression is None else expression, s.key, True)
            if expression is None and isinstance(s.obj, ExprSection) and not s.obj.entries:
                owner = self._section_owner(s.obj)
                if owner is not None:  # the section goes with its last expression
                    self._set(owner[0], owner[1], None, None, True)

    def _section_owner(self, section: ExprSection) -> tuple[Machine, str] | None:
        for cls in EXPRESSION_SECTIONS:
            if getattr(self.machine, cls.ATTR) is section:
                return self.machine, cls.ATTR
        return None

    # ------------------------------------------------------------------ scalers

    def scaler(self, proc: Processor | int) -> ScalerState:
        """The group-scaler factors of a processor type (kept by the object, so they
        survive a change of its id)."""
        if isinstance(proc, int):
            proc = self._processor(proc)
        entry = self._scalers.get(id(proc))
        return entry[1] if entry is not None and entry[0] is proc else ScalerState()

    def move_scaler(self, proc_id: int, group: str, factor: float, *, merge: Any = None,
                    window: float | None = None) -> None:  # fmt: skip
        """Move one group's scaler of a processor type to ``factor``. Calls with the same
        ``merge`` key (a drag) are one undo step, computed from the values at its start
        so that returning to the start factor restores the exact values."""
        proc = self._processor(proc_id)
        if group not in params.GROUPS:
            raise SessionError(f"unknown group '{group}' (known: {', '.join(params.GROUPS)})")
        drag = self._drag
        if (merge is None or drag is None or drag[0] != merge or drag[1] != group
                or drag[2] is not proc
                or self.history.mergeable(merge, window) is None):  # fmt: skip
            drag = (merge, group, proc, dict(proc.timings), self.scaler(proc))
        try:
            new, state = move_factor(drag[3], drag[4], group, factor)
        except ValueError as e:
            raise SessionError(str(e)) from None
        label = f"Scale {params.GROUPS[group].label.lower()} ×{factor:.3g}"
        self._apply_scaling(proc, new, state, label, merge, window)
        self._drag = drag if merge is not None else None

    def accept_scalers(self, proc_id: int) -> None:
        """OK: keep the scaled timings; every factor starts again from 1x on them. Not
        an undo step (the timings do not change)."""
        proc = self._processor(proc_id)
        self._drag = None
        if self.scaler(proc).is_neutral:
            return
        # a scaler step after OK is one of its own, never merged into the one before
        # (a key press soon after would be): Cancel goes back to this OK, no further
        self.history.seal()
        self._scalers.pop(id(proc), None)
        self._publish(Change(EDIT, "Accept scaling", scalers=True))

    def cancel_scalers(self, proc_id: int) -> None:
        """Cancel: the model as it was at the last OK, its undo history and saved state
        included: the scaling steps made since are undone and forgotten. Only when other
        edits were made between them is the rest reset by one undo step."""
        proc = self._processor(proc_id)
        if self.scaler(proc).is_neutral:
            return
        self._drag = None
        while not self.scaler(proc).is_neutral and self._scales_only(self.history.top(), proc):
            self.undo()
        if self.scaler(proc).is_neutral:
            self.history.drop_redo()
            self._publish(Change(EDIT, "Cancel instruction group scaling", scalers=True))
            return
        new, neutral = reset_factors(dict(proc.timings), self.scaler(proc))
        self._apply_scaling(proc, new, neutral, "Cancel instruction group scaling", None, None)

    def _scales_only(self, step: Step | None, proc: Processor) -> bool:
        """Whether ``step`` is a group scaling of ``proc`` and nothing else."""
        if step is None:
            return False
        return all(
            (isinstance(m, SetState) and m.table is self._scalers and m.key == id(proc))
            or (isinstance(m, SetField) and m.obj is proc and m.attr == "timings")
            for m in step.mutations
        )

    def _apply_scaling(self, proc: Processor, new: Mapping[str, Timing], state: ScalerState,
                       label: str, merge: Any, window: float | None) -> None:  # fmt: skip
        with self._operation(label, merge, window):
            for name, timing in new.items():
                old = proc.timings.get(name)
                what = f"scaling timing '{name}' of processor {proc.id}"
                try:
                    limits.check_scaled(old.mean if old else None, timing.mean, what)
                    limits.check_scaled(old.sd if old else None, timing.sd, what)
                    if not math.isfinite(timing.mean):  # a timing the scaler had not seen
                        raise limits.ValueRangeError(f"{what} gives a number too large to "
                                                     "represent")  # fmt: skip
                except limits.ValueRangeError as e:
                    raise SessionError(str(e)) from None
                self._set(proc, "timings", timing, name)
            old = self._scalers.get(id(proc), ABSENT)
            entry = ABSENT if state.is_neutral else (proc, state)
            if old != entry:
                self._record(SetState(self._scalers, id(proc), old, entry))

    def scale_group(self, group: str, factor: float, processor_id: int | None = None) -> int:
        """Multiply every timing of ``group`` (mean and standard deviation) by ``factor``
        on one processor type or all (:func:`edit.group_scaling`), as one step; returns
        how many timings changed."""
        try:
            scaled = edit.group_scaling(self.machine, group, factor, processor_id)
        except edit.EditError as e:
            raise SessionError(str(e)) from None
        with self._operation(f"Scale {group} ×{factor:g}"):
            for proc, name, timing in scaled:
                self._set(proc, "timings", timing, name)
        return len(scaled)

    # ------------------------------------------------------------------ processors

    def _processor(self, proc_id: int) -> Processor:
        proc = self.machine.processor(proc_id)
        if proc is None:
            raise SessionError(f"there is no processor with id {proc_id}")
        return proc

    def next_processor_id(self) -> int:
        return max((p.id or 0 for p in self.machine.processors), default=0) + 1

    def add_processor(self, proc: Processor | None = None, *, label: str = "Add processor type",
                      ) -> Processor:  # fmt: skip
        """Add a processor type (a new empty one by default) at the end."""
        if proc is None:
            ident = self.next_processor_id()
            proc = Processor(ident, f"processor {ident}")
        self.check_new_id(proc.id, self.machine.processors, "processor")
        with self._operation(label):
            self._record(ListEdit(self.machine, "processors", len(self.machine.processors), proc))
            self._set(self.machine, "processor_count", len(self.machine.processors))
        return proc

    def duplicate_processor(self, proc_id: int) -> Processor:
        """A copy of a processor type under the next free id; its ratios refer to the copy."""
        source = self._processor(proc_id)
        copy = edit.copy_processor(source, self.next_processor_id())
        return self.add_processor(copy, label=f"Duplicate processor type {proc_id}")

    def remove_processor(self, proc_id: int) -> None:
        proc = self._processor(proc_id)
        index = next(i for i, p in enumerate(self.machine.processors) if p is proc)
        with self._operation(f"Remove processor type {proc_id}"):
            self._record(ListEdit(self.machine, "processors", index, proc, remove=True))
            self._set(self.machine, "processor_count", len(self.machine.processors))

    def processor_users(self, proc_id: int) -> list[str]:
        """What would break if processor type ``proc_id`` went: the expressions that
        reference it and the topology processors of that type, in words."""
        out = []
        for owner, name, expr in self._expressions():
            if any(r.prefix in ("pr", "pt", "pc", "po") and r.indices == (proc_id,)
                   for r in expr.references()):  # fmt: skip
                out.append(f"{_owner_label(owner)} {name} = {expr.text}")
        for topo in self.machine.topologies:
            n = sum(1 for t in topo.types.values() if t == proc_id)
            if n:
                out.append(f"{n} processor(s) of topology {topo.id} are of this type")
        return out

    def renumber_processor(self, old_id: int, new_id: int) -> None:
        """Give processor type ``old_id`` the id ``new_id`` and re-point every reference
        to it (expressions anywhere, topology processor types) as one step."""
        proc = self._processor(old_id)
        if new_id == old_id:
            return
        with self._operation(f"Renumber processor type {old_id} to {new_id}"):
            self._renumber(proc, new_id)

    def _renumber(self, proc: Processor, new_id: int) -> None:
        old_id = proc.id
        self.check_new_id(new_id, [p for p in self.machine.processors if p is not proc],
                          "processor")  # fmt: skip
        self._set(proc, "id", new_id, structural=True)
        if old_id is None:
            return
        for owner, name, expr in self._expressions():
            tree = edit.retarget(expr.tree, old_id, new_id)
            if tree != expr.tree:
                attr = "combinations" if isinstance(owner, Processor) else "entries"
                self._set(owner, attr, Expression.from_tree(tree), name, structural=True)
        for topo in self.machine.topologies:
            for number, type_id in list(topo.types.items()):
                if type_id == old_id:
                    self._set(topo, "types", new_id, number)

    def _expressions(self) -> Iterator[tuple[Block, str, Expression]]:
        m = self.machine
        for proc in m.processors:
            for name, expr in proc.combinations.items():
                yield proc, name, expr
        for section in (m.combinations, m.pvm, m.express, m.mpi):
            if section is not None:
                for name, expr in section.entries.items():
                    yield section, name, expr

    def check_new_id(self, ident: Any, others: list, what: str) -> None:
        """Refuse an id the file format cannot hold or that another object has."""
        if isinstance(ident, bool) or not isinstance(ident, int):
            raise SessionError(f"a {what} id must be a whole number, not {ident!r}")
        if not 1 <= ident <= MAX_ID:
            raise SessionError(f"a {what} id must be between 1 and {MAX_ID}, not {ident}")
        taken = (
            others.row_of_id(ident) is not None  # links: the store's id lookup
            if isinstance(others, LinkStore)
            else any(o.id == ident for o in others)
        )
        if taken:
            raise SessionError(f"there is already a {what} with id {ident}")

    # ------------------------------------------------------------------ topologies

    def _topology(self, topo_id: int) -> Topology:
        topo = self.machine.topology(topo_id)
        if topo is None:
            raise SessionError(f"there is no hardware topology with id {topo_id}")
        return topo

    def _virtual(self, virt_id: int) -> VirtualTopology:
        virt = self.machine.virtual(virt_id)
        if virt is None:
            raise SessionError(f"there is no virtual topology with id {virt_id}")
        return virt

    def new_link(self, topo_id: int, a: int, b: int, latency: Timing | None = None,
                 speed: Timing | None = None) -> Link:  # fmt: skip
        """Add a link between processors ``a`` and ``b``: the next free link id, and,
        unless given, the latency and speed of the topology's first timed link (a new
        topology's: :data:`DEFAULT_LINK_LATENCY`, :data:`DEFAULT_LINK_SPEED`)."""
        topo = self._topology(topo_id)
        first = next((lk for lk in topo.links if lk.latency and lk.speed), None)
        link = Link(
            id=_highest_link_id(topo.links) + 1,
            latency=latency or (first.latency if first else Timing(DEFAULT_LINK_LATENCY)),
            speed=speed or (first.speed if first else Timing(DEFAULT_LINK_SPEED)),
            connect=[a, b],
        )
        return self.add_link(topo_id, link)

    def add_link(self, topo_id: int, link: Link) -> Link:
        """Add a link at the end of a topology's link list (its count follows). Refused
        (SessionError, nothing changed): an id in use or out of range, a connect list
        that is not two or more different processors of the topology, a latency or
        speed that is not a non-negative number."""
        topo = self._topology(topo_id)
        self.check_new_id(link.id, topo.links, "link")
        n = processor_count(topo)
        ends = link.connect or []
        if len(ends) < 2 or len(set(ends)) != len(ends):
            raise SessionError(f"a link joins two or more different processors, not {ends!r}")
        bad = next((p for p in ends if isinstance(p, bool) or not isinstance(p, int)
                    or not 1 <= p <= n), None)  # fmt: skip
        if bad is not None:
            raise SessionError(f"topology {topo_id} has processors 1..{n}, not {bad!r}")
        for what in ("latency", "speed"):
            t = getattr(link, what)
            if not isinstance(t, Timing) or not math.isfinite(t.mean) or t.mean < 0:
                raise SessionError(f"a link {what} must be a non-negative number, not {t!r}")
        with self._operation(f"Add link {link.id} to topology {topo_id}"):
            self._record(ListEdit(topo, "links", len(topo.links), link))
            self._set(topo, "link_count", len(topo.links))
        return link

    def remove_link(self, topo_id: int, link_id: int) -> None:
        topo = self._topology(topo_id)
        index = topo.links.row_of_id(link_id)
        if index is None:
            raise SessionError(f"topology {topo_id} has no link with id {link_id}")
        link = topo.links[index]
        with self._operation(f"Remove link {link_id} of topology {topo_id}"):
            self._record(ListEdit(topo, "links", index, link, remove=True))
            self._set(topo, "link_count", len(topo.links))

    def set_links(self, topo_id: int, link_ids: Sequence[int] | np.ndarray, *,
                  latency: Timing | None = None, speed: Timing | None = None,
                  label: str | None = None, merge: Any = None,
                  window: float | None = None) -> None:  # fmt: skip
        """Set the latency and/or speed of several links of a topology as one step.
        ``link_ids`` is any sequence of ids or an integer array; every link holding one
        of them is set (a link group of a million-processor torus: 3,000,000 ids, set
        in the store's columns with no view per link)."""
        topo = self._topology(topo_id)
        for value, what in ((latency, "latency"), (speed, "speed")):
            if value is not None and (not math.isfinite(value.mean) or value.mean < 0):
                raise SessionError(f"a link {what} must be a non-negative number")
        picked = self._pick_links(topo, link_ids)
        with self._operation(label or f"Set {counted(len(picked), 'link')} of topology {topo_id}",
                             merge, window):  # fmt: skip
            for attr, value in (("latency", latency), ("speed", speed)):
                if value is not None:
                    self._set_links(picked, attr, value, topo)

    def _pick_links(self, topo: Topology, link_ids: Sequence[int] | np.ndarray) -> LinkSet:
        """The links of ``topo`` with these ids, in the topology's order (every link with
        one of the ids, as a scan would find them), as uids of its store. The answer for
        a tuple of ids is kept until the next structural change: a drag asks again, with
        the same tuple, at every step."""
        kept = self._picked
        if (kept is not None and kept[0] is link_ids and kept[1] is topo
                and kept[2] == self._structure):  # fmt: skip
            return kept[3]
        store = topo.links
        rows, missing = _rows_with_ids(store, link_ids)
        if missing is not None:
            raise SessionError(f"topology {topo.id} has no link with id {missing!r}")
        picked = LinkSet(store, store.uids()[rows])
        if isinstance(link_ids, tuple):  # immutable: the same tuple names the same links
            self._picked = (link_ids, topo, self._structure, picked)
        return picked

    # A bulk edit of more links than this is one SetMany (not checked link by link for a
    # value that does not change): a drag of the speed of all 98,304 links of a 32 x 32
    # x 32 torus must take well under a frame a step.
    BULK = 256

    def _set_links(self, links: LinkSet, attr: str, value: Timing, owner: Topology) -> None:
        """``link.attr = value`` for every link, as one mutation of the operation under
        way, read and written in the store's columns (a few links: one SetField each,
        skipping those that already hold it)."""
        if len(links) <= self.BULK:
            for link in links:
                self._set(link, attr, value)
            return
        if links.store.holds(links.uids, attr, value):
            return
        self._record(SetMany(links, attr, links.store.snapshot(links.uids, attr), value, owner))

    def _bulk_keys(self, m: SetMany) -> set[str] | None:
        """The engine keys of the links of a bulk edit that expressions read; None when
        they are not a topology's (the engine then rebuilds)."""
        if not isinstance(m.owner, Topology):
            return None
        prefix, suffix = f"tl({m.owner.id})(", f").{m.attr}"
        read = [k for k in self.engine.stored_keys()
                if k.startswith(prefix) and k.endswith(suffix)]  # fmt: skip
        if not read:
            return set()
        if len(m.links) == len(m.owner.links):  # every link of the topology
            return set(read)
        ids = set(m.links.ids())
        out = set()
        for key in read:
            number = key[len(prefix) : -len(suffix)]
            if not is_whole(number) or int(number) in ids:
                out.add(key)
        return out

    def replace_topology(self, topo_id: int, topology: Topology,
                         add_processors: Sequence[Processor] = (),
                         choices: Choices | None = None) -> Replacement:  # fmt: skip
        """Put a new topology (say, a generated torus) in place of hardware topology
        ``topo_id``, with the processor types it needs added first (a generated fat
        tree's switch type), and what that makes necessary (mappings that no longer fit
        moved, by default: :func:`~parasol_core.topology.replacement.plan_replacement`);
        one undo step brings back the old one, as it was in the file. Returns what was
        done."""
        from parasol_core.topology.replacement import plan_replacement

        self._topology(topo_id)
        plan = plan_replacement(self.machine, topo_id, topology, add_processors, choices)
        self.apply_replacement(plan)
        return plan

    def plan_generation(self, topo_id: int, kind: str, sizes: Sequence[int], latency: Any,
                        speed: Any, choices: Choices | None = None) -> Replacement:  # fmt: skip
        """A generated topology over hardware topology ``topo_id`` and every consequence
        of putting it in place (:func:`~parasol_core.topology.replacement.plan_generation`),
        stamped with the version of the model it was computed from: the topology
        editor's preview, which :meth:`apply_replacement` then does as it says. Nothing
        is changed. ValueError when the generator cannot make it."""
        from parasol_core.topology.replacement import plan_generation

        old = self._topology(topo_id)
        plan = plan_generation(self.machine, topo_id, kind, sizes, latency, speed, choices)
        plan.basis = self.replacement_version(old)
        return plan

    def apply_replacement(self, plan: Replacement) -> None:
        """Do what a replacement (:meth:`plan_generation`, ``plan_replacement``) says,
        all of it and only it, as one undo step: add its processor types, put its
        topology in place, and move or remove the virtual topologies it names and give
        those it names their shape. Refused (SessionError, nothing changed) when the
        model changed since it was computed (its ``basis``)."""
        from parasol_core.topology.replacement import REMAP, REMOVE

        old = self._topology(plan.topo_id)
        if old is not plan.old or (plan.basis and plan.basis != self.replacement_version(old)):
            raise SessionError("the model changed since the preview: preview again")
        for proc in plan.add_processors:
            self.check_new_id(proc.id, self.machine.processors, "processor")
        m = self.machine
        index = next(i for i, t in enumerate(m.topologies) if t is old)
        with self._operation(f"Replace topology {plan.topo_id}"):
            for proc in plan.add_processors:
                self.add_processor(proc)
            self._record(ListEdit(m, "topologies", index, old, remove=True))
            self._record(ListEdit(m, "topologies", index, plan.new))
            for fix in plan.mappings:
                if fix.action == REMAP:
                    for v, h in fix.moves.items():
                        self._set(fix.virtual, "mapping", h, v)
                elif fix.action == REMOVE:
                    at = next(i for i, v in enumerate(m.virtuals) if v is fix.virtual)
                    self._record(ListEdit(m, "virtuals", at, fix.virtual, remove=True))
                    self._set(m, "topology_count", len(m.topologies) + len(m.virtuals))
            for virt, shape in plan.shapes:
                self._set(virt, "shape", tuple(shape), structural=True)

    def replacement_version(self, topology: Topology) -> tuple:
        """:meth:`topology_version`, and a count of the edits of virtual topologies (a
        replacement moves the mappings that no longer fit: an edit of one after the
        preview makes the preview stale)."""
        return (*self.topology_version(topology), self._virtual_edits)

    def set_mapping(self, virt_id: int, mapping: Mapping[int, int], *, label: str | None = None,
                    merge: Any = None, window: float | None = None) -> None:  # fmt: skip
        """Map virtual processors onto hardware processors (only the entries given)."""
        virt = self._virtual(virt_id)
        for v, h in mapping.items():
            for n in (v, h):
                if isinstance(n, bool) or not isinstance(n, int) or not 1 <= n <= MAX_ID:
                    raise SessionError(f"a processor number must be between 1 and {MAX_ID}, "
                                       f"not {n!r}")  # fmt: skip
        self._check_not_switches(mapping)
        self._check_sharing(virt, mapping)
        with self._operation(label or f"Map virtual topology {virt_id}", merge, window):
            for v, h in mapping.items():
                self._set(virt, "mapping", h, v)

    def _compute_count(self) -> int:
        from parasol_core.topology.switches import compute_count

        hw = self.machine.hardware()
        return compute_count(self.machine, hw) if hw is not None else 0

    def _check_sharing(self, virt: VirtualTopology, changes: Mapping[int, int]) -> None:
        """Refuse two virtual processors on one hardware processor where each can have
        its own (:func:`~parasol_core.topology.mapping.crowding`: "1 1 2 ...")."""
        from parasol_core.topology.mapping import crowding
        from parasol_core.topology.virtual import virtual_count

        problem = crowding(virt.mapping, changes, virtual_count(virt), self._compute_count())
        if problem is not None:
            raise SessionError(problem)

    def _check_not_switches(self, mapping: Mapping[int, int]) -> None:
        """Refuse a mapping onto a switch (switches run no program)."""
        from parasol_core.topology.switches import switch_types

        hw = self.machine.hardware()
        if hw is None or not switch_types(self.machine):
            return
        kinds = switch_types(self.machine)
        for v, h in mapping.items():
            if hw.types.get(h) in kinds:
                raise SessionError(f"virtual processor {v} cannot go onto processor {h}: it is "
                                   "a switch (switches run no program)")  # fmt: skip

    def new_virtual(self, routing: str, processors: int | None = None, name: str | None = None,
                    shape: Sequence[int] | None = None) -> VirtualTopology:  # fmt: skip
        """Add a virtual topology with ``routing`` (which says its virtual links) on the
        hardware topology: the next free virtual id (virtual and hardware ids are
        separate), as many processors as the hardware unless told, virtual processor v
        on hardware processor v (wrapping round when there are more virtual ones), the
        name "ROUTING on N" unless given, and ``shape`` (by default the hardware's when
        the counts agree and the routing can use it, else the most square one:
        :func:`~parasol_core.topology.virtual.default_virtual_shape`)."""
        from parasol_core.topology.virtual import default_virtual_shape

        hw = self.machine.hardware()
        if hw is None:
            raise SessionError("the model has no hardware topology to map onto")
        if name is not None:
            blank = limits.blank_name(name, "the virtual topology's name")
            if blank is not None:
                raise edit.EditError(blank)
            edit.check_name(name, "the virtual topology's name")
        targets = self._targets()
        n = len(targets) if processors is None else processors
        if shape is None and isinstance(n, int) and not isinstance(n, bool) and (
                1 <= n <= MAX_ID):  # fmt: skip
            shape = default_virtual_shape(self.machine, routing, n)
        ids = [v.id for v in self.machine.virtuals if isinstance(v.id, int)]
        virt = VirtualTopology(
            shape=tuple(shape) if shape is not None else None,
            id=max(ids, default=0) + 1,
            name=name if name is not None else f"{routing} on {n}",
            setup=hw.setup,
            routing=routing,
            processor_count=n,
            mapping=_wrapped(n, targets) if isinstance(n, int) and not isinstance(n, bool) else {},
        )
        return self.add_virtual(virt)

    def _targets(self) -> list[int]:
        """The hardware processors a virtual processor may be mapped onto: the compute
        processors (switches run no program; docs/decisions.md, "Switches")."""
        from parasol_core.topology.switches import compute_processors

        hw = self.machine.hardware()
        if hw is None:
            return []
        return compute_processors(self.machine, hw, processor_count(hw)).tolist()

    def add_virtual(self, virtual: VirtualTopology) -> VirtualTopology:
        """Add a virtual topology. Refused (SessionError, nothing changed): an id in use
        or out of range, a routing that is not a known technique, a name that is not
        text, a processor count out of range, a mapping of other virtual processors or
        onto processors the hardware does not have."""
        self.check_new_id(virtual.id, self.machine.virtuals, "virtual topology")
        self._check_virtual(virtual)
        m = self.machine
        with self._operation(f"Add virtual topology {virtual.id}"):
            self._record(ListEdit(m, "virtuals", len(m.virtuals), virtual))
            self._set(m, "topology_count", len(m.topologies) + len(m.virtuals))
        return virtual

    def _check_virtual(self, virtual: VirtualTopology) -> None:
        from parasol_core.topology.routing import routing_names

        if not isinstance(virtual.routing, str) or virtual.routing not in routing_names():
            raise SessionError(f"{virtual.routing!r} is not a routing technique (known: "
                               f"{', '.join(routing_names())})")  # fmt: skip
        if virtual.name is not None and not isinstance(virtual.name, str):
            raise SessionError(f"a name is text, not {virtual.name!r}")
        n = virtual.processor_count
        if isinstance(n, bool) or not isinstance(n, int) or not 1 <= n <= MAX_ID:
            raise SessionError(f"a virtual topology has 1 to {MAX_ID} processors, not {n!r}")
        hw = self.machine.hardware()
        n_hw = processor_count(hw) if hw is not None else 0
        for v, h in virtual.mapping.items():
            if not 1 <= v <= n:
                raise SessionError(f"virtual processor {v} is not one of 1..{n}")
            if not 1 <= h <= n_hw:
                raise SessionError(f"virtual processor {v} is mapped onto {h}, not one of the "
                                   f"hardware's processors 1..{n_hw}")  # fmt: skip
        if hw is not None and virtual.mapping:
            from parasol_core.topology.switches import switch_mask

            mask = switch_mask(self.machine, hw, n_hw)
            for v, h in virtual.mapping.items():
                if mask[h]:
                    raise SessionError(f"virtual processor {v} is mapped onto {h}, a switch "
                                       "(switches run no program)")  # fmt: skip
        self._check_routable(virtual, virtual.routing, virtual.shape, n)
        from parasol_core.topology.mapping import crowding

        problem = crowding({}, virtual.mapping, n, self._compute_count())
        if problem is not None:
            raise SessionError(problem)

    def _check_routable(self, virtual: VirtualTopology, routing: str | None,
                        shape: Sequence[int] | None, count: int) -> None:  # fmt: skip
        """Refuse a virtual topology whose virtual links cannot be made, so that it
        could not be routed on any hardware: a shape that is not 1 to 6 sizes of 1 or
        more whose product is ``count``, or that the routing cannot use; a routing that
        needs a shape it has not got (without a shape of its own, it has the
        hardware's when the counts agree), or that defines no virtual links."""
        from parasol_core.topology.virtual import virtual_problem, virtual_shape

        if shape is not None:
            shape = tuple(shape)
        else:
            probe = VirtualTopology(id=virtual.id, processor_count=count)
            found = virtual_shape(self.machine, probe)
            shape = found.dims if found is not None else None
        label = f"virtual topology {virtual.id}" if virtual.id is not None else "it"
        problem = virtual_problem(routing, count, shape, label)
        if problem is not None:
            raise SessionError(problem)

    def set_virtual_shape(self, virt_id: int, shape: Sequence[int] | None) -> None:
        """Give a virtual topology the grid shape its routing lays its virtual
        processors on (None: none of its own). Refused (SessionError, nothing changed):
        not 1 to 6 sizes of 1 or more, a product that is not its processor count, or a
        shape its routing cannot use (a 2Dtorus on 4 x 3 x 6)."""
        from parasol_core.topology.virtual import virtual_count

        virt = self._virtual(virt_id)
        if shape is not None:
            shape = tuple(shape)
        self._check_routable(virt, virt.routing, shape, virtual_count(virt))
        if shape == (tuple(virt.shape) if virt.shape else None):
            return
        shown = " x ".join(map(str, shape)) if shape else "none"
        with self._operation(f"Virtual topology {virt_id}: shape {shown}"):
            self._set(virt, "shape", shape, structural=True)

    def set_virtual_routing(self, virt_id: int, routing: str) -> None:
        """Give a virtual topology another routing (which says its virtual links). When
        its shape does not suit the new routing (a 4 x 3 x 6 shape for a 2Dtorus), it
        takes the routing's default shape in the same step; refused (SessionError,
        nothing changed) when no shape would do (a hypercube on 72 processors, a
        routing such as updown that defines no virtual links)."""
        from parasol_core.topology.routing import routing_names
        from parasol_core.topology.virtual import default_shape, virtual_count, virtual_problem

        virt = self._virtual(virt_id)
        if not isinstance(routing, str) or routing not in routing_names():
            raise SessionError(f"{routing!r} is not a routing technique (known: "
                               f"{', '.join(routing_names())})")  # fmt: skip
        n = virtual_count(virt)
        shape = tuple(virt.shape) if virt.shape else None
        try:
            self._check_routable(virt, routing, shape, n)
        except SessionError:
            shape = default_shape(n, routing)
            if virtual_problem(routing, n, shape) is not None:
                raise
        with self._operation(f"Routing of virtual topology {virt_id}"):
            if virt.name == f"{virt.routing} on {n}":
                self._set(virt, "name", f"{routing} on {n}")
            self._set(virt, "routing", routing)
            if shape != (tuple(virt.shape) if virt.shape else None):
                self._set(virt, "shape", shape, structural=True)

    def resize_virtual(self, virt_id: int, processors: int) -> None:
        """Give a virtual topology another processor count: the mapping keeps its
        entries for the processors that stay, new ones go where ``new_virtual`` puts
        them unless that hardware processor is full (then onto the least used one:
        :func:`~parasol_core.topology.mapping.place`), its shape becomes the default
        one of the new count, and a name of the form "ROUTING on N" follows. Refused
        when its routing cannot have that many processors (a hypercube on 12)."""
        virt = self._virtual(virt_id)
        hw = self.machine.hardware()
        n_hw = processor_count(hw) if hw is not None else 0
        if isinstance(processors, bool) or not isinstance(processors, int) or not (
                1 <= processors <= MAX_ID):  # fmt: skip
            raise SessionError(f"a virtual topology has 1 to {MAX_ID} processors, "
                               f"not {processors!r}")  # fmt: skip
        old = virt.processor_count or len(virt.mapping)
        shape = tuple(virt.shape) if virt.shape else None
        if processors != old:  # a shape of the new count, as the routing needs
            from parasol_core.topology.virtual import default_virtual_shape

            shape = default_virtual_shape(self.machine, virt.routing, processors)
        self._check_routable(virt, virt.routing, shape, processors)
        from parasol_core.topology.mapping import place

        targets = self._targets() if n_hw else []
        kept = {v: h for v, h in virt.mapping.items() if 1 <= v <= processors}
        new = [v for v in range(1, processors + 1) if v not in kept]
        placed = place(kept, new, targets, processors, _wrapped(processors, targets))
        with self._operation(
            f"Virtual topology {virt_id}: {counted(processors, 'processor', grouped=False)}"
        ):
            for v in range(processors + 1, max(old, processors) + 1):
                if v in virt.mapping:
                    self._set(virt, "mapping", ABSENT, v)
            for v, h in placed.items():
                self._set(virt, "mapping", h, v)
            self._set(virt, "processor_count", processors)
            if virt.name == f"{virt.routing} on {old}":
                self._set(virt, "name", f"{virt.routing} on {processors}")
            if shape != (tuple(virt.shape) if virt.shape else None):
                self._set(virt, "shape", shape, structural=True)

    def remove_virtual(self, virt_id: int) -> None:
        virt = self._virtual(virt_id)
        m = self.machine
        index = next(i for i, v in enumerate(m.virtuals) if v is virt)
        with self._operation(f"Remove virtual topology {virt_id}"):
            self._record(ListEdit(m, "virtuals", index, virt, remove=True))
            self._set(m, "topology_count", len(m.topologies) + len(m.virtuals))


def _wrapped(n: int, targets: Sequence[int]) -> dict[int, int]:
    """Virtual processor v on the v-th of ``targets`` (the hardware's compute
    processors), wrapping round past the last."""
    k = len(targets)
    return {v: targets[(v - 1) % k] for v in range(1, n + 1)} if k else {}


def _owner_label(owner: Block) -> str:
    if isinstance(owner, Processor):
        return f"processor {owner.id}:"
    return f"{owner.KEYWORD}:"


def _highest_link_id(links: LinkStore) -> int:
    """The highest integer link id (0 when there is none), from the id column."""
    ids = links.ids
    highest = int(ids.max()) if ids.shape[0] else 0
    for row in links.odd_rows().tolist():  # ids the column does not hold
        lid = links[row].id
        if isinstance(lid, int) and not isinstance(lid, bool):
            highest = max(highest, lid)
    return max(highest, 0)


def _rows_with_ids(links: LinkStore, link_ids: Any) -> tuple[np.ndarray, Any]:
    """The rows (in order) of every link whose id is one of ``link_ids``, found from the
    id column, and the first id no link holds (None: all found)."""
    try:  # ids as one array, in bulk (a mix of kinds, or a number past 64 bits: not)
        wanted = link_ids if isinstance(link_ids, np.ndarray) else np.asarray(link_ids)
    except (TypeError, ValueError, OverflowError):
        wanted = None
    if wanted is not None and wanted.ndim == 1 and (wanted.dtype.kind == "i" or (
            wanted.dtype.kind == "u" and (not wanted.shape[0] or wanted.max() < 2**63))):  # fmt: skip
        wanted = wanted.astype(np.int64, copy=False)
        rows = np.flatnonzero(np.isin(links.ids, wanted))
        odd = links.odd_rows()
        found = np.isin(wanted, np.delete(links.ids, odd) if odd.shape[0] else links.ids)
        if odd.shape[0]:  # ids the column does not hold (it has -1): read their views
            rows = difference(rows, odd)
            plain = set(wanted.tolist())
            held = {r: links[r].id for r in odd.tolist()}
            extra = [r for r, i in held.items() if type(i) is int and i in plain]
            rows = union(rows, np.asarray(extra, dtype=np.int64))
            found |= np.isin(wanted, np.asarray([held[r] for r in extra], dtype=np.int64))
        missing = None if found.all() else int(wanted[np.argmin(found)])
        return rows.astype(np.int64), missing
    wanted_set = set(link_ids)  # ids of other kinds: only links with odd ids hold them
    plain_ids = [w for w in wanted_set if type(w) is int and 0 <= w < 2**63]
    rows = np.flatnonzero(np.isin(links.ids, np.asarray(plain_ids, dtype=np.int64)))
    odd = links.odd_rows()
    if odd.shape[0]:
        rows = difference(rows, odd)
        extra = [r for r in odd.tolist() if links[r].id in wanted_set]
        rows = union(rows, np.asarray(extra, dtype=np.int64))
    found = {links[r].id for r in rows.tolist()}
    missing = sorted((w for w in wanted_set if w not in found), key=repr)
    return rows.astype(np.int64), (missing[0] if missing else None)
