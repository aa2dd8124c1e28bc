"""PIUI notices when another program changes its open file, and never saves over that
change without asking: with and without unsaved edits, on every path to a save."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QMessageBox

from parasol_core.syntax.loader import load

CLI = Path(sys.executable).parent / "parasol-model"


def _other_writer(path: Path, *assignments: str) -> None:
    result = subprocess.run([str(CLI), "set", str(path), *assignments, "-i"],
                            capture_output=True, text=True)  # fmt: skip
    assert result.returncode == 0, result.stderr


def _timing(path: Path, name: str) -> float:
    return load(path).processor(1).timings[name].mean


@pytest.fixture
def window(main_window):
    main_window.asked_overwrite = []
    main_window.overwrite_answer = False

    def ask(path):
        main_window.asked_overwrite.append(path)
        return main_window.overwrite_answer

    main_window.ask_overwrite_changed = ask
    return main_window


def _click(qtbot, bar, caption: str) -> None:
    qtbot.mouseClick(bar.buttons[caption], Qt.MouseButton.LeftButton)


def test_a_change_on_disk_without_unsaved_edits_offers_a_reload(qtbot, window):
    path = window.document.path
    bar = window.file_bar
    assert not bar.isVisible()
    _other_writer(path, "pt(1).dga=7e-6")
    qtbot.waitUntil(bar.isVisible, timeout=60_000)
    assert "changed on disk by another program" in bar.label.text()
    assert list(bar.buttons) == ["Reload", "Ignore", "Show difference"]
    _click(qtbot, bar, "Reload")
    assert window.document.machine.processor(1).timings["dga"].mean == 7e-6
    assert not window.document.is_modified and not bar.isVisible()
    assert "changed on disk by another program" in window.terminal.text.toPlainText()


def test_unsaved_edits_are_never_saved_over_a_change_without_asking(qtbot, window):
    path = window.document.path
    bar = window.file_bar
    window.document.session.set("pt(1).igm", "5e-6")
    _other_writer(path, "pt(1).dga=7e-6")
    qtbot.waitUntil(bar.isVisible, timeout=60_000)
    assert "unsaved changes" in bar.label.text()
    assert list(bar.buttons) == ["Reload, discarding my changes", "Keep mine",
                                 "Show difference"]  # fmt: skip
    _click(qtbot, bar, "Keep mine")
    assert not bar.isVisible()
    theirs = path.read_bytes()
    assert not window.save()  # asked, and the user cancelled
    assert window.asked_overwrite == [path]
    assert bar.isVisible() and "Reload, discarding my changes" in bar.buttons  # choices again
    assert path.read_bytes() == theirs and window.document.is_modified
    window.overwrite_answer = True
    assert window.save()  # asked again, every time; now overwritten
    assert len(window.asked_overwrite) == 2
    assert _timing(path, "igm") == 5e-6 and _timing(path, "dga") == 1.2e-6
    assert not window.document.is_modified
    qtbot.wait(400)  # PIUI's own save is not news
    assert not bar.isVisible()


def test_reload_discarding_unsaved_edits(qtbot, window):
    path = window.document.path
    window.document.session.set("pt(1).igm", "5e-6")
    _other_writer(path, "pt(1).dga=7e-6")
    qtbot.waitUntil(window.file_bar.isVisible, timeout=60_000)
    _click(qtbot, window.file_bar, "Reload, discarding my changes")
    timings = window.document.machine.processor(1).timings
    assert timings["dga"].mean == 7e-6 and timings["igm"].mean == 1.6e-6
    assert not window.document.is_modified


def test_show_difference_between_disk_and_piui(qtbot, window, monkeypatch):
    from piui.widgets import diff_view

    shown = []
    monkeypatch.setattr(diff_view.DiffDialog, "exec", lambda self: shown.append(
        self.text.toPlainText()))  # fmt: skip
    window.document.session.set("pt(1).igm", "5e-6")
    _other_writer(window.document.path, "pt(1).dga=7e-6")
    qtbot.waitUntil(window.file_bar.isVisible, timeout=60_000)
    _click(qtbot, window.file_bar, "Show difference")
    assert len(shown) == 1
    assert "-            dga = 7e-06" in shown[0] and "+            igm = 5e-06" in shown[0]
    assert window.file_bar.isVisible()  # the choice is still to be made


@pytest.mark.parametrize("route", ["quit prompt", "save as onto it", "export to file onto it"])
def test_every_path_to_a_save_asks(qtbot, window, route):
    path = window.document.path
    window.document.session.set("pt(1).igm", "5e-6")
    _other_writer(path, "pt(1).dga=7e-6")
    theirs = path.read_bytes()
    if route == "quit prompt":
        window.ask_save_changes = lambda: QMessageBox.StandardButton.Save
        window.close()
        assert window.isVisible()  # not closed: the save was cancelled
        window.ask_save_changes = lambda: QMessageBox.StandardButton.Discard
    else:
        window.ask_save_path = window.ask_export_path = lambda: str(path)
        assert not (window.save_as() if route == "save as onto it" else window.export_to_file())
    assert window.asked_overwrite == [path]
    assert path.read_bytes() == theirs


def test_a_deleted_file_is_reported_and_save_writes_it_back(qtbot, window, tmp_path):
    path = window.document.path
    path.rename(tmp_path / "elsewhere.machine")
    qtbot.waitUntil(window.file_bar.isVisible, timeout=60_000)
    assert "deleted or moved away" in window.file_bar.label.text()
    _click(qtbot, window.file_bar, "Save it again")
    assert path.exists() and window.asked_overwrite == []
    assert load(path).name == "Parsytec GCel"
    qtbot.wait(400)
    assert not window.file_bar.isVisible()


def test_a_touch_is_not_a_change_and_the_next_change_is_news_again(qtbot, window):
    path = window.document.path
    bar = window.file_bar
    path.touch()
    qtbot.wait(500)
    assert not bar.isVisible()
    _other_writer(path, "pt(1).dga=7e-6")
    qtbot.waitUntil(bar.isVisible, timeout=60_000)
    _click(qtbot, bar, "Ignore")
    _other_writer(path, "pt(1).dga=8e-6")  # another change after "Ignore": told again
    qtbot.waitUntil(bar.isVisible, timeout=60_000)


def test_becoming_active_looks_at_the_file(qtbot, window):
    """Where no file-system notice comes (network file systems), a look on activation."""
    watcher = window.disk_watcher
    watcher._watcher.removePaths(watcher._watcher.files() + watcher._watcher.directories())
    watcher._watcher.blockSignals(True)
    watcher._timer.stop()  # a notice already taken (the settings file is written beside)
    _other_writer(window.document.path, "pt(1).dga=7e-6")
    qtbot.wait(300)
    assert not window.file_bar.isVisible()
    watcher._application_state(Qt.ApplicationState.ApplicationActive)
    assert window.file_bar.isVisible()


def test_reload_keeps_the_selection_and_processor_where_they_still_apply(qtbot, main_window,
                                                                         sample_copy):  # fmt: skip
    from piui.widgets.topology_selection import selection_of

    window = main_window
    path = sample_copy("grid4x4.machine")
    assert window.open_file(path)
    window.show_panel("grid-view")
    grid = window.panels["grid-view"]
    grid.canvas.select([2, 3, 16], [1, 2])
    _other_writer(path, "tl(1)(1).speed=2e-6")
    qtbot.waitUntil(window.file_bar.isVisible, timeout=60_000)
    _click(qtbot, window.file_bar, "Reload")
    selection = selection_of(window.document)
    assert selection.processors == (2, 3, 16) and selection.links == (1, 2)
    assert grid.canvas.selected_processors() == [2, 3, 16]
    assert window.document.machine.topologies[0].links[0].speed.mean == 2e-6


def test_reload_keeps_the_current_processor(qtbot, main_window, sample_copy):
    window = main_window
    path = sample_copy("fwi-csys.machine")
    assert window.open_file(path)
    second = window.document.machine.processors[1].id
    window.document.set_current_processor(second)
    _other_writer(path, f"pt({second}).dga=7e-6")
    qtbot.waitUntil(window.file_bar.isVisible, timeout=60_000)
    _click(qtbot, window.file_bar, "Reload")
    assert window.document.current_processor_id == second
    assert window.document.current_processor().timings["dga"].mean == 7e-6
