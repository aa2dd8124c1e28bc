"""Replacing a hardware topology (by a generated torus, fat tree, ...): the new topology
and every consequence of putting it in place, computed once.

The topology editor shows :meth:`Replacement.summary` before the user commits, and
Apply hands the very same object to ``Session.apply_replacement``, which does what it
says and nothing else, as one undo step: so what the preview says is what Apply does.

The consequences:

* the links added, removed and changed, the processor count, routing and shape
  (:func:`~.compare.compare_topologies`);
* the processor type a generated network's switches need, added with it;
* processor types that change: processors that were switches and become compute
  processors (a torus generated over a dragonfly: the routers' numbers are torus
  processors), or the other way, and the switches a topology without switches keeps
  when the user asks to keep them;
* virtual topologies whose mapping no longer fits (onto what becomes a switch, or
  past the last processor): moved onto the least used compute processors
  (:func:`~.mapping.place`), removed, or left as they are (the model then has an error
  for each, and the preview says so);
* virtual topologies that took their shape from the hardware: they keep it;
* expressions that read a link or processor the new topology has not got, and the
  forwarding and duplex notes the new topology drops: said, with nothing to fix.

A choice the user has (what to do with the switches, with the mappings that no longer
fit) is an :class:`Option` of the replacement, and :class:`Choices` says what was
chosen: the editor offers each option and plans again with the answer.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from parasol_core.base.arrays import unique
from parasol_core.base.words import counted
from parasol_core.model import EXPRESSION_SECTIONS, Machine, Processor, Topology, VirtualTopology
from parasol_core.model.inttable import int_columns
from parasol_core.model.tree import Expression
from parasol_core.topology.compare import TopologyChange, compare_topologies
from parasol_core.topology.shape import processor_count, shape_of

# what becomes of the processors of the old topology that were switches, in a generated
# topology that has no switches of its own (a grid, a torus, ...)
DROP_SWITCHES, KEEP_SWITCHES = "drop", "keep"
# what becomes of mappings that no longer fit
REMAP, REMOVE, LEAVE = "remap", "remove", "leave"


@dataclass(frozen=True)
class Choices:
    """What the user chose where a replacement leaves a choice (the defaults keep the
    model free of errors)."""

    switches: str = DROP_SWITCHES
    mappings: str = REMAP

    def __post_init__(self) -> None:
        if self.switches not in (DROP_SWITCHES, KEEP_SWITCHES):
            raise ValueError(f"switches: {DROP_SWITCHES!r} or {KEEP_SWITCHES!r}, "
                             f"not {self.switches!r}")  # fmt: skip
        if self.mappings not in (REMAP, REMOVE, LEAVE):
            raise ValueError(f"mappings: {REMAP!r}, {REMOVE!r} or {LEAVE!r}, "
                             f"not {self.mappings!r}")  # fmt: skip


@dataclass(frozen=True)
class Option:
    """A choice a replacement leaves the user: ``key`` is the field of :class:`Choices`
    it sets, ``question`` says what it is about, ``answers`` are (value, words)."""

    key: str
    question: str
    answers: tuple[tuple[str, str], ...]
    chosen: str


@dataclass(frozen=True)
class TypeChange:
    """Processors (by number) whose type goes from ``old`` to ``new``."""

    numbers: np.ndarray
    old: int
    new: int
    text: str


@dataclass
class MappingFix:
    """A virtual topology whose mapping no longer fits: ``unfit`` (virtual -> hardware)
    are the entries that would be on a switch or past the last processor; ``action``
    what is done (:data:`REMAP`, :data:`REMOVE`, :data:`LEAVE`), ``moves`` the new
    entries of a remap."""

    virtual: VirtualTopology
    unfit: dict[int, int]
    action: str
    moves: dict[int, int]
    text: str


@dataclass
class Replacement:
    """A replacement of topology ``topo_id`` (``old``) by ``new``, with every
    consequence; ``basis`` is the version of the model it was computed from (set by the
    session: applying it after the model changed is refused)."""

    topo_id: int
    old: Topology
    new: Topology
    add_processors: tuple[Processor, ...]
    links: TopologyChange
    count: str
    types: list[TypeChange] = field(default_factory=list)
    kept_switches: str | None = None
    mappings: list[MappingFix] = field(default_factory=list)
    shapes: list[tuple[VirtualTopology, tuple[int, ...]]] = field(default_factory=list)
    unresolved: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    options: list[Option] = field(default_factory=list)
    choices: Choices = Choices()
    basis: tuple = ()

    @property
    def is_empty(self) -> bool:
        """Nothing would change."""
        return self.links.is_empty and not (
            self.add_processors or self.types or self.mappings or self.shapes
            or self.notes or self.old.network != self.new.network
        )  # fmt: skip

    def summary(self) -> list[str]:
        """Every consequence, one line each, in the order they matter to the user."""
        lines = [f"{self.new.name}: {self.count}"]
        for proc in self.add_processors:
            role = " (a switch: no timings)" if proc.is_switch else ""
            lines.append(f'adds processor type {proc.id} "{proc.name}"{role}')
        lines += [change.text for change in self.types]
        if self.kept_switches:
            lines.append(self.kept_switches)
        lines += [fix.text for fix in self.mappings]
        for virt, shape in self.shapes:
            lines.append(f"{_virtual_name(virt)} keeps the {' x '.join(map(str, shape))} "
                         "shape it took from the hardware")  # fmt: skip
        lines += self.notes
        lines += self.unresolved
        lines += self.links.summary()
        return lines

    def problems(self) -> list[str]:
        """What the model would have wrong after this replacement, in words (empty: no
        new error)."""
        out = [fix.text for fix in self.mappings if fix.action == LEAVE]
        return out + self.unresolved


# --------------------------------------------------------------------------- planning


def plan_generation(machine: Machine, topo_id: int, kind: str, sizes: Sequence[int],
                    latency: Any, speed: Any, choices: Choices | None = None,
                    ) -> Replacement:  # fmt: skip
    """Generate a ``kind`` topology of ``sizes`` over topology ``topo_id`` (see
    :func:`~.generators.generate_over`) and plan putting it in place. ValueError (a
    BudgetError among them) when the generator cannot make it."""
    from parasol_core.topology.generators import NETWORKS, generate_over, switch_type_to_add
    from parasol_core.topology.switches import switch_types

    choices = choices or Choices()
    old = _topology(machine, topo_id)
    new = generate_over(old, kind, sizes, latency, speed, machine=machine,
                        keep_switches=choices.switches == KEEP_SWITCHES)  # fmt: skip
    add = switch_type_to_add(machine, new)
    options = []
    if kind not in NETWORKS:
        kinds = switch_types(machine)
        numbers, types = _types_upto(old, processor_count(new))
        was = numbers[np.isin(types, list(kinds))] if kinds else numbers[:0]
        if was.shape[0]:
            default = _default_type(machine, old)
            options.append(Option(
                "switches",
                f"processors {ranges_text(was)} of the old topology are switches; a {kind} "
                "has none of its own",
                ((DROP_SWITCHES, f"make them compute processors ({_type_name(machine, default)})"),
                 (KEEP_SWITCHES, "keep them as switches inside the new topology")),
                choices.switches,
            ))  # fmt: skip
    return plan_replacement(machine, topo_id, new, [add] if add is not None else [],
                            choices, options)  # fmt: skip


def plan_replacement(machine: Machine, topo_id: int, new: Topology,
                     add_processors: Sequence[Processor] = (), choices: Choices | None = None,
                     options: Sequence[Option] = ()) -> Replacement:  # fmt: skip
    """Every consequence of putting ``new`` in place of topology ``topo_id``, with the
    processor types ``add_processors`` added first. The model is not changed."""
    from parasol_core.topology.switches import switch_types

    choices = choices or Choices()
    old = _topology(machine, topo_id)
    add = tuple(add_processors)
    switches = set(switch_types(machine)) | {p.id for p in add if p.is_switch}
    n_old, n_new = processor_count(old), processor_count(new)
    new_numbers, new_types = _types_upto(new, n_new)
    n_switches = int(np.isin(new_types, list(switches)).sum()) if switches else 0
    plan = Replacement(
        topo_id=topo_id,
        old=old,
        new=new,
        add_processors=add,
        links=compare_topologies(old, new),
        count=_count_text(n_new, n_switches),
        choices=choices,
        options=list(options),
    )
    names = _Names(machine, add)
    plan.types, plan.kept_switches = _type_changes(old, new, n_old, n_new, switches, names)
    if old is machine.hardware():
        new_mask = np.zeros(n_new + 1, dtype=bool)
        sw = new_numbers[np.isin(new_types, list(switches))] if switches else new_numbers[:0]
        new_mask[sw[(sw >= 1) & (sw <= n_new)]] = True
        plan.mappings = _mapping_fixes(machine, old, n_old, n_new, new_mask, choices.mappings)
        if plan.mappings:
            unfit = sum(len(fix.unfit) for fix in plan.mappings)
            plan.options.append(Option(
                "mappings",
                f"{unfit} virtual processor(s) of {len(plan.mappings)} virtual topolog"
                f"{'y' if len(plan.mappings) == 1 else 'ies'} would be on switches or past "
                "the last processor",
                ((REMAP, "move them onto the least used compute processors"),
                 (REMOVE, "remove those virtual topologies"),
                 (LEAVE, f"leave them: the model has {counted(unfit, 'error')} until they are mapped "
                         "again")),
                choices.mappings,
            ))  # fmt: skip
        plan.shapes = _pinned_shapes(machine, old, new, n_new, plan.mappings)
    plan.unresolved = _unresolved(machine, old, new, n_new)
    plan.notes = _notes(old, new)
    return plan


def _topology(machine: Machine, topo_id: int) -> Topology:
    topo = machine.topology(topo_id)
    if topo is None:
        raise ValueError(f"there is no hardware topology with id {topo_id}")
    return topo


def _types_upto(topology: Topology, n: int) -> tuple[np.ndarray, np.ndarray]:
    """The (numbers, types) of the topology's processors 1..n that have a type, as
    int64 columns."""
    found = int_columns(topology.types)
    if found is None:
        items = [(k, v) for k, v in topology.types.items() if type(k) is int and type(v) is int]
        found = (np.asarray([k for k, _ in items], dtype=np.int64),
                 np.asarray([v for _, v in items], dtype=np.int64))  # fmt: skip
    numbers, types = found
    keep = (numbers >= 1) & (numbers <= n)
    return numbers[keep], types[keep]


def _default_type(machine: Machine, old: Topology) -> int:
    """The compute type a generated topology gives processors (as generate_over)."""
    from parasol_core.topology.switches import switch_types

    kinds = switch_types(machine)
    types = [t for t in old.types.values() if t not in kinds]
    return max(set(types), key=types.count, default=1)


def _count_text(n: int, switches: int) -> str:
    if not switches:
        return f"{n} processor{'' if n == 1 else 's'}"
    return (f"{n - switches} compute processor{'' if n - switches == 1 else 's'} + {switches} "
            f"switch{'' if switches == 1 else 'es'}")  # fmt: skip


class _Names:
    """Processor types in words: 'type 2 "Rosetta switch"'."""

    def __init__(self, machine: Machine, add: Sequence[Processor]) -> None:
        self.names = {p.id: p.name for p in [*machine.processors, *add]}

    def __call__(self, t: int) -> str:
        name = self.names.get(t)
        return f'type {t} "{name}"' if name else f"type {t}"


def _type_name(machine: Machine, t: int) -> str:
    return _Names(machine, ())(t)


def _type_changes(old: Topology, new: Topology, n_old: int, n_new: int, switches: set[int],
                  names: _Names) -> tuple[list[TypeChange], str | None]:  # fmt: skip
    """The processors both topologies have whose type changes, grouped by (old, new)
    type; and, for a new topology that is not a switched network, the switches it keeps."""
    m = min(n_old, n_new)
    before = np.full(m + 1, -1, dtype=np.int64)
    after = np.full(m + 1, -1, dtype=np.int64)
    for table, topo in ((before, old), (after, new)):
        numbers, types = _types_upto(topo, m)
        table[numbers] = types
    both = (before >= 0) & (after >= 0)
    both[0] = False
    differ = np.flatnonzero(both & (before != after))
    changes = []
    if differ.shape[0]:
        pairs, which = np.unique(np.column_stack((before[differ], after[differ])), axis=0,
                                 return_inverse=True)  # fmt: skip
        for i, (a, b) in enumerate(pairs.tolist()):
            numbers = differ[np.asarray(which).reshape(-1) == i]
            where = f"processors {ranges_text(numbers)}"
            if a in switches and b not in switches:
                text = (f"{where} were switches ({names(a)}): they become compute processors "
                        f"({names(b)})")  # fmt: skip
            elif b in switches and a not in switches:
                text = f"{where} ({names(a)}) become switches ({names(b)})"
            else:
                text = f"{where} change from {names(a)} to {names(b)}"
            changes.append(TypeChange(numbers, int(a), int(b), text))
    kept = None
    if switches and not new.network:
        same = np.flatnonzero(both & (before == after) & np.isin(after, list(switches)))
        if same.shape[0]:
            kinds = sorted(set(after[same].tolist()))
            kept = (f"processors {ranges_text(same)} stay switches "
                    f"({', '.join(names(t) for t in kinds)}) inside the new topology: "
                    "programs run only on the others")  # fmt: skip
    return changes, kept


def _mapping_fixes(machine: Machine, old: Topology, n_old: int, n_new: int,
                   new_mask: np.ndarray, action: str) -> list[MappingFix]:  # fmt: skip
    """The virtual topologies with entries that fit the old hardware and not the new
    one, and what ``action`` does about them."""
    from parasol_core.topology.mapping import place
    from parasol_core.topology.switches import switch_mask
    from parasol_core.topology.virtual import virtual_count

    old_mask = switch_mask(machine, old, n_old)
    targets = np.flatnonzero(~new_mask[1:]) + 1
    fixes = []
    for virt in machine.virtuals:
        found = int_columns(virt.mapping)
        if found is None:
            continue  # numbers the file format cannot hold: the validator says so
        vs, hs = found
        inside_old = (hs >= 1) & (hs <= n_old)
        fit_before = inside_old.copy()
        fit_before[inside_old] = ~old_mask[hs[inside_old]]
        inside_new = (hs >= 1) & (hs <= n_new)
        fit_after = inside_new.copy()
        fit_after[inside_new] = ~new_mask[hs[inside_new]]
        lost = fit_before & ~fit_after
        if not lost.any():
            continue
        unfit = dict(zip(vs[lost].tolist(), hs[lost].tolist()))
        past = hs[lost] > n_new
        why = ("switches" if not past.any() else f"processors past {n_new}" if past.all()
               else f"switches or processors past {n_new}")  # fmt: skip
        what = (f"{_virtual_name(virt)}: map[{ranges_text(vs[lost])}] would be on {why} "
                f"({ranges_text(unique(hs[lost]))})")  # fmt: skip
        moves: dict[int, int] = {}
        act = action
        if act == REMAP:
            kept = {int(v): int(h) for v, h, bad in zip(vs.tolist(), hs.tolist(), lost.tolist())
                    if not bad}  # fmt: skip
            moves = place(kept, sorted(unfit), targets, virtual_count(virt))
            if not moves:
                act = LEAVE
            else:
                text = (
                    f"{what}: moved onto "
                    f"{ranges_text(unique(np.fromiter(moves.values(), dtype=np.int64)))}"
                )
        if act == REMOVE:
            text = f"{what}: the virtual topology is removed"
        if act == LEAVE:
            text = (f"{what}: left there, the model has {counted(len(unfit), 'error')} until they are "
                    "mapped again")  # fmt: skip
        fixes.append(MappingFix(virt, unfit, act, moves, text))
    return fixes


def _pinned_shapes(machine: Machine, old: Topology, new: Topology, n_new: int,
                   fixes: Sequence[MappingFix]) -> list[tuple[VirtualTopology, tuple[int, ...]]]:  # fmt: skip
    """Virtual topologies with no shape of their own that take the old hardware's
    (their processor counts agree) and would take another or none from the new one:
    they keep the shape they have, so that their virtual links stay as they are."""
    from parasol_core.topology.virtual import virtual_count

    removed = {id(fix.virtual) for fix in fixes if fix.action == REMOVE}
    n_old = processor_count(old)
    before = shape_of(old)
    if before is None:
        return []
    after = shape_of(new) if n_new == n_old else None
    if after == before:
        return []
    return [(virt, before.dims) for virt in machine.virtuals
            if not virt.shape and id(virt) not in removed and virtual_count(virt) == n_old
            and _reads_grid(virt.routing)]  # fmt: skip


def _reads_grid(routing: str | None) -> bool:
    """Whether a routing lays virtual processors on a grid of two or more sizes (a
    ring, a hypercube and broadcast do not read the shape)."""
    from parasol_core.topology.errors import RoutingError
    from parasol_core.topology.routing import get_routing

    try:
        dims = get_routing(routing).grid_dims if routing else None
    except RoutingError:
        return False
    return dims is not None and dims >= 2


def _expressions(machine: Machine) -> Iterator[tuple[str, str, Expression]]:
    for proc in machine.processors:
        for name, expr in proc.combinations.items():
            yield f"processor {proc.id}", name, expr
    for cls in EXPRESSION_SECTIONS:
        section = getattr(machine, cls.ATTR)
        if section is not None:
            for name, expr in section.entries.items():
                yield cls.TITLE, name, expr


def _unresolved(machine: Machine, old: Topology, new: Topology, n_new: int) -> list[str]:
    """Expressions that read a link (``tl``) or processor type (``tp``) of the topology
    that the new one has not got (and the old one had)."""
    out = []
    for owner, name, expr in _expressions(machine):
        for ref in expr.references():
            if ref.prefix not in ("tl", "tp") or len(ref.indices) != 2:
                continue
            if ref.indices[0] != old.id:
                continue
            number = ref.indices[1]
            if ref.prefix == "tl":
                had = old.links.row_of_id(number) is not None
                has = new.links.row_of_id(number) is not None
                what = f"link {number}"
            else:
                had, has = number in old.types, number in new.types and 1 <= number <= n_new
                what = f"processor {number}"
            if had and not has:
                out.append(f"{owner}: {name} reads {ref}, and the new topology has no {what}: "
                           "it will not evaluate")  # fmt: skip
                break
    return out


def _notes(old: Topology, new: Topology) -> list[str]:
    out = []
    if old.forward is not None and new.forward != old.forward:
        out.append(f"drops the forwarding cost of {old.forward:g} s/byte ('# piui: forward')")
    if old.duplex is not None and new.duplex != old.duplex:
        out.append(f"drops the duplex links note ({old.duplex:g}, '# piui: duplex')")
    return out


def _virtual_name(virt: VirtualTopology) -> str:
    return (
        f'virtual topology {virt.id} "{virt.name}"' if virt.name else f"virtual topology {virt.id}"
    )


def ranges_text(numbers: Any, limit: int = 6) -> str:
    """Processor numbers in words, runs joined: "65..72", "1, 3, 5..9 and 4 more"."""
    values = unique(np.asarray(numbers, dtype=np.int64))
    if not values.shape[0]:
        return "none"
    breaks = np.flatnonzero(np.diff(values) != 1) + 1
    starts = np.concatenate(([0], breaks))
    ends = np.concatenate((breaks, [values.shape[0]])) - 1
    runs = [f"{values[a]}..{values[b]}" if b > a + 1 else
            f"{values[a]}, {values[b]}" if b == a + 1 else str(values[a])
            for a, b in zip(starts.tolist(), ends.tolist())]  # fmt: skip
    if len(runs) <= limit:
        return ", ".join(runs)
    return f"{', '.join(runs[:limit])} and {counted(len(runs) - limit, 'more run', grouped=False)}"


def with_choices(plan: Replacement, **answers: str) -> Choices:
    """The plan's choices with some answered otherwise (``mappings="leave"``)."""
    return replace(plan.choices, **answers)
