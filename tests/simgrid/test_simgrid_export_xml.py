"""The SimGrid export writes well-formed XML or refuses, naming the character (issue 35,
item 6): a model whose names hold NUL, ESC or another character XML cannot hold passed
`check` and exported as a file no XML parser reads."""

from __future__ import annotations

import xml.parsers.expat
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from parasol_core.simgrid import export_platform, import_platform
from parasol_core.simgrid.exporter import ExportError
from parasol_core.syntax.loader import load

GRID = Path(__file__).resolve().parents[2] / "sample_models" / "grid4x4.machine"


def well_formed(text: str) -> None:
    parser = xml.parsers.expat.ParserCreate()
    parser.Parse(text.encode("utf-8"), True)  # raises ExpatError when it is not


NAMES = {
    "the model name": lambda m, v: setattr(m, "name", v),
    "the topology name": lambda m, v: setattr(m.hardware(), "name", v),
    "the name of processor type 1": lambda m, v: setattr(m.processors[0], "name", v),
}


@pytest.mark.parametrize("where", NAMES)
@pytest.mark.parametrize("char", ["\x00", "\x01", "\x1b", "\x7f\x00", "\ufffe", "\ud800"])
def test_a_name_xml_cannot_hold_is_refused_naming_it(where, char) -> None:
    machine = load(GRID)
    NAMES[where](machine, f"a{char}b")
    with pytest.raises(ExportError) as e:
        export_platform(machine)
    bad = next(c for c in char if c not in "\x7f")
    assert where in str(e.value) and f"U+{ord(bad):04X}" in str(e.value), str(e.value)


@settings(max_examples=200, deadline=None)
@given(name=st.text(min_size=1, max_size=30), where=st.sampled_from(sorted(NAMES)))
def test_the_export_is_well_formed_xml_or_refused(name, where) -> None:
    machine = load(GRID)
    NAMES[where](machine, name)
    try:
        text = export_platform(machine).text
    except ExportError as e:
        assert where in str(e)
        return
    well_formed(text)


def test_markup_in_names_round_trips(tmp_path) -> None:
    machine = load(GRID)
    machine.name = "a <b> & \"c\" 'd' \t tab"
    target = tmp_path / "p.xml"
    target.write_text(export_platform(machine).text)
    well_formed(target.read_text())
    assert import_platform(target).machine.name == machine.name
