"""What a reference such as ``pt(1).iga`` points at (report section 3.1.10).

Numbers after a prefix are ids (docs/decisions.md, "References": an ``id``, not a position);
``tl(T)(L)`` is the link with id L; a timing yields its mean; ``connect(0)`` is the
number of processors on the link and ``connect(k)`` the k-th of them. ``ar.bytes`` and
``ar.procs`` exist only inside the PVM, Express and MPI sections.

The validator uses this to report references to things that do not exist; the
evaluator to fetch values and to find the expressions an expression depends on.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from parasol_core import params
from parasol_core.expr.tree import Expression, Reference
from parasol_core.model import COMBINATION_NAMES, Machine, reference_fields
from parasol_core.syntax.expression import parse_expression

PREFIXES: dict[str, str] = {
    "ma": "a machine field: ma.id, ma.processors or ma.topologies",
    "pr": "a processor: pr(N).id",
    "pt": "a processor timing: pt(N).iga",
    "pc": "a processor cache field: pc(N).size, .speed or .smallloopspeedup",
    "po": "a processor combination: po(N).ia_spd",
    "mc": "a machine combination: mc.maxtotalspd",
    "to": "a topology field: to(N).id, .setup, .processors or .links",
    "tp": "a processor type in a topology: tp(N)(P)",
    "tl": "a link field: tl(N)(L).id, .latency, .speed or .connect(K)",
    "vt": "a virtual topology field: vt(N).id, .setup or .processors",
    "vm": "a virtual topology mapping: vm(N)(V)",
    "pv": "a PVM function: pv.send",
    "ex": "an Express function: ex.send",
    "mp": "an MPI function: mp.send",
    "ar": "a run-time call argument: ar.bytes or ar.procs",
}
# How many numbers in parentheses follow each prefix.
ARITY = {
    "ma": 0, "pr": 1, "pt": 1, "pc": 1, "po": 1, "mc": 0, "to": 1, "tp": 2, "tl": 2,
    "vt": 1, "vm": 2, "pv": 0, "ex": 0, "mp": 0, "ar": 0,
}  # fmt: skip
ARGUMENTS = ("bytes", "procs")


class UnresolvedReference(Exception):
    """A reference that names nothing in the model."""


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


def expression_key(owner: str, name: str) -> str:
    """The key of an expression: ``po(1).ia_spd``, ``mc.maxtotalspd``, ``pv.send``."""
    return f"{owner}.{name}"


def _fail(message: str) -> UnresolvedReference:
    return UnresolvedReference(message)


def resolve(machine: Machine, ref: Reference, runtime_section: bool = False) -> Target:
    """Resolve ``ref`` in ``machine``; raises UnresolvedReference with a message naming it."""
    p = ref.prefix
    n = ARITY[p]
    if len(ref.indices) != n:
        shape = p + "(N)" * n
        raise _fail(f"'{ref}': {p} takes {n or 'no'} number{'s' if n != 1 else ''} in "
                    f"parentheses, as in {shape}...: {PREFIXES[p]}")  # fmt: skip
    fld = ref.field
    if fld is None:
        if p in ("tp", "vm"):
            return _mapped(machine, ref)
        raise _fail(f"'{ref}' needs a field after the dot: {PREFIXES[p]}")
    if p in ("tp", "vm"):
        raise _fail(f"'{ref}' takes no field: {PREFIXES[p]}")
    if ref.field_index is not None and not (p == "tl" and fld == "connect"):
        raise _fail(f"'{ref}': only connect takes a number after the field")
    key = str(ref)
    if p == "ma":
        return _value(key, machine, "ma", fld, "the machine")
    if p == "mc":
        entries = machine.combinations.entries if machine.combinations else {}
        if fld not in entries:
            raise _fail(f"'{ref}': the machine combinations define no '{fld}'")
        return Target("expr", key, expr=entries[fld])
    if p in ("pv", "ex", "mp"):
        section = {"pv": machine.pvm, "ex": machine.express, "mp": machine.mpi}[p]
        label = {"pv": "PVM", "ex": "Express", "mp": "MPI"}[p]
        if section is None or fld not in section.entries:
            raise _fail(f"'{ref}': the {label} section defines no '{fld}'")
        return Target("expr", key, expr=section.entries[fld])
    if p == "ar":
        if fld not in ARGUMENTS:
            raise _fail(f"'{ref}': the run-time arguments are ar.bytes and ar.procs")
        if not runtime_section:
            raise _fail(f"'{ref}' is only defined inside the pvm, express and mpi sections")
        return Target("arg", key)
    ident = ref.indices[0]
    if p in ("pr", "pt", "pc", "po"):
        proc = machine.processor(ident)
        if proc is None:
            raise _fail(f"'{ref}': there is no processor with id {ident}")
        if p == "pr":
            return _value(key, proc, "pr", fld, f"processor {ident}")
        if p == "pt":
            name, _ = params.resolve_name(fld)
            if name is None:
                raise _fail(f"'{ref}': '{fld}' is not a timing parameter")
            timing = proc.timings.get(name)
            if timing is None:
                raise _fail(f"'{ref}': processor {ident} has no timing '{name}'")
            return Target("value", f"pt({ident}).{name}", value=timing.mean)
        if p == "pc":
            if fld not in reference_fields("pc", readable=True):
                raise _fail(f"'{ref}': {PREFIXES['pc']}")
            value = None if proc.cache is None else getattr(proc.cache, fld)
            if value is None:
                raise _fail(f"'{ref}': processor {ident} has no cache {fld}")
            return Target("value", key, value=getattr(value, "mean", value))
        if fld not in proc.combinations:
            known = "" if fld in COMBINATION_NAMES else f" ({fld!r} is not a combination name)"
            raise _fail(f"'{ref}': processor {ident} defines no combination '{fld}'{known}")
        return Target("expr", key, expr=proc.combinations[fld])
    if p in ("to", "tl"):
        topo = machine.topology(ident)
        if topo is None:
            raise _fail(f"'{ref}': there is no hardware topology with id {ident}")
        if p == "to":
            return _value(key, topo, "to", fld, f"topology {ident}")
        link_id = ref.indices[1]
        link = topo.link_by_id(link_id)
        if link is None:
            raise _fail(f"'{ref}': topology {ident} has no link with id {link_id}")
        if fld == "connect":
            k = ref.field_index
            if k is None:
                raise _fail(f"'{ref}': connect takes a number, as in connect(0)")
            procs = link.connect or []
            if k == 0:
                return Target("value", key, value=len(procs))
            if not 1 <= k <= len(procs):
                raise _fail(f"'{ref}': link {link_id} connects {len(procs)} processors, "
                            f"so connect(K) needs 0 <= K <= {len(procs)}")  # fmt: skip
            return Target("value", key, value=procs[k - 1])
        return _value(key, link, "tl", fld, f"link {link_id} of topology {ident}")
    # vt
    virt = machine.virtual(ident)
    if virt is None:
        raise _fail(f"'{ref}': there is no virtual topology with id {ident}")
    return _value(key, virt, "vt", fld, f"virtual topology {ident}")


def _value(key: str, obj: Any, prefix: str, fld: str, owner: str) -> Target:
    fields = reference_fields(prefix, readable=True)
    fields.pop("connect", None)  # read as connect(K), above
    if fld not in fields:
        raise _fail(f"'{key}': {owner} has no field '{fld}' (it has {', '.join(fields)})")
    value = getattr(obj, fields[fld].attr)
    if value is None:
        raise _fail(f"'{key}': {fld} of {owner} is not defined")
    return Target("value", key, value=getattr(value, "mean", value))


def _mapped(machine: Machine, ref: Reference) -> Target:
    ident, number = ref.indices
    key = str(ref)
    if ref.prefix == "tp":
        topo = machine.topology(ident)
        if topo is None:
            raise _fail(f"'{ref}': there is no hardware topology with id {ident}")
        if number not in topo.types:
            raise _fail(f"'{ref}': topology {ident} gives no type for processor {number}")
        return Target("value", key, value=topo.types[number])
    virt = machine.virtual(ident)
    if virt is None:
        raise _fail(f"'{ref}': there is no virtual topology with id {ident}")
    if number not in virt.mapping:
        raise _fail(f"'{ref}': virtual topology {ident} maps no processor {number}")
    return Target("value", key, value=virt.mapping[number])


def parse_reference(text: str) -> Reference:
    """The reference ``text`` spells; UnresolvedReference when it is not one."""
    return _parse_reference(text.strip())


@lru_cache(maxsize=4096)
def _parse_reference(text: str) -> Reference:
    """Remembered (a Reference is immutable): a slider drag sets the same reference on
    every step, and parsing it is a run of lark's parser."""
    from parasol_core.diagnostics import ModelSyntaxError

    try:
        tree = parse_expression(text.strip()).tree
    except ModelSyntaxError as e:
        raise _fail(f"'{text.strip()}' is not a reference: {e.message}") from None
    if not isinstance(tree, Reference):
        raise _fail(f"'{text.strip()}' is not a reference such as pt(1).iga")
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
