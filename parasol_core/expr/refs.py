"""What a reference such as ``pt(1).iga`` points at (report section 3.1.10).

Numbers after a prefix are ids (docs/decisions.md, "References": an ``id``, not a position);
``tl(T)(L)`` is the link with id L; a timing yields its mean; ``connect(0)`` is the
number of processors on the link and ``connect(k)`` the k-th of them. ``ar.bytes`` and
``ar.procs`` exist only inside the PVM, Express and MPI sections.

One table, :data:`KINDS`, says for every prefix what its numbers find (the owner), the
optional part it reaches through (a cache, a section, made when a value is set in it),
and what it names there (fields of :data:`~parasol_core.model.REFERENCE_FIELDS`, or the
entries of a table). Three functions are driven by it:

* :func:`resolve` reads: the validator reports references to things that do not exist,
  the evaluator fetches values and finds what an expression depends on;
* :func:`slot` writes: the settable place a reference names (``parasol-model set``, every
  window's edit through the session), making a missing part when asked;
* :func:`stored_key` goes back: the engine key of a place an edit wrote.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from parasol_core.base import params
from parasol_core.base.words import counted, quoted
from parasol_core.model import (
    COMBINATION_NAMES,
    EXPR,
    EXPRESSION_SECTIONS,
    INT,
    TIMING,
    Cache,
    ExprSection,
    Link,
    Machine,
    Processor,
    Topology,
    VirtualTopology,
    reference_fields,
)
from parasol_core.model.tree import Expression, Reference
from parasol_core.syntax.expression import parse_expression

# --------------------------------------------------------------------------- the table


@dataclass(frozen=True)
class Owner:
    """What a reference's numbers find in the model: ``find(machine, indices)`` gives the
    object or None (then ``missing``, formatted with the indices, says so);
    ``indices(machine, obj)`` goes back from an object to its numbers (None when it is
    no longer in the model)."""

    find: Callable[[Machine, tuple[int, ...]], Any]
    missing: str
    indices: Callable[[Machine, Any], tuple[int, ...] | None]
    types: tuple[type, ...]


def _link_of(machine: Machine, ids: tuple[int, ...]) -> Any:
    topo = machine.topology(ids[0])
    return None if topo is None else topo.link_by_id(ids[1])


def _link_indices(machine: Machine, link: Any) -> tuple[int, ...] | None:
    store = link.__dict__.get("_store")  # a link is a view of its topology's store
    topo = next((t for t in machine.topologies if t.links is store), None)
    return None if topo is None else (topo.id, link.id)


OWNERS: dict[str, Owner] = {
    "machine": Owner(lambda m, ids: m, "", lambda m, obj: (), (Machine,)),
    "processor": Owner(lambda m, ids: m.processor(ids[0]), "there is no processor with id {0}",
                       lambda m, obj: (obj.id,), (Processor,)),
    "topology": Owner(lambda m, ids: m.topology(ids[0]),
                      "there is no hardware topology with id {0}",
                      lambda m, obj: (obj.id,), (Topology,)),
    "link": Owner(_link_of, "topology {0} has no link with id {1}", _link_indices, (Link,)),
    "virtual": Owner(lambda m, ids: m.virtual(ids[0]), "there is no virtual topology with id {0}",
                     lambda m, obj: (obj.id,), (VirtualTopology,)),
}  # fmt: skip


@dataclass(frozen=True)
class Part:
    """An optional part of an owner that a reference reaches through (a processor's
    cache, a section of named expressions): ``attr`` on the owner holds it or None;
    ``make`` makes an empty one when a value is set in it; ``title`` names it."""

    attr: str
    make: type
    title: str


_CACHE = Part("cache", Cache, "cache section")
_SECTIONS = {
    cls.PREFIX: Part(cls.ATTR, cls, cls.TITLE if cls.PREFIX == "mc" else f"{cls.TITLE} section")
    for cls in EXPRESSION_SECTIONS
}


@dataclass(frozen=True)
class RefKind:
    """One prefix: how many numbers it takes, what they find (``owner``), the ``part``
    of it reached through, and what it names there: the fields of
    ``REFERENCE_FIELDS[prefix]`` (``table`` None), or the entries of the dict attribute
    ``table`` (values of ``kind``) keyed by the field (``pt(1).iga``) or, with
    ``by_index``, by the last number (``tp(T)(P)``)."""

    prefix: str
    arity: int
    help: str
    owner: str = "machine"
    part: Part | None = None
    table: str | None = None
    kind: str | None = None
    by_index: bool = False

    @property
    def fields(self) -> bool:
        return self.table is None and self.prefix != "ar"


KINDS: dict[str, RefKind] = {k.prefix: k for k in (
    RefKind("ma", 0, "a machine field: ma.id, ma.processors or ma.topologies"),
    RefKind("pr", 1, "a processor: pr(N).id", "processor"),
    RefKind("pt", 1, "a processor timing: pt(N).iga", "processor", table="timings", kind=TIMING),
    RefKind("pc", 1, "a processor cache field: pc(N).size, .speed or .smallloopspeedup",
            "processor", part=_CACHE),
    RefKind("po", 1, "a processor combination: po(N).ia_spd", "processor",
            table="combinations", kind=EXPR),
    RefKind("mc", 0, "a machine combination: mc.maxtotalspd", part=_SECTIONS["mc"],
            table="entries", kind=EXPR),
    RefKind("to", 1, "a topology field: to(N).id, .setup, .processors or .links", "topology"),
    RefKind("tp", 2, "a processor type in a topology: tp(N)(P)", "topology", table="types",
            kind=INT, by_index=True),
    RefKind("tl", 2, "a link field: tl(N)(L).id, .latency, .speed or .connect(K)", "link"),
    RefKind("vt", 1, "a virtual topology field: vt(N).id, .setup or .processors", "virtual"),
    RefKind("vm", 2, "a virtual topology mapping: vm(N)(V)", "virtual", table="mapping",
            kind=INT, by_index=True),
    RefKind("pv", 0, "a PVM function: pv.send", part=_SECTIONS["pv"], table="entries", kind=EXPR),
    RefKind("ex", 0, "an Express function: ex.send", part=_SECTIONS["ex"], table="entries",
            kind=EXPR),
    RefKind("mp", 0, "an MPI function: mp.send", part=_SECTIONS["mp"], table="entries", kind=EXPR),
    RefKind("ar", 0, "a run-time call argument: ar.bytes or ar.procs"),
)}  # fmt: skip
"""Every reference prefix (report section 3.1.10), in the grammar's order."""

PREFIXES: dict[str, str] = {p: k.help for p, k in KINDS.items()}
ARITY: dict[str, int] = {p: k.arity for p, k in KINDS.items()}
"""How many numbers in parentheses follow each prefix."""
ARGUMENTS = ("bytes", "procs")


class UnresolvedReference(Exception):
    """A reference that names nothing in the model."""


class EditError(ValueError):
    """A reference or value that cannot be set; the message says why."""


@dataclass(frozen=True)
class Target:
    """What a reference resolves to.

    ``kind`` is ``"value"`` (a stored number, in ``value``), ``"expr"`` (an expression,
    ``expr``, to be evaluated in its own right) or ``"arg"`` (a run-time argument named
    by ``key``). ``key`` names the target the same way whatever the spelling of the
    reference, so it can key a dependency graph.
    """

    kind: str
    key: str
    value: Any = None
    expr: Expression | None = None


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


def expression_key(owner: str, name: str) -> str:
    """The key of an expression: ``po(1).ia_spd``, ``mc.maxtotalspd``, ``pv.send``."""
    return f"{owner}.{name}"


def _owner(machine: Machine, kind: RefKind, ref: Reference, error: type[Exception]) -> Any:
    owner = OWNERS[kind.owner]
    obj = owner.find(machine, ref.indices)
    if obj is None:
        raise error(f"{quoted(ref)}: " + owner.missing.format(*ref.indices))
    return obj


def _what(kind: RefKind, ref: Reference) -> str:
    """The owner in words, for messages: ``processor 1``, ``link 2 of topology 1``."""
    ids = ref.indices
    return {"machine": "the machine", "processor": f"processor {ids[0] if ids else ''}",
            "topology": f"topology {ids[0] if ids else ''}",
            "link": f"link {ids[1] if len(ids) > 1 else ''} of topology {ids[0] if ids else ''}",
            "virtual": f"virtual topology {ids[0] if ids else ''}"}[kind.owner]  # fmt: skip


def _timing_name(ref: Reference, error: type[Exception]) -> str:
    name, _ = params.resolve_name(ref.field or "")
    if name is None:
        raise error(f"{quoted(ref)}: {quoted(ref.field)} is not a timing parameter")
    return name


# --------------------------------------------------------------------------- read


def resolve(machine: Machine, ref: Reference, runtime_section: bool = False) -> Target:
    """Resolve ``ref`` in ``machine``; raises UnresolvedReference with a message naming it."""
    p = ref.prefix
    kind = KINDS[p]
    n = kind.arity
    if len(ref.indices) != n:
        shape = p + "(N)" * n
        raise UnresolvedReference(
            f"{quoted(ref)}: {p} takes {n or 'no'} number{'s' if n != 1 else ''} in "
            f"parentheses, as in {shape}...: {kind.help}")  # fmt: skip
    fld = ref.field
    if kind.by_index:
        if fld is not None:
            raise UnresolvedReference(f"{quoted(ref)} takes no field: {kind.help}")
    elif fld is None:
        raise UnresolvedReference(f"{quoted(ref)} needs a field after the dot: {kind.help}")
    if ref.field_index is not None and not (p == "tl" and fld == "connect"):
        raise UnresolvedReference(f"{quoted(ref)}: only connect takes a number after the field")
    key = str(ref)
    if p == "ar":
        if fld not in ARGUMENTS:
            raise UnresolvedReference(
                f"{quoted(ref)}: the run-time arguments are ar.bytes and ar.procs"
            )
        if not runtime_section:
            raise UnresolvedReference(
                f"{quoted(ref)} is only defined inside the pvm, express and mpi sections"
            )
        return Target("arg", key)
    obj = _owner(machine, kind, ref, UnresolvedReference)
    if kind.part is not None:
        part = getattr(obj, kind.part.attr)
        if kind.table is None:  # fields of a part: pc(N).size
            if fld not in reference_fields(p, readable=True):
                raise UnresolvedReference(f"{quoted(ref)}: {kind.help}")
            value = None if part is None else getattr(part, fld)
            if value is None:
                raise UnresolvedReference(f"{quoted(ref)}: {_what(kind, ref)} has no cache {fld}")
            return Target("value", key, value=getattr(value, "mean", value))
        if part is None or fld not in getattr(part, kind.table):
            verb = "define" if kind.part.title.endswith("s") else "defines"
            raise UnresolvedReference(
                f"{quoted(ref)}: the {kind.part.title} {verb} no {quoted(fld)}"
            )
        return Target("expr", key, expr=getattr(part, kind.table)[fld])
    if kind.table is None:
        return _value(key, obj, kind, fld, _what(kind, ref), ref)
    table = getattr(obj, kind.table)
    if kind.by_index:
        number = ref.indices[-1]
        if number not in table:
            what = {"tp": f"topology {ref.indices[0]} gives no type for processor",
                    "vm": f"virtual topology {ref.indices[0]} maps no processor"}[p]  # fmt: skip
            raise UnresolvedReference(f"{quoted(ref)}: {what} {number}")
        return Target("value", key, value=table[number])
    if kind.kind == TIMING:
        name = _timing_name(ref, UnresolvedReference)
        if name not in table:
            raise UnresolvedReference(
                f"{quoted(ref)}: {_what(kind, ref)} has no timing {quoted(name)}"
            )
        return Target("value", f"{p}({ref.indices[0]}).{name}", value=table[name].mean)
    if fld not in table:  # po(N).name
        known = "" if fld in COMBINATION_NAMES else f" ({fld!r} is not a combination name)"
        raise UnresolvedReference(f"{quoted(ref)}: {_what(kind, ref)} defines no combination "
                                  f"{quoted(fld)}{known}")  # fmt: skip
    return Target("expr", key, expr=table[fld])


def _value(key: str, obj: Any, kind: RefKind, fld: str, owner: str, ref: Reference) -> Target:
    fields = reference_fields(kind.prefix, readable=True)
    if kind.prefix == "tl" and fld == "connect":
        return _connect(key, obj, ref)
    fields.pop("connect", None)  # read as connect(K)
    if fld not in fields:
        raise UnresolvedReference(
            f"'{key}': {owner} has no field {quoted(fld)} (it has {', '.join(fields)})"
        )
    value = getattr(obj, fields[fld].attr)
    if value is None:
        raise UnresolvedReference(f"'{key}': {fld} of {owner} is not defined")
    return Target("value", key, value=getattr(value, "mean", value))


def _connect(key: str, link: Any, ref: Reference) -> Target:
    k = ref.field_index
    if k is None:
        raise UnresolvedReference(f"{quoted(ref)}: connect takes a number, as in connect(0)")
    procs = link.connect or []
    if k == 0:
        return Target("value", key, value=len(procs))
    if not 1 <= k <= len(procs):
        raise UnresolvedReference(
            f"{quoted(ref)}: link {ref.indices[1]} connects {counted(len(procs), 'processor')}, "
            f"so connect(K) needs 0 <= K <= {len(procs)}")  # fmt: skip
    return Target("value", key, value=procs[k - 1])


# --------------------------------------------------------------------------- write


def slot(
    machine: Machine,
    ref: Reference | str,
    create: bool = True,
    created: list[tuple[Any, str, Any]] | None = None,
) -> Slot:
    """The stored value a reference names. With ``create``, a missing cache, section or
    table entry is made, so that setting it adds it; each part made is appended to
    ``created`` as ``(owner, attr, part)`` (the session records it for undo). Raises
    :class:`EditError`."""
    if isinstance(ref, str):
        try:
            ref = parse_reference(ref)
        except UnresolvedReference as e:
            raise EditError(str(e)) from None
    p, fld, label = ref.prefix, ref.field, str(ref)
    kind = KINDS[p]
    if len(ref.indices) != kind.arity:
        raise EditError(f"{quoted(ref)}: {p} takes {kind.arity} number(s) in parentheses")
    if p == "ar":
        raise EditError(f"{quoted(ref)} is a run-time argument, not a stored value")
    obj = _owner(machine, kind, ref, EditError)
    if kind.part is not None:
        part = kind.part
        names = getattr(part.make, "NAMES", None)
        if kind.table is not None and fld not in names:
            verb = "have" if part.title.endswith("s") else "has"
            raise EditError(f"{quoted(ref)}: the {part.title} {verb} no {quoted(fld)} "
                            f"(known: {', '.join(names)})")  # fmt: skip
        if getattr(obj, part.attr) is None:
            if not create:
                raise EditError(f"{quoted(ref)}: {_what(kind, ref).replace('the machine', 'the model')}"
                                f" has no {part.title}")  # fmt: skip
            setattr(obj, part.attr, part.make())
            if created is not None:
                created.append((obj, part.attr, getattr(obj, part.attr)))
        obj = getattr(obj, part.attr)
        if kind.table is None:
            return _field_slot(obj, kind, fld, label)
        return Slot(obj, kind.table, kind.kind, fld, label)
    if kind.table is None:
        if p == "tl" and fld == "connect" and ref.field_index is not None:
            raise EditError(f"{quoted(ref)}: set the whole list with tl(T)(L).connect")
        return _field_slot(obj, kind, fld, label)
    if kind.by_index:
        number = ref.indices[-1]
        if p == "tp":
            from parasol_core.topology.shape import processor_count

            n = processor_count(obj)
            if not 1 <= number <= n:
                raise EditError(f"{quoted(ref)}: topology {ref.indices[0]} has processors 1..{n}, "
                                f"not {number}")  # fmt: skip
        return Slot(obj, kind.table, kind.kind, number, label)
    if kind.kind == TIMING:
        name = _timing_name(ref, EditError)
        if name not in getattr(obj, kind.table) and not create:
            raise EditError(f"{quoted(ref)}: {_what(kind, ref)} has no timing {quoted(name)}")
        return Slot(obj, kind.table, kind.kind, name, label)
    if fld not in COMBINATION_NAMES:
        raise EditError(f"{quoted(ref)}: {quoted(fld)} is not a combination "
                        f"(known: {', '.join(COMBINATION_NAMES)})")  # fmt: skip
    return Slot(obj, kind.table, kind.kind, fld, label)


def _field_slot(obj: Any, kind: RefKind, fld: str | None, label: str) -> Slot:
    table = reference_fields(kind.prefix)
    if fld not in table:
        raise EditError(
            f"'{label}': no settable field {quoted(fld)} here (known: {', '.join(table)})"
        )
    f = table[fld]
    return Slot(obj, f.attr, f.kind, None, label)


# --------------------------------------------------------------------------- back


def stored_key(
    machine: Machine,
    s: Slot | Any,
    attr: str | None = None,
    key: Any = None,
    link_topology: dict[int, Any] | None = None,
) -> str | None:
    """The reference key (as the engine names stored values) of the value a slot holds,
    or None when the change is structural (an id, an expression, a name or routing that
    no expression reads): the engine must then rebuild its graph rather than re-evaluate
    a few expressions. ``link_topology`` (``id(link)`` -> its topology), made once by a
    caller with many links, saves finding each link's topology.

    Computed from the objects, not from the slot's label, so it stays right when ids
    change after the slot was made.
    """
    if isinstance(s, Slot):
        obj, attr, key = s.obj, s.attr, s.key
    else:
        obj = s
    if isinstance(obj, ExprSection) or attr == "id":
        return None
    if isinstance(obj, Cache):  # a part: found through its owner
        proc = next((p for p in machine.processors if p.cache is obj), None)
        return None if proc is None else f"pc({proc.id}).{attr}"
    for kind in KINDS.values():
        owner = OWNERS.get(kind.owner) if kind.part is None else None
        if owner is None or not isinstance(obj, owner.types):
            continue
        if kind.table is not None:
            if attr != kind.table:
                continue
            if kind.kind == EXPR:
                return None  # an expression: structural
        else:
            fields = {f.attr: f.name for f in reference_fields(kind.prefix, readable=True).values()}
            if attr not in fields:
                continue
        if kind.owner == "link" and link_topology is not None:
            topo = link_topology.get(id(obj))
            ids = None if topo is None else (topo.id, obj.id)
        elif obj is machine or kind.owner != "machine":
            ids = OWNERS[kind.owner].indices(machine, obj)
        else:
            ids = None
        if ids is None:
            return None
        numbers = "".join(f"({i})" for i in ids)
        if kind.by_index:
            return f"{kind.prefix}{numbers}({key})"
        if kind.table is not None:
            return f"{kind.prefix}{numbers}.{key}"
        return f"{kind.prefix}{numbers}.{fields[attr]}"
    return None


# --------------------------------------------------------------------------- text


def parse_reference(text: str) -> Reference:
    """The reference ``text`` spells; UnresolvedReference when it is not one."""
    return _parse_reference(text.strip())


@lru_cache(maxsize=4096)
def _parse_reference(text: str) -> Reference:
    """Remembered (a Reference is immutable): a slider drag sets the same reference on
    every step, and parsing it is a run of lark's parser."""
    from parasol_core.base.diagnostics import ModelSyntaxError

    try:
        tree = parse_expression(text.strip()).tree
    except ModelSyntaxError as e:
        raise UnresolvedReference(f"'{text.strip()}' is not a reference: {e.message}") from None
    if not isinstance(tree, Reference):
        raise UnresolvedReference(f"'{text.strip()}' is not a reference such as pt(1).iga")
    return tree


def reference_key(ref: Reference) -> str:
    """The key :func:`resolve` gives ``ref``'s target, worked out from the reference alone
    (no model needed): its text, with a timing alias replaced by the canonical name
    (``pt(1).sqrti`` -> ``pt(1).sqrtr``)."""
    if ref.prefix == "pt" and ref.field is not None and ref.field_index is None:
        name, _ = params.resolve_name(ref.field)
        if name is not None and name != ref.field:
            return "pt" + "".join(f"({i})" for i in ref.indices) + "." + name
    return str(ref)


def canonical_key(ref: Reference | str) -> str:
    """The key a dependency graph files the stored value ``ref`` names under.

    It is :func:`reference_key`, except that every ``tl(T)(L).connect(K)`` is filed
    under the link's whole list, ``tl(T)(L).connect``: an edit replaces the list, and
    that must reach every ``connect(K)`` of the link. Text is parsed first; text that is
    not a reference raises UnresolvedReference.
    """
    if isinstance(ref, str):
        ref = parse_reference(ref)
    if ref.prefix == "tl" and ref.field == "connect" and ref.field_index is not None:
        return "tl" + "".join(f"({i})" for i in ref.indices) + ".connect"
    return reference_key(ref)
