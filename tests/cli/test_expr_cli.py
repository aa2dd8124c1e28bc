"""`parasol-model eval` and `parasol-model deps`, as a user runs them."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from parasol_core.cli import main

ROOT = Path(__file__).resolve().parents[2]
GCEL = ROOT / "sample_models" / "parsytec-gcel.machine"
FWI = ROOT / "sample_models" / "fwi-csys.machine"


def run(capsys, *args):
    status = main([str(a) for a in args])
    out, err = capsys.readouterr()
    return status, out, err


def test_eval_prints_one_value_per_expression(capsys):
    status, out, err = run(capsys, "eval", GCEL, "po(1).ia_spd", "mc.maxtotalspd", "7/2", "2**0.5")
    assert status == 0 and err == ""
    assert out.splitlines() == [
        repr(7.37e-07 / 9.1e-07), repr(2 * 976 / 9.1e-07), "3", repr(2**0.5),
    ]  # fmt: skip


def test_eval_writes_integers_as_integers_and_floats_shortest(capsys):
    _, out, _ = run(
        capsys, "eval", GCEL, "to(1).links", "0.1 + 0.2", "1e22", "double(3)", "--", "-7 % 3"
    )
    assert out.splitlines() == ["976", "0.30000000000000004", "1e+22", "3.0", "-1"]


def test_eval_error_goes_to_stderr_and_exits_1(capsys):
    status, out, err = run(capsys, "eval", GCEL, "1/0")
    assert status == 1 and out == ""
    assert err == "error: division by zero: 1 / 0\n"
    status, out, err = run(capsys, "eval", GCEL, "pt(2).iga")
    assert status == 1 and err == "error: 'pt(2).iga': there is no processor with id 2\n"
    status, out, err = run(capsys, "eval", GCEL, "po(1).ia_spd + sqrt(-1)")
    assert status == 1
    assert err == "error: domain error: sqrt(-1): the square root of a negative number " \
        "(column 16 of 'po(1).ia_spd + sqrt(-1)')\n"  # fmt: skip


def test_eval_with_several_expressions_says_which_failed(capsys):
    status, out, err = run(capsys, "eval", GCEL, "1 + 1", "log(0)", "2 +")
    assert status == 1
    assert out == "2\n"
    lines = err.splitlines()
    assert (
        lines[0] == "error: log(0): domain error: log(0): the logarithm needs a positive argument"
    )
    assert lines[1].startswith("error: 2 +: syntax error: ")


def test_eval_run_time_arguments(capsys):
    send = "tl(1)(1).latency + ar.bytes * tl(1)(1).speed"
    _, out, _ = run(capsys, "eval", GCEL, "mp.send", "ar.bytes", "ar.procs")
    assert out.splitlines() == [repr(2.85e-05 + 1024 * 9.1e-07), "1024", "512"]
    _, out, _ = run(capsys, "eval", GCEL, "--arg", "bytes=4096", "--arg", "procs=16",
                    "mp.send", send, "ar.procs")  # fmt: skip
    assert out.splitlines() == [repr(2.85e-05 + 4096 * 9.1e-07)] * 2 + ["16"]
    _, out, _ = run(capsys, "eval", FWI, "pv.broadcast", "--arg", "procs=3", "--arg", "bytes=0.5")
    assert float(out) == pytest.approx(2 * (0.03 + 0.5 * 8.6e-07))


@pytest.mark.parametrize("bad", ["bytes", "size=3", "bytes=many"])
def test_eval_bad_arguments_are_usage_errors(capsys, bad):
    status, _, err = run(capsys, "eval", GCEL, "mp.send", "--arg", bad)
    assert status == 2 and "--arg" in err


def test_eval_without_expressions_lists_every_expression(capsys):
    status, out, _ = run(capsys, "eval", GCEL)
    assert status == 0
    lines = out.splitlines()
    assert lines[0] == f"po(1).ia_spd = {7.37e-07 / 9.1e-07!r}"
    assert [line.split(" = ")[0] for line in lines] == [
        "po(1).ia_spd", "po(1).im_spd", "po(1).da_spd", "po(1).dm_spd", "po(1).dd_spd",
        "po(1).ds_spd", "po(1).dp_spd", "mc.maxtotalspd", "mp.send", "mp.receive",
    ]  # fmt: skip


def test_eval_on_a_broken_file(capsys, tmp_path):
    bad = tmp_path / "bad.machine"
    bad.write_text("begin machine\n  id = = 3\n")
    status, _, err = run(capsys, "eval", bad, "1")
    assert status == 1 and "bad.machine:2" in err
    status, _, err = run(capsys, "eval", tmp_path / "missing.machine", "1")
    assert status == 2


def test_deps_of_an_expression(capsys):
    status, out, err = run(capsys, "deps", GCEL, "mc.maxtotalspd")
    assert status == 0 and err == ""
    assert out == (
        "mc.maxtotalspd = (tl(1)(1).connect(0) * to(1).links) / tl(1)(1).speed\n"
        f"value: {2 * 976 / 9.1e-07!r}\n"
        "depends on:\n"
        "  tl(1)(1).connect\n"
        "  tl(1)(1).speed\n"
        "  to(1).links\n"
        "used by: nothing\n"
    )


def test_deps_of_a_stored_value(capsys):
    status, out, _ = run(capsys, "deps", GCEL, "pt(1).iga")
    assert status == 0
    assert out == "pt(1).iga\nvalue: 7.37e-07\ndepends on: nothing\nused by:\n  po(1).ia_spd\n"


def test_deps_marks_indirect_dependencies(capsys, tmp_path):
    model = tmp_path / "m.machine"
    model.write_text(
        GCEL.read_text().replace("im_spd = pt(1).igm", "im_spd = po(1).ia_spd * pt(1).igm")
    )
    _, out, _ = run(capsys, "deps", model, "pt(1).iga")
    assert out.endswith("used by:\n  po(1).ia_spd\n  po(1).im_spd  (indirectly)\n")
    _, out, _ = run(capsys, "deps", model, "po(1).im_spd")
    assert "depends on:\n  po(1).ia_spd\n  pt(1).iga  (indirectly)\n  pt(1).igm\n" in out


def test_deps_of_an_unknown_reference(capsys):
    status, out, err = run(capsys, "deps", GCEL, "pt(1).ila")
    assert status == 1 and err == "error: 'pt(1).ila': processor 1 has no timing 'ila'\n"
    status, _, err = run(capsys, "deps", GCEL, "1 + 2")
    assert status == 1 and "is not a reference" in err


def test_the_installed_command_runs():
    exe = Path(sys.executable).with_name("parasol-model")
    cmd = [str(exe)] if exe.exists() else [sys.executable, "-m", "parasol_core.cli"]
    result = subprocess.run([*cmd, "eval", str(GCEL), "po(1).ia_spd"], capture_output=True,
                            text=True, check=False)  # fmt: skip
    assert result.returncode == 0
    assert round(float(result.stdout), 2) == 0.81


@pytest.mark.parametrize(
    ("expr", "value"),
    [("-7/2", "-3"), ("-2**2", "-4"), ("-7 / 2", "-3"), ("-(1+2)", "-3"), ("--3", "3"),
     ("-ar.bytes", "-1024"), ("-pt(1).iga", "-7.37e-07")],
)  # fmt: skip
def test_eval_takes_expressions_that_start_with_a_minus_without_dashes(capsys, expr, value):
    status, out, err = run(capsys, "eval", GCEL, expr)
    assert (status, out.strip(), err) == (0, value, "")


def test_eval_takes_options_between_expressions_in_either_form(capsys):
    status, out, _ = run(capsys, "eval", GCEL, "-ar.bytes", "--arg", "bytes=8", "ar.procs",
                         "--arg=procs=4", "-1")  # fmt: skip
    assert status == 0 and out.split() == ["-8", "4", "-1"]
    status, out, _ = run(capsys, "eval", GCEL, "--", "--arg")
    assert status == 1  # after "--" everything is an expression, and this one is wrong
