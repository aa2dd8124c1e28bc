"""Unsaved edits that a PIUI stopped by a signal kept are offered back: when their model
is opened (File > Open, a recent file; the command line opens through the same
``open_file``), and at start for a model never saved whose PIUI is gone. Restored, the
edits are unsaved changes of the model; the copy goes only when they are saved or
discarded, and one that does not parse is reported, where and why, and left alone.

The copies are left by a real PIUI (its own ``main()``, tests/piui_process.py) stopped
by SIGTERM; the question is answered through ``MainWindow.ask_restore``."""

from __future__ import annotations

import os
import signal
from pathlib import Path

import pytest
from named_platform import named_model_text
from piui_process import (
    RESTORING,
    SAFETY,
    data_home,
    start_piui,
    stop_when_ready,
    stopped_with_edits,
)
from PySide6.QtWidgets import QMessageBox

from parasol_core.base.numeric import read_float
from parasol_core.session import recovery
from parasol_core.session.session import read_model

SAMPLES = Path(__file__).resolve().parents[2] / "sample_models"
IGA = 7.5e-7  # what the stopped PIUI set (pt(1).iga), and did not save


def _iga(window) -> float | None:
    timing = window.document.machine.processor(1).timings.get("iga")
    return None if timing is None else timing.mean


class Asked:
    """``ask_restore`` answering ``answer`` and remembering what it was offered."""

    def __init__(self, answer: str) -> None:
        self.answer = answer
        self.offered: list[recovery.Copy] = []

    def __call__(self, copy: recovery.Copy) -> str:
        self.offered.append(copy)
        return self.answer


def _open_with_file_open(window, path: Path) -> None:
    window.ask_open_path = lambda: str(path)
    window.open_dialog()


def _open_from_recent_files(window, path: Path) -> None:
    window._remember(path)
    action = next(a for a in window.recent_menu.actions() if a.text() == str(path.resolve()))
    action.trigger()


OPENINGS = {"File > Open": _open_with_file_open, "recent files": _open_from_recent_files}


@pytest.mark.parametrize("opening", OPENINGS)
def test_edits_kept_by_a_sigtermed_piui_are_restored_saved_and_the_copy_goes(
        main_window, tmp_path, opening) -> None:  # fmt: skip
    model, copy, before = stopped_with_edits(tmp_path)[:3]
    asked = Asked(recovery.RESTORE)
    main_window.ask_restore = asked
    OPENINGS[opening](main_window, model.resolve())
    assert [(c.path, c.original) for c in asked.offered] == [(copy, model)]
    assert asked.offered[0].when() in asked.offered[0].describe()
    document = main_window.document
    # the copy's content, as unsaved changes of the model
    assert document.path == model and _iga(main_window) == IGA
    assert document.is_modified and main_window.isWindowModified()
    assert model.read_text() == before and copy.exists()
    assert "Restored the unsaved edits" in main_window.statusBar().currentMessage()
    # undo works on it: an edit made and undone brings the restored value back
    document.session.set("pt(1).iga", "9e-7")
    main_window.undo_action.trigger()
    assert _iga(main_window) == IGA and document.is_modified
    main_window.ask_restore = Asked(recovery.RESTORE)  # not asked again below
    assert main_window.save()
    assert not copy.exists(), "saved: the copy holds nothing more"
    assert not document.is_modified and not main_window.isWindowModified()
    assert read_model(model)[0].processor(1).timings["iga"].mean == IGA
    assert main_window.open_file(model) and main_window.ask_restore.offered == []


def test_keep_original_leaves_the_copy_and_discard_deletes_it(main_window, tmp_path) -> None:
    model, copy, before = stopped_with_edits(tmp_path)[:3]
    kept = copy.read_text()
    main_window.ask_restore = Asked(recovery.KEEP)
    assert main_window.open_file(model)
    assert _iga(main_window) is None and not main_window.document.is_modified
    assert copy.read_text() == kept  # asked again next time
    main_window.ask_restore = Asked(recovery.DISCARD)
    assert main_window.open_file(model)
    assert len(main_window.ask_restore.offered) == 1
    assert not copy.exists() and _iga(main_window) is None
    assert model.read_text() == before


@pytest.mark.parametrize("answer", ["Discard", "Cancel"])
def test_restored_edits_dropped_at_close_take_the_copy_with_them(
        main_window, tmp_path, answer) -> None:  # fmt: skip
    model, copy, _ = stopped_with_edits(tmp_path)[:3]
    main_window.ask_restore = Asked(recovery.RESTORE)
    assert main_window.open_file(model)
    main_window.ask_save_changes = lambda: getattr(QMessageBox.StandardButton, answer)
    closed = main_window.close()
    assert closed == (answer == "Discard")
    assert copy.exists() == (answer == "Cancel")  # cancelled: nothing was dropped
    main_window.ask_save_changes = lambda: QMessageBox.StandardButton.Discard


def test_a_copy_older_than_its_file_is_not_offered(main_window, tmp_path) -> None:
    model, copy, _ = stopped_with_edits(tmp_path)[:3]
    st = copy.stat()
    os.utime(model, ns=(st.st_atime_ns, st.st_mtime_ns + 1_000_000_000))  # saved after
    assert main_window.open_file(model)  # the fixture's ask_restore fails if asked
    assert copy.exists()


def test_a_copy_that_does_not_parse_is_reported_and_left_on_disk(main_window, tmp_path) -> None:
    model, copy, _ = stopped_with_edits(tmp_path)[:3]
    bad = copy.read_text().replace("processor", "processr", 1)
    copy.write_text(bad)
    main_window.ask_restore = Asked(recovery.RESTORE)
    assert main_window.open_file(model)  # the model itself, as it is
    assert main_window.document.path == model and not main_window.document.is_modified
    [(title, text)] = main_window.errors
    assert title == "Cannot restore the unsaved edits"
    assert text.startswith(f"{copy}:") and ": error: " in text  # where (line, column), why
    assert f"left on disk as it is: {copy}" in text
    assert copy.read_text() == bad


def test_a_second_signal_keeps_the_restored_edits_and_those_made_since(
        main_window, tmp_path) -> None:  # fmt: skip
    model, copy, _ = stopped_with_edits(tmp_path)[:3]
    main_window.ask_restore = Asked(recovery.RESTORE)
    assert main_window.open_file(model)
    main_window.document.session.set("pt(1).igm", "3.25e-7")
    kept = main_window.stop_by_signal("SIGTERM")
    assert kept == copy and copy.exists()  # written over, not removed as discarded
    text = copy.read_text()
    assert "iga = 7.5e-07" in text and "igm = 3.25e-07" in text


def test_a_never_saved_model_is_offered_at_the_next_start(main_window, tmp_path) -> None:
    status, err = stop_when_ready(start_piui(tmp_path, None, edit=True), signal.SIGTERM)
    assert status == 143, err
    [copy] = data_home(tmp_path).rglob("unsaved-*.machine")
    assert f"are in {copy}" in err
    main_window.new_from(SAMPLES / "parsytec-gcel.machine")  # PIUI's start: a sample's copy
    asked = Asked(recovery.RESTORE)
    main_window.ask_restore = asked
    assert main_window.offer_orphaned_copies(copy.parent)
    assert [(c.path, c.original) for c in asked.offered] == [(copy, None)]
    document = main_window.document
    assert document.path is None and document.is_modified and _iga(main_window) == IGA
    # the title says what it is now: not the copy of a sample any more, and unsaved
    assert main_window.windowTitle() == f"{document.machine.name}[*] — PIUI"
    assert main_window.isWindowModified()
    assert copy.exists()
    target = tmp_path / "recovered.machine"
    main_window.ask_save_path = lambda: str(target)
    assert main_window.save()
    assert not copy.exists() and document.path == target and not document.is_modified
    assert read_model(target)[0].processor(1).timings["iga"].mean == IGA
    # nothing left to offer at the next start
    main_window.ask_restore = Asked(recovery.RESTORE)
    assert not main_window.offer_orphaned_copies(copy.parent)
    assert main_window.ask_restore.offered == []


def test_the_copy_of_a_running_piui_is_not_offered(main_window, tmp_path) -> None:
    folder = tmp_path / "data"
    running = recovery.keep(named_model_text(), None, folder, os.getppid())
    main_window.ask_restore = Asked(recovery.RESTORE)
    assert not main_window.offer_orphaned_copies(folder)
    assert main_window.ask_restore.offered == [] and running.exists()


def test_restoring_over_unsaved_edits_asks_first_and_cancel_keeps_everything(
        main_window, tmp_path) -> None:  # fmt: skip
    folder = tmp_path / "data"
    gone = [2**22 + 1, 2**22 + 2]  # past Linux's largest pid_max (2**22): no process has them
    copies = [recovery.keep(named_model_text(), None, folder, pid) for pid in gone]
    main_window.document.session.set("pt(1).iga", "1.25e-6")  # the model on screen, unsaved
    machine = main_window.document.machine
    asked = Asked(recovery.RESTORE)
    main_window.ask_restore = asked
    main_window.ask_save_changes = lambda: QMessageBox.StandardButton.Cancel
    assert not main_window.offer_orphaned_copies(folder)
    assert len(asked.offered) == 1  # cancelled: no further copy offered this time
    assert main_window.document.machine is machine and main_window.document.is_modified
    assert all(c.exists() for c in copies)
    main_window.ask_save_changes = lambda: QMessageBox.StandardButton.Discard


def test_the_command_line_offers_the_copy_over_the_window_and_restores_it(tmp_path) -> None:
    model, copy, before = stopped_with_edits(tmp_path)[:3]
    proc = start_piui(tmp_path, model, edit=False, script=RESTORING)  # `piui MODEL`
    out, err = proc.communicate(timeout=SAFETY)
    assert proc.returncode == 0, err
    lines = dict(line.split(": ", 1) for line in out.splitlines() if ": " in line)
    assert lines["offered with the window on screen"] == "True", out
    assert "named.machine.unsaved" in lines["offered"], out
    assert lines["title"] == "named.machine[*] — PIUI", out  # unsaved changes of the file
    assert read_float(lines["iga"]) == IGA and lines["saved"] == "True", out
    assert not copy.exists()
    assert read_model(model)[0].processor(1).timings["iga"].mean == IGA
    assert model.read_text() != before


def test_no_test_sees_the_users_data_folder(qapp, tmp_path):
    """What PIUI's start offers back comes from a folder of the test's own."""
    from piui.main_window import MainWindow

    assert MainWindow.data_folder().is_relative_to(tmp_path)
