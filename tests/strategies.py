"""Hypothesis strategies for machine models built from scratch, and for their text.

``machines()`` builds whole :class:`Machine` objects directly through the model classes
(no parsing involved), so a round trip through the writer and the loader has something
independent to be compared with. The models are well formed: ids are unique, counts
agree with what is defined and link ids run from 1. References in expressions have the
right number of indices and a field that exists, but need not name anything in the model.

``expression_trees()`` builds expression trees node by node over every operator,
function and reference prefix; ``model_texts()`` writes a generated machine in a
randomly varied layout (indentation, spacing, comments, blank lines, mixed line ends,
number spellings, aliases) so the lossless writer has more than canonical text to keep.
"""

from __future__ import annotations

import math
import random
from functools import cache

from hypothesis import strategies as st

from parasol_core.base.params import ALIASES, PARAMS
from parasol_core.model import (
    COMBINATION_NAMES,
    Cache,
    Express,
    Link,
    Machine,
    MachineCombinations,
    Mpi,
    Processor,
    Pvm,
    Timing,
    Topology,
    VirtualTopology,
)
from parasol_core.model.tree import (
    BINARY_LEVELS,
    FUNCTIONS,
    MAX_DEPTH,
    Binary,
    Call,
    Expression,
    Node,
    Number,
    Reference,
    Unary,
)
from parasol_core.syntax.writer import canonical_lines

MAX_INT = 2**63 - 1  # the loader's limit for integers
TIMING_NAMES: tuple[str, ...] = tuple(p.name for p in PARAMS)
BINARY_OPS: tuple[str, ...] = tuple(op for level in BINARY_LEVELS for op in level) + ("**",)
UNARY_OPS: tuple[str, ...] = ("-", "!", "~")
ROUTINGS: tuple[str, ...] = (
    "XY", "YX", "XYZ", "XZY", "YXZ", "YZX", "ZXY", "ZYX",
    "1Dtorus", "2Dtorus", "3Dtorus", "broadcast",
)  # fmt: skip

# Fields each reference prefix has (docs/decisions.md "References"; parasol_core.expr.refs).
REFERENCE_FIELDS: dict[str, tuple[str, ...]] = {
    "ma": ("id", "processors", "topologies"),
    "pr": ("id",),
    "pt": TIMING_NAMES,
    "pc": ("size", "speed", "smallloopspeedup"),
    "po": COMBINATION_NAMES,
    "mc": ("maxtotalspd",),
    "to": ("id", "setup", "processors", "links"),
    "tl": ("id", "latency", "speed", "connect"),
    "vt": ("id", "setup", "processors"),
    "pv": Pvm.NAMES,
    "ex": Express.NAMES,
    "mp": Mpi.NAMES,
    "ar": ("bytes", "procs"),
}
REFERENCE_ARITY: dict[str, int] = {
    "ma": 0, "pr": 1, "pt": 1, "pc": 1, "po": 1, "mc": 0, "to": 1, "tp": 2, "tl": 2,
    "vt": 1, "vm": 2, "pv": 0, "ex": 0, "mp": 0, "ar": 0,
}  # fmt: skip

# --------------------------------------------------------------------------- numbers

# Edge cases a file must carry exactly: the extremes of a double, subnormals, numbers
# whose shortest form has an exponent, and values just around powers of ten.
EDGE_FLOATS: tuple[float, ...] = (
    0.0, 5e-324, 2.2250738585072014e-308, 2.225073858507201e-308, 1e-300, 1e-7, 0.1,
    1.0, 1.5, 9.999999999999999e22, 1e16, 1e22, 1e23, 123456789012345678.0,
    1.7976931348623157e308,
)  # fmt: skip


@cache
def non_negative_floats() -> st.SearchStrategy[float]:
    """Finite floats >= 0 (not -0.0): what a float literal in an expression can be."""
    return st.one_of(
        st.sampled_from(EDGE_FLOATS),
        st.floats(min_value=0.0, allow_nan=False, allow_infinity=False).filter(
            lambda x: math.copysign(1.0, x) > 0
        ),
    )


@cache
def timing_floats() -> st.SearchStrategy[float]:
    """Finite floats of either sign, -0.0 included: what a timing value can be."""
    edges = st.sampled_from(EDGE_FLOATS + (-0.0,) + tuple(-x for x in EDGE_FLOATS if x))
    return st.one_of(edges, st.floats(allow_nan=False, allow_infinity=False))


@cache
def timings() -> st.SearchStrategy[Timing]:
    return st.builds(Timing, timing_floats(), st.none() | timing_floats())


@cache
def optional(strategy: st.SearchStrategy) -> st.SearchStrategy:
    """``strategy`` or None (made once per strategy: building strategies is not free)."""
    return st.none() | strategy


@cache
def file_ints(max_value: int = MAX_INT) -> st.SearchStrategy[int]:
    """Integers a file can hold (no sign; at most 2**63 - 1)."""
    return st.one_of(
        st.integers(0, 64),
        st.sampled_from(
            tuple(v for v in (255, 4096, 2**31 - 1, 2**53 + 1, MAX_INT) if v <= max_value)
        ),
        st.integers(0, max_value),
    )


# --------------------------------------------------------------------------- names

# A name is `"` any characters but `"` and line ends `"`. `;` and `#` are fine inside.
_NAME_CHARS = st.characters(blacklist_categories=("Cs",), blacklist_characters='"\n\r\x0b')


@cache
def names() -> st.SearchStrategy[str]:
    return st.one_of(
        st.text(_NAME_CHARS, max_size=24),
        st.sampled_from(("", " ", "Parsytec GCel", "a;b", "# not a comment", "x\ty", "Zürich")),
    )


@cache
def identifiers() -> st.SearchStrategy[str]:
    """Any NAME token of the grammar (for reference fields in general trees)."""
    return st.from_regex(r"\A[A-Za-z_][A-Za-z0-9_]{0,8}\Z")


# --------------------------------------------------------------------------- expressions


@cache
def numbers() -> st.SearchStrategy[Number]:
    return st.one_of(
        st.builds(Number, file_ints()),
        st.builds(Number, non_negative_floats()),
    )


@cache
def references(
    runtime: bool = False, general: bool = False, ids: st.SearchStrategy[int] | None = None
) -> st.SearchStrategy[Reference]:
    """References with the right number of indices and a real field for their prefix.

    ``runtime`` admits ``ar.bytes`` / ``ar.procs``; ``general`` instead builds any
    reference the grammar accepts (any prefix, 0-3 indices, any field name).
    """
    ids = ids if ids is not None else st.one_of(st.integers(1, 4), file_ints())
    if general:
        return st.builds(
            _reference,
            st.sampled_from(tuple(REFERENCE_ARITY)),
            st.lists(ids, max_size=3).map(tuple),
            st.none() | identifiers(),
            st.none() | ids,
        )
    prefixes = [p for p in REFERENCE_ARITY if runtime or p != "ar"]

    @st.composite
    def build(draw: st.DrawFn) -> Reference:
        prefix = draw(st.sampled_from(prefixes))
        indices = tuple(draw(ids) for _ in range(REFERENCE_ARITY[prefix]))
        if prefix in ("tp", "vm"):
            return Reference(prefix, indices)
        fld = draw(st.sampled_from(REFERENCE_FIELDS[prefix]))
        index = draw(st.integers(0, 3)) if fld == "connect" else None
        return Reference(prefix, indices, fld, index)

    return build()


def _reference(prefix: str, indices: tuple, fld: str | None, index: int | None) -> Reference:
    # A field index only exists after a field.
    return Reference(prefix, indices, fld, index if fld is not None else None)


def tree_depth(node: Node) -> int:
    if isinstance(node, Binary):
        return 1 + max(tree_depth(node.left), tree_depth(node.right))
    if isinstance(node, Unary):
        return 1 + tree_depth(node.operand)
    if isinstance(node, Call):
        return 1 + tree_depth(node.arg)
    return 1


@cache
def expression_trees(
    runtime: bool = False, general: bool = False, max_leaves: int = 12
) -> st.SearchStrategy[Node]:
    """Trees over every binary and unary operator and every function."""
    leaves = st.one_of(numbers(), references(runtime=runtime, general=general))

    def extend(children: st.SearchStrategy[Node]) -> st.SearchStrategy[Node]:
        return st.one_of(
            st.builds(Unary, st.sampled_from(UNARY_OPS), children),
            st.builds(Binary, st.sampled_from(BINARY_OPS), children, children),
            st.builds(Call, st.sampled_from(FUNCTIONS), children),
        )

    # Well inside the loader's depth limit: parentheses the writer adds count too.
    return st.recursive(leaves, extend, max_leaves=max_leaves).filter(
        lambda t: tree_depth(t) <= MAX_DEPTH // 2
    )


@cache
def expressions(runtime: bool = False) -> st.SearchStrategy[Expression]:
    return expression_trees(runtime=runtime, max_leaves=8).map(Expression.from_tree)


# --------------------------------------------------------------------------- sections


@cache
def shapes_for(count: int) -> st.SearchStrategy[tuple[int, ...] | None]:
    """None, or a shape of 1 to 3 sizes whose product is ``count``."""
    options: list[tuple[int, ...]] = [(count,)]
    for w in range(1, count + 1):
        if count % w == 0:
            options.append((w, count // w))
            rest = count // w
            options += [(w, h, rest // h) for h in range(1, rest + 1) if rest % h == 0]
    return st.none() | st.sampled_from(tuple(options))


@cache
@st.composite
def caches(draw: st.DrawFn) -> Cache:
    return Cache(
        size=draw(optional(file_ints())),
        speed=draw(optional(timings())),
        smallloopspeedup=draw(optional(timings())),
    )


@st.composite
def processors(draw: st.DrawFn, proc_id: int) -> Processor:
    chosen = draw(st.lists(st.sampled_from(TIMING_NAMES), max_size=12, unique=True))
    combos = draw(st.lists(st.sampled_from(COMBINATION_NAMES), max_size=3, unique=True))
    return Processor(
        id=proc_id,
        name=draw(optional(names())),
        timings={name: draw(timings()) for name in chosen},
        cache=draw(optional(caches())),
        combinations={name: draw(expressions()) for name in combos},
    )


@st.composite
def links(draw: st.DrawFn, link_id: int, processor_count: int) -> Link:
    numbers_ = st.integers(1, processor_count)
    size = min(2, processor_count)
    connect = draw(
        st.one_of(
            st.lists(numbers_, min_size=size, max_size=min(4, processor_count), unique=True),
            st.none(),
            st.just([]),
        )
    )
    return Link(
        id=link_id,
        latency=draw(optional(timings())),
        speed=draw(optional(timings())),
        connect=connect,
    )


@st.composite
def topologies(draw: st.DrawFn, topo_id: int, proc_ids: list[int]) -> Topology:
    count = draw(st.integers(1, 6))
    type_ids = st.sampled_from(proc_ids) if proc_ids else file_ints()
    n_links = draw(st.integers(0, 4))
    return Topology(
        shape=draw(shapes_for(count)),
        id=topo_id,
        name=draw(optional(names())),
        setup=draw(optional(timings())),
        routing=draw(st.sampled_from(ROUTINGS) | names()),
        processor_count=count,
        link_count=n_links,
        types={i: draw(type_ids) for i in range(1, count + 1)},
        links=[draw(links(i, count)) for i in range(1, n_links + 1)],
    )


@st.composite
def virtual_topologies(draw: st.DrawFn, virt_id: int, hardware_count: int) -> VirtualTopology:
    count = draw(st.integers(1, 6))
    return VirtualTopology(
        shape=draw(shapes_for(count)),
        id=virt_id,
        name=draw(optional(names())),
        setup=draw(optional(timings())),
        routing=draw(st.sampled_from(ROUTINGS)),
        processor_count=count,
        mapping={v: draw(st.integers(1, hardware_count)) for v in range(1, count + 1)},
    )


@cache
@st.composite
def expression_sections(draw: st.DrawFn, cls: type, runtime: bool):
    chosen = draw(st.lists(st.sampled_from(cls.NAMES), max_size=4, unique=True))
    return cls(entries={name: draw(expressions(runtime=runtime)) for name in chosen})


@st.composite
def machines(
    draw: st.DrawFn, max_processors: int = 3, max_topologies: int = 2, max_virtuals: int = 2
) -> Machine:
    """A whole, well-formed machine model."""
    proc_ids = draw(
        st.lists(st.one_of(st.integers(0, 9), file_ints()), max_size=max_processors, unique=True)
    )
    procs = [draw(processors(pid)) for pid in proc_ids]
    n_topo = draw(st.integers(0, max_topologies))
    n_virt = draw(st.integers(0, max_virtuals)) if n_topo else 0
    # Topologies and virtual topologies have ids of their own kinds; keep both small.
    topo_ids = draw(st.lists(st.integers(1, 99), min_size=n_topo, max_size=n_topo, unique=True))
    virt_ids = draw(st.lists(st.integers(1, 99), min_size=n_virt, max_size=n_virt, unique=True))
    topos = [draw(topologies(tid, proc_ids)) for tid in topo_ids]
    hw_count = min(topos, key=lambda t: t.id).processor_count if topos else 1
    virts = [draw(virtual_topologies(vid, hw_count)) for vid in virt_ids]
    return Machine(
        id=draw(file_ints()),
        name=draw(names()),
        processor_count=len(procs),
        topology_count=len(topos) + len(virts),
        processors=procs,
        combinations=draw(optional(expression_sections(MachineCombinations, False))),
        topologies=topos,
        virtuals=virts,
        pvm=draw(optional(expression_sections(Pvm, True))),
        express=draw(optional(expression_sections(Express, True))),
        mpi=draw(optional(expression_sections(Mpi, True))),
    )


# --------------------------------------------------------------------------- layouts
#
# Layout choices come from a random.Random seeded by one drawn number: a text makes
# hundreds of them, and drawing each through hypothesis makes generation several times
# slower. (A failing layout then shrinks only to another seed, but the machine shrinks.)

_TIMING_KEYS = {"setup", "speed", "latency", "smallloopspeedup"}
_INT_KEYS = {"id", "processors", "topologies", "links", "size"}
_EXPR_SECTIONS = {"combinations", "machinecombinations", "pvm", "express", "mpi"}
_INDENTS = ("", " ", "  ", "    ", "\t", " \t ", "        ")
_GAPS = (" ", "  ", "\t")
_EQUALS = (" = ", "=", " =", "= ", "\t=\t", "   =  ")
_REAL_NEWLINES = ("\n", "\n", "\n", "\r\n", "\r", "\x0b")
_ANY_NEWLINES = _REAL_NEWLINES + (";", " ;")
_SHAPE_PREFIXES = ("# piui: shape = ", "#piui:shape=", "#  piui:\tshape =  ")
# Comment text: anything on one line. `;` and `#` inside a comment end nothing.
_COMMENTS = (
    "", " a comment", "; not a line end", "# again", " \u00e9t\u00e9 \u2028 \x0c \x85",
    " end machine", ' name = "x"', " begin processor",
)  # fmt: skip


def _respell_float(rnd: random.Random, text: str) -> str:
    """Another spelling of the same double: exponent forms, upper-case E, integers."""
    value = float(text)
    options = [text, f"{value:.17e}", f"{value:.17E}", f"{value:.20g}"]
    if value == int(value) and abs(value) < 1e18:
        options += [str(int(value)), f"{int(value)}."]
    # keep the sign of -0.0 and use only forms the grammar reads (digits first)
    valid = [
        o for o in options
        if float(o) == value and math.copysign(1, float(o)) == math.copysign(1, value)
        and ("inf" not in o and "nan" not in o) and o.lstrip("-")[:1].isdigit()
    ]  # fmt: skip
    return rnd.choice(valid)


def _respell_int(rnd: random.Random, text: str) -> str:
    value = int(text)
    return rnd.choice((text, hex(value), "0x" + f"{value:X}", "0" + text))


def _comment(rnd: random.Random) -> str:
    return "#" + rnd.choice(_COMMENTS)


def _filler(rnd: random.Random) -> list[str]:
    """Blank lines, lines of spaces and comment lines."""
    lines = []
    for _ in range(rnd.randint(0, 2)):
        kind = rnd.randrange(3)
        text = "" if kind == 0 else rnd.choice(_INDENTS) if kind == 1 else _comment(rnd)
        lines.append(rnd.choice(_INDENTS) * (kind == 2) + text + rnd.choice(_REAL_NEWLINES))
    return lines


def relay(machine: Machine, rnd: random.Random) -> str:
    """The machine's canonical text, laid out differently but meaning the same."""
    out: list[str] = _filler(rnd) if rnd.random() < 0.5 else []
    sections: list[str] = []
    lines = canonical_lines(machine)
    for i, line in enumerate(lines):
        body = line.strip()
        comment_ok = True
        if not body:
            pass  # a blank line between top-level sections
        elif body.startswith("begin "):
            sections.append(body[6:])
            body = "begin" + rnd.choice(_GAPS) + body[6:]
        elif body.startswith("end "):
            sections.pop()
            body = "end" + rnd.choice(_GAPS) + body[4:]
        elif body.startswith("#"):  # the shape comment: it runs to a real line end
            sizes = body.split("=", 1)[1].split()
            body = rnd.choice(_SHAPE_PREFIXES) + rnd.choice(_GAPS).join(sizes)
            comment_ok = False
        else:
            key, value = body.split(" = ", 1)
            section = sections[-1]
            if section == "timings" or key in _TIMING_KEYS:
                value = " ".join(_respell_float(rnd, v) for v in value.split())
                if key in ALIASES.values() and rnd.random() < 0.5:
                    key = next(a for a, c in ALIASES.items() if c == key)
                if key == "smallloopspeedup" and rnd.random() < 0.5:
                    key = "smallloopsspeedup"
            elif key in _INT_KEYS or section in ("procid", "mapping"):
                if key.startswith(("p[", "map[")):
                    key = key.replace("[", rnd.choice(("[", " [", "[ ")))
                value = _respell_int(rnd, value)
            elif key == "connect":
                value = rnd.choice(_GAPS).join(_respell_int(rnd, v) for v in value.split())
            elif section in _EXPR_SECTIONS and rnd.random() < 0.3:
                value = f"({value})"
            body = key + rnd.choice(_EQUALS) + value
        trailing = ""
        if comment_ok and rnd.random() < 0.2:
            trailing = rnd.choice(("", " ", "\t")) + _comment(rnd)
        if i == len(lines) - 1 and rnd.random() < 0.25:
            end = ""  # no line end after `end machine`
        elif trailing or not comment_ok:
            end = rnd.choice(_REAL_NEWLINES)
        else:
            end = rnd.choice(_ANY_NEWLINES)
        out.append(rnd.choice(_INDENTS) + body + trailing + end)
        if i < len(lines) - 1 and rnd.random() < 0.15:
            out += _filler(rnd)
    if out[-1].endswith(("\n", "\r", "\x0b")) and rnd.random() < 0.25:
        out += _filler(rnd)
    return "".join(out)


@st.composite
def relaid_text(draw: st.DrawFn, machine: Machine) -> str:
    return relay(machine, random.Random(draw(st.integers(0, 2**32 - 1))))


class ModelText:
    """A generated machine and a text of it (shown by its text alone in reports)."""

    def __init__(self, machine: Machine, text: str) -> None:
        self.machine = machine
        self.text = text

    def __repr__(self) -> str:
        return f"ModelText(text={self.text!r})"


@st.composite
def model_texts(draw: st.DrawFn, **kwargs) -> ModelText:
    """A generated machine and a text of it in a varied layout."""
    machine = draw(machines(**kwargs))
    return ModelText(machine, draw(relaid_text(machine)))
