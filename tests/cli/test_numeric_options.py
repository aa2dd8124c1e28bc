"""Every numeric option is checked finite and in range (issue 35, item 5): argparse reads
each one with parasol_core.base.numeric.OptionNumber, so `--lock-timeout nan`, `--procs
0` or `--bytes inf` are usage errors naming the option, before any work; and a lock
that would wait forever is refused where it is taken."""

from __future__ import annotations

import math

import pytest

from parasol_core.base import filelock
from parasol_core.base.numeric import OptionNumber
from parasol_core.cli import build_parser, main


def numeric_options():
    """(command, option, its type) for every option of every command that takes a number."""
    from parasol_core.estimator.server import build_parser as estimator_parser

    found = []
    for prog, parser in (("parasol-model", build_parser()), ("parasol-estimator",
                                                             estimator_parser())):  # fmt: skip
        sub = next(a for a in parser._actions if getattr(a, "choices", None))
        for name, p in sub.choices.items():
            for action in p._actions:
                if action.type in (int, float) or isinstance(action.type, OptionNumber):
                    option = action.option_strings[-1] if action.option_strings else action.dest
                    found.append((f"{prog} {name}", option, action.type))
    return found


def test_every_numeric_option_is_checked_finite_and_in_range():
    found = numeric_options()
    assert len(found) > 20
    raw = [(command, option) for command, option, kind in found if kind in (int, float)]
    assert raw == [], "numeric options read with int() or float(), unchecked"


@pytest.mark.parametrize("bad", ["nan", "inf", "-inf", "1e999", "-1e999", "NaN"])
def test_no_numeric_option_takes_nan_or_infinity(bad):
    for command, option, kind in numeric_options():
        with pytest.raises(Exception, match="expected") as info:
            kind(bad)
        assert "ArgumentTypeError" in type(info.value).__name__, (command, option)


@pytest.mark.parametrize(
    "argv, option",
    [
        (["set", "m.machine", "pt(1).iga=1", "-i", "--lock-timeout", "nan"], "--lock-timeout"),
        (["set", "m.machine", "pt(1).iga=1", "-i", "--lock-timeout", "-1"], "--lock-timeout"),
        (["fit", "m", "mpi.send", "x", "--procs", "0"], "--procs"),
        (["measure", "--runs", "1"], "--runs"),
        (["measure", "--run-ms", "inf"], "--run-ms"),
        (["simulate", "m", "--pattern", "alltoall", "--bytes", "nan"], "--bytes"),
        (["route", "m", "1", "99999999999"], "DST"),
        (["generate", "ring", "0", "--latency", "1", "--speed", "1"], "DIMS"),
        (["mapping", "m", "--virtual", "1", "--seed", "-5"], "--seed"),
    ],
)
def test_a_bad_number_is_a_usage_error_naming_the_option(argv, option, capsys):
    with pytest.raises(SystemExit) as info:
        main(argv)
    assert info.value.code == 2
    err = capsys.readouterr().err
    assert f"argument {option}" in err and "expected" in err, err


def test_a_whole_numbers_range_is_said_in_whole_numbers(capsys):
    """'expected a whole number from 0 to 2.14748e+09': the bound of a whole number was
    printed as a float's, rounded."""
    with pytest.raises(SystemExit):
        main(["route", "m", "1", "99999999999999999999"])
    err = capsys.readouterr().err
    assert "from 0 to 2,147,483,647" in err and "e+" not in err, err


def test_a_lock_that_would_wait_forever_is_refused(tmp_path):
    path = tmp_path / "m.machine"
    path.write_text("x")
    for timeout in (math.nan, math.inf, -1.0):
        with pytest.raises(ValueError, match="lock timeout"), filelock.locked(path, timeout):
            pass
