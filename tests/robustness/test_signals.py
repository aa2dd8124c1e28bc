"""Every process cleans up on every signal, and checks its output before working (issue
35, item 5).

The rule (parasol_core/base/signals.py, parasol_core/cli/__init__.py): SIGINT, SIGTERM
and SIGHUP end every command one way: the children it started are stopped (a compiler
with SIGTERM first, so that it removes its temporaries), its temporary files and
directories go, a file being replaced is the old one or the new one, whole, and the exit
status is 128 + the signal. A temporary that a writer killed with SIGKILL left is
removed by the next writer of that file (and by `check`). (Outputs checked first,
numeric options and text from outside: test_outputs_first.py, test_numeric_options.py,
test_outside_text.py.)

Signals are sent when an event shows the moment has come (a marker file, a process,
a temporary file, a line of output), never after a fixed sleep.
"""

from __future__ import annotations

import os
import shutil
import signal
import stat
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest
from conftest import SAMPLES

from parasol_core.base import filelock, signals
from parasol_core.cli import main

ROOT = Path(__file__).resolve().parents[2]
CLI = [sys.executable, "-m", "parasol_core.cli"]
STOPPING = [signal.SIGINT, signal.SIGTERM, signal.SIGHUP]
GCC = shutil.which("gcc")
needs_gcc = pytest.mark.skipif(GCC is None, reason="no gcc")
SAFETY = 120  # seconds: only a bound on a wait for an event, never a measured time


def environment(**extra: str) -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = str(ROOT) + os.pathsep + env.get("PYTHONPATH", "")
    env.update(extra)
    return env


def wait_for(event, what: str, proc: subprocess.Popen | None = None):
    """Poll until ``event()`` gives something true; fail if the process ends first or if
    it never comes (a bound, so that a broken run does not hang the suite)."""
    deadline = time.monotonic() + SAFETY
    while True:
        got = event()
        if got:
            return got
        if proc is not None and proc.poll() is not None:
            out, err = proc.communicate()
            pytest.fail(f"the process ended (status {proc.returncode}) before {what}:\n{err}")
        if time.monotonic() > deadline:
            pytest.fail(f"no {what} within {SAFETY} s")
        time.sleep(0.002)


def running(pid: int) -> bool:
    """Whether ``pid`` is a process that has not ended (a zombie has ended)."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return False
    return state not in ("Z", "X")


def finish(proc: subprocess.Popen) -> tuple[int, str]:
    try:
        _, err = proc.communicate(timeout=SAFETY)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.communicate()
        pytest.fail("the command did not stop")
    return proc.returncode, err


# --------------------------------------------------------------------------- measure


def compiler_wrapper(tmp_path: Path, every: bool = False) -> tuple[Path, Path]:
    """A CC that notes its process id in MARKS (the one-line check of the compiler
    aside, unless ``every``), then becomes gcc: the test knows a compile is under way,
    and by whom."""
    marks = tmp_path / "marks"
    marks.mkdir()
    cc = tmp_path / "cc-wrapper"
    skip = "" if every else f'case "$*" in *check.c*) exec {GCC} "$@";; esac\n'
    cc.write_text(f'#!/bin/sh\n{skip}echo $$ > "{marks}/cc.$$"\nexec {GCC} "$@"\n')
    cc.chmod(0o755)
    return cc, marks


def start_measure(tmp_path: Path, *args: str, cc: Path | None = None):
    tmp = tmp_path / "tmp"  # the measurement's temporary directory, and its compilers'
    tmp.mkdir()
    out = tmp_path / "host.machine"
    extra = {"TMPDIR": str(tmp)}
    if cc is not None:
        extra["CC"] = str(cc)
    proc = subprocess.Popen([*CLI, "measure", *args, "-o", str(out)], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, env=environment(**extra),
                            cwd=tmp_path)  # fmt: skip
    return proc, out, tmp


@needs_gcc
@pytest.mark.parametrize("sig", STOPPING, ids=lambda s: signal.Signals(s).name)
def test_a_signal_while_compiling_stops_the_compilers_and_leaves_nothing(tmp_path, sig):
    cc, marks = compiler_wrapper(tmp_path)
    proc, out, tmp = start_measure(tmp_path, "--quick", cc=cc)
    wait_for(lambda: list(marks.iterdir()), "a compile", proc)
    compilers = [int(p.read_text()) for p in marks.iterdir() if p.read_text().strip()]
    os.kill(proc.pid, sig)
    status, err = finish(proc)
    assert status == 128 + sig, err
    assert f"cancelled ({signal.Signals(sig).name}); nothing written" in err
    assert "Traceback" not in err
    assert not out.exists()
    # the compilers were stopped before the command ended (they run in sessions of
    # their own: a signal to the command does not reach them)
    assert [pid for pid in compilers if running(pid)] == []
    # no build directory, no compiler temporary (cc*.s), nothing in the temporary dir
    assert sorted(p.name for p in tmp.iterdir()) == []


def benchmark_running(tmp: Path) -> int | None:
    """The process id of a benchmark program the measurement runs from its build
    directory under ``tmp``."""
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            argv0 = (entry / "cmdline").read_bytes().split(b"\0")[0].decode()
        except (OSError, UnicodeDecodeError):
            continue
        if argv0.startswith(str(tmp)) and "parasol-measure-" in argv0:
            return int(entry.name)
    return None


@needs_gcc
@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGHUP], ids=["SIGTERM", "SIGHUP"])
def test_a_signal_while_a_benchmark_runs_stops_it_and_leaves_nothing(tmp_path, sig):
    proc, out, tmp = start_measure(tmp_path, "--params", "dla", "--runs", "500",
                                   "--run-ms", "20", "--cache-sizes", "10")  # fmt: skip
    bench = wait_for(lambda: benchmark_running(tmp), "a benchmark program", proc)
    os.kill(proc.pid, sig)
    status, err = finish(proc)
    assert status == 128 + sig, err
    assert "Traceback" not in err and not out.exists()
    assert not running(bench)
    assert sorted(p.name for p in tmp.iterdir()) == []


def test_a_build_directory_left_by_a_killed_measurement_goes_with_the_next(tmp_path):
    """SIGKILL cannot be cleaned up after: the next measurement does it (a directory
    whose maker is gone and whose lock nobody holds), and leaves a living one alone."""
    child = subprocess.Popen([sys.executable, "-c", textwrap.dedent(f"""\
        import sys, time
        from parasol_core.base import filelock
        fd, path = filelock.temporary_directory("parasol-measure-", {str(tmp_path)!r})
        (path / "arith.c").write_text("int x;")
        print(path, flush=True)
        time.sleep(600)
        """)], stdout=subprocess.PIPE, text=True, env=environment())  # fmt: skip
    left = Path(child.stdout.readline().strip())
    alive = Path(filelock.temporary_directory("parasol-measure-", tmp_path)[1])
    assert left.is_dir() and alive.is_dir()
    filelock.remove_stale_directories("parasol-measure-", tmp_path)
    assert left.is_dir()  # its maker runs
    child.kill()
    child.wait()
    assert filelock.remove_stale_directories("parasol-measure-", tmp_path) == [left]
    assert not left.exists() and alive.is_dir()


# --------------------------------------------------------------------------- writing


@pytest.fixture(scope="module")
def big_model(tmp_path_factory) -> Path:
    """A model of 8.8 MB (a 32 x 32 x 16 torus): its in-place rewrite takes long enough
    for the test to see the writer's temporary file."""
    from parasol_core.model import Machine, Processor, Timing
    from parasol_core.syntax.writer import dumps_canonical
    from parasol_core.topology.generators import generate

    topo = generate("torus", [32, 32, 16], 1e-6, 1e-9)
    machine = Machine(id=1, name="big", processor_count=1, topology_count=1,
                      processors=[Processor(1, "p", timings={"iga": Timing(1e-7)})],
                      topologies=[topo])  # fmt: skip
    path = tmp_path_factory.mktemp("big") / "big.machine"
    path.write_text(dumps_canonical(machine))
    return path


def temporaries(directory: Path) -> list[Path]:
    return sorted(p for p in directory.iterdir() if p.name.endswith(".tmp"))


def writing(directory: Path) -> list[Path]:
    """The temporaries being written (not the empty probe of the output check)."""
    found = []
    for p in temporaries(directory):
        try:
            if p.stat().st_size > 0:
                found.append(p)
        except FileNotFoundError:
            pass
    return found


def start_set(path: Path, value: str) -> subprocess.Popen:
    return subprocess.Popen([*CLI, "set", str(path), f"pt(1).iga={value}", "-i"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env=environment())  # fmt: skip


@pytest.mark.parametrize("sig", STOPPING, ids=lambda s: signal.Signals(s).name)
def test_a_signal_during_the_write_exits_128_plus_it_with_nothing_half_written(
    tmp_path, big_model, sig
):
    path = tmp_path / "m.machine"
    shutil.copy(big_model, path)
    old = path.read_bytes()
    expected = tmp_path / "expected.machine"
    assert main(["set", str(path), "pt(1).iga=3e-7", "-o", str(expected)]) == 0
    new = expected.read_bytes()
    expected.unlink()
    proc = start_set(path, "3e-7")
    wait_for(lambda: writing(tmp_path), "the writer's temporary file", proc)
    os.kill(proc.pid, sig)
    status, err = finish(proc)
    assert status == 128 + sig, err
    assert "Traceback" not in err
    assert path.read_bytes() in (old, new)  # the old file or the new one, whole
    assert temporaries(tmp_path) == []


def test_a_temporary_left_by_a_writer_killed_with_sigkill_is_removed_by_the_next(
    tmp_path, big_model, capsys
):
    path = tmp_path / "m.machine"
    shutil.copy(big_model, path)
    old = path.read_bytes()
    for attempt in range(5):  # (SIGKILL may come after the rename: then try again)
        proc = start_set(path, f"{attempt + 4}e-7")
        wait_for(lambda: writing(tmp_path), "the writer's temporary file", proc)
        proc.kill()
        proc.communicate()
        if temporaries(tmp_path):
            break
    [left] = temporaries(tmp_path)
    assert path.read_bytes() == old or b"iga = " in path.read_bytes()
    # `check` removes it, and says so
    assert main(["check", str(path)]) == 0
    assert f"removed {left.name}" in capsys.readouterr().err
    assert temporaries(tmp_path) == []


def live_writer(path: Path) -> tuple[subprocess.Popen, Path]:
    """A process holding a temporary of ``path`` as the writer makes it (its lock held),
    until killed."""
    child = subprocess.Popen([sys.executable, "-c", textwrap.dedent(f"""\
        import os, time
        from parasol_core.base import filelock
        fd, tmp = filelock.temporary_beside({str(path)!r})
        os.write(fd, b"half a model")
        print(tmp, flush=True)
        time.sleep(600)
        """)], stdout=subprocess.PIPE, text=True, env=environment())  # fmt: skip
    return child, Path(child.stdout.readline().strip())


def test_the_next_writer_removes_temporaries_whose_writer_is_gone_and_only_those(tmp_path):
    path = tmp_path / "m.machine"
    shutil.copy(SAMPLES / "grid4x4.machine", path)
    other = tmp_path / ".other.machine.1.abcd.tmp"  # another file's: not ours to remove
    other.write_text("x")
    killed, left = live_writer(path)
    running_writer, held = live_writer(path)
    killed.kill()
    killed.wait()
    assert left.exists() and held.exists()
    assert main(["set", str(path), "pt(1).iga=2e-7", "-i"]) == 0
    assert not left.exists()  # its writer is gone
    assert held.exists()  # its writer is at work
    assert other.exists()
    running_writer.kill()
    running_writer.wait()
    assert main(["set", str(path), "pt(1).iga=3e-7", "-i"]) == 0
    assert not held.exists()
    assert [p.name for p in temporaries(tmp_path)] == [other.name]


# --------------------------------------------------------------------------- the one path


def test_one_path_every_command_exits_128_plus_the_signal(tmp_path, monkeypatch, capsys):
    """In process: a signal while any command works raises through its cleaning and
    ends it with 128 + the signal; the handlers before it are back after it."""
    from parasol_core.cli import model_commands

    before = {sig: signal.getsignal(sig) for sig in signals.SIGNALS}
    for sig in signals.SIGNALS:

        def stopped(args, sig=sig):
            os.kill(os.getpid(), sig)  # a signal to this process, as kill sends it
            for _ in range(1000):
                time.sleep(0.001)  # the handler runs between bytecodes: it raises here
            raise AssertionError("the signal did not stop the command")

        monkeypatch.setattr(model_commands, "summary", stopped)
        status = main(["show", str(SAMPLES / "grid4x4.machine")])
        assert status == 128 + sig
        assert f"stopped by {signal.Signals(sig).name}" in capsys.readouterr().err
        assert {s: signal.getsignal(s) for s in signals.SIGNALS} == before


def test_deferred_work_notes_a_signal_and_raises_it_at_its_end():
    with signals.handled():
        with pytest.raises(signals.Interrupted) as info, signals.deferred():
            os.kill(os.getpid(), signal.SIGHUP)
            for _ in range(100):
                time.sleep(0.001)  # noted, not raised, inside
            assert signals.received() == signal.SIGHUP
        assert info.value.status == 129


# --------------------------------------------------------------------------- the network


def mpiexec() -> str | None:
    here = Path(sys.executable).parent / "mpiexec"
    return str(here) if here.exists() else shutil.which("mpiexec")


needs_mpi = pytest.mark.skipif(mpiexec() is None, reason="no mpiexec (the mpi extra)")


def rank_pid(marker: str, rank: int) -> int | None:
    """The process of MPI rank ``rank`` of the run whose command line holds ``marker``."""
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            words = [w.decode(errors="replace")
                     for w in (entry / "cmdline").read_bytes().split(b"\0")]  # fmt: skip
            env = (entry / "environ").read_bytes().split(b"\0")
        except OSError:
            continue
        if marker in words and "-m" in words and f"PMI_RANK={rank}".encode() in env:
            return int(entry.name)
    return None


def start_network(tmp_path: Path, *args: str) -> tuple[subprocess.Popen, Path]:
    out = tmp_path / "net.machine"
    proc = subprocess.Popen([mpiexec(), "-n", "2", *CLI, "measure", "--network", *args, "-o",
                             str(out)], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, cwd=tmp_path, env=environment(),
                            start_new_session=True)  # fmt: skip
    return proc, out


def read_until(proc: subprocess.Popen, text: str) -> list[str]:
    lines = []
    while True:
        line = proc.stderr.readline()
        if not line:
            status, err = finish(proc)
            pytest.fail(f"ended (status {status}) before {text!r}:\n{''.join(lines)}{err}")
        lines.append(line)
        if text in line:
            return lines


@needs_mpi
def test_a_signal_to_rank_1_while_rank_0_writes_still_stops_every_rank(tmp_path):
    """The last moments: rank 0 fits and writes while rank 1 waits. A SIGTERM to rank 1
    then is not ignored: every rank exits 143, and the files are none or whole."""
    from parasol_core import load
    from parasol_core.analysis.validate import errors, validate

    proc, out = start_network(tmp_path, "--quick")
    pid = wait_for(lambda: rank_pid(str(out), 1), "rank 1", proc)
    read_until(proc, "mp.barrier = ")  # rank 0 has fitted: it writes now
    os.kill(pid, signal.SIGTERM)
    status, err = finish(proc)
    assert status == 128 + signal.SIGTERM, err
    assert "Traceback" not in err
    if out.exists():  # the signal came as the files were renamed: whole, and said
        assert "stopped by SIGTERM as the files were written" in err
        assert not errors(validate(load(out)))
    else:
        assert "cancelled (signal 15): nothing written" in err
        assert sorted(p.name for p in tmp_path.iterdir()) == []


@needs_mpi
def test_sighup_to_one_rank_stops_every_rank_of_the_network_measurement(tmp_path):
    proc, out = start_network(tmp_path)
    pid = wait_for(lambda: rank_pid(str(out), 1), "rank 1", proc)
    read_until(proc, "ping-pong")
    os.kill(pid, signal.SIGHUP)  # its terminal or session closed
    status, err = finish(proc)
    assert status == 128 + signal.SIGHUP, err
    assert "cancelled (signal 1): nothing written" in err
    assert sorted(p.name for p in tmp_path.iterdir()) == []


def test_writing_stages_then_commits_and_a_discard_leaves_the_old_file(tmp_path):
    from parasol_core.syntax.writer import stage_text

    path = tmp_path / "m.machine"
    path.write_text("old")
    path.chmod(0o640)
    staged = stage_text(path, "new")
    assert path.read_text() == "old" and len(temporaries(tmp_path)) == 1
    staged.discard()
    assert path.read_text() == "old" and temporaries(tmp_path) == []
    stage_text(path, "new").commit()
    assert path.read_text() == "new" and temporaries(tmp_path) == []
    assert stat.S_IMODE(path.stat().st_mode) == 0o640
