"""Switches: processor types marked `# piui: role = switch` (docs/decisions.md, "Switches")."""

from __future__ import annotations

from pathlib import Path

import lark
import numpy as np
import pytest

from parasol_core import loads
from parasol_core.analysis.validate import validate
from parasol_core.session import Session
from parasol_core.syntax.writer import dumps, dumps_canonical
from parasol_core.topology.switches import (
    compute_count,
    compute_processors,
    has_switches,
    switch_mask,
    switch_types,
)

GRAMMAR = Path(__file__).resolve().parents[2] / "grammar" / "machine.lark"

# Two compute processors joined through a switch (processor 3, of type 2).
SWITCHED = """\
begin machine
    id = 7
    name = "Two transputers and a switch"
    processors = 2
    topologies = 1

    begin processor
        id = 1
        name = "T805"
        begin timings
            iga = 7.37e-07
        end timings
    end processor

    begin processor
        # piui: role = switch
        id = 2
        name = "edge switch"
    end processor

    begin topology
        id = 1
        name = "star"
        setup = 0.0
        routing = "shortest"
        processors = 3
        links = 2
        begin procid
            p[1] = 1
            p[2] = 1
            p[3] = 2
        end procid
        begin linklist
            begin link
                id = 1
                latency = 2.85e-05
                speed = 9.1e-07
                connect = 2 1 3
            end link
            begin link
                id = 2
                latency = 2.85e-05
                speed = 9.1e-07
                connect = 2 3 2
            end link
        end linklist
    end topology
end machine
"""

VIRTUAL = """
    begin virtual
        id = 1
        name = "pair"
        setup = 0.0
        routing = "1Dtorus"
        processors = 2
        begin mapping
            map[1] = {a}
            map[2] = {b}
        end mapping
    end virtual
end machine
"""


def with_virtual(a: int, b: int) -> str:
    text = SWITCHED.replace("topologies = 1", "topologies = 2")
    return text.replace("end machine\n", VIRTUAL.format(a=a, b=b).lstrip("\n"))


def errors(machine):
    return [d for d in validate(machine) if d.is_error]


def test_a_switch_type_is_read_and_its_processors_are_switches():
    m = loads(SWITCHED)
    assert [(p.id, p.role, p.is_switch) for p in m.processors] == [
        (1, None, False),
        (2, "switch", True),
    ]
    topo = m.topologies[0]
    assert switch_types(m) == {2}
    assert switch_mask(m, topo).tolist() == [False, False, False, True]
    assert compute_processors(m, topo).tolist() == [1, 2]
    assert compute_count(m, topo) == 2
    assert has_switches(m) and has_switches(m, topo)
    assert errors(m) == []


def test_the_mark_is_a_comment_to_the_1994_grammar():
    parser = lark.Lark(GRAMMAR.read_text(), parser="lalr", start="start")
    parser.parse(SWITCHED)  # raises if the grammar refused it


def test_unedited_save_is_byte_identical_and_the_canonical_writer_keeps_the_mark():
    m = loads(SWITCHED)
    assert dumps(m) == SWITCHED
    canonical = dumps_canonical(m)
    assert "# piui: role = switch" in canonical
    assert loads(canonical) == m


def test_marking_and_unmarking_through_the_session_saves_losslessly(tmp_path):
    path = tmp_path / "m.machine"
    path.write_text(SWITCHED)
    session = Session.open(path)
    session.set_value("pr(1).role", "switch")
    session.set_value("pr(2).role", None)
    session.save()
    text = path.read_text()
    again = loads(text)
    assert [p.role for p in again.processors] == ["switch", None]
    # only the two lines changed: one added in processor 1, one gone from processor 2
    old, new = SWITCHED.splitlines(), text.splitlines()
    assert len(new) == len(old)
    assert sorted(set(old) ^ set(new)) == []  # the same lines, one moved between sections
    assert new.index("        # piui: role = switch") < new.index("    end processor")
    session.undo()
    session.undo()
    session.save()
    # back to the same model; the mark comes back as the last definition of processor 2
    back = path.read_text()
    assert loads(back) == loads(SWITCHED)
    assert back.count("# piui: role = switch") == 1


@pytest.mark.parametrize("word", ["router", "Switch", "switch switch", ""])
def test_an_unknown_role_is_ignored_with_a_warning_that_names_the_line(word):
    text = SWITCHED.replace("role = switch", f"role = {word}")
    m = loads(text)
    assert m.processors[1].role is None
    line = [n for n, t in enumerate(text.splitlines(), 1) if "piui: role" in t]
    assert len(line) == 1
    warned = [d for d in validate(m) if "piui: role" in d.message]
    assert [(d.severity, d.line) for d in warned] == [("warning", line[0])]
    assert "switch" in warned[0].message
    assert dumps(m) == text  # the line stays as it was


def test_a_role_in_a_topology_or_a_nested_section_is_ignored_with_a_warning():
    text = SWITCHED.replace(
        'routing = "shortest"\n', 'routing = "shortest"\n        # piui: role = switch\n'
    )
    warned = [d.message for d in validate(loads(text)) if "piui: role" in d.message]
    assert warned and "processor section" in warned[0]
    text = SWITCHED.replace("begin timings\n", "begin timings\n            # piui: role = switch\n")
    m = loads(text)
    assert m.processors[0].role is None
    assert any("nested" in d.message for d in validate(m))


def test_a_virtual_processor_mapped_onto_a_switch_is_an_error():
    assert errors(loads(with_virtual(1, 2))) == []
    found = errors(loads(with_virtual(1, 3)))
    assert len(found) == 1
    assert "map[2] = 3" in found[0].message and "switch" in found[0].message
    assert found[0].line == with_virtual(1, 3).splitlines().index("            map[2] = 3") + 1


def test_set_refuses_an_unknown_role(tmp_path):
    from parasol_core.session.edit import EditError, set_value

    m = loads(SWITCHED)
    with pytest.raises(EditError, match="roles are: switch"):
        set_value(m, "pr(1).role", "router")
    set_value(m, "pr(2).role", "none")
    assert m.processors[1].role is None


def test_switch_mask_ignores_numbers_outside_the_topology():
    m = loads(SWITCHED)
    topo = m.topologies[0]
    topo.types[99] = 2  # an out-of-range p[99]: the validator reports it; the mask skips it
    assert switch_mask(m, topo, count=3).tolist() == [False, False, False, True]
    assert np.array_equal(compute_processors(m, topo, count=3), [1, 2])


def test_a_topology_says_what_network_it_is():
    from parasol_core.topology.switches import network_of

    text = SWITCHED.replace(
        'routing = "shortest"\n',
        'routing = "shortest"\n        # piui: network = dragonfly  9 4 2 2\n',
    )
    m = loads(text)
    topo = m.topologies[0]
    assert topo.network == "dragonfly 9 4 2 2"
    assert network_of(topo) == ("dragonfly", {"g": 9, "a": 4, "p": 2, "h": 2})
    assert dumps(m) == text
    topo.network = "fattree 4 3"
    again = loads(dumps(m))
    assert network_of(again.topologies[0]) == ("fattree", {"k": 4, "n": 3})
    topo.network = None
    assert "network" not in dumps(m)


@pytest.mark.parametrize("bad", ["dragonfly 9 4 2", "torus 4 4", "fattree 4 x", "fattree 0 3", ""])
def test_a_network_that_cannot_be_read_is_ignored_with_a_warning(bad):
    from parasol_core.topology.switches import network_of

    text = SWITCHED.replace(
        'routing = "shortest"\n', f'routing = "shortest"\n        # piui: network = {bad}\n'
    )
    m = loads(text)
    assert m.topologies[0].network is None and network_of(m.topologies[0]) is None
    warned = [d for d in validate(m) if "piui: network" in d.message]
    assert len(warned) == 1 and warned[0].severity == "warning"
