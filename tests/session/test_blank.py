"""The blank model (File > New blank model): valid as it is, and it saves and reloads."""

from __future__ import annotations

from parasol_core.analysis.validate import validate
from parasol_core.session import Session
from parasol_core.session.blank import blank_machine
from parasol_core.syntax.loader import load
from parasol_core.syntax.writer import dumps


def test_the_blank_model_validates_with_no_diagnostic():
    machine = blank_machine()
    assert validate(machine) == []
    assert len(machine.processors) == 1 and len(machine.topologies) == 1
    hw = machine.hardware()
    assert hw.processor_count == 1 and hw.types == {1: machine.processors[0].id}


def test_the_blank_model_saves_and_reloads_the_same_and_still_valid(tmp_path):
    session = Session(blank_machine())
    path = tmp_path / "blank.machine"
    session.save(path)
    again = load(path)
    assert validate(again) == []
    assert dumps(again) == dumps(blank_machine())
    assert Session.open(path).diagnostics == []


def test_each_blank_model_is_a_new_object():
    a, b = blank_machine(), blank_machine()
    assert a is not b and a.processors[0] is not b.processors[0]
