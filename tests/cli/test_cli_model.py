"""`parasol-model check / format / show / set / scale`, as a user runs them."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from modeltext import MINIMAL, with_lines

from parasol_core import load, loads
from parasol_core.cli import main
from parasol_core.model import Timing

ROOT = Path(__file__).resolve().parents[2]
GCEL = ROOT / "sample_models" / "parsytec-gcel.machine"


@pytest.fixture
def model(tmp_path):
    path = tmp_path / "m.machine"
    path.write_text(MINIMAL)
    return path


def run(capsys, *args):
    status = main([str(a) for a in args])
    out, err = capsys.readouterr()
    return status, out, err


def test_check_clean_file_exits_0_silently(capsys, model):
    assert run(capsys, "check", model) == (0, "", "")


def test_check_reports_file_line_col_and_exits_1(capsys, tmp_path):
    path = tmp_path / "bad.machine"
    path.write_text(with_lines({"processors = 1": "processors = 3", "iga = 7.37e-07": "sqrti = 1"}))
    status, out, _ = run(capsys, "check", path)
    assert status == 1
    assert out.splitlines() == [
        f"{path}:12:13: warning: 'sqrti' is read as 'sqrtr' (real square root)",
        f"{path}:5:5: error: 'processors = 3' but 1 processor section(s) are defined",
        f"{path}:21:22: error: 'pt(1).iga': processor 1 has no timing 'iga'",
    ]


def test_check_warnings_only_exit_0(capsys, tmp_path):
    path = tmp_path / "w.machine"
    path.write_text(MINIMAL.replace("end machine\n", ""))
    status, out, _ = run(capsys, "check", path)
    assert status == 0 and ": warning: 'end machine' is missing" in out


def test_check_syntax_error_exits_1_with_position(capsys, tmp_path):
    path = tmp_path / "s.machine"
    path.write_text("begin machine\n  id = 1\n  begin processor\n  id 3\n")
    status, out, _ = run(capsys, "check", path)
    assert status == 1
    assert out.startswith(f"{path}:4:6: error: unexpected '3'; expected '='")


def test_check_unreadable_file_exits_2(capsys, tmp_path, model):
    status, _, err = run(capsys, "check", model, tmp_path / "missing.machine")
    assert status == 2 and "missing.machine: cannot read" in err
    status, _, err = run(capsys, "check", tmp_path)
    assert status == 2 and "is a directory" in err


def test_usage_error_exits_2(capsys):
    with pytest.raises(SystemExit) as e:
        main(["frobnicate"])
    assert e.value.code == 2


def test_format_to_stdout_and_to_file(capsys, model, tmp_path):
    status, out, _ = run(capsys, "format", model)
    assert status == 0 and loads(out) == load(model)
    assert "# a minimal" not in out and out.startswith("begin machine\n    id = 7\n")
    target = tmp_path / "out.machine"
    assert run(capsys, "format", model, "-o", target)[0] == 0
    assert target.read_text() == out


def test_show_summary(capsys):
    status, out, _ = run(capsys, "show", GCEL)
    assert status == 0
    assert "machine" in out and "512 processors, 976 links, shape 16 x 32" in out


def test_show_json_dumps_the_whole_model(capsys, model):
    status, out, _ = run(capsys, "show", model, "--json")
    data = json.loads(out)
    assert status == 0
    assert data["processors"][0]["timings"]["ila"] == {"mean": 5e-07, "sd": 1e-08}
    assert data["processors"][0]["timings"]["iga"] == {"mean": 7.37e-07, "sd": None}
    assert data["topologies"][0]["links"][0]["connect"] == [1, 2]
    assert data["processors"][0]["combinations"]["ia_spd"] == "pt(1).iga / tl(1)(1).speed"


def test_set_changes_only_the_addressed_values(capsys, model):
    status, out, _ = run(
        capsys,
        "set",
        model,
        "pt(1).iga=7.4e-7",
        "pc(1).size=512",
        "tl(1)(1).speed=1e-6",
        "po(1).ia_spd=pt(1).iga * 2",
        "pt(1).cga=3e-6 1e-8",
    )
    assert status == 0
    m = loads(out)
    proc = m.processors[0]
    assert proc.timings["iga"] == Timing(7.4e-07) and proc.timings["cga"] == Timing(3e-06, 1e-08)
    assert proc.cache.size == 512 and m.topologies[0].links[0].speed == Timing(1e-06)
    assert proc.combinations["ia_spd"].text == "pt(1).iga * 2"
    changed = [a != b for a, b in zip(MINIMAL.splitlines(), out.splitlines())]
    assert len(out.splitlines()) == len(MINIMAL.splitlines()) + 1  # the new cga line
    assert sum(changed[:11]) == 0 and changed[11]  # only iga changed above the new line


def test_set_in_place_and_output_file(capsys, model, tmp_path):
    assert run(capsys, "set", model, "ma.name=New name", "-i")[0] == 0
    assert load(model).name == "New name"
    target = tmp_path / "o.machine"
    assert run(capsys, "set", model, "to(1).routing=YX", "-o", target)[0] == 0
    assert load(target).topologies[0].routing == "YX" and load(model).topologies[0].routing == "XY"


@pytest.mark.parametrize(
    "assignment,message",
    [
        ("pt(9).iga=1", "no processor with id 9"),
        ("pt(1).igq=1", "'igq' is not a timing parameter"),
        ("pc(1).size=big", "cannot read 'big'"),
        ("pt(1).iga=1e999", "too large to represent"),
        ("po(1).ia_spd=1 +", "po(1).ia_spd"),
        ("tl(1)(5).speed=1", "no link with id 5"),
        ("ar.bytes=3", "run-time argument"),
    ],
)
def test_set_refuses_bad_references_and_values(capsys, model, assignment, message):
    status, out, err = run(capsys, "set", model, assignment, "-i")
    assert status == 1 and message in err and out == ""
    assert model.read_text() == MINIMAL  # nothing written


def test_set_without_equals_is_a_usage_error(capsys, model):
    assert run(capsys, "set", model, "pt(1).iga")[0] == 2


def test_scale_a_group(capsys, model):
    status, out, _ = run(capsys, "scale", model, "local", "2")
    assert status == 0
    m = loads(out)
    assert m.processors[0].timings["ila"] == Timing(1e-06, 2e-08)  # mean and sd scaled
    assert m.processors[0].timings["iga"] == Timing(7.37e-07)  # global: untouched


def test_scale_one_processor_and_bad_group(capsys, model):
    status, _, err = run(capsys, "scale", model, "global", "2", "--processor", "4")
    assert status == 1 and "no processor with id 4" in err
    with pytest.raises(SystemExit):
        main(["scale", str(model), "nonsense", "2"])
    status, _, err = run(capsys, "scale", model, "global", "-1")
    assert status == 1 and "positive" in err


def test_installed_command_runs():
    exe = Path(sys.executable).parent / "parasol-model"
    result = subprocess.run([exe, "check", GCEL], capture_output=True, text=True)
    assert result.returncode == 0, result.stdout + result.stderr


@pytest.mark.parametrize("name", ["", "   ", '""'])
@pytest.mark.parametrize("ref", ["pr(1).name", "to(1).name", "ma.name"])
def test_set_refuses_a_blank_name_saying_why(capsys, tmp_path, ref, name):
    """A blank name was taken and written as name = "": nothing a user could see."""
    src = tmp_path / "g.machine"
    src.write_text(GCEL.read_text())
    out = tmp_path / "out.machine"
    status, _, err = run(capsys, "set", src, f"{ref}={name}", "-o", out)
    assert status == 1 and f"{ref}: a name cannot be blank" in err
    assert not out.exists() and src.read_text() == GCEL.read_text()
