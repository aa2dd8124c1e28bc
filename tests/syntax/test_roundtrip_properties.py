"""Round trips, as properties: model -> text -> model, text -> model -> text, and edits.

* A model built from scratch and written canonically reads back equal.
* A loaded file, unedited, writes back byte for byte, whatever its layout.
* After edits through the model API the text reads back as the edited model, and only
  the lines of the edited definitions or sections differ from the file as loaded.
* Expression text written for a tree reads back as the same tree (precedence and
  associativity included).
"""

from __future__ import annotations

import difflib
import itertools
import json
import re
from collections.abc import Callable, Iterable

import pytest
import strategies as S
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from parasol_core import (
    Expression,
    Link,
    Machine,
    MachineCombinations,
    Pvm,
    loads,
    parse_expression,
)
from parasol_core.analysis.validate import validate
from parasol_core.base.params import ALIASES
from parasol_core.model import Block, Timing, children_of
from parasol_core.model.tree import Binary, Node, Number, Reference, Unary, unparse
from parasol_core.syntax.jsonio import to_data
from parasol_core.syntax.writer import dumps, dumps_canonical, format_value

PROPERTY = settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])

# --------------------------------------------------------------------------- helpers


def strict(node: Node) -> object:
    """A tree as nested tuples that also tell an integer 1 from a float 1.0."""
    if isinstance(node, Number):
        return ("num", type(node.value).__name__, node.value)
    if isinstance(node, Reference):
        return ("ref", node.prefix, node.indices, node.field, node.field_index)
    if isinstance(node, Unary):
        return ("unary", node.op, strict(node.operand))
    if isinstance(node, Binary):
        return ("binary", node.op, strict(node.left), strict(node.right))
    return ("call", node.func, strict(node.arg))


def line_of(text: str, offset: int) -> int:
    return text.count("\n", 0, offset) + 1


def merge(ranges: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """Character ranges with the overlapping and adjacent ones joined (two definitions
    removed one after the other are one removal: what is left of their lines joins)."""
    merged: list[list[int]] = []
    for start, end in sorted(ranges):
        if merged and start <= merged[-1][1]:
            merged[-1][1] = max(merged[-1][1], end)
        else:
            merged.append([start, end])
    return [(start, end) for start, end in merged]


def span(text: str, start: int, end: int) -> tuple[int, int]:
    """The physical (`\\n`-ended) lines that change when the characters [start, end)
    are removed or rewritten. A logical line can start inside a physical one (after `;`,
    a vertical tab or a lone `\\r`); removing it through its `\\n` joins what was before
    it with the next line, which then changes too."""
    lo, hi = line_of(text, start), line_of(text, max(start, end - 1))
    if start > 0 and text[start - 1] != "\n" and end > start and text[end - 1] == "\n":
        hi += 1
    return lo, hi


def assert_only_lines_changed(old: str, new: str, ranges: list[tuple[int, int]]) -> None:
    """Every line of ``old`` outside the lines holding the character ``ranges`` is still
    in ``new``, in order and with nothing but the replacements of those lines between."""
    # Each range on its own, and runs of adjacent ones together: either may join lines.
    allowed = [span(old, start, end) for start, end in ranges + merge(ranges)]
    old_lines, new_lines = old.split("\n"), new.split("\n")
    touched = {n for lo, hi in allowed for n in range(lo, hi + 1)}
    # The untouched lines, in runs split where touched lines were.
    runs: list[list[str]] = [[]]
    for n, line in enumerate(old_lines, 1):
        if n in touched:
            if n - 1 not in touched:
                runs.append([])
        else:
            runs[-1].append(line)

    def message() -> str:
        diff = difflib.unified_diff(old_lines, new_lines, "loaded", "written", lineterm="")
        return f"lines outside {sorted(allowed)} changed:\n" + "\n".join(diff)

    if not touched:
        assert new == old, message()
        return
    first, last = runs[0], runs[-1]
    assert new_lines[: len(first)] == first, message()
    pos = len(first)
    for run in runs[1:-1]:  # each untouched run, in order, after the one before it
        j = pos
        while j + len(run) <= len(new_lines) and new_lines[j : j + len(run)] != run:
            j += 1
        assert j + len(run) <= len(new_lines), message()
        pos = j + len(run)
    assert len(new_lines) - len(last) >= pos, message()
    assert new_lines[len(new_lines) - len(last) :] == last, message()


def pick(draw: st.DrawFn, items: list):
    """One of ``items``, drawn by position (so a failing example shows a number, not the
    object with its whole source record)."""
    return items[draw(st.integers(0, len(items) - 1))]


def unused_id(ids: Iterable[int | None]) -> int:
    used = set(ids)
    return next(i for i in itertools.count(1) if i not in used)


def loaded_blocks(machine: Machine) -> list[Block]:
    return [b for b in machine.blocks() if b.src is not None]


def block_range(block: Block) -> tuple[int, int]:
    return block.src.start, block.src.end


# --------------------------------------------------------------------------- edits
#
# Each edit changes a loaded model through its objects, as the editor's commands do,
# and returns the characters of the file it may change: the value when a value is
# replaced, the definition's line when it is removed, and the enclosing section when
# something is added. The test compares the lines holding them.

Edit = Callable[[st.DrawFn, Machine], "tuple[str, tuple[int, int], bool] | None"]


def loaded_timings(proc) -> list[str]:
    """Timings of a processor that are in the file (not added by an earlier edit)."""
    if proc.src is None:
        return []
    return sorted(n for n in proc.timings if n in proc.src.tables["timings"].entries)


def edit_replace_timing(draw: st.DrawFn, m: Machine):
    procs = [p for p in m.processors if loaded_timings(p)]
    if not procs:
        return None
    proc = pick(draw, procs)
    name = draw(st.sampled_from(loaded_timings(proc)))
    vs = proc.src.tables["timings"].entries[name]
    proc.timings[name] = new = draw(S.timings())
    spellings = [name] + [alias for alias, canonical in ALIASES.items() if canonical == name]
    physical = re.split(r"\r\n?|[\n\x0b]", m.src.text)  # lines as positions count them
    assert any(s in physical[vs.line - 1] for s in spellings)
    return f"replace {name} by {new}", (vs.start, vs.end), True


def edit_add_timing(draw: st.DrawFn, m: Machine):
    procs = [p for p in m.processors if p.src is not None]
    if not procs:
        return None
    proc = pick(draw, procs)
    free = [n for n in S.TIMING_NAMES if n not in proc.timings]
    name = draw(st.sampled_from(free))
    proc.timings[name] = draw(S.timings())
    ts = proc.src.tables["timings"]
    where = (ts.start, ts.end) if ts.start is not None else block_range(proc)
    return f"add timing {name}", where, False


def edit_remove_timing(draw: st.DrawFn, m: Machine):
    procs = [p for p in m.processors if loaded_timings(p)]
    if not procs:
        return None
    proc = pick(draw, procs)
    name = draw(st.sampled_from(loaded_timings(proc)))
    vs = proc.src.tables["timings"].entries[name]
    del proc.timings[name]
    return f"remove timing {name}", (vs.line_start, vs.line_end), False


def edit_replace_link_timing(draw: st.DrawFn, m: Machine):
    found = [
        (link, attr)
        for t in m.topologies
        for link in t.links
        if link.src is not None
        for attr in ("latency", "speed")
        if attr in link.src.values
    ]
    if not found:
        return None
    link, attr = pick(draw, found)
    vs = link.src.values[attr]
    setattr(link, attr, draw(S.timings()))
    return f"replace the {attr} of link {link.id}", (vs.start, vs.end), True


def edit_add_link(draw: st.DrawFn, m: Machine):
    topos = [t for t in m.topologies if t.src is not None]
    if not topos:
        return None
    topo = pick(draw, topos)
    new_id = unused_id(lk.id for lk in topo.links)
    topo.links.append(draw(S.links(new_id, topo.processor_count or 2)))
    return f"add link {new_id}", block_range(topo), False


def edit_remove_link(draw: st.DrawFn, m: Machine):
    found = [(t, lk) for t in m.topologies for lk in t.links if lk.src is not None]
    if not found:
        return None
    topo, link = pick(draw, found)
    topo.links.remove(link)
    return f"remove link {link.id}", block_range(link), False


def edit_change_name(draw: st.DrawFn, m: Machine):
    blocks = [b for b in loaded_blocks(m) if hasattr(b, "name")]
    block = pick(draw, blocks)
    new = draw(st.none() | S.names())
    vs = block.src.values.get("name")
    block.name = new
    if vs is None:
        return f"name {block.label()} {new!r}", block_range(block), False
    if new is None:
        return f"unname {block.label()}", (vs.line_start, vs.line_end), False
    return f"rename {block.label()} {new!r}", (vs.start, vs.end), True


def edit_replace_expression(draw: st.DrawFn, m: Machine):
    found = []
    for block in loaded_blocks(m):
        for table in block.TABLES:
            if table.kind != "expr":
                continue
            for key, vs in block.src.tables[table.attr].entries.items():
                if key in getattr(block, table.attr):
                    found.append((block, table.attr, key, vs))
    if not found:
        return None
    block, attr, key, vs = pick(draw, found)
    runtime = block.KEYWORD in ("pvm", "express", "mpi")
    getattr(block, attr)[key] = new = draw(S.expressions(runtime=runtime))
    return f"replace {key} by {new.text}", (vs.start, vs.end), True


def edit_remove_section(draw: st.DrawFn, m: Machine):
    """Remove a processor, topology, virtual topology, cache or expression section."""
    found = [
        (parent, child, block)
        for parent in loaded_blocks(m)
        for child in parent.CHILDREN
        if child.attr != "links"
        for block in children_of(parent, child)
        if block.src is not None
    ]
    if not found:
        return None
    parent, child, block = pick(draw, found)
    if child.many:
        getattr(parent, child.attr).remove(block)
    else:
        setattr(parent, child.attr, None)
    return f"remove {block.label()}", block_range(block), False


def edit_add_processor(draw: st.DrawFn, m: Machine):
    new_id = unused_id(p.id for p in m.processors)
    m.processors.append(draw(S.processors(new_id)))
    m.processor_count = len(m.processors)
    return f"add processor {new_id}", block_range(m), False


EDITS: tuple[Edit, ...] = (
    edit_replace_timing,
    edit_add_timing,
    edit_remove_timing,
    edit_replace_link_timing,
    edit_add_link,
    edit_remove_link,
    edit_change_name,
    edit_replace_expression,
    edit_remove_section,
    edit_add_processor,
)


def apply_some_edit(draw: st.DrawFn, m: Machine):
    """Apply one edit that the model allows (renaming always is)."""
    for edit in draw(st.permutations(EDITS)):
        done = edit(draw, m)
        if done is not None:
            return done
    raise AssertionError("renaming is always possible")


def check_written(m: Machine, written: str) -> None:
    again = loads(written)
    assert again == m
    assert dumps(again) == written
    validate(again)


# --------------------------------------------------------------------------- properties


@PROPERTY
@given(S.machines())
def test_canonical_text_reads_back_equal(m: Machine) -> None:
    text = dumps_canonical(m)
    assert dumps(m) == text  # a model built from scratch is written canonically
    loaded = loads(text)
    assert loaded == m
    assert dumps(loaded) == text  # and that text is then kept as it is
    assert isinstance(validate(m), list)
    assert json.loads(json.dumps(to_data(loaded))) == json.loads(json.dumps(to_data(m)))


@PROPERTY
@given(S.model_texts())
def test_unedited_model_writes_back_byte_for_byte(mt: S.ModelText) -> None:
    m = loads(mt.text)
    assert m == mt.machine
    assert dumps(m) == mt.text
    assert loads(dumps(m, canonical=True)) == m
    assert loads(mt.text.encode("utf-8")) == m


@PROPERTY
@given(S.model_texts(), st.data())
def test_one_edit_changes_only_its_lines(mt: S.ModelText, data: st.DataObject) -> None:
    m = loads(mt.text)
    what, where, in_place = apply_some_edit(data.draw, m)
    data.draw(st.just(what), label="edit")
    written = dumps(m)
    check_written(m, written)
    assert_only_lines_changed(mt.text, written, [where])
    if in_place:  # a replaced value keeps its line: one line in, one line out
        assert written.count("\n") == mt.text.count("\n")


@PROPERTY
@given(S.model_texts(), st.data())
def test_several_edits_change_only_their_lines(mt: S.ModelText, data: st.DataObject) -> None:
    m = loads(mt.text)
    allowed = []
    for _ in range(data.draw(st.integers(2, 5), label="edits")):
        what, where, _ = apply_some_edit(data.draw, m)
        data.draw(st.just(what), label="edit")
        allowed.append(where)
    written = dumps(m)
    check_written(m, written)
    assert_only_lines_changed(mt.text, written, allowed)


@PROPERTY
@given(S.model_texts(), st.data())
def test_edit_then_save_then_edit_again(mt: S.ModelText, data: st.DataObject) -> None:
    """Editing a model read back from an edited file is as local as the first time."""
    m = loads(mt.text)
    data.draw(st.just(apply_some_edit(data.draw, m)[0]), label="first edit")
    first = dumps(m)
    m2 = loads(first)
    what, where, _ = apply_some_edit(data.draw, m2)
    data.draw(st.just(what), label="second edit")
    second = dumps(m2)
    check_written(m2, second)
    assert_only_lines_changed(first, second, [where])


@settings(max_examples=200, deadline=None)
@given(S.expression_trees(general=True, max_leaves=16))
def test_unparse_reads_back_as_the_same_tree(tree: Node) -> None:
    text = unparse(tree)
    parsed = parse_expression(text)
    assert parsed.tree == tree, text
    assert strict(parsed.tree) == strict(tree), text
    assert Expression.from_tree(tree) == parsed
    assert Expression.from_tree(tree).text == text
    assert unparse(parsed.tree) == text  # and the text is stable


@settings(max_examples=100, deadline=None)
@given(S.expression_trees(runtime=True, max_leaves=10), S.expression_trees(max_leaves=10))
def test_expressions_in_a_model_read_back(runtime_tree: Node, tree: Node) -> None:
    m = Machine(id=1, name="e", processor_count=0, topology_count=0)
    m.pvm = Pvm(entries={"send": Expression.from_tree(runtime_tree)})
    m.combinations = MachineCombinations(entries={"maxtotalspd": Expression.from_tree(tree)})
    loaded = loads(dumps(m))
    assert loaded == m
    assert strict(loaded.pvm.entries["send"].tree) == strict(runtime_tree)
    assert strict(loaded.combinations.entries["maxtotalspd"].tree) == strict(tree)


# --------------------------------------------------------------------------- examples


def _n(v: int | float) -> Number:
    return Number(v)


A, B, C = Reference("pt", (1,), "iga"), Reference("ar", (), "bytes"), _n(2)


@pytest.mark.parametrize(
    ("tree", "text"),
    [
        (Binary("-", A, Binary("-", B, C)), "pt(1).iga - (ar.bytes - 2)"),
        (Binary("-", Binary("-", A, B), C), "pt(1).iga - ar.bytes - 2"),
        (Binary("**", Binary("**", A, B), C), "(pt(1).iga ** ar.bytes) ** 2"),
        (Binary("**", A, Binary("**", B, C)), "pt(1).iga ** ar.bytes ** 2"),
        (Unary("-", Binary("**", C, C)), "-2 ** 2"),
        (Binary("**", Unary("-", C), C), "(-2) ** 2"),
        (Binary("**", C, Unary("-", C)), "2 ** -2"),
        (Binary("*", Binary("+", A, B), C), "(pt(1).iga + ar.bytes) * 2"),
        (Binary("<<", A, Binary("+", B, C)), "pt(1).iga << ar.bytes + 2"),
        (Binary("==", Binary("<", A, B), C), "pt(1).iga < ar.bytes == 2"),
        (Binary("<", A, Binary("==", B, C)), "pt(1).iga < (ar.bytes == 2)"),
        (Binary("||", Binary("&&", A, B), C), "pt(1).iga && ar.bytes || 2"),
        (Binary("&&", A, Binary("||", B, C)), "pt(1).iga && (ar.bytes || 2)"),
        (Binary("|", Binary("^", A, Binary("&", B, C)), C), "pt(1).iga ^ ar.bytes & 2 | 2"),
        (Unary("-", Unary("-", A)), "-(-pt(1).iga)"),
        (Unary("!", Unary("~", Unary("-", A))), "!~-pt(1).iga"),
        (Binary("-", A, Unary("-", B)), "pt(1).iga - -ar.bytes"),
        (Unary("-", Binary("*", A, B)), "-(pt(1).iga * ar.bytes)"),
        (Binary("%", A, Binary("/", B, C)), "pt(1).iga % (ar.bytes / 2)"),
        (Binary("/", _n(1.0), _n(1e-300)), "1.0 / 1e-300"),
        (Binary("+", _n(5e-324), _n(1.7976931348623157e308)), "5e-324 + 1.7976931348623157e+308"),
        (Binary("*", Reference("tl", (1, 2), "connect", 0), Reference("vm", (1, 3))),
         "tl(1)(2).connect(0) * vm(1)(3)"),
    ],
)  # fmt: skip
def test_precedence_and_associativity_examples(tree: Node, text: str) -> None:
    assert unparse(tree) == text
    assert strict(parse_expression(text).tree) == strict(tree)


REPEATED = """\
begin machine
    id = 1
    name = "first"
    name = "second"
    processors = 1
    topologies = 0
    begin processor
        id = 1
        begin timings
            iga = 1.0
            iga = 2.0
        end timings
    end processor
    begin pvm
        send = 1
    end pvm
    begin pvm
        sync = 2
    end pvm
end machine
"""


@pytest.mark.parametrize(
    "remove",
    [
        pytest.param(lambda m: setattr(m, "name", None), id="field"),
        pytest.param(lambda m: m.processors[0].timings.pop("iga"), id="timing"),
        pytest.param(lambda m: setattr(m, "pvm", None), id="section"),
    ],
)
def test_removing_a_repeated_definition_removes_it(remove: Callable[[Machine], object]) -> None:
    """A definition given twice (the last wins, with a warning): removing it from the
    model must not bring the earlier one back when the file is read again."""
    m = loads(REPEATED)
    remove(m)
    assert loads(dumps(m)) == m


def test_replacing_a_repeated_definition_keeps_the_last() -> None:
    m = loads(REPEATED)
    m.name = "third"
    m.processors[0].timings["iga"] = Timing(3.0)
    again = loads(dumps(m))
    assert again == m
    assert again.name == "third" and again.processors[0].timings["iga"] == Timing(3.0)


def test_an_added_link_is_written_in_its_topology() -> None:
    text = (
        'begin machine\nid = 1\nname = "x"\nprocessors = 0\ntopologies = 1\n'
        'begin topology\nid = 1\nrouting = "XY"\nprocessors = 2\nlinks = 0\n'
        "begin procid\np[1] = 1\np[2] = 1\nend procid\nend topology\nend machine\n"
    )
    m = loads(text)
    m.topologies[0].links.append(Link(id=1, latency=Timing(1e-5), speed=Timing(1e-6),
                                      connect=[1, 2]))  # fmt: skip
    m.topologies[0].link_count = 1
    written = dumps(m)
    assert loads(written) == m
    topo_lines = written.split("end topology")[0]
    assert "begin linklist" in topo_lines and "connect = 2 1 2" in topo_lines
    assert format_value("timing", Timing(1e-5)) in topo_lines
