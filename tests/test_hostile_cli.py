"""Issue 26, tested as an attacker would: generated inputs per class, each asserting a
clear message, the documented exit status, bounded time, and nothing else changed.

1. Output goes where the user pointed and destroys nothing else; inputs that are not
   regular files are refused, never read forever.
3. No value changes without the user knowing (underflow, edits that add errors,
   expressions that always fail).
4. Every failure has its documented exit status and a true message.
"""

from __future__ import annotations

import contextlib
import io
import os
import signal
import socket
import stat
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from parasol_core.cli import main

ROOT = Path(__file__).resolve().parents[1]
SAMPLE = ROOT / "sample_models" / "grid4x4.machine"
CSV = ROOT / "sample_models" / "measurements" / "cray-t3d.mpi.bcast.csv"
CLI = Path(sys.executable).parent / "parasol-model"
SECONDS = 10

pytestmark = pytest.mark.skipif(not hasattr(signal, "SIGALRM"), reason="needs SIGALRM")


class _Hang(Exception):
    pass


def _alarm(signum, frame):
    raise _Hang


def run(*argv: str | Path, stdin: str | None = None) -> tuple[int, str, str]:
    """``parasol-model ARGV`` in this process, failing the test past SECONDS."""
    out, err = io.StringIO(), io.StringIO()
    previous = signal.signal(signal.SIGALRM, _alarm)
    signal.alarm(SECONDS)
    old_stdin = sys.stdin
    try:
        if stdin is not None:
            sys.stdin = io.StringIO(stdin)
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            try:
                status = main([str(a) for a in argv])
            except SystemExit as e:
                status = e.code if isinstance(e.code, int) else 2
    except _Hang:
        pytest.fail(f"parasol-model {' '.join(map(str, argv))} ran over {SECONDS} s")
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)
        sys.stdin = old_stdin
    text = err.getvalue()
    assert "Traceback" not in text and "please report" not in text, text
    return status, out.getvalue(), text


def snapshot(path: Path) -> tuple:
    """What must not change: the kind of node, its identity and, for a file, its bytes."""
    st = os.lstat(path)
    data = path.read_bytes() if stat.S_ISREG(st.st_mode) else None
    return stat.S_IFMT(st.st_mode), st.st_ino, st.st_rdev, data


@pytest.fixture
def model(tmp_path: Path) -> Path:
    path = tmp_path / "m.machine"
    path.write_bytes(SAMPLE.read_bytes())
    return path


# --------------------------------------------------------------------------- rule 1

# every command that writes a model to -o OUT
WRITERS = {
    "format": lambda m: ["format", m],
    "set": lambda m: ["set", m, "pt(1).iga=2e-7"],
    "scale": lambda m: ["scale", m, "all", "2"],
    "fit": lambda m: ["fit", m, "mpi.bcast", CSV],
}


def _char_device(path: Path, like: str = "/dev/null") -> None:
    """A copy of the device ``like`` at ``path`` (needs the right to make device nodes).
    Tests write to copies only: run without the fix, as root, they would otherwise
    replace the system's own /dev/null or /dev/full with a regular file."""
    if not os.path.exists(like):
        pytest.skip(f"no {like}")
    try:
        os.mknod(path, stat.S_IFCHR | 0o666, os.stat(like).st_rdev)
    except (PermissionError, OSError) as e:
        pytest.skip(f"cannot make a device node here: {e}")


def _socket(path: Path) -> socket.socket:
    s = socket.socket(socket.AF_UNIX)
    try:
        s.bind(str(path))
    except OSError as e:  # a path too long for AF_UNIX
        s.close()
        pytest.skip(f"cannot bind a socket here: {e}")
    return s


@pytest.mark.parametrize("command", WRITERS)
def test_output_onto_a_copy_of_dev_null_writes_through_it(tmp_path, model, command):
    target = tmp_path / "null"
    _char_device(target)
    before = snapshot(target)
    status, _, err = run(*WRITERS[command](model), "-o", target)
    assert status == 0, err
    assert snapshot(target) == before  # still the device node, the same inode
    assert model.read_bytes() == SAMPLE.read_bytes()


@pytest.mark.parametrize("command", WRITERS)
def test_output_onto_a_fifo_with_no_reader_is_refused_at_once(tmp_path, model, command):
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    start = time.monotonic()
    status, _, err = run(*WRITERS[command](model), "-o", fifo)
    assert status == 2
    assert f"{fifo}: cannot write: it is a FIFO (named pipe) that no program is reading" in err
    assert time.monotonic() - start < 5
    assert stat.S_ISFIFO(os.lstat(fifo).st_mode)
    assert model.read_bytes() == SAMPLE.read_bytes()


@pytest.mark.parametrize("command", WRITERS)
def test_output_onto_a_fifo_with_a_reader_reaches_the_reader(tmp_path, model, command):
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    got: list[bytes] = []
    fd = os.open(fifo, os.O_RDONLY | os.O_NONBLOCK)  # a reader, present before the write

    def drain() -> None:
        os.set_blocking(fd, True)
        with os.fdopen(fd, "rb") as f:
            got.append(f.read())

    status, _, err = run(*WRITERS[command](model), "-o", fifo)
    reader = threading.Thread(target=drain)
    reader.start()
    reader.join(5)
    assert status == 0, err
    assert b"begin machine" in got[0] and b"end machine" in got[0]
    assert stat.S_ISFIFO(os.lstat(fifo).st_mode)


@pytest.mark.parametrize("command", WRITERS)
@pytest.mark.parametrize("kind", ["socket", "directory"])
def test_output_onto_a_socket_or_a_directory_is_refused(tmp_path, model, command, kind):
    target = tmp_path / kind
    held = None
    if kind == "socket":
        held = _socket(target)
    else:
        target.mkdir()
    before = snapshot(target)
    try:
        status, _, err = run(*WRITERS[command](model), "-o", target)
    finally:
        if held is not None:
            held.close()
    assert status == 2
    assert f"it is a {kind}, not a file a model can be written to; nothing was written" in err
    assert snapshot(target) == before
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".")] == []


@pytest.mark.parametrize("command", WRITERS)
def test_output_onto_a_copy_of_dev_full_exits_2_and_leaves_it_a_device(tmp_path, model, command):
    full = tmp_path / "full"
    _char_device(full, "/dev/full")
    before = snapshot(full)
    status, _, err = run(*WRITERS[command](model), "-o", full)
    assert status == 2
    assert f"{full}: cannot write: No space left on device" in err
    assert snapshot(full) == before


def test_in_place_edit_and_session_save_through_a_link_to_a_fifo_never_replace_it(tmp_path):
    from parasol_core.session import Session

    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    session = Session.open(SAMPLE)
    with pytest.raises(OSError, match="no program is reading"):
        session.save(fifo)
    assert stat.S_ISFIFO(os.lstat(fifo).st_mode)
    link = tmp_path / "link.machine"
    link.symlink_to(fifo)
    with pytest.raises(OSError, match="no program is reading"):
        session.save(link)
    assert stat.S_ISFIFO(os.lstat(fifo).st_mode) and link.is_symlink()


# Inputs: every command that reads a model, and the data files, given a FIFO, a device
# or a socket. None may block; each is refused with exit 2 and says what it is.
READERS = {
    "check": lambda f, m: ["check", f],
    "format": lambda f, m: ["format", f],
    "show": lambda f, m: ["show", f],
    "set -i": lambda f, m: ["set", f, "pt(1).iga=1", "-i"],
    "scale -i": lambda f, m: ["scale", f, "all", "2", "-i"],
    "fit -i": lambda f, m: ["fit", f, "mpi.bcast", CSV, "-i"],
    "eval": lambda f, m: ["eval", f, "1"],
    "deps": lambda f, m: ["deps", f, "pt(1).iga"],
    "route": lambda f, m: ["route", f, "1", "2"],
    "push": lambda f, m: ["push", f, "--url", "http://127.0.0.1:9"],
    "block counts": lambda f, m: ["block", m, "--processor", "1", f],
    "simulate messages": lambda f, m: ["simulate", m, "--messages", f],
    "fit measurements": lambda f, m: ["fit", m, "mpi.bcast", f],
}


def _input_node(tmp_path: Path, kind: str):
    path = tmp_path / kind
    if kind == "fifo":
        os.mkfifo(path)
        return path, None, "a FIFO (named pipe)"
    if kind == "char device":
        try:  # a copy, so that no command could ever write to the system's own
            os.mknod(path, stat.S_IFCHR | 0o444, os.stat("/dev/zero").st_rdev)
        except OSError:
            path = Path("/dev/zero")  # read only: every command here refuses it unread
        return path, None, "a character device"
    return path, _socket(path), "a socket"


@pytest.mark.parametrize("kind", ["fifo", "char device", "socket"])
@pytest.mark.parametrize("command", READERS)
def test_an_input_that_is_not_a_regular_file_is_refused_unread(tmp_path, model, command, kind):
    if kind == "char device" and not os.path.exists("/dev/zero"):
        pytest.skip("no /dev/zero")
    path, held, what = _input_node(tmp_path, kind)
    start = time.monotonic()
    try:
        status, out, err = run(*READERS[command](path, model))
    finally:
        if held is not None:
            held.close()
    assert status == 2, (out, err)
    assert f"{path}: cannot read: it is {what}, not a regular file" in err + out
    assert time.monotonic() - start < 5
    assert model.read_bytes() == SAMPLE.read_bytes()


def test_a_fifo_input_does_not_block_the_real_command(tmp_path):
    """End to end, in a process of its own: `check`, `format` and `set -i` on a FIFO
    with no writer used to block until killed."""
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    for argv in (["check", fifo], ["format", fifo], ["set", fifo, "pt(1).iga=1", "-i"]):
        result = subprocess.run([str(CLI), *map(str, argv)], capture_output=True, text=True,
                                timeout=SECONDS)  # fmt: skip
        assert result.returncode == 2
        assert "it is a FIFO (named pipe), not a regular file" in result.stderr
    assert stat.S_ISFIFO(os.lstat(fifo).st_mode)


def test_session_open_refuses_a_fifo_without_blocking(tmp_path):
    from parasol_core.limits import NotRegularFileError
    from parasol_core.session import Session

    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    with pytest.raises(NotRegularFileError, match="FIFO"):
        Session.open(fifo)


@pytest.mark.parametrize(
    "command, what",
    [
        (lambda f, m: ["fit", m, "mpi.bcast", f], "a measurement file"),
        (lambda f, m: ["block", m, "--processor", "1", f], "a counts file"),
        (lambda f, m: ["simulate", m, "--messages", f], "a messages file"),
    ],
    ids=["fit", "block", "simulate"],
)
def test_data_files_share_one_size_cap_named_in_the_message(tmp_path, model, command, what):
    from parasol_core.limits import MAX_DATA_FILE_BYTES

    big = tmp_path / "big.data"
    with open(big, "wb") as f:
        f.truncate(4 * MAX_DATA_FILE_BYTES)  # sparse
    start = time.monotonic()
    status, _, err = run(*command(big, model))
    assert status == 2
    assert f"larger than 16 MB ({MAX_DATA_FILE_BYTES:,} bytes), the limit for {what}" in err
    assert time.monotonic() - start < 5
    assert model.read_bytes() == SAMPLE.read_bytes()
