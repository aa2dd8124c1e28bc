"""Issue 26, rule 1 in PIUI: opening a FIFO never blocks the window; saving or exporting
onto a FIFO, a device or a socket never replaces it."""

from __future__ import annotations

import os
import stat
import time

import pytest


def test_opening_a_fifo_is_refused_at_once(main_window, tmp_path):
    fifo = tmp_path / "fifo.machine"
    os.mkfifo(fifo)
    start = time.monotonic()
    assert not main_window.open_file(fifo)
    assert time.monotonic() - start < 5
    ((title, text),) = main_window.errors
    assert title == "Cannot open the model"
    assert "it is a FIFO (named pipe), not a regular file" in text
    assert main_window.document.path.name == "parsytec-gcel.machine"  # still open


@pytest.mark.parametrize("how", ["save_as", "export_to_file"])
def test_saving_onto_a_fifo_with_no_reader_is_refused_and_keeps_it(main_window, tmp_path, how):
    fifo = tmp_path / "fifo.machine"
    os.mkfifo(fifo)
    main_window.ask_save_path = lambda: str(fifo)
    start = time.monotonic()
    assert not getattr(main_window, how)()
    assert time.monotonic() - start < 5
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
    main_window.ask_save_path = lambda: str(null)
    assert getattr(main_window, how)(), main_window.errors
    after = os.lstat(null)
    assert stat.S_ISCHR(after.st_mode) and after.st_ino == before.st_ino
