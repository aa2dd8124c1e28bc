"""A fit written into a model says on its line what it was fitted to, and that comment
replaces the one the line had (about the value before) (issue 35, item 8)."""

from __future__ import annotations

import re
import shutil

import pytest
from conftest import OSU_LOGS, SAMPLES

from parasol_core.analysis.fit import Measurements, fit, fit_comment
from parasol_core.cli import main
from parasol_core.session import Session
from parasol_core.session.edit import EditError
from parasol_core.syntax.loader import loads

OLD = "# 30 + 0.09 x ndata (Q 0.98)"
LOG = OSU_LOGS / "job-seven-benchmarks.log"


def send_line(text: str) -> str:
    [line] = [ln for ln in text.splitlines() if ln.strip().startswith("send =")]
    return line


@pytest.fixture
def t3d(tmp_path):
    path = tmp_path / "t3d.machine"
    shutil.copy(SAMPLES / "cray-t3d.machine", path)
    return path


def fit_send(path, *extra):
    return main(["fit", str(path), "mpi.send", str(LOG), "--procs", "2", "--table",
                 "osu_latency", *map(str, extra)])  # fmt: skip


@pytest.mark.parametrize("how", ["-o", "-i"])
def test_a_fit_replaces_the_old_values_comment_and_nothing_else(t3d, tmp_path, how, capsys):
    before = t3d.read_text()
    assert OLD in send_line(before)
    out = tmp_path / "out.machine"
    assert fit_send(t3d, *(["-o", out] if how == "-o" else ["-i"])) == 0
    expression = capsys.readouterr().out.splitlines()[-1].split(" = ", 1)[1]
    after = (out if how == "-o" else t3d).read_text()
    line = send_line(after)
    assert OLD not in after
    assert line == (f"        send = {expression}  # fitted to 23 times at 2 processes "
                    "(job-seven-benchmarks.log, osu_latency): c + d*bytes, no Q (no errors "
                    "given: equal relative errors assumed)")  # fmt: skip
    # every other line as it was
    old_lines, new_lines = before.splitlines(), after.splitlines()
    changed = [i for i, (a, b) in enumerate(zip(old_lines, new_lines, strict=True)) if a != b]
    assert [new_lines[i] for i in changed] == [line]
    assert loads(after).mpi.entries["send"].text == expression


def test_fitting_again_to_the_same_times_changes_nothing(t3d):
    assert fit_send(t3d, "-i") == 0
    once = t3d.read_bytes()
    assert fit_send(t3d, "-i") == 0
    assert t3d.read_bytes() == once


def test_the_same_expression_fitted_to_other_times_says_so(t3d, tmp_path):
    assert fit_send(t3d, "-i") == 0
    copy = tmp_path / "again.log"
    copy.write_text(LOG.read_text())
    assert main(["fit", str(t3d), "mpi.send", str(copy), "--procs", "2", "--table",
                 "osu_latency", "-i"]) == 0  # fmt: skip
    line = send_line(t3d.read_text())
    assert "(again.log, osu_latency)" in line and "job-seven" not in line
    assert line.count("#") == 1


def test_a_plain_edit_keeps_the_lines_comment(t3d):
    """`set` gives no comment: what the user wrote after the value stays."""
    assert main(["set", str(t3d), "mp.send=1e-5 + 2e-9 * ar.bytes", "-i"]) == 0
    assert send_line(t3d.read_text()) == f"        send = 1e-5 + 2e-9 * ar.bytes  {OLD}"


def session_of(text: str) -> Session:
    return Session.from_text(text)


MPI = """begin machine
    id = 1
    name = "m"
    begin processor
        id = 1
        name = "p"
    end processor
    begin mpi
        send = 1e-5 + 1e-9 * ar.bytes ; receive = 2e-5  # both by hand
        bcast = 3e-5  # piui: note = 1
        barrier = 4e-5
    end mpi
end machine
"""


def test_a_value_that_does_not_end_its_line_gets_no_comment():
    s = session_of(MPI)
    s.set_expression("mp.send", "5e-6", comment="fitted")
    line = next(ln for ln in s.text().splitlines() if "send =" in ln)
    assert line.strip() == "send = 5e-6 ; receive = 2e-5  # both by hand"


def test_an_annotation_after_the_value_is_kept():
    s = session_of(MPI)
    s.set_expression("mp.bcast", "6e-6", comment="fitted")
    line = next(ln for ln in s.text().splitlines() if "bcast =" in ln)
    assert line.strip() == "bcast = 6e-6  # piui: note = 1"


def test_a_line_without_a_comment_gets_one_and_undo_takes_the_fit_back():
    s = session_of(MPI)
    s.set_expression("mp.barrier", "7e-6", comment="fitted to 3 times")
    assert "        barrier = 7e-6  # fitted to 3 times" in s.text().splitlines()
    s.undo()
    assert "        barrier = 4e-5" in s.text().splitlines()


@pytest.mark.parametrize("bad", ["two\nlines", "an \x1b[31m escape", "piui: forward = 1"])
def test_a_comment_a_line_cannot_hold_is_refused_and_nothing_changes(bad):
    s = session_of(MPI)
    text = s.text()
    with pytest.raises(EditError, match="comment"):
        s.set_expression("mp.barrier", "7e-6", comment=bad)
    assert s.text() == text and not s.is_modified


def test_the_comment_escapes_what_a_file_name_holds():
    m = Measurements([2.0] * 3, [1.0, 10.0, 100.0], [1e-6, 2e-6, 11e-6])
    best = fit(m)[0]
    text = fit_comment(best, m, ["a\x1b[31mb.log\n", "x" * 500])
    assert "\x1b" not in text and "\n" not in text and "\\x1b" in text
    assert len(text) < 300 and re.search(r"fitted to 3 times at 2 processes", text)
    s = session_of(MPI)
    s.set_expression("mp.barrier", best.expression(), comment=text)  # a line holds it
