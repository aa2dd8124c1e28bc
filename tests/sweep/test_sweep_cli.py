"""`parasol-model sweep`: a sweep file in, a CSV of rows out; resuming after a kill; the
same rows under `mpiexec -n 2` as locally."""

from __future__ import annotations

import csv
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from parasol_core.cli import main
from parasol_core.sweep import load_spec, run_sweep

ROOT = Path(__file__).resolve().parents[2]
GCEL = ROOT / "sample_models" / "parsytec-gcel.machine"
PYTHON = Path(sys.executable)
MPIEXEC = PYTHON.parent / "mpiexec"

SWEEP = f"""
model = "{GCEL}"

[[axis]]
set = "pt(1).iga"
log = [1e-7, 1e-5, 5]

[[axis]]
set = "tl(1)(*).speed"
values = [4.55e-7, 9.1e-7, 1.82e-6]

[[axis]]
scale = "arithmetic"
values = [0.5, 2]

[[answer]]
eval = ["po(1).ia_spd", "mc.maxtotalspd"]

[[answer]]
simulate = {{pattern = "broadcast", bytes = 1024}}
name = "broadcast"
"""


def env() -> dict:
    return {**os.environ, "PYTHONPATH": str(ROOT)}


def rows_of(path: Path) -> list[list[str]]:
    with open(path, newline="") as f:
        return list(csv.reader(f))


def without_seconds(rows: list[list[str]]) -> list[list[str]]:
    """Rows sorted by index, the column of seconds (the second last) left out."""
    return sorted((r[:-2] + r[-1:] for r in rows), key=lambda r: int(r[0]))


def children(pid: int) -> list[int]:
    out = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                stat = (entry / "stat").read_text()
            except OSError:
                continue
            if int(stat.rsplit(")", 1)[1].split()[1]) == pid:
                out.append(int(entry.name))
    return out


def alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


@pytest.fixture
def sweep_file(tmp_path: Path) -> Path:
    path = tmp_path / "s.toml"
    path.write_text(SWEEP)
    return path


def test_a_sweep_of_one_variant_says_one_variant(tmp_path, capsys):
    """A sweep of one variant said '1 rows written; 1 variants'."""
    one = tmp_path / "one.toml"
    one.write_text(f'model = "{GCEL}"\n[[axis]]\nset = "pt(1).iga"\nvalues = [1e-7]\n'
                   '[[answer]]\neval = "po(1).ia_spd"\n')  # fmt: skip
    assert main(["sweep", str(one), "-o", str(tmp_path / "r.csv"), "--workers", "1"]) == 0
    err = capsys.readouterr().err
    assert "1 row written; 1 variant" in err and "variants" not in err


def test_a_sweep_file_in_a_row_per_variant_out(sweep_file, tmp_path, capsys):
    out = tmp_path / "r.csv"
    assert main(["sweep", str(sweep_file), "-o", str(out), "--workers", "1"]) == 0
    rows = rows_of(out)
    header = ["index", "pt(1).iga", "tl(1)(*).speed", "scale arithmetic", "po(1).ia_spd",
              "mc.maxtotalspd", "broadcast", "seconds", "error"]  # fmt: skip
    assert rows[0] == header
    assert sorted(int(r[0]) for r in rows[1:]) == list(range(30))
    # the rows are the core's, as text
    core = []
    run_sweep(load_spec(sweep_file), core.append, executor="serial")
    assert without_seconds(rows[1:]) == without_seconds([r.cells() for r in core])
    first = rows[1]
    assert first[1:4] == ["1e-07", "4.55e-07", "0.5"]
    assert float(first[4]) == pytest.approx(0.5e-7 / 4.55e-7)
    assert float(first[6]) > 0 and first[-1] == ""
    err = capsys.readouterr().err
    assert "30 rows written; 30 variants" in err
    # the rows go to a file, which a resume reads back
    assert main(["sweep", str(sweep_file), "-o", "-"]) == 2
    assert "-o -: the rows go to a file" in capsys.readouterr().err
    # an output that holds rows is neither overwritten nor appended to unasked
    assert main(["sweep", str(sweep_file), "-o", str(out)]) == 2
    assert "--resume to go on" in capsys.readouterr().err
    assert rows_of(out) == rows
    # another sweep's output is not resumed
    other = tmp_path / "other.toml"
    other.write_text(SWEEP.replace("[0.5, 2]", "[0.25, 2]"))
    assert main(["sweep", str(other), "-o", str(out), "--resume"]) == 2
    assert "another sweep's output" in capsys.readouterr().err
    assert main(["sweep", str(other), "-o", str(out), "--restart", "--workers", "1"]) == 0
    assert [r[3] for r in rows_of(out)[1:3]] == ["0.25", "2"]


def test_a_row_cut_short_is_run_again_on_resume(sweep_file, tmp_path, capsys):
    out = tmp_path / "r.csv"
    assert main(["sweep", str(sweep_file), "-o", str(out), "--workers", "1"]) == 0
    whole = out.read_bytes()
    lines = whole.splitlines(keepends=True)
    # 12 rows and half of the 13th, as a kill in the middle of a write leaves it
    out.write_bytes(b"".join(lines[:13]) + lines[13][:20])
    assert main(["sweep", str(sweep_file), "-o", str(out), "--resume", "--workers", "1"]) == 0
    assert "18 rows written, 12 kept from before; 30 variants" in capsys.readouterr().err
    after = out.read_bytes().splitlines(keepends=True)
    assert after[:13] == lines[:13]
    assert without_seconds(rows_of(out)[1:]) == without_seconds(
        list(csv.reader(x.decode() for x in lines[1:]))
    )


@pytest.mark.parametrize(("cell", "value", "said"), [
    (4, "notanumber", "line 3: po(1).ia_spd 'notanumber' is not a number"),
    (-2, "-1", "line 3: seconds '-1' is not a time in seconds"),
])  # fmt: skip
def test_a_damaged_row_is_said_on_resume_not_kept_as_an_answer(sweep_file, tmp_path, capsys,
                                                              cell, value, said):  # fmt: skip
    """A resume took any row whose index and axes fit as a finished variant, whatever
    its answers held: a row edited by hand, or damaged, stayed in the results."""
    out = tmp_path / "r.csv"
    assert main(["sweep", str(sweep_file), "-o", str(out), "--workers", "1"]) == 0
    rows = rows_of(out)
    rows[2][cell] = value
    with open(out, "w", newline="") as f:
        csv.writer(f).writerows(rows[:5])
    capsys.readouterr()
    assert main(["sweep", str(sweep_file), "-o", str(out), "--resume", "--workers", "1"]) == 2
    err = capsys.readouterr().err
    assert said in err and "the row was not written by this sweep" in err
    assert rows_of(out) == rows[:5]  # nothing written to it


def test_killed_half_way_and_resumed_every_finished_row_is_kept_once(tmp_path):
    sweep = tmp_path / "s.toml"
    # 300 variants of a few milliseconds each
    sweep.write_text(SWEEP.replace("log = [1e-7, 1e-5, 5]", "log = [1e-7, 1e-5, 50]"))
    out = tmp_path / "r.csv"
    command = [str(PYTHON), "-m", "parasol_core.cli", "sweep", str(sweep), "-o", str(out)]
    proc = subprocess.Popen([*command, "--workers", "2"], env=env(), stderr=subprocess.PIPE)
    try:
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline and proc.poll() is None:
            if out.exists() and out.read_bytes().count(b"\n") > 150:
                break
            time.sleep(0.01)
        assert proc.poll() is None, "the sweep ended before it could be killed"
        workers = children(proc.pid)
        assert len(workers) == 2
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait()
        # its pool's workers do not outlive it
        deadline = time.monotonic() + 30
        while any(alive(w) for w in workers) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert not any(alive(w) for w in workers)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        proc.stderr.close()
    before = out.read_bytes()
    finished = before[: before.rfind(b"\n") + 1].splitlines(keepends=True)
    assert 150 < len(finished) < 301
    done = subprocess.run([*command, "--resume", "--workers", "2"], env=env(),
                          capture_output=True, text=True, timeout=300)  # fmt: skip
    assert done.returncode == 0, done.stderr
    after = out.read_bytes().splitlines(keepends=True)
    assert after[: len(finished)] == finished  # every finished row kept, as it was
    indices = [int(r[0]) for r in rows_of(out)[1:]]
    assert sorted(indices) == list(range(300))  # each variant once
    assert f"{len(finished) - 1:,} kept from before" in done.stderr


@pytest.mark.skipif(not MPIEXEC.exists(), reason="the mpi extra (mpi4py, mpich) is not installed")
def test_under_mpiexec_the_rows_are_the_local_ones(sweep_file, tmp_path):
    local, mpi = tmp_path / "local.csv", tmp_path / "mpi.csv"
    assert main(["sweep", str(sweep_file), "-o", str(local), "--workers", "2"]) == 0
    command = [str(MPIEXEC), "-n", "2", str(PYTHON), "-m", "mpi4py.futures", "-m",
               "parasol_core.cli", "sweep", str(sweep_file), "-o", str(mpi)]  # fmt: skip
    done = subprocess.run(command, env=env(), capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert "30 rows written; 30 variants" in done.stderr
    assert rows_of(mpi)[0] == rows_of(local)[0]
    assert without_seconds(rows_of(mpi)[1:]) == without_seconds(rows_of(local)[1:])
