"""The model objects: a machine, its processor types, topologies and run-time systems.

Every object that is a `begin X ... end X` section in a file is a :class:`Block`. A block
class declares its schema (scalar fields, tables of entries, child blocks) once; the
loader, both writers, the JSON dump and the validator all walk that schema, so a new
field is added in one place.

Objects compare by content only. Where an object came from a file, ``obj.src`` records
where each value sat in the text (see :mod:`parasol_core.base.source`); the writer uses
it to change only what was edited.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any, ClassVar

import parasol_core.model.linkstore as linkstore
from parasol_core.base.values import Timing
from parasol_core.model.tree import Expression

# --------------------------------------------------------------------------- values


# Value kinds a field can hold; they decide how a value is parsed, written and checked.
INT = "int"
STR = "str"
TIMING = "timing"
EXPR = "expr"
CONNECT = "connect"
SHAPE = "shape"
# A number in a `# piui: KEY = VALUE` comment line (forwarding cost, duplex links):
# an extension that 1994 readers skip as a comment (see syntax/annotations.py).
NOTE = "note"
# A word in a `# piui: KEY = WORD` comment line: a processor type's role (`switch`).
WORD = "word"
# The roles a processor type may have (docs/decisions.md, "Switches"): a switch (or
# router) only forwards messages; it runs no program.
ROLES = ("switch",)
# The networks a hardware topology may say it was generated as
# (`# piui: network = KIND N ...`, docs/decisions.md "Switches"), with the names of
# their whole-number parameters in order. Routing techniques and drawings that need
# the structure (levels of a fat tree, groups of a dragonfly) read it from there.
NETWORK_KINDS: dict[str, tuple[str, ...]] = {
    # k-ary n-tree: k**n compute processors; n levels of k**(n-1) switches with 2k ports
    "fattree": ("k", "n"),
    # two-level fat tree: leaf switches D1 ports down, U1 up; spine switches D2 down
    "fattree2": ("d1", "u1", "d2"),
    # three-level fat tree: level-i switches Di ports down, Ui up (topology/switched.py)
    "fattree3": ("d1", "u1", "d2", "u2", "d3"),
    # groups, routers per group, terminals per router, global links per router
    "dragonfly": ("g", "a", "p", "h"),
    # SimGrid's FAT_TREE (an extended generalized fat tree): H levels, then H children
    # counts, H parent counts and H parallel-link counts (3H + 1 numbers)
    "xgft": ("h", "m1..mH", "w1..wH", "p1..pH"),
    # SimGrid's DRAGONFLY: groups, chassis per group, routers (blades) per chassis,
    # hosts per router (what the SimGrid import writes)
    "simgrid-dragonfly": ("g", "c", "b", "n"),
}
#: network kinds whose count of numbers depends on the first one: kind -> (numbers
#: besides the groups, numbers a group, the most groups); an ``xgft`` of H levels has
#: 1 + 3H numbers, H from 1 to 8
VARIABLE_NETWORKS: dict[str, tuple[int, int, int]] = {"xgft": (1, 3, 8)}


@dataclass(frozen=True)
class Field:
    """A scalar definition `keyword = value` directly inside a block."""

    attr: str
    keyword: str
    kind: str


@dataclass(frozen=True)
class Table:
    """Entries `key = value` that form a dict on the object.

    ``block`` is the keyword of the sub-section holding them (`timings`, `procid`, ...),
    or None when the entries sit directly in the object's own section. ``key_format``
    turns a dict key into the text before `=` (`p[{}]` for the processor types).
    """

    attr: str
    block: str | None
    kind: str
    key_format: str = "{}"


@dataclass(frozen=True)
class Child:
    """Child sections: a list (``many``) or at most one. ``container`` is the keyword of a
    wrapping section (`linklist` around links)."""

    attr: str
    cls: type[Block]
    many: bool
    container: str | None = None


class Block:
    """Base of every section object. Subclasses are dataclasses listing their schema."""

    KEYWORD: ClassVar[str] = ""
    # Tables and children in the order a canonical file lists them (default: tables,
    # then children).
    ORDER: ClassVar[tuple[str, ...]] = ()
    FIELDS: ClassVar[tuple[Field, ...]] = ()
    TABLES: ClassVar[tuple[Table, ...]] = ()
    CHILDREN: ClassVar[tuple[Child, ...]] = ()

    src: Any

    def field_items(self) -> Iterator[tuple[Field, Any]]:
        for f in self.FIELDS:
            yield f, getattr(self, f.attr)

    def location(self, key: str | None = None) -> tuple[int, int] | None:
        """(line, column) of a value (``"id"``, ``"timings.iga"``, ...) or of the section."""
        if self.src is None:
            return None
        return self.src.location(key)

    def label(self) -> str:
        """How messages name this object, e.g. ``processor 2`` or ``link 7``."""
        ident = getattr(self, "id", None)
        return f"{self.KEYWORD} {ident}" if ident is not None else self.KEYWORD


def _src() -> Any:
    return field(default=None, compare=False, repr=False)


# --------------------------------------------------------------------------- blocks


@dataclass(eq=True)
class Cache(Block):
    KEYWORD: ClassVar[str] = "cache"
    FIELDS: ClassVar[tuple[Field, ...]] = (
        Field("size", "size", INT),
        Field("speed", "speed", TIMING),
        Field("smallloopspeedup", "smallloopspeedup", TIMING),
    )

    size: int | None = None
    speed: Timing | None = None
    smallloopspeedup: Timing | None = None
    src: Any = _src()


@dataclass(eq=True)
class Processor(Block):
    KEYWORD: ClassVar[str] = "processor"
    ORDER: ClassVar[tuple[str, ...]] = ("timings", "cache", "combinations")
    FIELDS: ClassVar[tuple[Field, ...]] = (
        Field("role", "role", WORD),
        Field("id", "id", INT),
        Field("name", "name", STR),
    )
    TABLES: ClassVar[tuple[Table, ...]] = (
        Table("timings", "timings", TIMING),
        Table("combinations", "combinations", EXPR),
    )

    id: int | None = None
    name: str | None = None
    timings: dict[str, Timing] = field(default_factory=dict)
    cache: Cache | None = None
    combinations: dict[str, Expression] = field(default_factory=dict)
    # Extension (docs/decisions.md, "Switches"): None for a processor that runs
    # programs, "switch" for a network node that only forwards (`# piui: role = switch`)
    role: str | None = None
    src: Any = _src()

    @property
    def is_switch(self) -> bool:
        return self.role == "switch"


Processor.CHILDREN = (Child("cache", Cache, many=False),)


@dataclass(eq=True)
class Link(Block):
    KEYWORD: ClassVar[str] = "link"
    FIELDS: ClassVar[tuple[Field, ...]] = (
        Field("id", "id", INT),
        Field("latency", "latency", TIMING),
        Field("speed", "speed", TIMING),
        Field("connect", "connect", CONNECT),
    )

    id: int | None = None
    latency: Timing | None = None
    speed: Timing | None = None
    # The processors on the link (the count the file writes before them is not kept
    # here; the loader's record of the line keeps it for the validator).
    connect: list[int] | None = None
    src: Any = _src()


# A link is a view of a row of its topology's LinkStore (parasol_core/model/linkstore.py) or,
# outside any topology, a plain object holding its own values: the fields read and
# write whichever it is.
for _name in ("id", "latency", "speed", "connect"):
    setattr(Link, _name, linkstore.LinkField(_name))
Link.src = linkstore.LinkSource()  # type: ignore[assignment]
linkstore.bind(Link, Timing)


@dataclass(eq=True)
class Topology(Block):
    """A hardware topology: processors with their types, links and a routing technique."""

    KEYWORD: ClassVar[str] = "topology"
    FIELDS: ClassVar[tuple[Field, ...]] = (
        Field("shape", "shape", SHAPE),
        Field("forward", "forward", NOTE),
        Field("duplex", "duplex", NOTE),
        Field("shared", "shared", WORD),
        Field("fatpipe", "fatpipe", WORD),
        Field("network", "network", WORD),
        Field("names", "names", WORD),
        Field("zones", "zones", WORD),
        Field("id", "id", INT),
        Field("name", "name", STR),
        Field("setup", "setup", TIMING),
        Field("routing", "routing", STR),
        Field("processor_count", "processors", INT),
        Field("link_count", "links", INT),
    )
    TABLES: ClassVar[tuple[Table, ...]] = (Table("types", "procid", INT, "p[{}]"),)

    shape: tuple[int, ...] | None = None
    # Extensions (docs/decisions.md, "Per-hop forwarding and duplex links"): seconds a
    # processor spends per byte forwarding a message that is not its own (None: none,
    # as in 1994), and whether two-processor links are full duplex, with the fraction
    # of a direction's time per byte that traffic the other way adds (None: shared).
    forward: float | None = None
    duplex: float | None = None
    # piui: per-link sharing policies (issue 36; docs/topology.md "Link policies"), each
    # a list of link ids written as "3 5-9 12" (None: no link): `shared`, two-processor
    # links that stay one resource both ways on a duplex topology (SimGrid's SHARED among
    # SPLITDUPLEX links); `fatpipe`, links that bound each message separately, however
    # many cross them (SimGrid's FATPIPE)
    shared: str | None = None
    fatpipe: str | None = None
    # Extension: what network this is ("dragonfly 9 4 2 2"; see NETWORK_KINDS), or None
    network: str | None = None
    # piui: processors' names, "1=Tremblay 4=R" (a SimGrid platform's hosts and routers,
    # issue 36; '%XX' escapes, syntax/annotations.py), or None: shown where a processor
    # is, and taken where a processor number is (parasol_core/topology/names.py)
    names: str | None = None
    # piui: regions routed by their own technique, the rest by `routing` (issue 36: a
    # SimGrid FAT_TREE or DRAGONFLY cluster inside a larger platform), "1-4,9-14 updown
    # xgft 2 2 2 1 2 1 1 via 1; ..." (syntax/annotations.py Zone), or None
    zones: str | None = None
    id: int | None = None
    name: str | None = None
    setup: Timing | None = None
    routing: str | None = None
    processor_count: int | None = None
    link_count: int | None = None
    types: dict[int, int] = field(default_factory=dict)  # processor number -> type id
    # a LinkStore (columns; a list assigned is taken in): see parasol_core/model/linkstore.py
    links: list[Link] = field(default_factory=list)
    src: Any = _src()

    def link_by_id(self, link_id: int) -> Link | None:
        return self.links.link_by_id(link_id)


Topology.links = linkstore.LinksAttribute()  # type: ignore[assignment]
Topology.CHILDREN = (Child("links", Link, many=True, container="linklist"),)


@dataclass(eq=True)
class VirtualTopology(Block):
    """A virtual topology: a routing name saying which virtual links exist, and a
    mapping of virtual processor numbers onto hardware processor numbers."""

    KEYWORD: ClassVar[str] = "virtual"
    FIELDS: ClassVar[tuple[Field, ...]] = (
        Field("shape", "shape", SHAPE),
        Field("id", "id", INT),
        Field("name", "name", STR),
        Field("setup", "setup", TIMING),
        Field("routing", "routing", STR),
        Field("processor_count", "processors", INT),
    )
    TABLES: ClassVar[tuple[Table, ...]] = (Table("mapping", "mapping", INT, "map[{}]"),)

    shape: tuple[int, ...] | None = None
    id: int | None = None
    name: str | None = None
    setup: Timing | None = None
    routing: str | None = None
    processor_count: int | None = None
    mapping: dict[int, int] = field(default_factory=dict)  # virtual -> hardware processor
    src: Any = _src()


@dataclass(eq=True)
class ExprSection(Block):
    """A section of named expressions (machine combinations, PVM, Express, MPI)."""

    TABLES: ClassVar[tuple[Table, ...]] = (Table("entries", None, EXPR),)
    NAMES: ClassVar[tuple[str, ...]] = ()
    # Who it is, once for every front end (references, edits, the engine, fitting, the
    # windows): the Machine attribute that holds it, the prefix its expressions are
    # referred to by (``pv.send``) and its name in words.
    ATTR: ClassVar[str] = ""
    PREFIX: ClassVar[str] = ""
    TITLE: ClassVar[str] = ""

    entries: dict[str, Expression] = field(default_factory=dict)
    src: Any = _src()


@dataclass(eq=True)
class MachineCombinations(ExprSection):
    KEYWORD: ClassVar[str] = "machinecombinations"
    ATTR: ClassVar[str] = "combinations"
    PREFIX: ClassVar[str] = "mc"
    TITLE: ClassVar[str] = "machine combinations"
    NAMES: ClassVar[tuple[str, ...]] = ("maxtotalspd",)


@dataclass(eq=True)
class Pvm(ExprSection):
    KEYWORD: ClassVar[str] = "pvm"
    ATTR: ClassVar[str] = "pvm"
    PREFIX: ClassVar[str] = "pv"
    TITLE: ClassVar[str] = "PVM"
    NAMES: ClassVar[tuple[str, ...]] = (
        "sync", "broadcast", "multicast", "send", "receive",
        "packbyte", "packdouble", "packfloat", "packint", "packlong", "packstring",
        "unpackbyte", "unpackdouble", "unpackfloat", "unpackint", "unpacklong", "unpackstring",
    )  # fmt: skip


@dataclass(eq=True)
class Express(ExprSection):
    KEYWORD: ClassVar[str] = "express"
    ATTR: ClassVar[str] = "express"
    PREFIX: ClassVar[str] = "ex"
    TITLE: ClassVar[str] = "Express"
    NAMES: ClassVar[tuple[str, ...]] = (
        "sync", "broadcast", "multicast", "send", "receive", "exchange", "combine", "concat",
    )  # fmt: skip


@dataclass(eq=True)
class Mpi(ExprSection):
    KEYWORD: ClassVar[str] = "mpi"
    ATTR: ClassVar[str] = "mpi"
    PREFIX: ClassVar[str] = "mp"
    TITLE: ClassVar[str] = "MPI"
    # appendix A's two, then the collectives of the MPI data sheets (docs/decisions.md)
    NAMES: ClassVar[tuple[str, ...]] = (
        "send", "receive",
        "bcast", "reduce", "allreduce", "gather", "scatter", "allgather", "alltoall",
        "barrier", "sendrecv",
    )  # fmt: skip


RUNTIME_SECTIONS: tuple[type[ExprSection], ...] = (Pvm, Express, Mpi)
"""The run-time systems' sections, in the file's order."""
EXPRESSION_SECTIONS: tuple[type[ExprSection], ...] = (MachineCombinations, *RUNTIME_SECTIONS)
"""Every section of named expressions a Machine holds (``getattr(machine, cls.ATTR)``)."""


def runtime_section(name: str) -> type[ExprSection] | None:
    """The run-time system a word names, by its section keyword, its reference prefix or
    its title, any case (``pvm``, ``pv``, ``PVM``); None when it names none."""
    word = name.strip().lower()
    for cls in RUNTIME_SECTIONS:
        if word in (cls.ATTR, cls.PREFIX, cls.TITLE.lower()):
            return cls
    return None


COMBINATION_NAMES: tuple[str, ...] = (
    "ia_spd", "im_spd", "da_spd", "dm_spd", "dd_spd", "ds_spd", "dp_spd",
)  # fmt: skip


@dataclass(eq=True)
class Machine(Block):
    """A whole machine model: the root of a file."""

    KEYWORD: ClassVar[str] = "machine"
    FIELDS: ClassVar[tuple[Field, ...]] = (
        Field("id", "id", INT),
        Field("name", "name", STR),
        Field("processor_count", "processors", INT),
        Field("topology_count", "topologies", INT),
    )

    id: int | None = None
    name: str | None = None
    processor_count: int | None = None  # number of processor *types*
    topology_count: int | None = None  # hardware plus virtual topologies
    processors: list[Processor] = field(default_factory=list)
    combinations: MachineCombinations | None = None
    topologies: list[Topology] = field(default_factory=list)
    virtuals: list[VirtualTopology] = field(default_factory=list)
    pvm: Pvm | None = None
    express: Express | None = None
    mpi: Mpi | None = None
    src: Any = _src()

    # --- lookups by id, as references resolve them (docs/decisions.md, "References": ids)

    def processor(self, proc_id: int) -> Processor | None:
        return _by_id(self.processors, proc_id)

    def topology(self, topo_id: int) -> Topology | None:
        return _by_id(self.topologies, topo_id)

    def virtual(self, virt_id: int) -> VirtualTopology | None:
        return _by_id(self.virtuals, virt_id)

    def hardware(self) -> Topology | None:
        """The hardware topology virtual ones map onto: the one with the lowest id."""
        with_ids = [t for t in self.topologies if t.id is not None]
        if with_ids:
            return min(with_ids, key=lambda t: t.id)
        return self.topologies[0] if self.topologies else None

    def runtime_sections(self) -> list[ExprSection]:
        return [s for s in (self.pvm, self.express, self.mpi) if s is not None]

    def blocks(self) -> Iterator[Block]:
        """Every section object in the model, depth first."""
        yield from walk(self)


Machine.CHILDREN = (
    Child("processors", Processor, many=True),
    Child("combinations", MachineCombinations, many=False),
    Child("topologies", Topology, many=True),
    Child("virtuals", VirtualTopology, many=True),
    Child("pvm", Pvm, many=False),
    Child("express", Express, many=False),
    Child("mpi", Mpi, many=False),
)

BLOCK_CLASSES: dict[str, type[Block]] = {
    cls.KEYWORD: cls
    for cls in (Machine, Processor, Cache, Topology, Link, VirtualTopology,
                MachineCombinations, Pvm, Express, Mpi)
}  # fmt: skip


def children_of(block: Block, child: Child) -> list[Block]:
    value = getattr(block, child.attr)
    if child.many:
        return list(value)
    return [] if value is None else [value]


def walk(block: Block, links: bool = True) -> Iterator[Block]:
    """Every section under ``block``, depth first; without ``links``, the links of link
    stores are left out (passes that handle them in bulk)."""
    yield block
    for child in block.CHILDREN:
        if not links and child.container is not None:
            continue
        for sub in children_of(block, child):
            yield from walk(sub, links)


def all_blocks(root: Block) -> list[Block]:
    """Every section under ``root`` (itself included) that holds a source record of its
    own, in no particular order: for the passes over records (clipping, moving, checking
    them). Links are there only where they hold a built record: the others' records are
    offsets kept by their store (see :class:`~parasol_core.model.linkstore.LinkStore`)."""
    out: list[Block] = []
    stack = [root]
    while stack:
        block = stack.pop()
        out.append(block)
        for child in block.CHILDREN:
            value = getattr(block, child.attr)
            if not child.many:
                if value is not None:
                    stack.append(value)
            elif isinstance(value, linkstore.LinkStore):
                out.extend(value.recorded())
            elif child.cls.CHILDREN:
                stack.extend(value)
            else:
                out.extend(value)
    return out


def link_stores(root: Block) -> list[linkstore.LinkStore]:
    """The link stores of a model's topologies."""
    if isinstance(root, Topology):
        return [root.links]
    if isinstance(root, Machine):
        return [t.links for t in root.topologies]
    return []


def _by_id(items: list, ident: int) -> Any:
    for item in items:
        if item.id == ident:
            return item
    return None


# --------------------------------------------------------------------------- references


@dataclass(frozen=True)
class RefField:
    """A field a reference can name after its dot, as in ``to(1).processors``.

    ``attr`` is the attribute of the object the prefix selects and ``kind`` its value
    kind. ``readable``: an expression can read it (a number); names and routing
    techniques can be set but not read.
    """

    name: str
    attr: str
    kind: str
    readable: bool = True


REFERENCE_FIELDS: dict[str, tuple[RefField, ...]] = {
    "ma": (
        RefField("id", "id", INT),
        RefField("name", "name", STR, readable=False),
        RefField("processors", "processor_count", INT),
        RefField("topologies", "topology_count", INT),
    ),
    "pr": (
        RefField("id", "id", INT),
        RefField("name", "name", STR, readable=False),
        RefField("role", "role", WORD, readable=False),
    ),
    "pc": (
        RefField("size", "size", INT),
        RefField("speed", "speed", TIMING),
        RefField("smallloopspeedup", "smallloopspeedup", TIMING),
    ),
    "to": (
        RefField("id", "id", INT),
        RefField("name", "name", STR, readable=False),
        RefField("setup", "setup", TIMING),
        RefField("routing", "routing", STR, readable=False),
        RefField("processors", "processor_count", INT),
        RefField("links", "link_count", INT),
    ),
    "tl": (
        RefField("id", "id", INT),
        RefField("latency", "latency", TIMING),
        RefField("speed", "speed", TIMING),
        RefField("connect", "connect", CONNECT),
    ),
    "vt": (
        RefField("id", "id", INT),
        RefField("name", "name", STR, readable=False),
        RefField("setup", "setup", TIMING),
        RefField("routing", "routing", STR, readable=False),
        RefField("processors", "processor_count", INT),
    ),
}
"""The one table of what references name directly on an object: the reference
resolver (what an expression may read), ``edit`` (what may be set) and the session's
change keys all derive from it. Tables (timings, combinations, ``tp``, ``vm``) and the
expression sections are named by their own prefixes."""


def reference_fields(prefix: str, readable: bool = False) -> dict[str, RefField]:
    """The fields of ``prefix`` by name (with ``readable``, only those an expression
    can read)."""
    return {f.name: f for f in REFERENCE_FIELDS.get(prefix, ()) if f.readable or not readable}
