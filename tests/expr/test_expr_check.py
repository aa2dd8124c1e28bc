"""Checking typed expressions (the combinations editor's rules), without Qt."""

from __future__ import annotations

from pathlib import Path

from parasol_core import load
from parasol_core.analysis.check import check_expression
from parasol_core.expr.engine import Engine

GCEL = Path(__file__).resolve().parents[2] / "sample_models" / "parsytec-gcel.machine"


def test_valid_text_gives_the_expression_and_its_value():
    m = load(GCEL)
    c = check_expression("pt(1).iga / tl(1)(1).speed", m, Engine(m))
    assert c.ok and c.expression.text == "pt(1).iga / tl(1)(1).speed"
    assert round(c.value, 2) == 0.81


def test_syntax_errors_and_dangling_references_say_where():
    m = load(GCEL)
    c = check_expression("pt(1).iga / ", m)
    assert not c.ok and "ends too early" in c.message and c.column == 12
    c = check_expression("pt(1).iga / tl(1)(999).speed", m)
    assert not c.ok and "no link with id 999" in c.message and c.column == 13
    assert c.describe().startswith("column 13: ")


def test_run_time_arguments_only_where_allowed():
    m = load(GCEL)
    assert not check_expression("ar.bytes * 2", m).ok
    assert check_expression("ar.bytes * 2", m, runtime=True).ok


def test_a_reference_back_to_the_edited_expression_is_a_cycle():
    m = load(GCEL)
    e = Engine(m)
    c = check_expression("mc.maxtotalspd * 2", m, e, own_key="mc.maxtotalspd")
    assert not c.ok and "cycle" in c.message
    assert check_expression("po(1).im_spd", m, e, own_key="po(1).ia_spd").ok


def test_empty_text_is_valid_and_means_no_expression():
    c = check_expression("   ", load(GCEL))
    assert c.ok and c.expression is None
