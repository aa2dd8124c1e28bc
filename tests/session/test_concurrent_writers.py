"""No edit is lost to another writer: concurrent in-place edits take turns under the
file's lock, and a session never saves over a change another program made."""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from parasol_core.base import filelock, params
from parasol_core.session import Session, disk
from parasol_core.session.session import FileChangedOnDisk
from parasol_core.syntax.loader import load

CLI = Path(sys.executable).parent / "parasol-model"

# Timings the GCel sample does not define: each writer of the concurrency test adds one
# of them, never written again, so an edit lost in any round shows at the end.
FRESH = [p.name for p in params.PARAMS if p.name not in {"iga", "igm", "dga", "dgm", "dgd",
                                                          "dgx", "sind"}]  # fmt: skip


def _timing(path: Path, name: str) -> float | None:
    t = load(path).processor(1).timings.get(name)
    return None if t is None else t.mean


def _set(path: Path, *assignments: str, timeout: float | None = None) -> subprocess.Popen:
    cmd = [str(CLI), "set", str(path), *assignments, "-i"]
    if timeout is not None:
        cmd += ["--lock-timeout", str(timeout)]
    return subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def test_rounds_of_concurrent_set_in_place_keep_every_edit(sample_copy):
    """Rounds of four `set -i` processes started at once on one file (two more than
    the cores of a small machine, so that they really overlap and queue on the lock):
    each sets a timing two of them share and one of its own; every acknowledged edit
    must be in the file at the end. (Fifty rounds of two writers took 30-80 s, most of
    it starting processes; ten rounds of four queue twice as many writers at a time
    for 40 edits. The GCel sample stays: a larger file widens the read-modify-write
    window a lost edit would slip through.)"""
    path = sample_copy("parsytec-gcel.machine")
    rounds, writers = 10, 4
    assert len(FRESH) >= writers * rounds
    for r in range(rounds):
        value = f"{r + 1}e-6"
        procs = [
            _set(
                path,
                f"pt(1).{'igm' if w % 2 else 'dga'}={value}",
                f"pt(1).{FRESH[writers * r + w]}={value}",
            )  # fmt: skip
            for w in range(writers)
        ]
        for proc in procs:
            _, err = proc.communicate(timeout=60)
            assert proc.returncode == 0, err
    model = load(path).processor(1).timings
    assert model["igm"].mean == model["dga"].mean == pytest.approx(rounds * 1e-6)
    lost = [n for n in FRESH[: writers * rounds] if n not in model]
    assert not lost, f"acknowledged edits lost: {lost}"
    for r in range(rounds):
        for name in FRESH[writers * r : writers * (r + 1)]:
            assert model[name].mean == pytest.approx((r + 1) * 1e-6)


def test_set_in_place_that_cannot_take_the_lock_changes_nothing(sample_copy):
    path = sample_copy("parsytec-gcel.machine")
    before = path.read_bytes()
    with filelock.locked(path):
        proc = _set(path, "pt(1).igm=9e-6", timeout=0.3)
        _, err = proc.communicate(timeout=60)  # gave up while the lock was still held
    assert proc.returncode == 2
    assert "another program is writing it" in err and "nothing was changed" in err
    assert "0.3 s" in err
    assert path.read_bytes() == before


@pytest.mark.parametrize("command", [["scale", "all", "2"],
                                     ["fit", "mpi.send", "MEASUREMENTS"]])  # fmt: skip
def test_every_in_place_command_waits_for_the_lock(sample_copy, tmp_path, command):
    path = sample_copy("parsytec-gcel.machine")
    csv = tmp_path / "send.csv"
    csv.write_text("procs,bytes,seconds\n" + "".join(
        f"2,{b},{1e-5 + b * 1e-9}\n" for b in (1, 10, 100, 1000, 10000)))  # fmt: skip
    argv = [str(csv) if a == "MEASUREMENTS" else a for a in command]
    before = path.read_bytes()
    with filelock.locked(path):
        result = subprocess.run([str(CLI), argv[0], str(path), *argv[1:], "-i",
                                 "--lock-timeout", "0.2"], capture_output=True, text=True)  # fmt: skip
        assert result.returncode == 2, result.stderr
        assert path.read_bytes() == before
    result = subprocess.run([str(CLI), argv[0], str(path), *argv[1:], "-i"],
                            capture_output=True, text=True)  # fmt: skip
    assert result.returncode == 0, result.stderr
    assert path.read_bytes() != before


# ---------------------------------------------------------------------- the lock itself


def test_a_writer_waiting_on_a_replaced_file_locks_the_new_one(tmp_path):
    """The first writer replaces the file under its lock; the waiter, woken on the old
    inode, must lock the file the path names now, or a third writer could slip in."""
    path = tmp_path / "m.machine"
    path.write_text("one\n")
    order: list[str] = []
    first_in = threading.Event()

    def first() -> None:
        with filelock.locked(path):
            first_in.set()
            time.sleep(0.2)
            tmp = tmp_path / "new"
            tmp.write_text("two\n")
            os.replace(tmp, path)
            order.append("first")

    def second() -> None:
        first_in.wait()
        with filelock.locked(path):
            order.append("second:" + path.read_text().strip())
            inode = os.stat(path).st_ino
            # a third writer, from another thread, must wait for this one
            third_done = threading.Event()

            def third() -> None:
                with filelock.locked(path, timeout=5):
                    order.append("third")
                third_done.set()

            threading.Thread(target=third).start()
            time.sleep(0.2)
            order.append("second done")
            assert os.stat(path).st_ino == inode
        assert third_done.wait(5)

    threads = [threading.Thread(target=first), threading.Thread(target=second)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(10)
    assert order == ["first", "second:two", "second done", "third"]


def test_the_lock_is_reentrant_within_a_thread_and_skips_what_is_not_a_file(tmp_path):
    path = tmp_path / "m.machine"
    path.write_text("x\n")
    with filelock.locked(path, timeout=0.1), filelock.locked(path, timeout=0.1):
        pass  # a save inside an in-place edit takes the lock it holds
    with filelock.locked(tmp_path / "absent.machine", timeout=0.1):
        pass
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    done = threading.Event()

    def lock_fifo() -> None:
        with filelock.locked(fifo, timeout=0.1):  # never blocks on a FIFO's open
            pass
        done.set()

    threading.Thread(target=lock_fifo, daemon=True).start()
    finished = done.wait(60)  # an open waiting for a writer waits forever: 60 s ends it
    if not finished:  # let the thread go
        with contextlib.suppress(OSError):
            os.close(os.open(fifo, os.O_WRONLY | os.O_NONBLOCK))
    assert finished, "locking a FIFO blocked on opening it"


def test_the_lock_follows_a_symbolic_link(tmp_path):
    path = tmp_path / "m.machine"
    path.write_text("x\n")
    link = tmp_path / "link.machine"
    link.symlink_to(path)

    def through_link() -> None:
        with filelock.locked(link, timeout=0.1):
            pass  # pragma: no cover

    with filelock.locked(path):
        error = _in_thread(through_link)
    assert isinstance(error, filelock.LockTimeout)
    assert error.filename == str(path)


def _in_thread(fn):
    out: list = []
    t = threading.Thread(target=lambda: out.append(_catch(fn)))
    t.start()
    t.join(10)
    return out[0]


def _catch(fn):
    try:
        return fn()
    except Exception as e:
        return e


def test_a_session_save_waits_for_the_lock(sample_copy):
    path = sample_copy("parsytec-gcel.machine")
    session = Session.open(path)
    session.set("pt(1).igm", "5e-6")
    before = path.read_bytes()
    with filelock.locked(path):
        error = _in_thread(lambda: session.save(lock_timeout=0.1))
    assert isinstance(error, filelock.LockTimeout)
    assert path.read_bytes() == before and session.is_modified
    session.save()
    assert _timing(path, "igm") == 5e-6


# ---------------------------------------------------------------------- what a session knows


def _other_writer(path: Path, *assignments: str) -> None:
    result = subprocess.run([str(CLI), "set", str(path), *assignments, "-i"],
                            capture_output=True, text=True)  # fmt: skip
    assert result.returncode == 0, result.stderr


def test_a_session_does_not_save_over_another_writers_change(sample_copy):
    path = sample_copy("parsytec-gcel.machine")
    session = Session.open(path)
    assert session.disk_status() == disk.UNCHANGED
    session.set("pt(1).igm", "5e-6")
    _other_writer(path, "pt(1).dga=7e-6")
    assert session.disk_status() == disk.CHANGED
    theirs = path.read_bytes()
    with pytest.raises(FileChangedOnDisk, match="changed by another program"):
        session.save()
    assert path.read_bytes() == theirs and session.is_modified
    diff = disk.difference(session.disk_text(), session.text(), path.name)
    assert "-            dga = 7e-06" in diff and "+            dga = 1.2e-06" in diff
    assert "+            igm = 5e-06" in diff
    session.save(overwrite=True)  # the user said: keep mine
    assert _timing(path, "igm") == 5e-6 and _timing(path, "dga") == 1.2e-6
    assert session.disk_status() == disk.UNCHANGED and not session.is_modified


def test_a_session_reloads_what_another_writer_saved(sample_copy):
    path = sample_copy("parsytec-gcel.machine")
    session = Session.open(path)
    session.set("pt(1).igm", "5e-6")
    _other_writer(path, "pt(1).dga=7e-6")
    session.reload()
    assert session.machine.processor(1).timings["dga"].mean == 7e-6
    assert session.machine.processor(1).timings["igm"].mean == 1.6e-6
    assert not session.is_modified and not session.history.can_undo
    assert session.disk_status() == disk.UNCHANGED
    session.set("pt(1).igm", "5e-6")
    session.save()  # no question: the session has read the other writer's change
    assert _timing(path, "dga") == 7e-6 and _timing(path, "igm") == 5e-6


def test_touched_is_not_changed_and_missing_is_written_back(sample_copy):
    path = sample_copy("parsytec-gcel.machine")
    session = Session.open(path)
    stat = path.stat()
    os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns + 5_000_000_000))
    assert session.disk_status() == disk.UNCHANGED
    assert session.disk_stamp.mtime_ns == stat.st_mtime_ns + 5_000_000_000
    path.rename(path.with_suffix(".moved"))
    assert session.disk_status() == disk.MISSING
    session.save()  # nothing on disk to lose: written back
    assert path.exists() and session.disk_status() == disk.UNCHANGED


def test_save_as_elsewhere_and_a_session_without_a_read_file_are_not_checked(sample_copy, tmp_path):
    path = sample_copy("parsytec-gcel.machine")
    session = Session.open(path)
    _other_writer(path, "pt(1).dga=7e-6")
    other = tmp_path / "other.machine"
    other.write_text("not a model\n")
    session.save(other)  # Save As onto another file: the file dialog asked
    assert session.path == other and session.disk_status() == disk.UNCHANGED
    assert Session(load(path), path).disk_status() == disk.UNKNOWN


def test_a_difference_too_large_to_compute_is_refused_naming_both():
    with pytest.raises(disk.DiffTooLarge, match=r"150 lines together, more than the 100"):
        disk.difference("a\n" * 75, "b\n" * 75, "m.machine", limit=100)
