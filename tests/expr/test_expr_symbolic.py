"""Symbolic views: sympy conversion, display, derivatives and sensitivities."""

from __future__ import annotations

import copy
import math
from pathlib import Path

import pytest
import sympy as sp

from parasol_core.analysis.symbolic import (
    SymbolicError,
    derivatives,
    latex,
    pretty,
    sensitivities,
    symbol,
    to_sympy,
    trunc,
)
from parasol_core.expr.engine import Engine
from parasol_core.expr.evaluate import EvalError
from parasol_core.model import Timing
from parasol_core.syntax.expression import parse_expression
from parasol_core.syntax.loader import load

SAMPLES = Path(__file__).resolve().parents[2] / "sample_models"

loads_expr = parse_expression
IGA, SPEED, LINKS = symbol("pt(1).iga"), symbol("tl(1)(1).speed"), symbol("to(1).links")


@pytest.fixture(scope="module")
def gcel_machine():
    return load(SAMPLES / "parsytec-gcel.machine")


@pytest.fixture(scope="module")
def gcel(gcel_machine):
    """Shared by the tests that only read; the finite differences work on a copy."""
    return Engine(gcel_machine)


def test_expressions_become_sympy_over_named_parameters(gcel):
    assert to_sympy("po(1).ia_spd", gcel) == IGA / SPEED
    maxtotal = to_sympy("mc.maxtotalspd", gcel.machine)  # a machine works as well
    assert maxtotal == symbol("tl(1)(1).connect(0)") * LINKS / SPEED
    assert to_sympy("mp.send", gcel) == symbol("tl(1)(1).latency") + symbol("ar.bytes") * SPEED


def test_referenced_expressions_are_inlined_unless_asked_not_to(gcel):
    assert to_sympy("2 * po(1).ia_spd", gcel) == 2 * IGA / SPEED
    assert to_sympy("2 * po(1).ia_spd", gcel, inline=False) == 2 * symbol("po(1).ia_spd")


def test_c_integer_division_is_truncation(gcel):
    assert to_sympy("to(1).links / 3", gcel) == trunc(LINKS / 3)
    assert to_sympy("to(1).links / 3.0", gcel) == LINKS / sp.Float(3.0)
    assert to_sympy("to(1).links / pt(1).iga", gcel) == LINKS / IGA
    assert trunc(sp.Rational(-7, 2)) == -3


# Each evaluated both ways: numerically, and through sympy at the model's values.
CONSISTENCY = [
    "po(1).ia_spd", "mc.maxtotalspd", "mp.send", "to(1).links / 3", "-to(1).links / 7",
    "to(1).links % 7", "-to(1).links % 7", "pt(1).iga % 3e-7", "to(1).links << 2",
    "to(1).links >> 3", "-to(1).links >> 3", "to(1).links & 12", "to(1).links | 3",
    "to(1).links ^ 5", "~to(1).links", "to(1).links > 900", "to(1).links <= 900",
    "to(1).links == 976", "to(1).links != 976", "!to(1).links", "!0", "1 && to(1).links",
    "0 || pt(1).iga", "int(pt(1).iga * 1e7)", "round(pt(1).iga * 1e7)", "round(-2.5)",
    "sgn(-pt(1).iga)", "floor(-pt(1).iga * 1e7)", "abs(-to(1).links)", "double(to(1).links)",
    "sqrt(pt(1).iga)", "log(pt(1).iga)", "log10(pt(1).iga)", "exp(pt(1).iga)",
    "sin(pt(1).iga) + cos(pt(1).iga) + tan(pt(1).iga)", "asin(0.5) + acos(0.5) + atan(2)",
    "sinh(1) + cosh(1) + tanh(1)", "to(1).links ** 2", "2 ** -to(1).processors",
    "(to(1).links + 1) / (to(1).processors - 500)", "ar.bytes / 3 * tl(1)(1).speed",
]  # fmt: skip


@pytest.mark.parametrize("text", CONSISTENCY)
def test_sympy_agrees_with_numeric_evaluation(gcel, text):
    numeric = gcel.evaluate_text(text, runtime=True)
    assert not isinstance(numeric, EvalError)
    expr = to_sympy(text, gcel)
    values = {s: gcel.value(s.name) for s in expr.free_symbols}
    assert float(sp.N(expr.subs(values))) == pytest.approx(numeric, rel=1e-12, abs=1e-300)


def test_display_forms(gcel):
    text = pretty("po(1).ia_spd", gcel)
    assert "pt(1).iga" in text and "tl(1)(1).speed" in text and "─" in text
    assert latex("po(1).ia_spd", gcel) == r"\frac{\mathtt{pt(1).iga}}{\mathtt{tl(1)(1).speed}}"
    assert r"\mathtt{po(1).ia\_spd}" in latex("po(1).ia_spd * 2", gcel, inline=False)
    assert "round" in pretty("round(pt(1).iga)", gcel)
    assert r"\operatorname{round}" in latex("round(pt(1).iga)", gcel)


def test_conversion_errors(gcel):
    with pytest.raises(SymbolicError, match="no processor with id 3"):
        to_sympy("pt(3).iga", gcel)
    with pytest.raises(SymbolicError, match="syntax error"):
        to_sympy("1 +", gcel)
    machine = copy.deepcopy(gcel.machine)
    combos = machine.processors[0].combinations
    combos["ia_spd"], combos["im_spd"] = loads_expr("po(1).im_spd"), loads_expr("po(1).ia_spd")
    cyclic = Engine(machine)
    with pytest.raises(SymbolicError, match="cycle"):
        to_sympy("po(1).ia_spd", cyclic)


# --------------------------------------------------------------------------- sensitivity


def test_partial_derivatives_of_maxtotalspd(gcel):
    d = derivatives(gcel, "mc.maxtotalspd")
    assert set(d) == {"tl(1)(1).connect(0)", "to(1).links", "tl(1)(1).speed"}
    assert d["to(1).links"] == pytest.approx(2 / 9.1e-07)
    assert d["tl(1)(1).speed"] == pytest.approx(-2 * 976 / 9.1e-07**2)


def test_relative_sensitivities_of_the_reports_figures(gcel):
    s = sensitivities(gcel, "mc.maxtotalspd")
    assert s["tl(1)(1).speed"].relative == pytest.approx(-1)
    assert s["to(1).links"].relative == pytest.approx(1)
    assert s["to(1).links"].value == 976
    s = sensitivities(gcel, "po(1).ia_spd")
    assert s["pt(1).iga"].relative == pytest.approx(1)
    assert s["pt(1).iga"].partial == pytest.approx(1 / 9.1e-07)


def _set_timing(machine, ref: str, mean: float) -> None:
    if ref.startswith("pt(1)."):
        machine.processors[0].timings[ref[6:]] = Timing(mean)
    else:
        setattr(machine.topologies[0].links[0], ref.rsplit(".", 1)[1], Timing(mean))


NONLINEAR = (
    "sqrt(pt(1).iga) * exp(tl(1)(1).speed * 1e5) / log(pt(1).dga * 1e7) "
    "+ pt(1).igm ** 2 / tl(1)(1).latency * 1e7 + atan(pt(1).sind * 1e5) * po(1).ia_spd"
)


@pytest.mark.parametrize("key", ["po(1).ia_spd", "po(1).dp_spd", "mc.maxtotalspd", NONLINEAR])
def test_derivatives_agree_with_finite_differences(gcel_machine, key):
    gcel = Engine(copy.deepcopy(gcel_machine))
    d = derivatives(gcel, key)
    rel = sensitivities(gcel, key)
    timings = [name for name in d if not name.startswith(("to(", "tl(1)(1).connect"))]
    assert timings
    f0 = gcel.evaluate_text(key)
    for name in timings:
        x = gcel.value(name)
        h = x * 1e-5
        values = []
        for xi in (x + h, x - h):
            _set_timing(gcel.machine, name, xi)
            gcel.update([name])
            values.append(gcel.evaluate_text(key))
        _set_timing(gcel.machine, name, x)
        gcel.update([name])
        fd = (values[0] - values[1]) / (2 * h)
        assert d[name] == pytest.approx(fd, rel=1e-6), name
        fd_rel = (math.log(values[0]) - math.log(values[1])) / (math.log(x + h) - math.log(x - h))
        assert rel[name].relative == pytest.approx(fd_rel, rel=1e-5, abs=1e-9), name
    assert gcel.evaluate_text(key) == f0


def test_derivative_with_respect_to_a_run_time_argument(gcel):
    # mp.send = latency + bytes * speed: the per-byte cost is the link speed
    d = derivatives(gcel, "mp.send", {"bytes": 4096})
    assert d["ar.bytes"] == pytest.approx(9.1e-07)
    s = sensitivities(gcel, "mp.send", {"bytes": 4096})
    send = 2.85e-05 + 4096 * 9.1e-07
    assert s["ar.bytes"].value == 4096
    assert s["ar.bytes"].relative == pytest.approx(4096 * 9.1e-07 / send)
    fd = (
        gcel.evaluate_text("mp.send", args={"bytes": 4097})
        - gcel.evaluate_text("mp.send", args={"bytes": 4095})
    ) / 2
    assert d["ar.bytes"] == pytest.approx(fd)


def test_step_functions_count_as_locally_constant(gcel):
    d = derivatives(gcel, "ar.bytes / 4 * pt(1).iga + floor(pt(1).iga * 1e7) + (to(1).links > 3)")
    assert d["ar.bytes"] == 0  # C integer division: a step function of bytes
    assert d["pt(1).iga"] == pytest.approx(256)
    assert d["to(1).links"] == 0


def test_relative_sensitivity_is_undefined_where_the_figure_is_zero(gcel):
    s = sensitivities(gcel, "pt(1).iga - 7.37e-07")
    assert s["pt(1).iga"].partial == pytest.approx(1)
    assert s["pt(1).iga"].relative is None


def test_no_derivative_where_there_is_no_value(gcel):
    with pytest.raises(SymbolicError, match="no value"):
        derivatives(gcel, "pt(1).iga / 0")
