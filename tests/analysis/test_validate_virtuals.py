"""The validator's check of virtual topologies: one whose routing cannot lay out its
virtual links on its shape is an error however the model came to hold it (a file, a
plain ``set`` of its routing or shape), with the session's own words; a mapping that
crowds hardware processors past an even spread is a warning."""

from __future__ import annotations

from pathlib import Path

import pytest

from parasol_core import loads
from parasol_core.analysis.validate import validate
from parasol_core.cli import main
from parasol_core.session import Session, SessionError

ROOT = Path(__file__).resolve().parents[2]
GRID = ROOT / "sample_models" / "grid4x4.machine"


def _messages(text: str, error: bool = True) -> list[str]:
    return [d.message for d in validate(loads(text)) if d.is_error == error]


def _with(text: str, virtual: int, old: str, new: str) -> str:
    """``text`` with the line ``old`` of virtual topology ``virtual`` made ``new``."""
    head, sep, tail = text.partition(f"begin virtual\n        id = {virtual}\n")
    if not sep:  # a virtual with a shape comment before its id
        head, sep, tail = text.partition(f"# piui: shape = 4 4\n        id = {virtual}\n")
    assert sep, virtual
    assert old in tail
    return head + sep + tail.replace(old, new, 1)


def test_the_samples_have_no_such_errors() -> None:
    for path in sorted((ROOT / "sample_models").glob("*.machine")):
        assert not [m for m in _messages(path.read_text()) if "virtual links" in m], path


@pytest.mark.parametrize(
    "routing, refused",
    [
        ("updown", True),
        ("dragonfly-minimal", True),
        ("shortest", True),
        ("hypercube", False),
        ("broadcast", False),
    ],
)
def test_a_routing_that_cannot_lay_out_the_links_is_an_error(routing, refused) -> None:
    base = GRID.read_text()
    text = _with(base, 2, 'routing = "1Dtorus"', f'routing = "{routing}"')
    _same_as_the_session(base, text, 2, lambda s: s.set_virtual_routing(2, routing), refused)


@pytest.mark.parametrize("shape, refused", [((2, 2, 4), True), ((3, 5), True), ((2, 8), False)])
def test_a_shape_the_routing_cannot_use_is_an_error(shape, refused) -> None:
    base = GRID.read_text()
    shown = " ".join(map(str, shape))
    text = base.replace("# piui: shape = 4 4\n        id = 3", f"# piui: shape = {shown}\n"
                        "        id = 3")  # fmt: skip
    assert text != base
    _same_as_the_session(base, text, 3, lambda s: s.set_virtual_shape(3, shape), refused)


def _same_as_the_session(base: str, text: str, virtual: int, edit, refused: bool) -> None:
    """The validator flags ``text`` exactly when the session refuses the edit that makes
    it from ``base``, in the session's words."""
    session = Session(loads(base))
    try:
        edit(session)
        why = None
    except SessionError as e:
        why = str(e)
    assert (why is not None) == refused
    found = [m for m in _messages(text) if f"virtual topology {virtual} cannot lay out" in m]
    if why is None:
        assert found == []
    else:
        assert len(found) == 1 and why.split(": ")[-1] in found[0], (found, why)


def test_a_plain_set_of_a_routing_that_defines_no_virtual_links_writes_nothing(
    tmp_path, capsys
) -> None:
    model = tmp_path / "grid.machine"
    model.write_text(GRID.read_text())
    assert main(["set", str(model), "vt(2).routing=updown", "--in-place"]) == 1
    assert "virtual topology 2 cannot lay out its virtual links" in capsys.readouterr().err
    assert model.read_text() == GRID.read_text()


def test_a_mapping_crowding_a_processor_is_a_warning_naming_it() -> None:
    base = GRID.read_text()
    text = _with(base, 3, "map[2] = 2\n", "map[2] = 1\n")
    warnings = [m for m in _messages(text, error=False) if "hardware processor" in m]
    assert warnings == [
        "virtual topology 3 puts 2 virtual processors on hardware processor 1, "
        "where 1 to a processor would do: they run one after the other there"
    ]
    assert not [m for m in _messages(base, error=False) if "one after the other" in m]
