"""Changing stored values by reference, and group scalers.

``set_value(machine, "pt(1).iga", "7.4e-7")`` is what `parasol-model set` does and what
the editor's commands do: the reference names the stored value as an expression would
(ids, not positions), and the text is read the way the file format reads that value.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from parasol_core import limits, params
from parasol_core.diagnostics import ModelSyntaxError
from parasol_core.expr import refs
from parasol_core.expr.refs import ARITY
from parasol_core.expr.tree import Expression, Reference
from parasol_core.model import (
    CONNECT,
    EXPR,
    INT,
    ROLES,
    STR,
    TIMING,
    WORD,
    Cache,
    Machine,
    MachineCombinations,
    Processor,
    Timing,
    reference_fields,
)
from parasol_core.syntax.expression import parse_expression


class EditError(ValueError):
    """A reference or value that cannot be set; the message says why."""


@dataclass(frozen=True)
class Slot:
    """A settable place in the model: an attribute of an object, or a key of a dict on it."""

    obj: Any
    attr: str
    kind: str
    key: Any = None
    label: str = ""

    def get(self) -> Any:
        if self.key is None:
            return getattr(self.obj, self.attr)
        return getattr(self.obj, self.attr).get(self.key)

    def set(self, value: Any) -> None:
        if self.key is None:
            setattr(self.obj, self.attr, value)
        else:
            getattr(self.obj, self.attr)[self.key] = value


def parse_reference(text: str) -> Reference:
    try:
        return refs.parse_reference(text)
    except refs.UnresolvedReference as e:
        raise EditError(str(e)) from None


def slot(
    machine: Machine,
    ref: Reference | str,
    create: bool = True,
    created: list[tuple[Any, str, Any]] | None = None,
) -> Slot:
    """The stored value a reference names. With ``create``, a missing cache, section or
    table entry is made, so that setting it adds it; each section made is appended to
    ``created`` as ``(owner, attr, section)`` (the session records it for undo)."""
    if isinstance(ref, str):
        ref = parse_reference(ref)
    p, fld = ref.prefix, ref.field
    if len(ref.indices) != ARITY[p]:
        raise EditError(f"'{ref}': {p} takes {ARITY[p]} number(s) in parentheses")
    label = str(ref)
    if p == "ma":
        return _attr(machine, fld, "ma", label)
    if p == "mc":
        if fld != "maxtotalspd":
            raise EditError(f"'{ref}': the machine combinations hold only maxtotalspd")
        if machine.combinations is None:
            if not create:
                raise EditError(f"'{ref}': the model has no machine combinations")
            machine.combinations = MachineCombinations()
            if created is not None:
                created.append((machine, "combinations", machine.combinations))
        return Slot(machine.combinations, "entries", EXPR, fld, label)
    if p in ("pv", "ex", "mp"):
        attr = {"pv": "pvm", "ex": "express", "mp": "mpi"}[p]
        section = getattr(machine, attr)
        if section is None:
            from parasol_core.model import Express, Mpi, Pvm

            cls = {"pvm": Pvm, "express": Express, "mpi": Mpi}[attr]
            if fld not in cls.NAMES:
                raise EditError(f"'{ref}': the {attr} section has no function '{fld}'")
            if not create:
                raise EditError(f"'{ref}': the model has no {attr} section")
            section = cls()
            setattr(machine, attr, section)
            if created is not None:
                created.append((machine, attr, section))
        if fld not in section.NAMES:
            raise EditError(f"'{ref}': the {attr} section has no function '{fld}' "
                            f"(known: {', '.join(section.NAMES)})")  # fmt: skip
        return Slot(section, "entries", EXPR, fld, label)
    if p == "ar":
        raise EditError(f"'{ref}' is a run-time argument, not a stored value")
    ident = ref.indices[0]
    if p in ("pr", "pt", "pc", "po"):
        proc = machine.processor(ident)
        if proc is None:
            raise EditError(f"'{ref}': there is no processor with id {ident}")
        if p == "pr":
            return _attr(proc, fld, "pr", label)
        if p == "pt":
            name, _ = params.resolve_name(fld or "")
            if name is None:
                raise EditError(f"'{ref}': '{fld}' is not a timing parameter")
            if name not in proc.timings and not create:
                raise EditError(f"'{ref}': processor {ident} has no timing '{name}'")
            return Slot(proc, "timings", TIMING, name, label)
        if p == "pc":
            if proc.cache is None:
                if not create:
                    raise EditError(f"'{ref}': processor {ident} has no cache section")
                proc.cache = Cache()
                if created is not None:
                    created.append((proc, "cache", proc.cache))
            return _attr(proc.cache, fld, "pc", label)
        from parasol_core.model import COMBINATION_NAMES

        if fld not in COMBINATION_NAMES:
            raise EditError(f"'{ref}': '{fld}' is not a combination "
                            f"(known: {', '.join(COMBINATION_NAMES)})")  # fmt: skip
        return Slot(proc, "combinations", EXPR, fld, label)
    if p in ("to", "tp", "tl"):
        topo = machine.topology(ident)
        if topo is None:
            raise EditError(f"'{ref}': there is no hardware topology with id {ident}")
        if p == "to":
            return _attr(topo, fld, "to", label)
        if p == "tp":
            from parasol_core.topology.shape import processor_count

            n = processor_count(topo)
            if not 1 <= ref.indices[1] <= n:
                raise EditError(f"'{ref}': topology {ident} has processors 1..{n}, not "
                                f"{ref.indices[1]}")  # fmt: skip
            return Slot(topo, "types", INT, ref.indices[1], label)
        link = topo.link_by_id(ref.indices[1])
        if link is None:
            raise EditError(f"'{ref}': topology {ident} has no link with id {ref.indices[1]}")
        if fld == "connect" and ref.field_index is not None:
            raise EditError(f"'{ref}': set the whole list with tl(T)(L).connect")
        return _attr(link, fld, "tl", label)
    virt = machine.virtual(ident)
    if virt is None:
        raise EditError(f"'{ref}': there is no virtual topology with id {ident}")
    if p == "vm":
        return Slot(virt, "mapping", INT, ref.indices[1], label)
    return _attr(virt, fld, "vt", label)


def _attr(obj: Any, fld: str | None, prefix: str, label: str) -> Slot:
    table = reference_fields(prefix)
    if fld not in table:
        raise EditError(f"'{label}': no settable field '{fld}' here (known: {', '.join(table)})")
    f = table[fld]
    return Slot(obj, f.attr, f.kind, None, label)


def parse_value(kind: str, text: str, label: str = "value") -> Any:
    """Read ``text`` as a value of ``kind``, as the file format would."""
    text = text.strip()
    try:
        if kind == INT:
            from parasol_core.numeric import parse_whole

            return limits.check_int(parse_whole(text, 0, INT_LIMIT), "the number")
        if kind == STR:
            if len(text) >= 2 and text[0] == text[-1] == '"':
                text = text[1:-1]
            if any(c in text for c in '"\n\r\x0b'):
                raise ValueError("a name cannot contain quotes or line ends")
            return limits.check_name(text)
        if kind == TIMING:
            parts = text.split()
            if not 1 <= len(parts) <= 2:
                raise ValueError("expected a mean and optionally a standard deviation")
            numbers = [limits.float_text(p) for p in parts]
            return Timing(numbers[0], numbers[1] if len(numbers) > 1 else None)
        if kind == EXPR:
            return parse_expression(limits.check_text(text, "the expression"))
        if kind == WORD:  # a processor type's role: a known word, or none to clear it
            word = text.strip('"').strip()
            if word.lower() in ("", "none"):
                return None
            if word not in ROLES:
                raise ValueError(f"the roles are: {', '.join(ROLES)} (or none)")
            return word
        if kind == CONNECT:
            numbers = limits.check_ints((int(p) for p in text.split()), "a connect number")
            if not numbers or numbers[0] != len(numbers) - 1:
                raise ValueError("expected a count followed by that many processor numbers")
            return numbers[1:]
    except ModelSyntaxError as e:
        raise EditError(f"{label}: {e.message} (column {e.column})") from None
    except ValueError as e:
        raise EditError(f"{label}: cannot read {text!r}: {e}") from None
    raise EditError(f"{label}: unknown kind {kind}")


INT_LIMIT = limits.MAX_INT
"""The largest integer the file format reads (a 64-bit signed integer)."""
ID_LIMIT = limits.MAX_ID


def check_int(attr: str, value: Any, label: str = "value") -> None:
    """Refuse an integer the file format cannot read back (:func:`limits.check_int`;
    ids within 32 bits). Raises EditError."""
    try:
        limits.check_int(value, label, ID_LIMIT if attr == "id" else INT_LIMIT)
    except limits.ValueRangeError as e:
        raise EditError(str(e)) from None


def set_value(machine: Machine, ref: str, text: str) -> Slot:
    """Set the value ``ref`` names from ``text``; returns the slot. Raises EditError."""
    s = slot(machine, ref)
    s.set(parse_value(s.kind, text, s.label))
    return s


# --------------------------------------------------------------------------- scalers


def group_scaling(
    machine: Machine, group: str, factor: float, processor_id: int | None = None
) -> list[tuple[Processor, str, Timing]]:
    """What multiplying every timing of ``group`` (mean and standard deviation) by
    ``factor`` gives, on one processor type or on all, without changing anything:
    (processor, instruction, scaled timing) for each member a processor has. Raises
    EditError for an unknown group or processor, a factor that is not a positive finite
    number, or a result too large to represent."""
    if group not in params.GROUPS:
        raise EditError(f"unknown group '{group}' (known: {', '.join(params.GROUPS)})")
    if (
        isinstance(factor, bool)
        or not isinstance(factor, (int, float))
        or not math.isfinite(factor)
        or factor <= 0
    ):
        raise EditError(f"a scale factor must be a positive number, not {factor!r}")
    procs: list[Processor]
    if processor_id is None:
        procs = list(machine.processors)
    else:
        proc = machine.processor(processor_id)
        if proc is None:
            raise EditError(f"there is no processor with id {processor_id}")
        procs = [proc]
    members = params.GROUPS[group].members
    scaled: list[tuple[Processor, str, Timing]] = []
    for proc in procs:
        for name in members:
            timing = proc.timings.get(name)
            if timing is None:
                continue
            new = timing.scaled(factor)
            what = f"scaling '{name}' of processor {proc.id} by {factor:g}"
            try:
                limits.check_scaled(timing.mean, new.mean, what)
                limits.check_scaled(timing.sd, new.sd, what + " (its standard deviation)")
            except limits.ValueRangeError as e:
                raise EditError(str(e)) from None
            scaled.append((proc, name, new))
    return scaled


def scale_group(
    machine: Machine, group: str, factor: float, processor_id: int | None = None
) -> int:
    """Multiply every timing of ``group`` by ``factor`` (:func:`group_scaling`), all or
    nothing. Returns how many timings changed."""
    scaled = group_scaling(machine, group, factor, processor_id)
    for proc, name, timing in scaled:
        proc.timings[name] = timing
    return len(scaled)


# --------------------------------------------------------------------------- change keys


def stored_key(
    machine: Machine,
    s: Slot | Any,
    attr: str | None = None,
    key: Any = None,
    link_topology: dict[int, Any] | None = None,
) -> str | None:
    """The reference key (as the engine names stored values) of the value a slot holds,
    or None when the change is structural (an id, an expression, a routing name): the
    engine must then rebuild its graph rather than re-evaluate a few expressions.

    Computed from the objects, not from the slot's label, so it stays right when ids
    change after the slot was made.
    """
    from parasol_core.model import ExprSection, Link, Topology, VirtualTopology

    if isinstance(s, Slot):
        obj, attr, key = s.obj, s.attr, s.key
    else:
        obj = s
    if isinstance(obj, ExprSection) or attr == "id":
        return None
    if isinstance(obj, Processor) and attr == "combinations":
        return None
    if obj is machine:
        names = {"processor_count": "processors", "topology_count": "topologies"}
        return f"ma.{names[attr]}" if attr in names else None
    if isinstance(obj, Processor):
        return f"pt({obj.id}).{key}" if attr == "timings" else None
    if isinstance(obj, Cache):
        proc = next((p for p in machine.processors if p.cache is obj), None)
        return None if proc is None else f"pc({proc.id}).{attr}"
    if isinstance(obj, Topology):
        if attr == "types":
            return f"tp({obj.id})({key})"
        names = {"setup": "setup", "processor_count": "processors", "link_count": "links"}
        return f"to({obj.id}).{names[attr]}" if attr in names else None
    if isinstance(obj, Link):
        if link_topology is not None:  # id(link) -> its topology, made once by the caller
            topo = link_topology.get(id(obj))
        else:  # a link is a view of its topology's store (a removed one is of none)
            store = obj.__dict__.get("_store")
            topo = next((t for t in machine.topologies if t.links is store), None)
        if topo is None or attr not in ("latency", "speed", "connect"):
            return None
        return f"tl({topo.id})({obj.id}).{attr}"
    if isinstance(obj, VirtualTopology):
        if attr == "mapping":
            return f"vm({obj.id})({key})"
        names = {"setup": "setup", "processor_count": "processors"}
        return f"vt({obj.id}).{names[attr]}" if attr in names else None
    return None


# --------------------------------------------------------------------------- structure


def retarget(node: Any, old_id: int, new_id: int) -> Any:
    """A tree with processor references to ``old_id`` pointed at ``new_id``."""
    from dataclasses import replace

    from parasol_core.expr.tree import Binary, Call, Unary

    if isinstance(node, Reference):
        if node.prefix in ("pr", "pt", "pc", "po") and node.indices == (old_id,):
            return replace(node, indices=(new_id,))
        return node
    if isinstance(node, Binary):
        return replace(node, left=retarget(node.left, old_id, new_id),
                       right=retarget(node.right, old_id, new_id))  # fmt: skip
    if isinstance(node, Unary):
        return replace(node, operand=retarget(node.operand, old_id, new_id))
    if isinstance(node, Call):
        return replace(node, arg=retarget(node.arg, old_id, new_id))
    return node


def copy_processor(proc: Processor, new_id: int, name: str | None = None) -> Processor:
    """A new processor type with the timings, cache and combinations of ``proc``; its
    combinations refer to the copy itself where the original's referred to the original."""
    cache = None
    if proc.cache is not None:
        c = proc.cache
        cache = Cache(c.size, c.speed, c.smallloopspeedup)
    combinations = {}
    for key, expr in proc.combinations.items():
        if proc.id is None:
            combinations[key] = Expression(expr.text, expr.tree, expr.offset)
        else:
            tree = retarget(expr.tree, proc.id, new_id)
            combinations[key] = (
                Expression(expr.text, expr.tree, expr.offset)
                if tree == expr.tree
                else Expression.from_tree(tree)
            )
    return Processor(
        new_id,
        name if name is not None else f"{proc.name or 'processor'} (copy)",
        dict(proc.timings),
        cache,
        combinations,
    )
