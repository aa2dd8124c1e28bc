"""Issue 26, rule 1 in PIUI: opening a FIFO never blocks the window; saving or exporting
onto a FIFO, a device or a socket never replaces it."""

from __future__ import annotations

import contextlib
import os
import stat
import threading

import pytest


@contextlib.contextmanager
def not_blocked_on(fifo, after: float = 60):
    """Fails if the code in the block blocked opening ``fifo`` (a reader waiting for a
    writer, or a writer for a reader): after ``after`` s, which only stops such a hung
    test, it opens the other end so that the block ends, and the test fails. A refusal
    "at once" is one that never needed this, whatever the machine's load."""
    fired = threading.Event()
    held: list[int] = []

    def release() -> None:
        fired.set()
        for flags in (os.O_RDONLY | os.O_NONBLOCK, os.O_WRONLY | os.O_NONBLOCK):
            with contextlib.suppress(OSError):
                held.append(os.open(fifo, flags))

    timer = threading.Timer(after, release)
    timer.start()
    try:
        yield
    finally:
        timer.cancel()
        for fd in held:
            os.close(fd)
    assert not fired.is_set(), f"blocked opening the FIFO {fifo}"


def test_opening_a_fifo_is_refused_at_once(main_window, tmp_path):
    fifo = tmp_path / "fifo.machine"
    os.mkfifo(fifo)
    with not_blocked_on(fifo):
        assert not main_window.open_file(fifo)
    ((title, text),) = main_window.errors
    assert title == "Cannot open the model"
    assert "it is a FIFO (named pipe), not a regular file" in text
    assert main_window.document.path.name == "parsytec-gcel.machine"  # still open


@pytest.mark.parametrize("how", ["save_as", "export_to_file"])
def test_saving_onto_a_fifo_with_no_reader_is_refused_and_keeps_it(main_window, tmp_path, how):
    fifo = tmp_path / "fifo.machine"
    os.mkfifo(fifo)
    main_window.ask_save_path = main_window.ask_export_path = lambda: str(fifo)
    with not_blocked_on(fifo):
        assert not getattr(main_window, how)()
    assert any("no program is reading" in text for _, text in main_window.errors)
    assert stat.S_ISFIFO(os.lstat(fifo).st_mode)


@pytest.mark.parametrize("how", ["save_as", "export_to_file"])
def test_saving_onto_a_copy_of_dev_null_writes_through_it(main_window, tmp_path, how):
    null = tmp_path / "null"
    try:
        os.mknod(null, stat.S_IFCHR | 0o666, os.stat("/dev/null").st_rdev)
    except OSError as e:
        pytest.skip(f"cannot make a device node here: {e}")
    before = os.lstat(null)
    main_window.ask_save_path = main_window.ask_export_path = lambda: str(null)
    assert getattr(main_window, how)(), main_window.errors
    after = os.lstat(null)
    assert stat.S_ISCHR(after.st_mode) and after.st_ino == before.st_ino
