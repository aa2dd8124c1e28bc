"""Semantic checks on a model: what the grammar cannot say.

``validate(machine)`` returns diagnostics and never raises. A model with errors still
opens in the editor with its diagnostics listed; only a syntax error stops a load.
The decisions of docs/decisions.md ("Repeated definitions and counts", "References",
"Topologies") are the rules checked here.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Collection, Iterable
from typing import TYPE_CHECKING, Any

import numpy as np

from parasol_core.base import params
from parasol_core.base.diagnostics import ERROR, WARNING, Diagnostic
from parasol_core.base.limits import MAX_ID
from parasol_core.base.memory import TRIM_AFTER_BYTES, release_free_memory
from parasol_core.base.source import LineIndex, loaded_connect
from parasol_core.base.words import counted, quoted
from parasol_core.expr.evaluate import constant_failures
from parasol_core.expr.refs import UnresolvedReference, resolve
from parasol_core.model import (
    COMBINATION_NAMES,
    Block,
    ExprSection,
    Machine,
    Processor,
    Topology,
    VirtualTopology,
)
from parasol_core.model.inttable import int_columns
from parasol_core.model.linkstore import LinkStore
from parasol_core.model.tree import Expression, unparse
from parasol_core.topology.overflow import overflow_warnings
from parasol_core.topology.switches import switch_numbers

if TYPE_CHECKING:
    from parasol_core.expr.engine import Engine


def known_routings() -> Collection[str]:
    """Routing names the topology library knows (plug-ins included; read only when a
    model names a routing that is not built in)."""
    from parasol_core.topology.routing import routing_names

    return routing_names()


class _Checker:
    def __init__(self, machine: Machine, engine: Engine | None = None) -> None:
        self.m = machine
        self.engine = engine
        self.out: list[Diagnostic] = []
        self.file = machine.src.path if machine.src is not None else None
        self._lines: LineIndex | None = None

    # ---- reporting

    def report(self, severity: str, message: str, obj: Block | None, key: str | None = None,
               target: tuple = ()) -> None:  # fmt: skip
        loc = obj.location(key) if obj is not None else None
        line, col = loc if loc else (None, None)
        self.out.append(Diagnostic(severity, message, line, col, self.file, target))

    def error(self, message: str, obj: Block | None, key: str | None = None,
              target: tuple = ()) -> None:  # fmt: skip
        self.report(ERROR, message, obj, key, target)

    def warning(self, message: str, obj: Block | None, key: str | None = None,
                target: tuple = ()) -> None:  # fmt: skip
        self.report(WARNING, message, obj, key, target)

    # ---- the checks

    def run(self) -> list[Diagnostic]:
        m = self.m
        for attr, kw in (("id", "id"), ("name", "name"), ("processor_count", "processors"),
                         ("topology_count", "topologies")):  # fmt: skip
            if getattr(m, attr) is None:
                self.error(f"the machine has no '{kw}' field", m, target=("machine",))
        self.check_id(m, "the machine")
        if m.processor_count is not None and m.processor_count != len(m.processors):
            self.error(
                f"'processors = {m.processor_count}' but {len(m.processors)} processor "
                "section(s) are defined", m, "processor_count", ("machine",),
            )  # fmt: skip
        n_topo = len(m.topologies) + len(m.virtuals)
        if m.topology_count is not None and m.topology_count != n_topo:
            self.error(
                f"'topologies = {m.topology_count}' but {n_topo} topology and virtual "
                "section(s) are defined", m, "topology_count", ("machine",),
            )  # fmt: skip
        self.check_unique(m.processors, "processor")
        self.check_unique(m.topologies, "topology")
        self.check_unique(m.virtuals, "virtual topology")
        for proc in m.processors:
            self.check_processor(proc)
        if len(m.topologies) > 1:
            hw = m.hardware()
            self.warning(
                f"{counted(len(m.topologies), 'hardware topology')}: virtual topologies map onto the "
                f"one with the lowest id ({hw.id if hw else '?'})", m.topologies[1], None,
                ("topology", m.topologies[1].id),
            )  # fmt: skip
        routings = known_routings()
        for topo in m.topologies:
            self.check_topology(topo, routings)
            self.check_overflow(topo)
        for virt in m.virtuals:
            self.check_virtual(virt, routings)
        for section in [m.combinations, *m.runtime_sections()]:
            if section is not None:
                self.check_section(section)
        self.check_cycles()
        return self.out

    def check_cycles(self) -> None:
        from parasol_core.expr.engine import Engine  # the engine builds on this package

        engine = self.engine if self.engine is not None else Engine(self.m)
        found = []
        for members in engine.cycle_entries():
            chain = " -> ".join([e.key for e in members] + [members[0].key])
            found += [(e.owner.location(e.location_key) or (0, 0), e, chain) for e in members]
        for _, e, chain in sorted(found, key=lambda item: item[0]):
            self.error(f"{e.key} is part of a cycle of references: {chain}", e.owner,
                       e.location_key, e.target)  # fmt: skip

    def check_id(self, obj: Block, label: str) -> None:
        ident = getattr(obj, "id", None)
        if ident is not None and not 0 <= ident <= MAX_ID:
            self.error(f"the id of {label} is out of range: {ident}", obj, "id")

    def check_unique(self, items: Iterable[Block], what: str) -> None:
        seen: dict[int, Block] = {}
        for item in items:
            if item.id is None:
                self.error(f"a {what} section has no 'id'", item, None, (item.KEYWORD,))
                continue
            if item.id in seen:
                first = seen[item.id].location()
                where = f" (first on line {first[0]})" if first else ""
                self.error(f"{what} id {item.id} is used twice{where}", item, "id",
                           (item.KEYWORD, item.id))  # fmt: skip
            else:
                seen[item.id] = item

    def check_processor(self, proc: Processor) -> None:
        target = ("processor", proc.id)
        label = proc.label()
        self.check_id(proc, label)
        if proc.name is None:
            self.warning(f"{label} has no name", proc, None, target)
        for name, timing in proc.timings.items():
            key = f"timings.{name}"
            if name not in params.BY_NAME:
                self.error(f"unknown timing parameter {quoted(name)} in {label}", proc, key, target)
            if timing.mean < 0:
                self.error(f"timing {quoted(name)} of {label} is negative: {timing.mean!r}", proc,
                           key, target)  # fmt: skip
            if timing.sd is not None and timing.sd < 0:
                self.error(f"the standard deviation of {quoted(name)} in {label} is negative", proc,
                           key, target)  # fmt: skip
        cache = proc.cache
        if cache is not None:
            if cache.size is not None and cache.size < 0:
                self.error(f"the cache size of {label} is negative", cache, "size", target)
            if cache.speed is not None and cache.speed.mean < 0:
                self.error(f"the cache speed of {label} is negative", cache, "speed", target)
            sls = cache.smallloopspeedup
            if sls is not None and sls.mean <= 0:
                self.error(f"the small loop speedup of {label} must be positive", cache,
                           "smallloopspeedup", target)  # fmt: skip
        for name, expr in proc.combinations.items():
            if name not in COMBINATION_NAMES:
                self.error(
                    f"unknown combination {quoted(name)} in {label} (known: "
                    f"{', '.join(COMBINATION_NAMES)})", proc, f"combinations.{name}", target,
                )  # fmt: skip
            self.check_expression(expr, proc, f"combinations.{name}", target, False)

    def check_section(self, section: ExprSection) -> None:
        runtime = section.KEYWORD in ("pvm", "express", "mpi")
        target = (section.KEYWORD,)
        for name, expr in section.entries.items():
            if name not in section.NAMES:
                self.error(
                    f"unknown name {quoted(name)} in the {section.KEYWORD} section (known: "
                    f"{', '.join(section.NAMES)})", section, f"entries.{name}", target,
                )  # fmt: skip
            self.check_expression(expr, section, f"entries.{name}", target, runtime)

    def check_expression(self, expr: Expression, owner: Block, key: str, target: tuple,
                         runtime: bool) -> None:  # fmt: skip
        for ref in expr.references():
            try:
                resolve(self.m, ref, runtime)
            except UnresolvedReference as e:
                line, col = self.position_in(expr, ref.start, owner, key)
                self.out.append(Diagnostic(ERROR, str(e), line, col, self.file, target))
        # what refers to nothing is evaluated now: 7 % 0 fails whatever the model holds
        for node, error in constant_failures(expr):
            start = error.start if error.start is not None else node.start
            line, col = self.position_in(expr, start, owner, key)
            part = unparse(node)
            part = part if len(part) <= 60 else part[:57] + "..."
            self.out.append(Diagnostic(WARNING, f"'{part}' fails whenever it is evaluated: "
                                       f"{error.message}", line, col, self.file, target))  # fmt: skip

    def position_in(self, expr: Expression, offset: int, owner: Block,
                    key: str) -> tuple[int | None, int | None]:  # fmt: skip
        src = self.m.src
        if src is not None and owner.src is not None and expr.offset:
            if self._lines is None:
                self._lines = LineIndex(src.text)
            return self._lines.position(offset)
        loc = owner.location(key)
        return loc if loc else (None, None)

    def check_topology(self, topo: Topology, routings: Collection[str]) -> None:
        target = ("topology", topo.id)
        label = topo.label()
        self.check_id(topo, label)
        self.check_routing(topo, routings, target)
        count = topo.processor_count
        if count is None:
            self.error(f"{label} has no 'processors' field", topo, None, target)
        else:
            if count < 1:
                self.error(f"{label} needs at least one processor", topo, "processor_count",
                           target)  # fmt: skip
            if len(topo.types) != count:
                self.error(f"{label} has 'processors = {count}' but {len(topo.types)} "
                           "p[i] lines", topo, "processor_count", target)  # fmt: skip
        proc_ids = {p.id for p in self.m.processors}
        for number, ptype in _suspects(topo.types, count, proc_ids):
            if count is not None and not 1 <= number <= count:
                self.error(f"processor number p[{number}] of {label} is out of range "
                           f"1..{count}", topo, f"types.{number}", target)  # fmt: skip
            if ptype not in proc_ids:
                self.error(f"p[{number}] of {label} has type {ptype}, but no processor "
                           f"has id {ptype}", topo, f"types.{number}", target)  # fmt: skip
        nlinks = topo.link_count
        if nlinks is None and topo.links:
            self.error(f"{label} has links but no 'links' field", topo, None, target)
        elif nlinks is not None and nlinks != len(topo.links):
            self.error(f"{label} has 'links = {nlinks}' but {len(topo.links)} link "
                       "sections", topo, "link_count", target)  # fmt: skip
        store = topo.links
        seen: set[int] = set()
        add = seen.add
        suspect, dup_rows = _suspect_links(store, nlinks, count)
        for row in suspect.tolist():
            link = store.view(row)
            ltarget = ("topology", topo.id, "link", link.id)
            if link.id is None:
                self.error(f"a link of {label} has no id", link, None, ltarget)
            else:
                if link.id in seen or row in dup_rows:
                    self.error(f"link id {link.id} is used twice in {label}", link, "id",
                               ltarget)  # fmt: skip
                add(link.id)
                if nlinks is not None and not 1 <= link.id <= nlinks:
                    self.error(f"link id {link.id} of {label} is out of range 1..{nlinks}",
                               link, "id", ltarget)  # fmt: skip
            llabel = f"link {link.id} of {label}"
            for attr in ("latency", "speed"):
                value = getattr(link, attr)
                if value is None:
                    self.error(f"{llabel} has no {attr}", link, None, ltarget)
                elif value.mean < 0:
                    self.error(f"the {attr} of {llabel} is negative", link, attr, ltarget)
            if link.connect is None:
                self.error(f"{llabel} has no 'connect' field", link, None, ltarget)
                continue
            vs = loaded_connect(link)
            if vs is not None and tuple(link.connect) == vs.value and vs.count != len(vs.value):
                self.error(f"{llabel}: 'connect = {vs.count} ...' but {len(vs.value)} "
                           "processor numbers follow", link, "connect", ltarget)  # fmt: skip
            if len(link.connect) < 2:
                self.error(f"{llabel} must connect at least two processors", link, "connect",
                           ltarget)  # fmt: skip
            if count is not None:
                bad = [p for p in link.connect if not 1 <= p <= count]
                if bad:
                    self.error(f"{llabel} connects processor {bad[0]}, out of range 1..{count}",
                               link, "connect", ltarget)  # fmt: skip
            if len(set(link.connect)) == len(link.connect):
                continue
            dup = [p for p, k in Counter(link.connect).items() if k > 1]
            if dup:
                self.error(f"{llabel} lists processor {dup[0]} twice", link, "connect", ltarget)

    def check_overflow(self, topo: Topology) -> None:
        """Warn about timings that make times overflow a double within the limits of a
        phase (:func:`parasol_core.topology.overflow.overflow_warnings`): simulate,
        transfer and the estimator refuse such times, and here is where they come from."""
        target = ("topology", topo.id)
        for row, attr, message in overflow_warnings(topo):
            if row is None:
                self.warning(message, topo, attr, target)
                continue
            link = topo.links.view(row)
            self.warning(message, link, attr, ("topology", topo.id, "link", link.id))

    def check_routing(self, topo: Topology | VirtualTopology, routings: Collection[str],
                      target: tuple) -> None:  # fmt: skip
        if topo.routing is None:
            self.error(f"{topo.label()} has no 'routing' field", topo, None, target)
        elif topo.routing not in routings:
            self.error(f"{topo.label()} has an unknown routing technique '{topo.routing}' "
                       f"(known: {', '.join(sorted(routings))})", topo, "routing", target)  # fmt: skip

    def check_virtual(self, virt: VirtualTopology, routings: Collection[str]) -> None:
        target = ("virtual", virt.id)
        label = f"virtual topology {virt.id}"
        self.check_id(virt, label)
        self.check_routing(virt, routings, target)
        count = virt.processor_count
        if count is None:
            self.error(f"{label} has no 'processors' field", virt, None, target)
        elif len(virt.mapping) != count:
            self.error(f"{label} has 'processors = {count}' but {len(virt.mapping)} map[i] "
                       "lines", virt, "processor_count", target)  # fmt: skip
        hw = self.m.hardware()
        if hw is None:
            self.error(f"{label} has no hardware topology to map onto", virt, None, target)
            return
        hw_count = hw.processor_count
        switches = _switch_numbers(self.m, hw)
        for v, h in _suspects(virt.mapping, count, None, hw_count, switches):
            if count is not None and not 1 <= v <= count:
                self.error(f"virtual processor map[{v}] of {label} is out of range 1..{count}",
                           virt, f"mapping.{v}", target)  # fmt: skip
            if hw_count is not None and not 1 <= h <= hw_count:
                self.error(f"map[{v}] = {h} in {label}: the hardware topology has processors "
                           f"1..{hw_count}", virt, f"mapping.{v}", target)  # fmt: skip
            elif h in switches:
                self.error(f"map[{v}] = {h} in {label}: hardware processor {h} is a switch "
                           f"(type {hw.types[h]}); programs run only on compute processors",
                           virt, f"mapping.{v}", target)  # fmt: skip
        if isinstance(count, int) and not isinstance(count, bool) and 1 <= count <= MAX_ID:
            self.check_virtual_shape(virt, label, count, target)
            self.check_sharing(virt, label, count, hw, switches, target)

    def check_virtual_shape(self, virt: VirtualTopology, label: str, count: int,
                            target: tuple) -> None:  # fmt: skip
        """An error when the routing cannot lay out the virtual links on the shape the
        topology has (its own, or the hardware's when the counts agree): a 3Dtorus on a
        4 x 4 shape, updown (which defines no virtual links). The session refuses such
        edits; a file or a plain ``set`` could still write them."""
        from parasol_core.topology.virtual import virtual_problem, virtual_shape

        if not isinstance(virt.routing, str):
            return
        found = virtual_shape(self.m, virt)
        shape = tuple(virt.shape) if virt.shape else (found.dims if found else None)
        problem = virtual_problem(virt.routing, count, shape, label)
        if problem is not None:
            key = "shape" if virt.shape else "routing"
            self.error(f"{label} cannot lay out its virtual links: {problem}", virt, key, target)

    def check_sharing(self, virt: VirtualTopology, label: str, count: int, hw: Topology,
                      switches: frozenset[int], target: tuple) -> None:  # fmt: skip
        """A warning when the mapping puts more virtual processors on one hardware
        processor than spreading them evenly would (two on one while each could have
        its own): they then run one after the other there. It stays a warning, as the
        session keeps such a mapping editable."""
        from parasol_core.topology.mapping import overload

        hw_count = hw.processor_count
        if not isinstance(hw_count, int) or not virt.mapping:
            return
        found = overload(virt.mapping, count, hw_count - len(switches), hw_count)
        if found is None:
            return
        h, load, limit, crowded = found
        more = f" (and {crowded - 1} more hardware processors over it)" if crowded > 1 else ""
        self.warning(f"{label} puts {load} virtual processors on hardware processor {h}, "
                     f"where {limit} to a processor would do{more}: they run one after the "
                     "other there", virt, "mapping", target)  # fmt: skip


def _suspects(table: Any, count: int | None, known: set | None, high: int | None = None,
              banned: frozenset[int] = frozenset()) -> Any:  # fmt: skip
    """The entries of a procid or mapping table that may be wrong, in order: a number
    outside 1..``count``, a value not in ``known`` (types), outside 1..``high`` or in
    ``banned`` (mappings). Found on the columns (parasol_core.model.inttable), without a loop
    per entry, when the table holds 64-bit integers; else every entry."""
    found = int_columns(table)
    if found is None or (known is not None and not all(type(k) is int for k in known)):
        return table.items()
    numbers, values = found
    if any(k >= 2**63 or k < -(2**63) for k in known or ()):
        return table.items()
    bad = np.zeros(len(numbers), dtype=bool)
    if count is not None:
        bad |= (numbers < 1) | (numbers > count)
    if known is not None:
        bad |= ~np.isin(values, np.fromiter(known, dtype=np.int64, count=len(known)))
    if high is not None:
        bad |= (values < 1) | (values > high)
    if banned:
        bad |= np.isin(values, np.fromiter(banned, dtype=np.int64, count=len(banned)))
    return zip(numbers[bad].tolist(), values[bad].tolist())


def _switch_numbers(machine: Machine, hw: Topology) -> frozenset[int]:
    """The hardware processors that are switches (docs/decisions.md, "Switches")."""
    return frozenset(switch_numbers(machine, hw).tolist())


def _suspect_links(store: LinkStore, nlinks: int | None,
                   count: int | None) -> tuple[np.ndarray, set[int]]:  # fmt: skip
    """The rows of the links the checks must look at one by one, in order, and the rows
    whose id an earlier link already has. The others, found in bulk from the columns,
    are the common case nothing is wrong with: a plain point-to-point link with an id
    of its own in range, two different ends in range, and non-negative timings, whose
    `connect` count the fast path found right (no record of its own)."""
    n = len(store)
    ids = store.ids
    off, procs = store.connect_csr()
    ok = ids >= 0
    if nlinks is not None:
        ok &= (ids >= 1) & (ids <= nlinks)
    order = np.argsort(ids, kind="stable")
    sorted_ids = ids[order]
    repeat = np.zeros(n, dtype=bool)
    if n > 1:
        repeat[order[1:]] = (sorted_ids[1:] == sorted_ids[:-1]) & (sorted_ids[1:] >= 0)
    ok &= ~repeat
    two = np.diff(off) == 2
    ok &= two
    a = np.zeros(n, dtype=np.int64)
    b = np.zeros(n, dtype=np.int64)
    a[two] = procs[off[:-1][two]]
    b[two] = procs[off[:-1][two] + 1]
    ok &= a != b
    if count is not None:
        ok &= (a >= 1) & (a <= count) & (b >= 1) & (b <= count)
    ok &= store.means("latency") >= 0  # NaN (missing, or not a timing) is not
    ok &= store.means("speed") >= 0
    ok[store.odd_rows()] = False
    ok[store.recorded_rows()] = False  # not links edited in bulk: they are in the columns
    return np.flatnonzero(~ok), set(np.flatnonzero(repeat).tolist())


def validate(machine: Machine, engine: Engine | None = None) -> list[Diagnostic]:
    """Every diagnostic for a model: the loader's warnings, then the semantic checks.
    Pass the model's engine when there is one (a session's): the cycle check reads it
    instead of building another."""
    loaded = list(machine.src.diagnostics) if machine.src is not None else []
    found = loaded + _Checker(machine, engine).run()
    text = getattr(machine.src, "text", "") if machine.src is not None else ""
    if len(text or "") >= TRIM_AFTER_BYTES:  # its bulk checks' temporaries: back
        release_free_memory()
    return found


def errors(diagnostics: Iterable[Diagnostic]) -> list[Diagnostic]:
    return [d for d in diagnostics if d.severity == ERROR]
