"""No model that exists only in memory is dropped without asking (issue 33, item 1).

A measured model, an imported SimGrid platform, or any new model once edited differs
from every file on disk: Open, New blank, New from sample, Import, Measure and closing
the window each ask first, for every kind, and its title has the modified star. An
unedited blank model or copy of a sample is no loss and is dropped without a question.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from PySide6.QtWidgets import QMessageBox

from parasol_core.session import Session
from parasol_core.simgrid import export_platform
from parasol_core.syntax.loader import load, loads

ROOT = Path(__file__).resolve().parents[2]
SAMPLES = ROOT / "sample_models"
GRID = SAMPLES / "grid4x4.machine"


# --------------------------------------------------------------------------- the core rule


def test_a_model_with_no_file_counts_as_unsaved_until_it_is_saved(tmp_path) -> None:
    session = Session()
    session.replace(loads(GRID.read_text()), None)
    assert session.is_modified  # measured, imported: nowhere else
    session.set("pt(1).iga", "2e-7")
    session.undo()
    assert session.is_modified  # back to how it came, still only here
    target = tmp_path / "kept.machine"
    session.save(target)
    assert not session.is_modified
    session.replace(loads(GRID.read_text()), None, only_in_memory=False)
    assert not session.is_modified  # a copy of a file, the blank model: no loss
    session.set("pt(1).iga", "2e-7")
    assert session.is_modified
    session.replace(load(target), target)
    assert not session.is_modified


# --------------------------------------------------------------------------- the windows


def _measured(window, tmp_path) -> None:
    assert window.open_measured(GRID.read_text())


def _imported(window, tmp_path) -> None:
    xml = tmp_path / "platform.xml"
    xml.write_text(export_platform(load(GRID)).text)
    window.ask_platform_path = lambda saving: str(xml)
    assert window.import_simgrid()


def _blank_edited(window, tmp_path) -> None:
    window.new_blank()
    window.document.session.set("pt(1).iga", "3e-7")


def _copy_edited(window, tmp_path) -> None:
    window.new_from(GRID)
    window.document.session.set("pt(1).iga", "3e-7")


KINDS = {"measured": _measured, "imported": _imported, "blank, edited": _blank_edited,
         "sample copy, edited": _copy_edited}  # fmt: skip


def _open(window, tmp_path) -> None:
    window.open_file(GRID)


def _new_blank(window, tmp_path) -> None:
    window.new_blank()


def _new_from_sample(window, tmp_path) -> None:
    window.new_from(GRID)


def _import(window, tmp_path) -> None:
    xml = tmp_path / "other.xml"
    xml.write_text(export_platform(load(GRID)).text)
    window.ask_platform_path = lambda saving: str(xml)
    window.import_simgrid()


def _measure(window, tmp_path) -> None:
    window.open_measured(GRID.read_text())


def _close(window, tmp_path) -> None:
    window.close()


PATHS = {"Open": _open, "New blank": _new_blank, "New from sample": _new_from_sample,
         "Import": _import, "Measure": _measure, "Close": _close}  # fmt: skip


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("path", PATHS)
def test_every_way_to_drop_an_in_memory_model_asks_first(main_window, tmp_path, kind, path):
    KINDS[kind](main_window, tmp_path)
    machine = main_window.document.machine
    assert main_window.document.is_modified
    assert main_window.isWindowModified() and "[*]" in main_window.windowTitle()
    asked = []

    def cancel() -> QMessageBox.StandardButton:
        asked.append(True)
        return QMessageBox.StandardButton.Cancel

    main_window.ask_save_changes = cancel
    PATHS[path](main_window, tmp_path)
    assert asked == [True], f"{path} dropped a {kind} model without asking"
    assert main_window.document.machine is machine
    assert main_window.isVisible()  # Close was cancelled too
    main_window.ask_save_changes = lambda: QMessageBox.StandardButton.Discard


@pytest.mark.parametrize("kind", ["blank", "sample copy"])
def test_an_unedited_blank_or_copy_is_dropped_without_a_question(main_window, kind) -> None:
    if kind == "blank":
        main_window.new_blank()
    else:
        main_window.new_from(GRID)
    assert not main_window.document.is_modified
    assert not main_window.isWindowModified()
    main_window.ask_save_changes = lambda: pytest.fail("asked about a model that is no loss")
    assert main_window.open_file(GRID)


def test_saving_a_measured_model_makes_it_a_file_like_any_other(main_window, tmp_path) -> None:
    _measured(main_window, tmp_path)
    target = tmp_path / "measured.machine"
    main_window.ask_save_path = lambda: str(target)
    assert main_window.save()
    assert not main_window.document.is_modified
    assert not main_window.isWindowModified()
    main_window.ask_save_changes = lambda: pytest.fail("asked about a saved model")
    assert main_window.open_file(GRID)


def test_a_signal_keeps_the_edit_being_typed_in_the_copy(main_window, qtbot) -> None:
    # stopped by a signal, PIUI keeps unsaved edits in NAME.unsaved; a field being typed
    # in is an edit too, as Save and Export take it (the report's "Ok is assumed")
    master = main_window.processor_master
    master.name_field.setFocus()
    qtbot.waitUntil(master.name_field.hasFocus, timeout=60_000)
    master.name_field.selectAll()
    qtbot.keyClicks(master.name_field, "typed not entered")
    assert not main_window.document.is_modified  # nothing entered yet
    kept = main_window.stop_by_signal("SIGTERM")
    assert kept is not None and kept.name == main_window.document.path.name + ".unsaved"
    assert 'name = "typed not entered"' in kept.read_text()
