"""Hosts keep their names (issue 36): the SimGrid import writes them in a
``# piui: names`` line (a comment to the 1994 grammar), ``route`` and ``simulate
--json`` show them, and the commands take a name wherever they take a processor
number."""

from __future__ import annotations

import json

import pytest
from test_simgrid import SMALL

from parasol_core.cli import main
from parasol_core.simgrid import export_platform, import_text
from parasol_core.syntax.annotations import check_names, names_of_text, quote_name
from parasol_core.syntax.loader import loads
from parasol_core.syntax.writer import dumps
from parasol_core.topology.errors import RoutingError
from parasol_core.topology.names import labelled, names_of, processor_number


@pytest.fixture
def small(tmp_path):
    path = tmp_path / "small.machine"
    path.write_text(dumps(import_text(SMALL, "small.xml").machine))
    return path


def test_the_import_keeps_the_platforms_names_as_an_annotation(small):
    text = small.read_text()
    assert "# piui: names = 1=Tremblay 2=Jupiter 3=Fafard 4=R" in text
    machine = loads(text)
    hw = machine.hardware()
    assert names_of(hw) == {1: "Tremblay", 2: "Jupiter", 3: "Fafard", 4: "R"}
    assert labelled(hw, (1, 4, 3)) == ["1 (Tremblay)", "4 (R)", "3 (Fafard)"]
    # and back through an export: the hosts are p1.., their names a property
    back = import_text(export_platform(machine).text).machine.hardware()
    assert back.names == hw.names


def test_a_1994_reader_sees_a_comment(small):
    from parasol_core.analysis.validate import validate

    stripped = "\n".join(ln for ln in small.read_text().splitlines() if "piui: names" not in ln)
    plain = loads(stripped)
    assert plain.hardware().names is None
    assert [d for d in validate(plain) if d.is_error] == []


@pytest.mark.parametrize("name", ["node 1", "a=b", "50%", "x#y", 'q"uote', "tab\there",
                                  "ünïcode", "line\nbreak", "%41"])  # fmt: skip
def test_any_name_round_trips_escaped(name):
    text = check_names({1: name, 2: "other"})
    assert "\n" not in text and "#" not in text
    assert names_of_text(text) == {1: name, 2: "other"}
    assert quote_name("plain.name-1") == "plain.name-1"


@pytest.mark.parametrize(("bad", "why"), [
    ("1=a 1=b", "named twice"), ("1=a 2=a", "both named"), ("x=a", "processor number"),
    ("1=", "1 to 1,000"), ("1=%G1", "hex digits"), ("1=%FF", "utf-8"),
])  # fmt: skip
def test_a_bad_names_line_is_ignored_with_a_warning(bad, why):
    with pytest.raises(ValueError, match=why):
        check_names(bad)
    text = dumps(import_text(SMALL, "small.xml").machine)
    text = text.replace(
        "# piui: names = 1=Tremblay 2=Jupiter 3=Fafard 4=R", f"# piui: names = {bad}"
    )
    machine = loads(text)
    assert machine.hardware().names is None
    assert any("'# piui: names' ignored" in d.message for d in machine.src.diagnostics)


def test_a_name_stands_for_its_number():
    hw = import_text(SMALL, "small.xml").machine.hardware()
    assert processor_number(hw, "Jupiter") == 2 and processor_number(hw, "3") == 3
    with pytest.raises(RoutingError, match="'Saturn' is no processor number and no name"):
        processor_number(hw, "Saturn")


def test_route_and_transfer_take_and_show_names(small, capsys):
    assert main(["route", str(small), "Tremblay", "Fafard"]) == 0
    out = capsys.readouterr().out
    assert "processors: 1 4 3" in out
    assert "names: 1 (Tremblay), 4 (R), 3 (Fafard)" in out
    assert main(["route", str(small), "1", "3"]) == 0
    assert capsys.readouterr().out == out  # numbers as before
    assert main(["transfer", str(small), "Tremblay:Jupiter", "--bytes", "1000"]) == 0
    by_name = capsys.readouterr().out
    assert main(["transfer", str(small), "1:2", "--bytes", "1000"]) == 0
    assert capsys.readouterr().out == by_name
    assert main(["route", str(small), "Tremblay", "Saturn"]) == 2
    assert "'Saturn' is no processor number" in capsys.readouterr().err


def test_simulate_json_names_the_processors(small, tmp_path, capsys):
    msgs = tmp_path / "m.json"
    msgs.write_text(
        json.dumps([{"src": 1, "dst": 3, "bytes": 1e5}, {"src": 2, "dst": 3, "bytes": 1e5}])
    )
    assert main(["simulate", str(small), "--messages", str(msgs), "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["names"] == {"1": "Tremblay", "2": "Jupiter", "3": "Fafard"}
    # a messages file may name the processors too
    named = tmp_path / "named.json"
    named.write_text(json.dumps([{"src": "Tremblay", "dst": "Fafard", "bytes": 1e5},
                                 {"src": "Jupiter", "dst": 3, "bytes": 1e5}]))  # fmt: skip
    assert main(["simulate", str(small), "--messages", str(named), "--json"]) == 0
    assert json.loads(capsys.readouterr().out) == doc
    named.write_text(json.dumps([{"src": "Saturn", "dst": 3, "bytes": 1}]))
    assert main(["simulate", str(small), "--messages", str(named)]) != 0
    assert "src 'Saturn' is no processor number and no name" in capsys.readouterr().err
    assert main(["simulate", str(small), "--pattern", "broadcast", "--bytes", "10",
                 "--root", "Jupiter", "--json"]) == 0  # fmt: skip
    doc = json.loads(capsys.readouterr().out)
    assert {m["src"] for m in doc["messages"]} == {2} and doc["names"]["2"] == "Jupiter"


def test_a_clusters_names_are_one_run_however_many_hosts():
    """A cluster's hosts, prefix + N + suffix, are one word A-B:S=PRE*SUF (a model
    file's line holds 1,000,000 characters: 64k names one by one would not fit)."""
    text = ('<?xml version="1.0"?>\n<platform version="4.1">\n<cluster id="c" '
            'prefix="node-" suffix=".simgrid.org" radical="0-4095" speed="1Gf" bw="1GBps" '
            'lat="1us" topology="FAT_TREE" topo_parameters="3;16,16,16;1,16,16;1,1,1"/>\n'
            "</platform>\n")  # fmt: skip
    hw = import_text(text).machine.hardware()
    assert hw.names.startswith("1-4096:0=node-*.simgrid.org ")
    assert len(hw.names) < 40_000  # and the 768 switches' names, also runs by level
    assert processor_number(hw, "node-4095.simgrid.org") == 4096
    assert labelled(hw, (1, 4097)) == ["1 (node-0.simgrid.org)", "4097 (c_switch_1_0)"]
    assert loads(dumps(import_text(text).machine)).hardware().names == hw.names


@pytest.mark.parametrize(("text", "why"), [
    ("1-3:0=n* 4=n1", "both named"), ("1-3:0=n* 5-7:2=n*", "share names"),
    ("1-3:0=n* 3=x", "named twice"), ("1-3:0=n", "one '\\*'"), ("2=a*b", "one '\\*'"),
    ("3-1:0=n*", "upwards"),
])  # fmt: skip
def test_runs_are_checked_as_single_names(text, why):
    with pytest.raises(ValueError, match=why):
        check_names(text)


def test_names_that_count_up_are_written_as_runs_and_read_back():
    names = {1: "a", 2: "h7", 3: "h8", 4: "h9", 5: "x*y", 7: "h10", 8: "r01", 9: "r02", 10: "r03"}
    text = check_names(names)
    assert text == "1=a 2-4:7=h* 5=x%2Ay 7=h10 8-10:1=r0*"  # r01..r03: r0 and 1..3
    assert names_of_text(text) == names
