"""Issue 33, item 6: every file dialog opens in the model's folder, not in the process's
working directory (open, save as, export to file, SimGrid import and export, the grid
view's PNG and SVG, a model file to compare with, measured times to fit).

The dialogs are Qt's own (widgets.file_dialogs); each test runs one as a user does —
the menu entry, the button — with QFileDialog.exec answered "cancel", and checks the
folder the dialog showed and the file name it proposed."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from conftest import SAMPLES
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QFileDialog


@pytest.fixture
def shown(monkeypatch):
    """What each file dialog showed: (title, folder, proposed name, multiple files)."""
    seen: list[tuple[str, Path, str, bool]] = []

    def exec_(self):
        names = [n for n in self.selectedFiles() if not Path(n).is_dir()]
        seen.append((self.windowTitle(), Path(self.directory().absolutePath()),
                     Path(names[0]).name if names else "",
                     self.fileMode() == QFileDialog.FileMode.ExistingFiles))  # fmt: skip
        return QFileDialog.DialogCode.Rejected

    monkeypatch.setattr(QFileDialog, "exec", exec_)
    return seen


@pytest.fixture
def elsewhere(tmp_path, monkeypatch):
    """The model in a folder of its own; the process started somewhere else."""
    cwd = tmp_path / "started-here"
    cwd.mkdir()
    monkeypatch.chdir(cwd)
    study = tmp_path / "study"
    study.mkdir()
    model = study / "grid4x4.machine"
    shutil.copy(SAMPLES / "grid4x4.machine", model)
    return model


def _menu_action(window, *titles: str):
    """The menu entry a user clicks: File > Export > SimGrid platform…"""
    menu = window.menuBar()
    for title in titles:
        found = next(a for a in menu.actions() if a.text().replace("&", "") == title)
        menu = found.menu() if found.menu() is not None else found
    return menu


def test_the_main_windows_dialogs_start_in_the_models_folder(main_window, elsewhere, shown):
    assert main_window.open_file(elsewhere)
    study = elsewhere.parent
    _menu_action(main_window, "File", "Open…").trigger()
    _menu_action(main_window, "File", "Save as…").trigger()
    _menu_action(main_window, "File", "Export to file…").trigger()
    _menu_action(main_window, "File", "Import SimGrid platform…").trigger()
    _menu_action(main_window, "File", "Export", "SimGrid platform…").trigger()
    assert [(t, folder) for t, folder, _, _ in shown] == [
        # Export to file... writes a copy (the open file stays the one edited): its
        # dialog says so, where it said "Save model as" as Save as does
        ("Open model", study), ("Save model as", study), ("Export a copy of the model", study),
        ("Import a SimGrid platform", study), ("Export a SimGrid platform", study)]  # fmt: skip
    names = [name for _, _, name, _ in shown]
    assert names[1:3] == ["grid4x4.machine"] * 2 and names[4] == "grid4x4.xml"


def test_the_windows_dialogs_start_in_the_models_folder(main_window, elsewhere, shown, qtbot):
    from PySide6.QtWidgets import QPushButton

    assert main_window.open_file(elsewhere)
    study = elsewhere.parent
    from piui.widgets.file_dialogs import start_file

    # the grid view's drawing export (a format-and-size dialog first) proposes this file
    assert Path(start_file(main_window.document, "", "-topology")).parent == study
    main_window.show_panel("runtime")
    page = main_window.panels["runtime"].pages["mpi"]
    page.overlay_box.setCurrentIndex(page.overlay_box.findData("browse"))
    page.overlay_box.activated.emit(page.overlay_box.currentIndex())
    page.select(next(iter(page.rows)))
    dialog = page.open_fit_dialog()
    qtbot.addWidget(dialog)
    add = next(b for b in dialog.findChildren(QPushButton) if b.text().startswith("Add CSV"))
    qtbot.mouseClick(add, Qt.MouseButton.LeftButton)
    assert [(t, folder) for t, folder, _, _ in shown] == [
        ("Compare with a model file", study), ("Measured times", study)]  # fmt: skip
    assert shown[-1][3]  # several files at once


@pytest.mark.parametrize("make", ["new blank", "from sample", "measured", "imported"])
def test_a_model_without_a_file_starts_where_the_last_file_was(main_window, elsewhere, shown,
                                                                make, tmp_path):  # fmt: skip
    """A model only in memory has no folder: its dialogs open where the user last opened
    or saved a file, and propose a name made from the model's."""
    assert main_window.open_file(elsewhere)  # remembered as the last file used
    doc = main_window.document
    if make == "new blank":
        main_window.new_blank()
    elif make == "from sample":
        main_window.new_from(SAMPLES / "parsytec-gcel.machine")
    elif make == "measured":
        main_window.open_measured((SAMPLES / "grid4x4.machine").read_text())
    else:
        from tests.simgrid.test_simgrid import SMALL

        platform = tmp_path / "small.xml"  # in a folder of its own: not the start
        platform.write_text(SMALL)
        real = main_window.ask_platform_path
        main_window.ask_platform_path = lambda saving: str(platform)
        assert main_window.import_simgrid()
        main_window.ask_platform_path = real  # the real dialog again
    assert doc.path is None
    main_window.ask_save_path()
    main_window.ask_platform_path(True)
    main_window.ask_open_path()
    assert [folder for _, folder, _, _ in shown] == [elsewhere.parent] * 3
    name = shown[0][2]
    assert name.endswith(".machine") and name != ".machine"
    assert shown[1][2] == name.replace(".machine", ".xml")


def test_with_nothing_used_yet_open_starts_among_the_samples(main_window, shown, monkeypatch,
                                                              tmp_path):  # fmt: skip
    from piui.app_settings import settings

    settings().remove("recentFiles")
    monkeypatch.chdir(tmp_path)
    main_window.new_blank()
    main_window.ask_open_path()
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    main_window.ask_save_path()
    assert [folder for _, folder, _, _ in shown] == [SAMPLES, home]
